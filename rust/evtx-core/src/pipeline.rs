//! The ordered worker pipeline (chunks come out in the order of contract 3.3): `threads`
//! workers render chunk slots, each with its own [`Renderer`], and one consumer, the caller's
//! thread, hands the results to the sink strictly in chunk order. Workers run at most a window
//! of `2 × threads` chunks ahead of the consumer, so memory stays bounded whatever the file
//! size, and the consumer gives each result back to the workers once the sink is done with it.

use crate::dump::{ChunkResult, Renderer};
use crate::input::{ChunkOrder, ChunkSource};
use crate::options::Options;
use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{mpsc, Condvar, Mutex};

/// Renders the slots of `order` with `threads` workers, handing each result to `sink` in order;
/// with one thread (or none that could start) inline on the caller's thread.
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
    let (tx, rx) = mpsc::channel::<(usize, ChunkResult)>();
    // Scoped threads, not a pool: every worker is joined before `dump` returns, so an embedder
    // may unload the library right after (a dropped rayon pool lets its threads run on).
    std::thread::scope(|scope| {
        let mut spawned = 0;
        for _ in 0..threads {
            let tx = tx.clone();
            let pipeline = &pipeline;
            let worker = std::thread::Builder::new()
                .spawn_scoped(scope, move || pipeline.worker(file, opts, &tx));
            spawned += usize::from(worker.is_ok());
        }
        drop(tx);
        if spawned == 0 {
            // No thread could be started: render on the caller's thread instead.
            run_inline(file, opts, order, sink);
            return;
        }
        pipeline.consume(&rx, sink);
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

/// What the workers and the consumer share.
struct Pipeline<'o> {
    order: &'o ChunkOrder,
    /// Chunks the workers may run ahead of the consumer.
    window: usize,
    /// Index into `order` of the next chunk a worker takes.
    next_index: AtomicUsize,
    /// The sink asked to stop: workers take no more chunks.
    stop: AtomicBool,
    /// Index of the next chunk the sink expects; workers wait on `advanced` while they are a
    /// window ahead of it.
    emitted: Mutex<usize>,
    advanced: Condvar,
    /// Results the sink is done with, reused by the workers.
    recycled: Mutex<Vec<ChunkResult>>,
}

impl<'o> Pipeline<'o> {
    fn new(order: &'o ChunkOrder, threads: usize) -> Pipeline<'o> {
        Pipeline {
            order,
            window: 2 * threads,
            next_index: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            emitted: Mutex::new(0),
            advanced: Condvar::new(),
            recycled: Mutex::new(Vec::new()),
        }
    }

    /// One worker: takes the next chunk, waits for room in the window, renders it into a
    /// recycled result and sends it to the consumer, until the order or the sink is done.
    fn worker<S>(&self, file: &S, opts: &Options, tx: &mpsc::Sender<(usize, ChunkResult)>)
    where
        S: ChunkSource + ?Sized,
    {
        let mut r = Renderer::new(opts);
        loop {
            let i = self.next_index.fetch_add(1, Ordering::Relaxed);
            let Some(slot) = self.order.get(i) else {
                return;
            };
            if !self.wait_for_room(i) {
                return;
            }
            let mut result = self.recycled_result();
            r.render_chunk_into(file, slot, &mut result);
            if tx.send((i, result)).is_err() {
                return;
            }
        }
    }

    /// Blocks while chunk `i` is a window ahead of the consumer; `false` once the sink stopped.
    fn wait_for_room(&self, i: usize) -> bool {
        let mut e = self.emitted.lock().unwrap_or_else(|p| p.into_inner());
        while i >= *e + self.window && !self.stop.load(Ordering::Relaxed) {
            e = self.advanced.wait(e).unwrap_or_else(|p| p.into_inner());
        }
        !self.stop.load(Ordering::Relaxed)
    }

    fn recycled_result(&self) -> ChunkResult {
        self.recycled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .pop()
            .unwrap_or_default()
    }

    /// The consumer: reorders what the workers send and hands it to `sink` in chunk order,
    /// moving the window on after each chunk; stops everything when `sink` breaks.
    fn consume<F>(&self, rx: &mpsc::Receiver<(usize, ChunkResult)>, sink: &mut F)
    where
        F: FnMut(&ChunkResult) -> ControlFlow<()>,
    {
        let mut pending: BTreeMap<usize, ChunkResult> = BTreeMap::new();
        let mut next = 0usize;
        for (i, result) in rx.iter() {
            if self.stop.load(Ordering::Relaxed) {
                continue;
            }
            pending.insert(i, result);
            while let Some(result) = pending.remove(&next) {
                next += 1;
                let flow = sink(&result);
                self.recycled
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(result);
                *self.emitted.lock().unwrap_or_else(|p| p.into_inner()) = next;
                self.advanced.notify_all();
                if flow.is_break() {
                    self.stop.store(true, Ordering::Relaxed);
                    self.advanced.notify_all();
                    pending.clear();
                    break;
                }
            }
        }
    }
}
