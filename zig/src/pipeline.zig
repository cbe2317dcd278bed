//! The thread pipeline (the twin of `rust/evtx-core/src/pipeline.rs`): `threads` renderers,
//! the caller's thread and `threads - 1` workers, render chunk slots in order into a bounded
//! reorder window that the caller drains strictly in chunk order, so at most `4 x threads`
//! rendered chunks wait and memory does not grow with the file.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const limits = @import("limits.zig");
const dump = @import("dump.zig");
const Input = @import("input.zig").Input;
const ChunkOrder = @import("input.zig").ChunkOrder;
const Options = @import("options.zig").Options;
const program = @import("program.zig");
const Renderer = dump.Renderer;
const ChunkResult = dump.ChunkResult;

/// Receives chunk results in output order. Returning an error stops the dump.
pub const Consumer = struct {
    context: *anyopaque,
    consume: *const fn (context: *anyopaque, result: *const ChunkResult) anyerror!void,
};

/// What `run` does with its renderers, results and shared table once the last chunk is out
/// (the twin of evtx-rs's `pipeline::Teardown`).
pub const Teardown = enum {
    /// Free them: a library call, after which the process goes on.
    free,
    /// Leave them to the process's exit, which follows at once (the CLI): freeing them one
    /// allocation at a time is serial work after the last chunk, while the exit returns their
    /// pages in bulk (PERF.md H164).
    skip,
};

/// Renders `order` with `threads` renderers, the caller's thread among them (>= 1; at most
/// `limits.threads_max` and one per chunk are used), and feeds `consumer` in order.
pub fn run(
    gpa: Allocator,
    in: *const Input,
    order: ChunkOrder,
    settings: *const Options,
    threads: usize,
    consumer: Consumer,
) anyerror!void {
    return runWith(gpa, in, order, settings, threads, .free, consumer);
}

/// `run` with the teardown chosen: `.skip` only for a process that exits right after (the
/// CLI, evtx-rs's `dump_before_exit`): the memory is never given back otherwise.
pub fn runWith(
    gpa: Allocator,
    in: *const Input,
    order: ChunkOrder,
    settings: *const Options,
    threads: usize,
    teardown: Teardown,
    consumer: Consumer,
) anyerror!void {
    assert(threads >= 1);
    if (threads == 1 or order.len() <= 1) {
        return runInline(gpa, in, order, settings, teardown, consumer);
    }
    var pipeline: Pipeline = undefined;
    try pipeline.init(gpa, in, order, settings, @min(threads, limits.threads_max, order.len()));
    // The workers are joined in `drive` either way; only the frees are skipped.
    defer if (teardown == .free) pipeline.deinit();
    return pipeline.drive(consumer);
}

/// One thread: read and render each slot in turn on the caller's thread (a read-ahead
/// thread that overlapped the copy was measured slower: PERF.md H10c).
pub fn runInline(
    gpa: Allocator,
    in: *const Input,
    order: ChunkOrder,
    settings: *const Options,
    teardown: Teardown,
    consumer: Consumer,
) anyerror!void {
    const renderer = try gpa.create(Renderer);
    defer if (teardown == .free) gpa.destroy(renderer);
    renderer.init(gpa, settings);
    defer if (teardown == .free) renderer.deinit();
    var result = ChunkResult.init(gpa);
    defer if (teardown == .free) result.deinit();
    var slots = order.iterator();
    while (slots.next()) |slot| {
        try renderer.renderChunk(in, slot, &result);
        try consumer.consume(consumer.context, &result);
    }
}

/// Results each renderer owns; the window is this many jobs per renderer.
const results_per_renderer = 4;

/// Bytes of text each pipeline result has room for from the start (evtx-rs's renderer reserves
/// as much before its first chunk: `last_output`). Grown from empty by halves, the eight results
/// of `-t 2` moved ~40 times a run (`mremap`, each a TLB flush on the other core while both
/// threads run): PERF.md H166. Untouched room costs no memory until written.
const result_text_initial = 128 << 10;

