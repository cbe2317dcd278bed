//! The thread pipeline (the twin of `rust/evtx-core/src/pipeline.rs`): workers render chunk
//! slots in order into a bounded reorder window that one consumer drains strictly in chunk
//! order, so at most `2 x threads` rendered chunks wait and memory does not grow with the file.
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

/// Renders `order` with `threads` workers (>= 1; at most `threads_max` and one per chunk
/// are used) and feeds `consumer` in order.
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

/// Workers take jobs in order; results go to a window of 2 x threads slots that the
/// consumer drains strictly in job order. A worker waits for its slot to be drained, so no
/// more than `window` chunks are ever rendered ahead of the consumer.
pub const Pipeline = struct {
    gpa: Allocator,
    in: *const Input,
    order: []const u32,
    settings: *const Options,
    mutex: std.Thread.Mutex = .{},
    cond: std.Thread.Condition = .{},
    next_job: usize = 0,
    /// Per window slot: the job it holds, and whether it is rendered.
    window_job: []usize,
    window_ready: []bool,
    results: []ChunkResult,
    renderers: []Renderer,
    workers: []std.Thread,
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
            .window_job = try gpa.alloc(usize, window),
            .window_ready = try gpa.alloc(bool, window),
            .results = try gpa.alloc(ChunkResult, window),
            .renderers = try gpa.alloc(Renderer, threads),
            .workers = try gpa.alloc(std.Thread, threads),
        };
        for (pl.window_job, pl.window_ready, pl.results, 0..) |*j, *rd, *res, i| {
            j.* = i; // Slot i first holds job i.
            rd.* = false;
            res.* = ChunkResult.init(gpa);
        }
        for (pl.renderers) |*r| r.init(gpa, settings);
    }

    pub fn deinit(pl: *Pipeline) void {
        for (pl.results) |*r| r.deinit();
        for (pl.renderers) |*r| r.deinit();
        pl.gpa.free(pl.window_job);
        pl.gpa.free(pl.window_ready);
        pl.gpa.free(pl.results);
        pl.gpa.free(pl.renderers);
        pl.gpa.free(pl.workers);
    }

    fn worker(pl: *Pipeline, r: *Renderer) void {
        const window = pl.results.len;
        while (true) {
            pl.mutex.lock();
            const job = pl.next_job;
            if (job >= pl.order.len or pl.stop) {
                pl.mutex.unlock();
                return;
            }
            pl.next_job += 1;
            const w = job % window;
            while (pl.window_job[w] != job and !pl.stop) pl.cond.wait(&pl.mutex);
            pl.mutex.unlock();
            if (pl.stop) return;
            const err = r.renderChunk(pl.in, pl.order[job], &pl.results[w]);
            pl.mutex.lock();
            if (err) |_| {} else |e| {
                pl.failed = e;
                pl.stop = true;
            }
            pl.window_ready[w] = true;
            pl.cond.broadcast();
            pl.mutex.unlock();
        }
    }

    pub fn drive(pl: *Pipeline, consumer: Consumer) anyerror!void {
        var spawned: usize = 0;
        defer {
            pl.mutex.lock();
            pl.stop = true;
            pl.cond.broadcast();
            pl.mutex.unlock();
            for (pl.workers[0..spawned]) |t| t.join();
        }
        for (pl.renderers, 0..) |*r, i| {
            pl.workers[i] = try std.Thread.spawn(.{}, worker, .{ pl, r });
            spawned += 1;
        }
        const window = pl.results.len;
        for (0..pl.order.len) |job| {
            const w = job % window;
            pl.mutex.lock();
            while (!pl.window_ready[w] and !pl.stop) pl.cond.wait(&pl.mutex);
            if (pl.failed) |e| {
                pl.mutex.unlock();
                return e;
            }
            pl.mutex.unlock();
            try consumer.consume(consumer.context, &pl.results[w]);
            pl.mutex.lock();
            pl.window_ready[w] = false;
            pl.window_job[w] = job + window;
            pl.cond.broadcast();
            pl.mutex.unlock();
        }
    }
};
