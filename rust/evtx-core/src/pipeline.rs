//! The ordered pipeline (chunks come out in the order of contract 3.3): `threads` renderers,
//! the caller's thread and `threads - 1` workers, each with its own [`Renderer`] and results,
//! render chunk slots, and the caller hands the results to the sink strictly in chunk order.
//! The caller renders too (PERF.md H82): `-t 2` is two busy threads on two cores, not two
//! workers and a consumer woken for every chunk. A job is taken only when it is less than a
//! window ahead of the sink and one of its renderer's results is drained, so memory stays
//! bounded whatever the file size.

use crate::dump::{ChunkResult, Renderer};
use crate::input::{ChunkOrder, ChunkSource};
use crate::options::Options;
use crate::program::Shared;
use std::ops::ControlFlow;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};

/// Results each renderer owns; the window is this many jobs per renderer.
const RESULTS_PER_RENDERER: usize = 4;

/// What [`run`] does with its renderers, results and shared table once the last chunk is out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Teardown {
    /// Free them: a library call, after which the process goes on.
    Free,
    /// Leave them to the process's exit, which follows at once (the CLI): freeing them one
    /// allocation at a time costs ~0.3 ms at `-t 1` and ~0.8 ms at `-t 2` on corpus-30mb,
    /// serial, while the exit returns their pages in bulk (PERF.md H164).
    Skip,
}

/// Renders the slots of `order` with `threads` renderers (the caller's thread among them),
/// handing each result to `sink` in order; with one thread inline on the caller's thread.
pub(crate) fn run<S, F>(
    file: &S,
    opts: &Options,
    order: &ChunkOrder,
    threads: usize,
    teardown: Teardown,
    sink: &mut F,
) where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    if threads <= 1 {
        run_inline(file, opts, order, teardown, sink);
        return;
    }
    let pipeline = Pipeline::new(order, threads);
    // Scoped threads, not a pool: every worker is joined before `dump` returns, so an embedder
    // may unload the library right after (a dropped rayon pool lets its threads run on).
    std::thread::scope(|scope| {
        for k in 1..threads {
            let pipeline = &pipeline;
            // A worker that cannot start leaves its share to the others and the caller.
            let worker = std::thread::Builder::new()
                .spawn_scoped(scope, move || pipeline.worker(file, opts, k, teardown));
            if worker.is_err() {
                break;
            }
        }
        pipeline.drive(file, opts, teardown, sink);
    });
    if teardown == Teardown::Skip {
        std::mem::forget(pipeline);
    }
}

/// Frees `value` or leaves it to the process's exit, as `teardown` says.
fn end<T>(value: T, teardown: Teardown) {
    match teardown {
        Teardown::Free => drop(value),
        Teardown::Skip => std::mem::forget(value),
    }
}

/// One thread: read and render each slot in turn on the caller's thread. (A read-ahead thread
/// that overlapped the copy out of the page cache was measured slower: PERF.md H10c.)
fn run_inline<S, F>(file: &S, opts: &Options, order: &ChunkOrder, teardown: Teardown, sink: &mut F)
where
    S: ChunkSource + ?Sized,
    F: FnMut(&ChunkResult) -> ControlFlow<()>,
{
    let mut r = Renderer::new(opts);
    let mut result = ChunkResult::default();
    for slot in order.iter() {
        r.render_chunk_into(file, slot, &mut result);
        if sink(&result).is_break() {
            break;
        }
    }
    end((r, result), teardown);
}

/// What the caller and the workers share.
struct Pipeline<'o> {
    order: &'o ChunkOrder,
    /// Jobs rendered ahead of the sink at most.
    window: usize,
    state: Mutex<State>,
    /// Signalled when a worker finishes a job while the caller waits for one.
    ready_cond: Condvar,
    /// Signalled when the caller drains a result while a worker waits for room.
    room_cond: Condvar,
    /// Per renderer (0 is the caller's), its own results, filled in turn: a result's buffers
    /// are only ever written by one thread, so they stay in that core's cache (PERF.md H83).
    /// A result's lock is only taken by the one thread the state hands it to: it never blocks.
    results: Vec<Vec<Mutex<ChunkResult>>>,
    /// The renderers' shared ids and programs: a program is learnt once per run, not once
    /// per renderer (PERF.md H95).
    shared: Arc<Shared>,
}