/// Jobs are taken in order and the caller hands them to the consumer strictly in job order.
/// The caller renders too (PERF.md H82): `threads` renderers are the caller and
/// `threads - 1` workers, so `-t 2` runs two busy threads on two cores, not two workers and a
/// consumer that wakes per chunk. Each renderer fills its own results in turn, so a result's
/// buffers are only ever written by one thread and stay in that core's cache (PERF.md H83).
/// A job is taken only when it is less than `window` jobs ahead of the consumer and one of
/// its renderer's results is drained, so memory does not grow with the file.
pub const Pipeline = struct {
    gpa: Allocator,
    in: *const Input,
    order: ChunkOrder,
    settings: *const Options,
    mutex: std.Thread.Mutex = .{},
    /// Signalled when a worker finishes a job while the caller waits for one.
    ready_cond: std.Thread.Condition = .{},
    /// Signalled when the caller drains a result while a worker waits for room.
    room_cond: std.Thread.Condition = .{},
    next_job: usize = 0,
    /// Jobs handed to the consumer; job `j` may be taken once `j < emitted + window`.
    emitted: usize = 0,
    /// Per window slot (job `j` in slot `j % window`): the renderer that finished the job.
    finished_by: []?usize,
    /// Per renderer: jobs taken and results drained. A renderer's jobs are drained in the
    /// order it took them, so its job number `taken` goes to its result
    /// `taken % results_per_renderer`.
    taken: []usize,
    drained: []usize,
    /// `results_per_renderer` per renderer, renderer `k`'s from `k * results_per_renderer`.
    results: []ChunkResult,
    /// `renderers[0]` is the caller's, `renderers[1..]` the workers'.
    renderers: []Renderer,
    workers: []std.Thread,
    /// The renderers' shared names and programs: a program is learnt once per run, not once
    /// per renderer (PERF.md H95).
    shared: program.Shared,
    caller_waits: bool = false,
    workers_waiting: usize = 0,
    stop: bool = false,
    failed: ?anyerror = null,

    /// `pl` must not move after `init` (the workers point at it once `drive` starts them).
    pub fn init(
        pl: *Pipeline,
        gpa: Allocator,
        in: *const Input,
        order: ChunkOrder,
        settings: *const Options,
        threads: usize,
    ) !void {
        assert(threads >= 2 and threads <= limits.threads_max);
        pl.* = .{
            .gpa = gpa,
            .in = in,
            .order = order,
            .settings = settings,
            .finished_by = try gpa.alloc(?usize, results_per_renderer * threads),
            .taken = try gpa.alloc(usize, threads),
            .drained = try gpa.alloc(usize, threads),
            .results = try gpa.alloc(ChunkResult, results_per_renderer * threads),
            .renderers = try gpa.alloc(Renderer, threads),
            .workers = try gpa.alloc(std.Thread, threads - 1),
            .shared = program.Shared.init(gpa),
        };
        @memset(pl.finished_by, null);
        @memset(pl.taken, 0);
        @memset(pl.drained, 0);
        for (pl.results) |*res| {
            res.* = ChunkResult.init(gpa);
            // A hint: without the room the text grows as before.
            res.out.list.ensureTotalCapacity(gpa, result_text_initial) catch {};
        }
        for (pl.renderers, 0..) |*r, k| {
            r.init(gpa, settings);
            r.programs.shared = &pl.shared;
            // Unique fingerprints (definitions no content fingerprint describes) must not
            // meet another renderer's: each renderer counts them in its own range.
            r.parser.unique_definitions = @as(u64, k) << 48;
        }
    }

    pub fn deinit(pl: *Pipeline) void {
        for (pl.results) |*r| r.deinit();
        for (pl.renderers) |*r| r.deinit();
        pl.shared.deinit();
        pl.gpa.free(pl.finished_by);
        pl.gpa.free(pl.taken);
        pl.gpa.free(pl.drained);
        pl.gpa.free(pl.results);
        pl.gpa.free(pl.renderers);
        pl.gpa.free(pl.workers);
    }

    const Job = struct { job: usize, result: usize };

    /// Takes the next job for renderer `k` if the window and `k`'s results have room (mutex
    /// held): the job and the index into `results` it goes to.
    fn take(pl: *Pipeline, k: usize) ?Job {
        const job = pl.next_job;
        const room = job < pl.order.len() and job < pl.emitted + pl.finished_by.len and
            pl.taken[k] - pl.drained[k] < results_per_renderer;
        if (!room or pl.stop) return null;
        pl.next_job += 1;
        const result = k * results_per_renderer + pl.taken[k] % results_per_renderer;
        pl.taken[k] += 1;
        return .{ .job = job, .result = result };
    }

    /// Whether draining one of renderer `k`'s results is the time to wake waiting workers
    /// (the counts read under the mutex): `k` is a worker with half its results free again
    /// (PERF.md H138). A worker waits only with all its results full (a full window means
    /// every renderer's are), so only a drain of its own lets it take a job; woken at half,
    /// it takes two, and sleeps half as often. At the end, a drain at half wakes it too, to
    /// see there is nothing left.
    fn wakes(taken: []const usize, drained: []const usize, k: usize) bool {
        return k != 0 and taken[k] - drained[k] <= results_per_renderer / 2;
    }

    /// Renderer `k` renders `job` (mutex held on entry and exit, released meanwhile), then
    /// marks it finished, or the run failed, waking the caller if it waits.
    fn render(pl: *Pipeline, k: usize, job: Job) void {
        pl.mutex.unlock();
        const outcome = pl.renderers[k].renderChunk(
            pl.in,
            pl.order.get(job.job).?,
            &pl.results[job.result],
        );
        pl.mutex.lock();
        if (outcome) |_| {} else |e| {
            if (pl.failed == null) pl.failed = e;
            pl.stop = true;
        }
        pl.finished_by[job.job % pl.finished_by.len] = k;
        if (pl.caller_waits) pl.ready_cond.signal();
    }

    fn worker(pl: *Pipeline, k: usize) void {
        pl.mutex.lock();
        defer pl.mutex.unlock();
        while (!pl.stop and pl.next_job < pl.order.len()) {
            if (pl.take(k)) |job| {
                pl.render(k, job);
            } else {
                pl.workers_waiting += 1;
                pl.room_cond.wait(&pl.mutex);
                pl.workers_waiting -= 1;
            }
        }
    }

    /// The caller (renderer 0): hands the next result to `consumer` when it is ready, else
    /// renders the next job itself when there is room, else waits for a worker.
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
        for (pl.workers, 1..) |*t, k| {
            t.* = std.Thread.spawn(.{}, worker, .{ pl, k }) catch break;
            spawned += 1;
        }
        pl.mutex.lock();
        defer pl.mutex.unlock();
        while (pl.emitted < pl.order.len()) {
            if (pl.failed) |e| return e;
            const w = pl.emitted % pl.finished_by.len;
            if (pl.finished_by[w]) |k| {
                const result = k * results_per_renderer + pl.drained[k] % results_per_renderer;
                pl.mutex.unlock();
                const outcome = consumer.consume(consumer.context, &pl.results[result]);
                pl.mutex.lock();
                pl.finished_by[w] = null;
                pl.drained[k] += 1;
                pl.emitted += 1;
                if (pl.workers_waiting > 0 and wakes(pl.taken, pl.drained, k)) {
                    // Woken under the lock, a worker slept again on it (PERF.md H138).
                    pl.mutex.unlock();
                    pl.room_cond.broadcast();
                    pl.mutex.lock();
                }
                try outcome;
            } else if (pl.take(0)) |job| {
                pl.render(0, job);
            } else {
                pl.caller_waits = true;
                pl.ready_cond.wait(&pl.mutex);
                pl.caller_waits = false;
            }
        }
    }
};

