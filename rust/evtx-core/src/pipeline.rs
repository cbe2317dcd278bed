//! The ordered pipeline (chunks come out in the order of contract 3.3): `threads` renderers,
//! the caller's thread and `threads - 1` workers, each with its own [`Renderer`], render chunk
//! slots into a window, and the caller hands the results to the sink strictly in chunk order.
//! The caller renders too (PERF.md H82): `-t 2` is two busy threads on two cores, not two
//! workers and a consumer woken for every chunk. Job `j` is rendered into window slot
//! `j % window` only once job `j - window` went to the sink, so memory stays bounded whatever
//! the file size.

use crate::dump::{ChunkResult, Renderer};
use crate::input::{ChunkOrder, ChunkSource};
use crate::options::Options;
use std::ops::ControlFlow;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Renders the slots of `order` with `threads` renderers (the caller's thread among them),
/// handing each result to `sink` in order; with one thread inline on the caller's thread.
pub(crate) fn run<S, F>(file: &S, opts: &Options, order: &ChunkOrder, threads: usize, sink: &mut F)
where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    if threads <= 1 {
        run_inline(file, opts, order, sink);
        return;
    }
    let pipeline = Pipeline::new(order, threads);
    // Scoped threads, not a pool: every worker is joined before `dump` returns, so an embedder
    // may unload the library right after (a dropped rayon pool lets its threads run on).
    std::thread::scope(|scope| {
        for _ in 1..threads {
            let pipeline = &pipeline;
            // A worker that cannot start leaves its share to the others and the caller.
            let worker = std::thread::Builder::new()
                .spawn_scoped(scope, move || pipeline.worker(file, opts));
            if worker.is_err() {
                break;
            }
        }
        pipeline.drive(file, opts, sink);
    });
}

/// One thread: read and render each slot in turn on the caller's thread. (A read-ahead thread
/// that overlapped the copy out of the page cache was measured slower: PERF.md H10c.)
fn run_inline<S, F>(file: &S, opts: &Options, order: &ChunkOrder, sink: &mut F)
where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    let mut r = Renderer::new(opts);
    let mut result = ChunkResult::default();
    for slot in order.iter() {
        r.render_chunk_into(file, slot, &mut result);
        if sink(&result).is_break() {
            return;
        }
    }
}

/// What the caller and the workers share.
struct Pipeline<'o> {
    order: &'o ChunkOrder,
    state: Mutex<State>,
    /// Signalled when a worker finishes a job while the caller waits for one.
    ready_cond: Condvar,
    /// Signalled when the caller drains a slot while a worker waits for room.
    room_cond: Condvar,
    /// The window: job `j`'s result in slot `j % len`. A slot's lock is only ever taken by
    /// the one thread the state hands the slot to, so it never blocks.
    results: Vec<Mutex<ChunkResult>>,
}

/// The pipeline's bookkeeping, under one lock held only between chunks.
struct State {
    /// Index into `order` of the next job to take.
    next_job: usize,
    /// Jobs handed to the sink; job `j` may be rendered once `j < emitted + window`.
    emitted: usize,
    /// Per window slot: whether it holds its job's finished result.
    window_ready: Vec<bool>,
    /// The caller sleeps on `ready_cond`; workers sleep on `room_cond`. Counted so that a
    /// wake-up (a futex call) is only made when someone sleeps.
    caller_waits: bool,
    workers_waiting: usize,
    /// The sink asked to stop: no more jobs are taken.
    stop: bool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<'o> Pipeline<'o> {
    fn new(order: &'o ChunkOrder, threads: usize) -> Pipeline<'o> {
        let window = 2 * threads;
        Pipeline {
            order,
            state: Mutex::new(State {
                next_job: 0,
                emitted: 0,
                window_ready: vec![false; window],
                caller_waits: false,
                workers_waiting: 0,
                stop: false,
            }),
            ready_cond: Condvar::new(),
            room_cond: Condvar::new(),
            results: (0..window).map(|_| Mutex::default()).collect(),
        }
    }

    fn window(&self) -> usize {
        self.results.len()
    }

    /// Renders job `job` into its window slot (the state's lock released meanwhile).
    fn render<S>(&self, r: &mut Renderer, file: &S, job: usize)
    where
        S: ChunkSource + ?Sized,
    {
        let slot = self.order.get(job).expect("a job is taken only below the order's length");
        r.render_chunk_into(file, slot, &mut lock(&self.results[job % self.window()]));
    }

    /// Marks job `job` rendered (state locked), waking the caller if it waits.
    fn finished(&self, state: &mut State, job: usize) {
        state.window_ready[job % self.window()] = true;
        if state.caller_waits {
            self.ready_cond.notify_one();
        }
    }

    /// One worker: takes the next job, waits for its slot to be drained, renders it, until
    /// the order or the sink is done.
    fn worker<S>(&self, file: &S, opts: &Options)
    where
        S: ChunkSource + ?Sized,
    {
        let mut r = Renderer::new(opts);
        let mut state = lock(&self.state);
        while !state.stop && state.next_job < self.order.len() {
            let job = state.next_job;
            state.next_job += 1;
            while job >= state.emitted + self.window() && !state.stop {
                state.workers_waiting += 1;
                state = self.room_cond.wait(state).unwrap_or_else(PoisonError::into_inner);
                state.workers_waiting -= 1;
            }
            if state.stop {
                return;
            }
            drop(state);
            self.render(&mut r, file, job);
            state = lock(&self.state);
            self.finished(&mut state, job);
        }
    }

    /// The caller: hands the next result to `sink` when it is ready, else renders the next
    /// job itself when its slot is free, else waits for a worker; stops everything when
    /// `sink` breaks.
    fn drive<S, F>(&self, file: &S, opts: &Options, sink: &mut F)
    where
        S: ChunkSource + ?Sized,
        F: FnMut(&ChunkResult) -> ControlFlow<()>,
    {
        let mut r = Renderer::new(opts);
        let window = self.window();
        let mut state = lock(&self.state);
        while state.emitted < self.order.len() {
            let w = state.emitted % window;
            if state.window_ready[w] {
                drop(state);
                let flow = sink(&lock(&self.results[w]));
                state = lock(&self.state);
                state.window_ready[w] = false;
                state.emitted += 1;
                if flow.is_break() {
                    state.stop = true;
                }
                if state.workers_waiting > 0 || state.stop {
                    self.room_cond.notify_all();
                }
                if state.stop {
                    return;
                }
            } else if state.next_job < self.order.len() && state.next_job < state.emitted + window
            {
                let job = state.next_job;
                state.next_job += 1;
                drop(state);
                self.render(&mut r, file, job);
                state = lock(&self.state);
                self.finished(&mut state, job);
            } else {
                state.caller_waits = true;
                state = self.ready_cond.wait(state).unwrap_or_else(PoisonError::into_inner);
                state.caller_waits = false;
            }
        }
    }
}