/// The pipeline's bookkeeping, under one lock held only between chunks.
struct State {
    /// Index into `order` of the next job to take.
    next_job: usize,
    /// Jobs handed to the sink; job `j` may be taken once `j < emitted + window`.
    emitted: usize,
    /// Per window slot (job `j` in slot `j % window`): the renderer whose result holds the
    /// finished job.
    finished_by: Vec<Option<usize>>,
    /// Per renderer: jobs taken and results drained. A renderer takes a job only while one
    /// of its results is drained (`taken - drained < results per renderer`); its jobs are
    /// drained in the order it took them, so job number `taken` goes to result
    /// `taken % results per renderer`.
    taken: Vec<usize>,
    drained: Vec<usize>,
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

fn wait<'a>(cond: &Condvar, state: MutexGuard<'a, State>) -> MutexGuard<'a, State> {
    cond.wait(state).unwrap_or_else(PoisonError::into_inner)
}

impl<'o> Pipeline<'o> {
    fn new(order: &'o ChunkOrder, threads: usize) -> Pipeline<'o> {
        let window = RESULTS_PER_RENDERER * threads;
        Pipeline {
            order,
            window,
            state: Mutex::new(State {
                next_job: 0,
                emitted: 0,
                finished_by: vec![None; window],
                taken: vec![0; threads],
                drained: vec![0; threads],
                caller_waits: false,
                workers_waiting: 0,
                stop: false,
            }),
            ready_cond: Condvar::new(),
            room_cond: Condvar::new(),
            results: (0..threads)
                .map(|_| {
                    (0..RESULTS_PER_RENDERER)
                        .map(|_| Mutex::default())
                        .collect()
                })
                .collect(),
            shared: Arc::default(),
        }
    }

    /// Takes the next job for renderer `k` if the window and `k`'s results have room
    /// (state locked): the job and the index of `k`'s result it goes to.
    fn take(&self, state: &mut State, k: usize) -> Option<(usize, usize)> {
        let job = state.next_job;
        let room = job < self.order.len()
            && job < state.emitted + self.window
            && state.taken[k] - state.drained[k] < RESULTS_PER_RENDERER;
        if !room || state.stop {
            return None;
        }
        state.next_job += 1;
        let index = state.taken[k] % RESULTS_PER_RENDERER;
        state.taken[k] += 1;
        Some((job, index))
    }

    /// Whether draining one of renderer `k`'s results is the time to wake waiting workers:
    /// `k` is a worker with half its results free again (PERF.md H138). A worker waits only
    /// with all its results full (a full window means every renderer's are), so only a drain
    /// of its own lets it take a job; woken at half, it takes two, and sleeps half as often.
    /// At the end, a drain at half wakes it too, to see there is nothing left.
    fn wakes(state: &State, k: usize) -> bool {
        k != 0 && state.taken[k] - state.drained[k] <= RESULTS_PER_RENDERER / 2
    }

    /// Renderer `k` renders job `job` into its result `index` (the state's lock released
    /// meanwhile), then marks it finished, waking the caller if it waits.
    fn render<S>(&self, r: &mut Renderer, file: &S, k: usize, (job, index): (usize, usize))
    where
        S: ChunkSource + ?Sized,
    {
        let slot = self
            .order
            .get(job)
            .expect("a job is taken only below the order's length");
        r.render_chunk_into(file, slot, &mut lock(&self.results[k][index]));
        let mut state = lock(&self.state);
        state.finished_by[job % self.window] = Some(k);
        if state.caller_waits {
            self.ready_cond.notify_one();
        }
    }

    /// Worker `k`: takes the next job when there is room, renders it, until the order or
    /// the sink is done.
    fn worker<S>(&self, file: &S, opts: &Options, k: usize, teardown: Teardown)
    where
        S: ChunkSource + ?Sized,
    {
        let mut r = Renderer::new_shared(opts, &self.shared);
        let mut state = lock(&self.state);
        while !state.stop && state.next_job < self.order.len() {
            match self.take(&mut state, k) {
                Some(job) => {
                    drop(state);
                    self.render(&mut r, file, k, job);
                    state = lock(&self.state);
                }
                None => {
                    state.workers_waiting += 1;
                    state = wait(&self.room_cond, state);
                    state.workers_waiting -= 1;
                }
            }
        }
        drop(state);
        end(r, teardown);
    }

    /// The caller (renderer 0): hands the next result to `sink` when it is ready, else
    /// renders the next job itself when there is room, else waits for a worker; stops
    /// everything when `sink` breaks.
    fn drive<S, F>(&self, file: &S, opts: &Options, teardown: Teardown, sink: &mut F)
    where
        S: ChunkSource + ?Sized,
        F: FnMut(&ChunkResult) -> ControlFlow<()>,
    {
        let mut r = Renderer::new_shared(opts, &self.shared);
        let mut state = lock(&self.state);
        while state.emitted < self.order.len() {
            let w = state.emitted % self.window;
            if let Some(k) = state.finished_by[w] {
                let index = state.drained[k] % RESULTS_PER_RENDERER;
                drop(state);
                let flow = sink(&lock(&self.results[k][index]));
                state = lock(&self.state);
                state.finished_by[w] = None;
                state.drained[k] += 1;
                state.emitted += 1;
                state.stop = flow.is_break();
                if state.stop || state.workers_waiting > 0 && Self::wakes(&state, k) {
                    // Woken under the lock, a worker slept again on it (PERF.md H138).
                    drop(state);
                    self.room_cond.notify_all();
                    state = lock(&self.state);
                }
                if state.stop {
                    break;
                }
            } else if let Some(job) = self.take(&mut state, 0) {
                drop(state);
                self.render(&mut r, file, 0, job);
                state = lock(&self.state);
            } else {
                state.caller_waits = true;
                state = wait(&self.ready_cond, state);
                state.caller_waits = false;
            }
        }
        drop(state);
        end(r, teardown);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::EvtxFile;
    use crate::wevt_cache::WevtCache;

    #[test]
    fn a_skipped_teardown_leaves_the_renderers_and_writes_the_same() {
        // PERF.md H164: a log of eight chunks (the synthetic logs' chunks behind one file
        // header) through `run` at 1-3 threads with each teardown. The output is the same, in
        // order; every renderer holds a clone of the options, so the options' `Arc` counts the
        // renderers still alive: none after `Free`, one per thread after `Skip`.
        let root = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../shared-fixtures/synthetic/"
        );
        let names = [
            "basic",
            "nested",
            "tokens",
            "unicode",
            "data-shapes",
            "values-scalar",
        ];
        let mut log = Vec::new();
        for (i, name) in names.iter().chain(&["basic", "tokens"]).enumerate() {
            let bytes = std::fs::read(format!("{root}{name}.evtx")).unwrap();
            let start = if i == 0 { 0 } else { 4096 };
            log.extend_from_slice(&bytes[start..4096 + 65536]);
        }
        let file = EvtxFile::open(&log).unwrap();
        let order = file.chunk_order(false);
        assert_eq!(order.len(), 8);
        let mut outputs = Vec::new();
        for threads in 1..=3 {
            for teardown in [Teardown::Free, Teardown::Skip] {
                let cache = std::sync::Arc::new(WevtCache::default());
                let opts = Options {
                    wevt_cache: Some(cache.clone()),
                    ..Options::default()
                };
                let mut out = Vec::new();
                run(
                    &file,
                    &opts,
                    &order,
                    threads,
                    teardown,
                    &mut |c: &ChunkResult| {
                        out.extend_from_slice(&c.bytes);
                        ControlFlow::Continue(())
                    },
                );
                let alive = std::sync::Arc::strong_count(&cache) - 2;
                let want = if teardown == Teardown::Skip {
                    threads
                } else {
                    0
                };
                assert_eq!(alive, want, "{threads} threads, {teardown:?}");
                outputs.push(out);
            }
        }
        assert!(outputs[0].len() > 8 * 1000);
        assert!(outputs.iter().all(|o| *o == outputs[0]));
    }

    #[test]
    fn a_waiting_worker_is_woken_once_half_its_results_are_drained() {
        // PERF.md H138: worker 1 sleeps with its four results full; the caller drains them
        // one by one: no wake at three or four unemitted, a wake at two and below; drains of
        // the caller's own results (renderer 0) never wake a worker.
        let mut state = State {
            next_job: 8,
            emitted: 0,
            finished_by: vec![None; 8],
            taken: vec![4, 4],
            drained: vec![0, 0],
            caller_waits: false,
            workers_waiting: 1,
            stop: false,
        };
        let mut woken = Vec::new();
        for drained in 1..=RESULTS_PER_RENDERER {
            state.drained = vec![drained, drained];
            woken.push((Pipeline::wakes(&state, 0), Pipeline::wakes(&state, 1)));
        }
        let want = [(false, false), (false, true), (false, true), (false, true)];
        assert_eq!(woken, want);
    }
}