/// Every rendered entry of `bytes` through renderer `r`, in output order; caller frees.
fn renderWith(gpa: Allocator, r: *Renderer, bytes: []const u8, settings: *const Options) ![]u8 {
    const file = try dump.EvtxFile.open(gpa, dump.Input.fromBytes(bytes), settings);
    var text: std.ArrayList(u8) = .empty;
    errdefer text.deinit(gpa);
    var result = ChunkResult.init(gpa);
    defer result.deinit();
    var slots = file.order.iterator();
    while (slots.next()) |slot| {
        try r.renderChunk(&file.input, slot, &result);
        for (result.entries.items) |*e| {
            if (e.outcome == .rendered) try text.appendSlice(gpa, result.text(e));
        }
    }
    return text.toOwnedSlice(gpa);
}

test "shared programs: a renderer replays what another learnt, as a lone renderer writes" {
    // PERF.md H95: renderer `b` renders every synthetic log after renderer `a`, with the
    // names and programs they share, so it replays what `a` learnt. Both must write what a
    // renderer of its own writes, and `b` must have learnt (stored) nothing itself.
    const testing = @import("testing.zig");
    const gpa = std.testing.allocator;
    for ([_]@import("options.zig").Format{ .jsonl, .xml }) |format| {
        var settings: Options = .{};
        settings.format = format;
        var shared = program.Shared.init(gpa);
        defer shared.deinit();
        var pair: [2]Renderer = undefined;
        for (&pair, 0..) |*r, k| {
            r.init(gpa, &settings);
            r.programs.shared = &shared;
            r.parser.unique_definitions = @as(u64, k) << 48;
        }
        defer for (&pair) |*r| r.deinit();
        const logs = testing.synthetic_fixtures ++ [_][]const u8{"raw-fragments"};
        for (logs) |name| {
            var path: [128]u8 = undefined;
            const bytes = try testing.readFixture(
                gpa,
                try std.fmt.bufPrint(&path, "synthetic/{s}.evtx", .{name}),
            );
            defer gpa.free(bytes);
            // The same definitions with one name's text changed ("Data" -> "Dbta" in
            // UTF-16): new fingerprints, so `b` must not replay `a`'s programs for them.
            const renamed = try gpa.dupe(u8, bytes);
            defer gpa.free(renamed);
            const from = "D\x00a\x00t\x00a\x00";
            var at: usize = 0;
            while (std.mem.indexOfPos(u8, renamed, at, from)) |k| : (at = k + from.len) {
                renamed[k + 2] = 'b';
            }
            for ([_][]const u8{ bytes, renamed }, 0..) |log, round| {
                const want = try testing.dumpBytes(gpa, log, &settings, true);
                defer gpa.free(want);
                const stored = pair[1].programs.stores;
                // The renamed log through `b` only: `a` never saw it.
                if (round == 0) {
                    const got_a = try renderWith(gpa, &pair[0], log, &settings);
                    defer gpa.free(got_a);
                    try std.testing.expectEqualStrings(want, got_a);
                }
                const got_b = try renderWith(gpa, &pair[1], log, &settings);
                defer gpa.free(got_b);
                try std.testing.expectEqualStrings(want, got_b);
                if (round == 0) try std.testing.expectEqual(stored, pair[1].programs.stores);
            }
        }
        try std.testing.expect(pair[0].programs.stores > 10);
        // PERF.md H137: what `b` did not learn itself (the renamed logs) it replays from
        // `a`'s bodies themselves, not from copies of them.
        const b = &pair[1].programs;
        try std.testing.expect(b.programs.items.len > b.stores);
        const imported = b.programs.items.len - b.stores;
        try std.testing.expectEqual(imported, b.sharedBodies(&pair[0].programs));
    }
}

