//! The thread pipeline (the twin of `rust/evtx-core/src/pipeline.rs`): `threads` renderers,
//! the caller's thread and `threads - 1` workers, render chunk slots in order into a bounded
//! reorder window that the caller drains strictly in chunk order, so at most `2 x threads`
//! rendered chunks wait and memory does not grow with the file.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const limits = @import("limits.zig");
const dump = @import("dump.zig");
const Input = @import("input.zig").Input;
const Options = @import("options.zig").Options;
const Renderer = dump.Renderer;
const ChunkResult = dump.ChunkResult;

/// Receives chunk results in output order. Returning an error stops the dump.
pub const Consumer = struct {
    context: *anyopaque,
    consume: *const fn (context: *anyopaque, result: *const ChunkResult) anyerror!void,
};

/// Most worker threads `run` uses, whatever it is asked (same value as the Rust engine's
/// `MAX_THREADS`): past a few per core, more workers only cost memory (a renderer, a window
/// and two results each) and stacks, not speed.
pub const threads_max = limits.threads_max;

/// Renders `order` with `threads` renderers, the caller's thread among them (>= 1; at most
/// `threads_max` and one per chunk are used), and feeds `consumer` in order.
pub fn run(
    gpa: Allocator,
    in: *const Input,
    order: []const u32,
    settings: *const Options,
    threads: usize,
    consumer: Consumer,
) anyerror!void {
    assert(threads >= 1);
    if (threads == 1 or order.len <= 1) return runInline(gpa, in, order, settings, consumer);
    var pipeline: Pipeline = undefined;
    try pipeline.init(gpa, in, order, settings, @min(threads, threads_max, order.len));
    defer pipeline.deinit();
    return pipeline.drive(consumer);
}

/// One thread: read and render each slot in turn on the caller's thread (a read-ahead
/// thread that overlapped the copy was measured slower: PERF.md H10c).
pub fn runInline(
    gpa: Allocator,
    in: *const Input,
    order: []const u32,
    settings: *const Options,
    consumer: Consumer,
) anyerror!void {
    const renderer = try gpa.create(Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, settings);
    defer renderer.deinit();
    var result = ChunkResult.init(gpa);
    defer result.deinit();
    for (order) |slot| {
        try renderer.renderChunk(in, slot, &result);
        try consumer.consume(consumer.context, &result);
    }
}

/// Jobs are taken in order; job `j` is rendered into window slot `j % window`, and the
/// caller hands slot after slot to the consumer strictly in job order. The caller renders
/// too (PERF.md H82): `threads` renderers are the caller and `threads - 1` workers, so `-t 2`
/// runs two busy threads on two cores, not two workers and a consumer that wakes per chunk.
/// A job is taken only once its slot is drained (a worker that took one early waits), so
/// no more than `window` chunks are ever rendered ahead of the consumer.
pub const Pipeline = struct {
    gpa: Allocator,
    in: *const Input,
    order: []const u32,
    settings: *const Options,
    mutex: std.Thread.Mutex = .{},
    /// Signalled when a worker finishes a job while the caller waits for one.
    ready_cond: std.Thread.Condition = .{},
    /// Signalled when the caller drains a slot while a worker waits for room.
    room_cond: std.Thread.Condition = .{},
    next_job: usize = 0,
    /// Jobs handed to the consumer; job `j` may be rendered once `j < emitted + window`.
    emitted: usize = 0,
    /// Per window slot: whether it holds its job's finished result.
    window_ready: []bool,
    results: []ChunkResult,
    /// `renderers[0]` is the caller's, `renderers[1..]` the workers'.
    renderers: []Renderer,
    workers: []std.Thread,
    caller_waits: bool = false,
    workers_waiting: usize = 0,
    stop: bool = false,
    failed: ?anyerror = null,

    /// `pl` must not move after `init` (the workers point at it once `drive` starts them).
    pub fn init(
        pl: *Pipeline,
        gpa: Allocator,
        in: *const Input,
        order: []const u32,
        settings: *const Options,
        threads: usize,
    ) !void {
        assert(threads >= 2 and threads <= threads_max);
        const window = 2 * threads;
        pl.* = .{
            .gpa = gpa,
            .in = in,
            .order = order,
            .settings = settings,
            .window_ready = try gpa.alloc(bool, window),
            .results = try gpa.alloc(ChunkResult, window),
            .renderers = try gpa.alloc(Renderer, threads),
            .workers = try gpa.alloc(std.Thread, threads - 1),
        };
        for (pl.window_ready, pl.results) |*rd, *res| {
            rd.* = false;
            res.* = ChunkResult.init(gpa);
        }
        for (pl.renderers) |*r| r.init(gpa, settings);
    }

    pub fn deinit(pl: *Pipeline) void {
        for (pl.results) |*r| r.deinit();
        for (pl.renderers) |*r| r.deinit();
        pl.gpa.free(pl.window_ready);
        pl.gpa.free(pl.results);
        pl.gpa.free(pl.renderers);
        pl.gpa.free(pl.workers);
    }

    /// Records job `job`'s outcome (mutex held): its slot is ready, or the run failed.
    fn finished(pl: *Pipeline, job: usize, outcome: anyerror!void) void {
        if (outcome) |_| {} else |e| {
            if (pl.failed == null) pl.failed = e;
            pl.stop = true;
        }
        pl.window_ready[job % pl.results.len] = true;
        if (pl.caller_waits) pl.ready_cond.signal();
    }

    fn worker(pl: *Pipeline, r: *Renderer) void {
        const window = pl.results.len;
        pl.mutex.lock();
        defer pl.mutex.unlock();
        while (!pl.stop and pl.next_job < pl.order.len) {
            const job = pl.next_job;
            pl.next_job += 1;
            while (job >= pl.emitted + window and !pl.stop) {
                pl.workers_waiting += 1;
                pl.room_cond.wait(&pl.mutex);
                pl.workers_waiting -= 1;
            }
            if (pl.stop) return;
            pl.mutex.unlock();
            const outcome = r.renderChunk(pl.in, pl.order[job], &pl.results[job % window]);
            pl.mutex.lock();
            pl.finished(job, outcome);
        }
    }

    /// The caller: hands the next result to `consumer` when it is ready, else renders the
    /// next job itself when its slot is free, else waits for a worker.
    pub fn drive(pl: *Pipeline, consumer: Consumer) anyerror!void {
        var spawned: usize = 0;
        defer {
            pl.mutex.lock();
            pl.stop = true;
            pl.room_cond.broadcast();
            pl.mutex.unlock();
            for (pl.workers[0..spawned]) |t| t.join();
        }
        // A worker that cannot start leaves its share to the others and the caller.
        for (pl.workers, pl.renderers[1..]) |*t, *r| {
            t.* = std.Thread.spawn(.{}, worker, .{ pl, r }) catch break;
            spawned += 1;
        }
        const window = pl.results.len;
        pl.mutex.lock();
        defer pl.mutex.unlock();
        while (pl.emitted < pl.order.len) {
            if (pl.failed) |e| return e;
            const w = pl.emitted % window;
            if (pl.window_ready[w]) {
                pl.mutex.unlock();
                const outcome = consumer.consume(consumer.context, &pl.results[w]);
                pl.mutex.lock();
                pl.window_ready[w] = false;
                pl.emitted += 1;
                if (pl.workers_waiting > 0) pl.room_cond.broadcast();
                try outcome;
            } else if (pl.next_job < pl.order.len and pl.next_job < pl.emitted + window) {
                const job = pl.next_job;
                pl.next_job += 1;
                pl.mutex.unlock();
                const outcome = pl.renderers[0].renderChunk(
                    pl.in,
                    pl.order[job],
                    &pl.results[job % window],
                );
                pl.mutex.lock();
                pl.finished(job, outcome);
            } else {
                pl.caller_waits = true;
                pl.ready_cond.wait(&pl.mutex);
                pl.caller_waits = false;
            }
        }
    }
};