/// A log of eight chunks for the tests: the synthetic logs' chunks behind one file header;
/// caller frees.
fn eightChunks(gpa: Allocator) ![]u8 {
    const testing = @import("testing.zig");
    const names = [_][]const u8{
        "basic",       "nested",        "tokens", "unicode",
        "data-shapes", "values-scalar", "basic",  "tokens",
    };
    var log: std.ArrayList(u8) = .empty;
    errdefer log.deinit(gpa);
    for (names, 0..) |name, i| {
        var path: [128]u8 = undefined;
        const bytes = try testing.readFixture(
            gpa,
            try std.fmt.bufPrint(&path, "synthetic/{s}.evtx", .{name}),
        );
        defer gpa.free(bytes);
        const start: usize = if (i == 0) 0 else 4096;
        try log.appendSlice(gpa, bytes[start .. 4096 + 65536]);
    }
    return log.toOwnedSlice(gpa);
}

test "the pipeline's results have room for a chunk's text from the start" {
    // PERF.md H166: every result of every renderer, before any chunk (`init` reads nothing).
    const settings: Options = .{};
    const in = dump.Input.fromBytes(&.{});
    const order: ChunkOrder = .{ .oldest = 0, .first_end = 3, .wrap_end = 0 };
    var pl: Pipeline = undefined;
    try pl.init(std.testing.allocator, &in, order, &settings, 3);
    defer pl.deinit();
    try std.testing.expectEqual(@as(usize, 3 * results_per_renderer), pl.results.len);
    for (pl.results) |*res| {
        try std.testing.expect(res.out.list.capacity >= result_text_initial);
        try std.testing.expectEqual(@as(usize, 0), res.out.list.items.len);
    }
}

test "a skipped teardown leaves the renderers and writes the same" {
    // PERF.md H164: a log of eight chunks (the synthetic logs' chunks behind one file header)
    // through `runWith` at 1-3 threads with each teardown, counting the allocator's calls.
    // The output is the same, in order; `.free` gives back every allocation, `.skip` leaves
    // some to the exit (here to the arena under the counter).
    const testing = @import("testing.zig");
    const gpa = std.testing.allocator;
    const log = try eightChunks(gpa);
    defer gpa.free(log);
    const settings: Options = .{};
    const file = try dump.EvtxFile.open(gpa, dump.Input.fromBytes(log), &settings);
    try std.testing.expectEqual(@as(usize, 8), file.order.len());
    var first: ?[]u8 = null;
    defer if (first) |f| gpa.free(f);
    for (1..4) |threads| {
        for ([_]Teardown{ .free, .skip }) |teardown| {
            var arena = std.heap.ArenaAllocator.init(gpa);
            defer arena.deinit();
            var counted = std.testing.FailingAllocator.init(arena.allocator(), .{});
            // The arena and the counter are not thread-safe; the renderers' threads share them.
            var shared: std.heap.ThreadSafeAllocator = .{ .child_allocator = counted.allocator() };
            var c: testing.Collect = .{ .gpa = gpa };
            defer c.text.deinit(gpa);
            const consumer: Consumer = .{ .context = &c, .consume = testing.Collect.consume };
            const counting = shared.allocator();
            try runWith(counting, &file.input, file.order, &settings, threads, teardown, consumer);
            if (teardown == .free) {
                try std.testing.expectEqual(counted.allocations, counted.deallocations);
            } else {
                try std.testing.expect(counted.deallocations < counted.allocations);
            }
            if (first) |f| try std.testing.expectEqualStrings(f, c.text.items) else {
                try std.testing.expect(c.text.items.len > 8 * 1000);
                first = try gpa.dupe(u8, c.text.items);
            }
        }
    }
}

test "a waiting worker is woken once half its results are drained" {
    // PERF.md H138: worker 1 sleeps with its four results full; the caller drains them one
    // by one: no wake at three or four unemitted, a wake at two and below; drains of the
    // caller's own results (renderer 0) never wake a worker.
    const taken = [_]usize{ 4, 4 };
    var woken: [results_per_renderer][2]bool = undefined;
    for (&woken, 1..) |*w, drained| {
        const d = [_]usize{ drained, drained };
        w.* = .{ Pipeline.wakes(&taken, &d, 0), Pipeline.wakes(&taken, &d, 1) };
    }
    const want = [results_per_renderer][2]bool{
        .{ false, false },
        .{ false, true },
        .{ false, true },
        .{ false, true },
    };
    try std.testing.expectEqual(want, woken);
}
