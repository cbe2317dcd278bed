//! The driver: an EVTX file and its chunk order (3.3), and rendering one chunk into a
//! reusable buffer with one entry per record (or error). pipeline.zig runs renderers on
//! threads and hands chunk results to a consumer strictly in chunk order.
//!
//! Memory: each renderer owns a parser (per-chunk caches, reset with retained capacity)
//! and one 64 KiB chunk window it reads its chunk into (`input.zig`); each in-flight result
//! owns its output buffer; nothing is freed between chunks. At most `4 x threads` results
//! are in flight, so memory does not grow with the file.
const std = @import("std");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const file_header = @import("file_header.zig");
const chunk = @import("chunk.zig");
const records = @import("records.zig");
const errors = @import("error.zig");
const crc32 = @import("crc32.zig");
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const render_json = @import("render_json.zig");
const render_xml = @import("render_xml.zig");
const program = @import("program.zig");
const input = @import("input.zig");
pub const Input = input.Input;
pub const ChunkOrder = input.ChunkOrder;
const template = @import("template.zig");
const carve = @import("carve.zig");
const provenance = @import("provenance.zig");
const mta = @import("mta.zig");
const wevt_cache = @import("wevt_cache.zig");
const options = @import("options.zig");
const filter = @import("filter.zig");
const skip = @import("skip.zig");
const pipeline = @import("pipeline.zig");
const triage = @import("triage.zig");
const Options = options.Options;
const Format = options.Format;

/// One rendered or failed record, or a chunk error, of a rendered chunk. Records that
/// `--events` excludes get none (as in the Rust engine).
pub const RecordResult = struct {
    /// Record header id; null when unknown (chunk errors, unreadable record headers).
    record_id: ?u64,
    /// Record FILETIME (0 when unknown).
    filetime: u64,
    slot: u32,
    file_offset: u64,
    /// A carved record (`--recover-records`); carved records that fail are never entries.
    recovered: bool = false,
    /// The checksum status of the record's chunk: computed with `--provenance` or
    /// `--validate-checksums`, else `unchecked`.
    checksum: provenance.Checksum = .unchecked,
    outcome: Outcome,

    /// The failure's kind; null when the record rendered.
    pub fn kind(e: *const RecordResult) ?errors.ErrorKind {
        return switch (e.outcome) {
            .rendered => null,
            .failed => |f| f.kind,
        };
    }

    /// The failure's detail; empty when the record rendered.
    pub fn detail(e: *const RecordResult) []const u8 {
        return switch (e.outcome) {
            .rendered => "",
            .failed => |f| f.detail,
        };
    }
};

/// What happened to one record (the Rust engine's `Outcome`).
pub const Outcome = union(enum) {
    /// Byte range in the chunk result's output: exactly what the CLI prints for the record
    /// (banner, text, newline).
    rendered: Span,
    /// The record or chunk failed.
    failed: errors.Failure,
};

/// A byte range `start..start + len` of a chunk result's output.
pub const Span = struct { start: u32, len: u32 };

/// The rendered text and entries of one chunk slot.
pub const ChunkResult = struct {
    out: escape.Out,
    entries: std.ArrayList(RecordResult) = .empty,
    /// Formatted error details (chunk and record header errors).
    details: errors.Details = .{},
    slot: u32 = 0,
    /// The slot is the one a cut file ends inside: its `incomplete chunk` line is our extra
    /// (shared-fixtures/README.md) and never stops a run (`--stop-after-one-error`).
    partial: bool = false,
    /// Entries that failed, counted by the renderer that filled them (`renderChunk`): a sink
    /// on another thread (the caller at `-t 2` and up) that asks this instead of reading every
    /// entry leaves the worker's entries in the worker's cache (PERF.md H174).
    failures: usize = 0,

    pub fn init(gpa: Allocator) ChunkResult {
        return .{ .out = escape.Out.init(gpa) };
    }

    pub fn deinit(r: *ChunkResult) void {
        r.details.deinit(r.out.gpa);
        r.entries.deinit(r.out.gpa);
        r.out.deinit();
    }

    /// What the CLI prints for `e`: its text when rendered, nothing when it failed.
    pub fn text(r: *const ChunkResult, e: *const RecordResult) []const u8 {
        return switch (e.outcome) {
            .rendered => |span| r.out.list.items[span.start..][0..span.len],
            .failed => "",
        };
    }
};

/// Renders chunks; one per thread.
pub const Renderer = struct {
    gpa: Allocator,
    parser: tokens.Parser,
    json: render_json.JsonRenderer,
    settings: *const Options,
    visited: std.bit_set.ArrayBitSet(usize, chunk.size) = .initEmpty(),
    /// The chunk being rendered, when the input is read rather than lent.
    window: input.ChunkSlot = .{},
    programs: program.Programs,
    /// Texts of recent values for the replay (PERF.md H31).
    memo: values_format.Memo = .{},
    /// A partial chunk slot's bytes, zero-padded to a whole chunk (allocated on first use).
    partial: ?*[chunk.size]u8 = null,
    /// Compiled programs (scan and replay); off only in tests, to compare with the full
    /// parse of every record.
    compiled: bool = true,
    /// The slot being rendered and its chunk's checksum status (`RecordResult.checksum`).
    slot: u32 = 0,
    checksum: provenance.Checksum = .unchecked,
    /// Whether the run has a filter (`Options.filter`): without one, records take the paths
    /// they took before filters existed, and `keep` stays true.
    filtering: bool = false,
    /// Whether the filter keeps the record `writeRecord` just wrote (set only when filtering).
    keep: bool = true,
    /// The filter's scratch: a field's text.
    field_text: escape.Out,
    /// The skip path's entries (filtered runs only, PERF.md H210), and whether the record
    /// being written may teach them (`skip.Verdict.unknown`).
    skips: skip.Skips,
    skip_learn: bool = false,
    /// `triage` (triage.zig): reads each record's fields as the filter does and is told of
    /// every record that renders; its text is dropped. Null in a dump.
    fields: ?*triage.Collector = null,

    /// `r` must not move after `init` (the JSON state points at its parser).
    pub fn init(r: *Renderer, gpa: Allocator, settings: *const Options) void {
        r.* = .{
            .gpa = gpa,
            .parser = tokens.Parser.init(gpa),
            .json = undefined,
            .settings = settings,
            .programs = program.Programs.init(gpa),
            .filtering = !settings.filter.isEmpty(),
            .field_text = escape.Out.init(gpa),
            .skips = skip.Skips.init(gpa),
        };
        r.parser.ansi = settings.ansi_codec;
        r.json = render_json.JsonRenderer.init(
            &r.parser,
            undefined,
            settings.ansi_codec,
            settings.separate_json_attributes,
        );
    }

    pub fn deinit(r: *Renderer) void {
        if (r.partial) |buf| r.gpa.destroy(buf);
        r.programs.deinit();
        r.field_text.deinit();
        r.skips.deinit();
        r.json.deinit();
        r.parser.deinit();
    }

    /// Appends a formatted detail to `res.details`; its position for `RecordResult.detail_at`.
    fn addDetail(res: *ChunkResult, comptime fmt: []const u8, args: anytype) Allocator.Error!u32 {
        return res.details.add(res.out.gpa, fmt, args);
    }

    fn chunkError(
        res: *ChunkResult,
        slot: u32,
        kind: errors.ErrorKind,
        detail_at: u32,
    ) Allocator.Error!void {
        try res.entries.append(res.out.gpa, .{
            .record_id = null,
            .filetime = 0,
            .slot = slot,
            .file_offset = file_header.chunkOffset(slot),
            .outcome = .{ .failed = .{ .kind = kind, .detail_at = detail_at } },
        });
    }

    /// Renders chunk slot `slot` of `in` into `res` (cleared first).
    pub fn renderChunk(
        r: *Renderer,
        in: *const Input,
        slot: u32,
        res: *ChunkResult,
    ) Allocator.Error!void {
        const got = in.read(file_header.chunkOffset(slot), &r.window.bytes);
        assert(got.len <= chunk.size);
        res.details.clear();
        try r.renderEntries(in, slot, got, res);
        // Counted here, where the entries were just written (PERF.md H174). The rendered spans
        // tile the output from 0 (a failed or excluded record is truncated away), so a sink
        // may write a chunk without failures as one run.
        var failures: usize = 0;
        var end: usize = 0;
        for (res.entries.items) |*e| switch (e.outcome) {
            .rendered => |span| {
                assert(span.start == end);
                end = span.start + span.len;
            },
            .failed => |*f| {
                failures += 1;
                if (f.detail_at) |at| f.detail = res.details.get(at);
            },
        };
        assert(end == res.out.len());
        res.failures = failures;
    }

    /// A slot that cannot be read whole (past the end, or cut since the input was opened) is
    /// `incomplete chunk`, naming the bytes the read lacked.
    fn renderEntries(
        r: *Renderer,
        in: *const Input,
        slot: u32,
        got: []const u8,
        res: *ChunkResult,
    ) Allocator.Error!void {
        res.out.truncate(0);
        res.entries.clearRetainingCapacity();
        res.slot = slot;
        res.partial = false;
        r.slot = slot;
        r.checksum = .unchecked;
        if (got.len < chunk.size) {
            // The slot the file (as opened) ends inside, starting like a chunk: a log cut inside
            // its last chunk. Any other short slot (the file shrank since) is a plain error.
            if (in.isCutSlot(slot, got)) return r.renderPartialChunk(got, slot, res);
            return chunkError(
                res,
                slot,
                .incomplete_chunk,
                try addDetail(res, "{d} bytes missing", .{chunk.size - got.len}),
            );
        }
        const bytes: *const [chunk.size]u8 = got[0..chunk.size];
        // A chunk with the magic is not all zeros: only one without it reads its 64 KiB
        // twice, where `isEmpty` first touched every line of every chunk (PERF.md H93).
        if (!chunk.hasMagic(bytes)) {
            if (chunk.isEmpty(bytes)) return;
            return chunkError(
                res,
                slot,
                .bad_chunk_magic,
                try addDetail(res, "found {x}", .{bytes[0..8]}),
            );
        }
        const header = chunk.ChunkHeader.read(bytes);
        if (r.settings.validate_checksums) {
            if (chunk.validateChecksums(bytes, &header)) |kind| return chunkError(
                res,
                slot,
                kind,
                try res.details.addChecksumDetail(res.out.gpa, kind, bytes, &header),
            );
        }
        if (r.settings.validate_checksums or r.settings.provenance != null)
            r.checksum = provenance.Checksum.ofChunk(bytes, &header);
        if (chunk.stringTableFault(bytes, &r.visited)) |fault| {
            try chunkError(
                res,
                slot,
                .bad_string_table,
                try addDetail(
                    res,
                    "unreadable string table entry at chunk offset 0x{x}",
                    .{fault.at},
                ),
            );
            res.entries.items[res.entries.items.len - 1].outcome.failed.cause = fault.cause;
            return;
        }
        // Hook: the cache renders the chunk (again, when definitions fail) in its own file.
        if (r.settings.wevt_cache) |cache|
            return wevt_cache.walkChunkWevt(r, cache, bytes, slot, res);
        try r.parser.resetChunk(bytes);
        var walker = records.RecordWalker.init(bytes, r.settings.recover_records);
        return r.walkChunk(res, slot, &walker);
    }

    /// A slot the file ends inside (shared-fixtures/README.md, "A log cut inside its last
    /// chunk"): one `incomplete chunk` error saying how many bytes are missing; with
    /// `--recover-records` (not with `--validate-checksums`, which cannot check it), its
    /// complete records carved from `[512, available)`. The parser sees only the bytes that
    /// are there, so a record that needs a name or definition past the cut fails and, carved,
    /// is dropped.
    fn renderPartialChunk(
        r: *Renderer,
        bytes: []const u8,
        slot: u32,
        res: *ChunkResult,
    ) Allocator.Error!void {
        assert(bytes.len < chunk.size);
        res.partial = true;
        try chunkError(
            res,
            slot,
            .incomplete_chunk,
            try addDetail(res, "{d} bytes missing", .{chunk.size - bytes.len}),
        );
        if (!r.settings.recover_records or r.settings.validate_checksums) return;
        if (bytes.len < chunk.header_size or !chunk.hasMagic(bytes)) return;
        const padded = r.partial orelse blk: {
            const buf = try r.gpa.create([chunk.size]u8);
            r.partial = buf;
            break :blk buf;
        };
        @memcpy(padded[0..bytes.len], bytes);
        @memset(padded[bytes.len..], 0);
        try r.parser.resetChunk(padded[0..bytes.len]);
        var walker = records.RecordWalker.carveOnly(
            padded,
            .{ .start = chunk.header_size, .end = @intCast(bytes.len) },
        );
        return r.walkChunk(res, slot, &walker);
    }

    /// Renders the records `walker` yields (slot `slot`) into `res`.
    pub fn walkChunk(
        r: *Renderer,
        res: *ChunkResult,
        slot: u32,
        walker: *records.RecordWalker,
    ) Allocator.Error!void {
        while (walker.next()) |step| switch (step) {
            .record => |rec| try r.renderRecord(res, slot, &rec, walker),
            .err => |e| try recordError(res, slot, walker.bytes, e),
        };
    }

    /// The entry of a record the walker could not frame: its detail names what the walker saw.
    fn recordError(
        res: *ChunkResult,
        slot: u32,
        bytes: *const [chunk.size]u8,
        e: @FieldType(records.WalkItem, "err"),
    ) Allocator.Error!void {
        @branchHint(.cold);
        try res.entries.append(res.out.gpa, .{
            .record_id = e.id,
            .filetime = 0,
            .slot = slot,
            .file_offset = file_header.chunkOffset(slot) + e.offset,
            .outcome = .{ .failed = .{
                .kind = e.kind,
                .detail_at = try res.details.addRecordDetail(res.out.gpa, e.kind, bytes, e.offset),
            } },
        });
    }

    /// Renders one framed record into `res.out` and adds its entry: rendered, failed, or
    /// (excluded by `--events`, or carved noise) none.
    fn renderRecord(
        r: *Renderer,
        res: *ChunkResult,
        slot: u32,
        rec: *const records.RecordHeader,
        walker: *records.RecordWalker,
    ) Allocator.Error!void {
        const mark = res.out.len();
        var entry: RecordResult = .{
            .record_id = rec.id,
            .filetime = rec.filetime,
            .slot = slot,
            .file_offset = file_header.chunkOffset(slot) + rec.offset,
            .recovered = rec.recovered,
            .checksum = r.checksum,
            .outcome = undefined,
        };
        if (r.writeRecord(&res.out, rec)) {
            // `--events` or the filter excludes it: rendered (the caches learn from it) or
            // skipped, never an entry.
            if (!r.keep or !r.settings.wantsRecord(rec.id)) return res.out.truncate(mark);
            if (r.fields) |f| {
                try f.add(rec, slot);
                res.out.truncate(mark);
            }
            const len: u32 = @intCast(res.out.len() - mark);
            entry.outcome = .{ .rendered = .{ .start = @intCast(mark), .len = len } };
        } else |e| {
            if (e == error.OutOfMemory) return error.OutOfMemory;
            res.out.truncate(mark);
            // Carved hits that fail are noise, not errors (5.4).
            if (rec.recovered) return walker.rejectCarved(rec);
            entry.outcome = .{
                .failed = .{
                    .kind = .bad_binxml,
                    .detail = errors.binxmlDetail(e),
                    // A deferred fault's cause is not kept (the CLIs' chains read the tree path,
                    // `--mta`, which defers none).
                    .cause = if (r.parser.deferred == null) r.parser.fault else null,
                },
            };
        }
        // One entry a record: the append inline while there is room (PERF.md H186), the
        // growth out of line. The call with its frame cost ~36 instructions a record.
        if (res.entries.items.len < res.entries.capacity) {
            res.entries.appendAssumeCapacity(entry);
        } else try res.entries.append(res.out.gpa, entry);
    }

    fn writeRecord(
        r: *Renderer,
        out: *escape.Out,
        rec: *const records.RecordHeader,
    ) tokens.Error!void {
        const p = &r.parser;
        p.resetRecord();
        const start = rec.offset + records.record_header_size;
        const end = rec.binxmlEnd();
        // The reference refuses an empty BinXML window (a record of exactly 28 bytes).
        if (end == start) return error.EmptyBinXml;
        const s = r.settings;
        if (r.filtering) if (try r.skipCheck(out, rec, start, end)) return;
        try banner(s, out, rec);
        const text_start = out.len();
        const format: values_format.Format = .{
            .chunk = p.chunk,
            .ansi = s.ansi_codec,
            .memo = &r.memo,
        };
        // Fast path: a compiled program for the record's signature, read from the bytes.
        // With `--mta` every record is rendered from its tree, which `RenderingInfo` reads.
        const compiled = r.compiled and s.mta == null;
        if (compiled) switch (try r.programs.sign(p, start, end)) {
            .hit => |prog| return r.replayHit(out, &prog, format, rec, text_start, true),
            .miss, .unsupported => {},
        };
        p.resetRecord();
        // Unused BinXml values (shared-fixtures/README.md): deferred in every output format,
        // as the reference's XML programs do; not with `--mta`, the template subcommands' way
        // of reading records as the reference's iterators do.
        p.defer_unused = s.mta == null;
        const top = try p.parseStream(start, end, .record);
        // The record stream itself must be that one instance, as the value streams below.
        if (p.deferred) |first| if (top.len != 1 or !template.isWholeInstance(
            p,
            start,
            end,
        )) return first;
        var recorder: ?*program.Recorder = null;
        if (compiled and top.len > 0 and p.node(p.edges(top)[0]).kind == .instance) {
            switch (try r.programs.signTree(p, p.edges(top)[0])) {
                .hit => |prog| return r.replayHit(out, &prog, format, rec, text_start, false),
                .miss => recorder = r.programs.beginRecorder(text_start),
                .unsupported => {},
            }
        }
        const root = if (top.len > 0) try p.materialize(p.edges(top)[0]) else try p.newNode(
            .{ .kind = .element, .ref = .{ .name = p.event_name } },
        );
        try r.renderTree(out, root, recorder, limits.recordOutputLimit(text_start));
        if (recorder != null) try r.programs.store(out, if (r.filtering or r.fields != null)
            try filter.Plan.ofTree(r.gpa, p, format, root)
        else
            null);
        if (s.mta) |file| try r.addRenderingInfo(out, file, format, root, rec, text_start);
        try r.finishRecord(out, rec, text_start);
        if (r.fields) |f| try f.readTree(p, format, root);
        if (r.filtering) r.keep = s.wantsRecord(rec.id) and
            try s.filter.decideTree(p, format, root, &r.field_text);
    }

    /// The skip path (skip.zig, PERF.md H210): true drops the record unwritten (`keep`
    /// false); out of line, so that a run without a filter pays one branch for it. Sets
    /// `skip_learn` for `replayHit`.
    noinline fn skipCheck(
        r: *Renderer,
        out: *const escape.Out,
        rec: *const records.RecordHeader,
        start: u32,
        end: u32,
    ) Allocator.Error!bool {
        const s = r.settings;
        r.skip_learn = false;
        if (!r.compiled or s.mta != null) return false;
        const format: values_format.Format = .{
            .chunk = r.parser.chunk,
            .ansi = s.ansi_codec,
            .memo = &r.memo,
        };
        const verdict = try r.skips.check(
            &r.parser,
            &s.filter,
            format,
            start,
            end,
            s.wantsRecord(rec.id),
            out.len(),
            &r.field_text,
        );
        if (verdict == .skip) r.keep = false;
        r.skip_learn = verdict == .unknown;
        return verdict == .skip;
    }

    /// The fast path under a filter (`Options.filter`, with `--events`): a record it drops
    /// is decided from the program's plan and its values, and replayed (then dropped) only
    /// when its output could pass a limit, so it fails as it would unfiltered
    /// (shared-fixtures/README.md, "Filters"). The Rust engine's `Renderer::write_filtered`.
    inline fn replayHit(
        r: *Renderer,
        out: *escape.Out,
        prog: *const program.Program,
        format: values_format.Format,
        rec: *const records.RecordHeader,
        text_start: usize,
        comptime scanned: bool,
    ) tokens.Error!void {
        if (r.filtering) {
            // A program the byte scan found for a record the skip path walked (skip.zig).
            if (scanned and r.skip_learn)
                try r.skips.learn(&r.programs, prog, &r.settings.filter, format.chunk);
            r.keep = r.settings.wantsRecord(rec.id) and try r.decideHit(prog, format, rec);
            if (!r.keep and r.replayCannotFail(prog, out.len())) return;
        }
        // Triage: the fields from the plan; the replay only where it could fail.
        if (r.fields) |f| {
            try f.readPlan(r, prog, format, rec);
            if (r.replayCannotFail(prog, out.len())) return;
        }
        return r.replayRecord(out, prog, format, rec, text_start);
    }

    /// The fast path's decision for a record that replays `prog`: from the program's plan
    /// and the record's values, or, where the plan needs it, from the record's tree.
    fn decideHit(
        r: *Renderer,
        prog: *const program.Program,
        format: values_format.Format,
        rec: *const records.RecordHeader,
    ) Allocator.Error!bool {
        const s = r.settings;
        const plan = r.programs.plan(prog);
        const slots = r.programs.slotValues();
        if (try s.filter.decidePlan(plan, slots, format, &r.field_text)) |keep| return keep;
        return r.decideByTree(format, rec);
    }

    /// The filter's decision from the record's tree, parsed again (`parseAgain`).
    fn decideByTree(
        r: *Renderer,
        format: values_format.Format,
        rec: *const records.RecordHeader,
    ) Allocator.Error!bool {
        @branchHint(.cold);
        return switch (try r.parseAgain(rec)) {
            .root => |root| r.settings.filter.decideTree(&r.parser, format, root, &r.field_text),
            .empty => r.settings.filter.isEmpty(),
            // Not seen: a record that replays a program parses. Kept, as unfiltered.
            .failed => true,
        };
    }

    /// A record's tree parsed again: its root, none (an empty stream), or the parse failed.
    pub const Again = union(enum) { root: u32, empty, failed };

    /// Parses the record again for its tree (the replay reads only the slots), keeping the
    /// parser's fault state as the replay found it.
    pub fn parseAgain(r: *Renderer, rec: *const records.RecordHeader) Allocator.Error!Again {
        @branchHint(.cold);
        const p = &r.parser;
        const fault = p.fault;
        const deferred = p.deferred;
        defer {
            p.fault = fault;
            p.deferred = deferred;
        }
        p.resetRecord();
        p.defer_unused = r.settings.mta == null;
        const start = rec.offset + records.record_header_size;
        const top = p.parseStream(start, rec.binxmlEnd(), .record) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return .failed,
        };
        if (top.len == 0) return .empty;
        const root = p.materialize(p.edges(top)[0]) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            else => return .failed,
        };
        return .{ .root = root };
    }

    /// Whether replaying `prog` after `len` bytes of the chunk's output cannot pass an output
    /// limit (`Programs.replayBound`; 64 bytes for the banner).
    fn replayCannotFail(r: *const Renderer, prog: *const program.Program, len: usize) bool {
        const bound = r.programs.replayBound(prog);
        if (bound > limits.record_output_bytes_max) return false;
        return len + bound + 64 <= limits.chunk_output_bytes_max;
    }

    /// The `Record N` line above a record's text (11.2), when the options show it.
    inline fn banner(
        s: *const Options,
        out: *escape.Out,
        rec: *const records.RecordHeader,
    ) tokens.Error!void {
        if (s.show_record_number and s.format != .jsonl) {
            try out.write("Record ");
            try values_format.writeInt(out, rec.id);
            if (rec.recovered) try out.write(" (recovered)");
            try out.byte('\n');
        }
    }

    /// The slow path's second half: the tree in the chosen format, recorded into a program
    /// when `recorder` is given.
    inline fn renderTree(
        r: *Renderer,
        out: *escape.Out,
        root: u32,
        recorder: ?*program.Recorder,
        limit: usize,
    ) tokens.Error!void {
        const s = r.settings;
        switch (s.format) {
            .xml => {
                var x: render_xml.XmlRenderer = .{
                    .p = &r.parser,
                    .out = out,
                    .ansi = s.ansi_codec,
                    .indent = s.indent,
                    .recorder = recorder,
                };
                try x.writeRecord(root, limit);
            },
            .json, .jsonl => {
                r.json.out = out;
                r.json.recorder = recorder;
                defer r.json.recorder = null;
                try r.json.writeRecord(root, limit);
            },
        }
    }

    /// Splices the record's `RenderingInfo` (from `--mta`) into its rendered text.
    fn addRenderingInfo(
        r: *Renderer,
        out: *escape.Out,
        file: *const mta.MtaFile,
        format: values_format.Format,
        root: u32,
        rec: *const records.RecordHeader,
        text_start: usize,
    ) tokens.Error!void {
        var scratch = escape.Out.init(out.gpa);
        defer scratch.deinit();
        const fields = try mta.eventFields(&r.parser, format, root, &scratch) orelse return;
        const info = file.renderingInfo(rec.id, &fields) orelse return;
        const s = r.settings;
        const spliced = try mta.splice(out, text_start, &info, s.format != .xml, s.indent);
        assert(spliced);
    }

    /// The fast path: a compiled program's literal bytes and value slots, read from the
    /// record's bytes without a tree.
    fn replayRecord(
        r: *Renderer,
        out: *escape.Out,
        prog: *const program.Program,
        format: values_format.Format,
        rec: *const records.RecordHeader,
        text_start: usize,
    ) tokens.Error!void {
        const limit = limits.recordOutputLimit(text_start);
        if (!try r.programs.replay(prog, out, format, limit)) return error.OutputTooLarge;
        return r.finishRecord(out, rec, text_start);
    }

    /// The record's tail: its newline, the output bounds (`checkSize`), the recovered mark,
    /// then the provenance mark before it.
    inline fn finishRecord(
        r: *Renderer,
        out: *escape.Out,
        rec: *const records.RecordHeader,
        text_start: usize,
    ) tokens.Error!void {
        const end = out.len();
        try out.byte('\n');
        try checkSize(out.len(), text_start, end);
        if (rec.recovered) try carve.markRecovered(out, text_start);
        if (r.settings.provenance) |p| try p.mark(out, text_start, .{
            .chunk = r.slot,
            .offset = file_header.chunkOffset(r.slot) + rec.offset,
            .recovered = rec.recovered,
            .checksum = r.checksum,
        });
    }

    /// Fails the record whose text is `text_start..end` past its limit (`recordOutputLimit`:
    /// its banner and newline not counted), or the chunk's output, `len` bytes, past its own.
    /// The Rust engine's `Renderer::check_size`.
    fn checkSize(len: usize, text_start: usize, end: usize) error{OutputTooLarge}!void {
        assert(text_start <= end and end <= len);
        if (end > limits.recordOutputLimit(text_start) or len > limits.chunk_output_bytes_max)
            return error.OutputTooLarge;
    }
};

/// An EVTX input (a file read by windows, or lent bytes), its header and its chunk slots in
/// output order: the entry point of the library. Render with `run` (all chunks, N threads,
/// in order) or chunk by chunk with a `Renderer`.
pub const EvtxFile = struct {
    input: Input,
    header: file_header.FileHeader,
    /// Chunk slots in output order (3.3).
    order: ChunkOrder,

    /// Reads the file header and every chunk header (not the chunks, but for slots past the
    /// header's count, read into a window allocated for them).
    pub fn open(
        gpa: Allocator,
        in: Input,
        settings: *const Options,
    ) (file_header.Error || Allocator.Error)!EvtxFile {
        var block: [file_header.block_size]u8 = undefined;
        const header = try file_header.parseBlock(in.read(0, &block), in.size);
        const validate = settings.validate_checksums;
        const order = try input.chunkOrder(gpa, &in, header.chunk_slots, validate);
        return .{ .input = in, .header = header, .order = order };
    }
};

// ---------------------------------------------------------------------------------------
const testing = @import("testing.zig");

test "renderChunk: one record in every format; mutated chunks never crash" {
    const gpa = std.testing.allocator;
    var settings: Options = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    var sample = try testing.SampleChunk.init(gpa, &settings);
    defer sample.deinit();
    const b = &sample.builder;
    const file = sample.file;
    const renderer = sample.renderer;
    const result = &sample.result;
    const in = Input.fromBytes(file);

    const f = try EvtxFile.open(gpa, in, &settings);
    try std.testing.expectEqual(ChunkOrder{ .oldest = 0, .first_end = 1, .wrap_end = 0 }, f.order);
    // Twice: a renderer is reused across chunks.
    for (0..2) |_| {
        try renderer.renderChunk(&in, 0, result);
        try std.testing.expectEqual(@as(usize, 1), result.entries.items.len);
        try std.testing.expectEqualStrings(
            "{\"Event\":{\"#attributes\":{\"xmlns\":\"urn:x\"},\"System\":{\"EventID\":4608," ++
                "\"Keywords\":\"0x8020000000000000\"},\"Data\":\"a\",\"Data_1\":\"b\"," ++
                "\"EventData\":{\"N\":5}}}\n",
            result.text(&result.entries.items[0]),
        );
    }

    // Mutations: every outcome is fine except a crash, a leak or unbounded work. The
    // renderer is warm (compiled programs, known definitions: the scan path); a fresh one
    // for each mutant takes the full parse, and both must agree entry by entry.
    var prng = std.Random.DefaultPrng.init(0x5eed);
    const random = prng.random();
    const mutated = try gpa.dupe(u8, file);
    defer gpa.free(mutated);
    const formats = [_]Format{ .jsonl, .xml, .json };
    for (0..300) |round| {
        @memcpy(mutated, file);
        const flips = 1 + random.uintLessThan(usize, 8);
        for (0..flips) |_| {
            const at = 4096 + 512 + random.uintLessThan(usize, b.pos + 64 - 512);
            mutated[at] = random.int(u8);
        }
        settings.format = formats[round % formats.len];
        settings.separate_json_attributes = round % 2 == 0;
        // A renderer takes its settings at `init`: start one for these, warm it up.
        renderer.deinit();
        renderer.init(gpa, &settings);
        try renderer.renderChunk(&in, 0, result);
        try renderer.renderChunk(&Input.fromBytes(mutated), 0, result);
        for (result.entries.items) |*e| {
            if (e.outcome == .rendered) try std.testing.expect(e.outcome.rendered.len > 0);
        }
        const cold = try gpa.create(Renderer);
        defer gpa.destroy(cold);
        cold.init(gpa, &settings);
        defer cold.deinit();
        var cold_result = ChunkResult.init(gpa);
        defer cold_result.deinit();
        try cold.renderChunk(&Input.fromBytes(mutated), 0, &cold_result);
        try std.testing.expectEqual(cold_result.entries.items.len, result.entries.items.len);
        for (cold_result.entries.items, result.entries.items) |*c, *w| {
            try std.testing.expectEqual(c.kind(), w.kind());
            try std.testing.expectEqualStrings(c.detail(), w.detail());
            try std.testing.expectEqualStrings(cold_result.text(c), result.text(w));
        }
    }
}

test "renderChunk: an all-zero chunk has no entry, one without the magic fails (H93)" {
    // `isEmpty` is asked only of a chunk without the magic: both outcomes kept.
    const gpa = std.testing.allocator;
    const settings: Options = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    var sample = try testing.SampleChunk.init(gpa, &settings);
    defer sample.deinit();
    const file = sample.file;
    const renderer = sample.renderer;
    const result = &sample.result;
    const slot = file[4096..][0..chunk.size];
    @memset(slot, 0);
    try renderer.renderChunk(&Input.fromBytes(file), 0, result);
    try std.testing.expectEqual(@as(usize, 0), result.entries.items.len);
    slot[chunk.size - 1] = 1;
    try renderer.renderChunk(&Input.fromBytes(file), 0, result);
    try std.testing.expectEqual(@as(usize, 1), result.entries.items.len);
    try std.testing.expectEqual(.bad_chunk_magic, result.entries.items[0].kind().?);
}

test "the scan path agrees with the full parse, record by record" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    b.pos = 512;
    var e_def: ?u32 = null;
    var u_def: ?u32 = null;
    const in_u = [_][]const u8{"in"};
    const x_u = [_][]const u8{"x"};
    const two_u = [_][]const u8{ "p", "q" };
    const cases = .{
        // Compiles the program (inline definitions).
        .{ 7, "ok", 4, &in_u, "", "{\"E\":{\"A\":7,\"B\":\"ok\",\"N\":{\"U\":\"in\"}}}" },
        // Scan path: definitions by reference, a NUL inside B's declared size.
        .{ 8, "a\x00b", 6, &x_u, "", "{\"E\":{\"A\":8,\"B\":\"a\",\"N\":{\"U\":\"x\"}}}" },
        // An invalid token after the instance: the full parse fails the record.
        .{ 9, "ok", 4, &x_u, "\x4a", null },
        // An odd string size fails the record.
        .{ 10, "ok", 3, &x_u, "", null },
        // A fragment header after the instance: the scan gives up, the parse goes on.
        .{
            11,
            "ok",
            4,
            &x_u,
            "\x0f\x01\x01\x00",
            "{\"E\":{\"A\":11,\"B\":\"ok\",\"N\":{\"U\":\"x\"}}}",
        },
        // Two instances in N: a signature the scan does not describe.
        .{ 12, "two", 6, &two_u, "", null },
        // An empty B: another signature, compiled on first use.
        .{ 13, "", 0, &x_u, "", "{\"E\":{\"A\":13,\"B\":null,\"N\":{\"U\":\"x\"}}}" },
        .{ 14, "", 0, &x_u, "", "{\"E\":{\"A\":14,\"B\":null,\"N\":{\"U\":\"x\"}}}" },
    };
    var last: u32 = 0;
    inline for (cases, 1..) |c, id| {
        last = testing.scanTestRecord(&b, id, &e_def, &u_def, c[0], c[1], c[2], c[3], c[4]);
    }
    const file = try testing.fileWithRecords(gpa, &b, cases.len, last);
    defer gpa.free(file);
    const in = Input.fromBytes(file);

    for ([_]Format{ .jsonl, .xml }) |format| {
        const settings: Options = .{
            .format = format,
            .indent = false,
            .show_record_number = false,
        };
        var results: [2]ChunkResult = .{ ChunkResult.init(gpa), ChunkResult.init(gpa) };
        defer for (&results) |*res| res.deinit();
        for ([_]bool{ true, false }, &results) |compiled, *res| {
            const renderer = try gpa.create(Renderer);
            defer gpa.destroy(renderer);
            renderer.init(gpa, &settings);
            defer renderer.deinit();
            renderer.compiled = compiled;
            // Twice: the second pass starts with every program and definition known.
            try renderer.renderChunk(&in, 0, res);
            try renderer.renderChunk(&in, 0, res);
        }
        const scanned = &results[0];
        const parsed = &results[1];
        try std.testing.expectEqual(@as(usize, cases.len), scanned.entries.items.len);
        for (scanned.entries.items, parsed.entries.items) |*s, *f| {
            try std.testing.expectEqual(f.kind(), s.kind());
            try std.testing.expectEqualStrings(f.detail(), s.detail());
            try std.testing.expectEqualStrings(parsed.text(f), scanned.text(s));
        }
        const e = scanned.entries.items;
        try std.testing.expectEqualStrings("invalid token", e[2].detail());
        try std.testing.expectEqualStrings("odd-sized UTF-16 string", e[3].detail());
        try std.testing.expectEqual(@as(?errors.ErrorKind, null), e[4].kind());
        try std.testing.expectEqual(@as(?errors.ErrorKind, null), e[5].kind());
        if (format == .jsonl) inline for (cases, 0..) |c, i| {
            if (@TypeOf(c[5]) != @TypeOf(null)) try std.testing.expectEqualStrings(
                c[5] ++ "\n",
                scanned.text(&e[i]),
            );
        };
    }
}

test "a file read by windows renders as the same bytes lent; a cut file gives incomplete chunks" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    testing.buildSample(&b);
    const one = try testing.fileWithOneRecord(gpa, &b);
    defer gpa.free(one);
    // Six copies of the chunk.
    const slots = 6;
    const bytes = try gpa.alloc(u8, file_header.block_size + slots * chunk.size);
    defer gpa.free(bytes);
    @memcpy(bytes[0..file_header.block_size], one[0..file_header.block_size]);
    for (0..slots) |i| @memcpy(
        bytes[file_header.chunkOffset(i)..][0..chunk.size],
        one[file_header.block_size..],
    );
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    try tmp.dir.writeFile(.{ .sub_path = "six.evtx", .data = bytes });
    const file = try tmp.dir.openFile("six.evtx", .{});
    defer file.close();
    const read = try Input.fromFile(file);
    const settings: Options = .{ .format = .jsonl, .indent = false, .show_record_number = false };

    const lent = try testing.Collect.runOver(gpa, &Input.fromBytes(bytes), &settings, 1);
    defer gpa.free(lent);
    try std.testing.expectEqual(@as(usize, slots), std.mem.count(u8, lent, "\"EventID\":4608"));
    for ([_]usize{ 1, 2, 3 }) |threads| {
        const got = try testing.Collect.runOver(gpa, &read, &settings, threads);
        defer gpa.free(got);
        try std.testing.expectEqualStrings(lent, got);
    }

    // Cut in the middle of slot 4 after the order is known: slots 4 and 5 are incomplete.
    const f = try EvtxFile.open(gpa, read, &settings);
    try std.testing.expectEqual(@as(usize, slots), f.order.len());
    {
        const w = try tmp.dir.openFile("six.evtx", .{ .mode = .write_only });
        defer w.close();
        try w.setEndPos(file_header.chunkOffset(4) + 100);
    }
    for ([_]usize{ 1, 2 }) |threads| {
        var c: testing.Collect = .{ .gpa = gpa };
        defer c.text.deinit(gpa);
        try pipeline.run(
            gpa,
            &f.input,
            f.order,
            &settings,
            threads,
            .{ .context = &c, .consume = testing.Collect.consume },
        );
        try std.testing.expectEqual(
            @as(usize, 4),
            std.mem.count(u8, c.text.items, "\"EventID\":4608"),
        );
        try std.testing.expect(
            std.mem.endsWith(
                u8,
                c.text.items,
                "}\n4:incomplete chunk@41000\n5:incomplete chunk@51000\n",
            ),
        );
    }
}

test "recover records: slack carved after the last live record, noise skipped, marks" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = testing.carveTestRecord(&b, 1, &def);
    const last = testing.carveTestRecord(&b, 2, &def);
    const live_end = b.pos;
    // Stale bytes past the chunk's last record: record 3, then record 4 whose BinXML is
    // invalid and whose span holds record 5, then a record magic with a wrong size copy.
    _ = testing.carveTestRecord(&b, 3, &def);
    const noise = b.beginRecord();
    b.byte(0x4A);
    b.raw("pad.");
    _ = testing.carveTestRecord(&b, 5, &def);
    b.raw("tail");
    b.endRecord(noise, 4);
    const bad_copy = testing.carveTestRecord(&b, 6, &def);
    std.mem.writeInt(u32, b.chunk[b.pos - 4 ..][0..4], 7, .little);
    _ = bad_copy;
    const file = try testing.fileWithRecords(gpa, &b, 2, last);
    defer gpa.free(file);
    // The chunk header says the live area ends after record 2.
    std.mem.writeInt(u32, file[4096 + 48 ..][0..4], live_end, .little);

    var settings: Options = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    var res = ChunkResult.init(gpa);
    defer res.deinit();
    try testing.renderSlot(gpa, file, 0, &settings, &res);
    try std.testing.expectEqual(@as(usize, 2), res.entries.items.len);

    settings.recover_records = true;
    try testing.renderSlot(gpa, file, 0, &settings, &res);
    const expected = [_]struct { id: u64, recovered: bool, text: []const u8 }{
        .{ .id = 1, .recovered = false, .text = "{\"E\":{\"A\":1}}\n" },
        .{ .id = 2, .recovered = false, .text = "{\"E\":{\"A\":2}}\n" },
        .{ .id = 3, .recovered = true, .text = "{\"recovered\":true,\"E\":{\"A\":3}}\n" },
        .{ .id = 5, .recovered = true, .text = "{\"recovered\":true,\"E\":{\"A\":5}}\n" },
    };
    try std.testing.expectEqual(expected.len, res.entries.items.len);
    for (expected, res.entries.items) |x, *e| {
        try std.testing.expectEqual(@as(?errors.ErrorKind, null), e.kind());
        try std.testing.expectEqual(@as(?u64, x.id), e.record_id);
        try std.testing.expectEqual(x.recovered, e.recovered);
        try std.testing.expectEqualStrings(x.text, res.text(e));
    }

    settings.format = .xml;
    settings.indent = true;
    settings.show_record_number = true;
    try testing.renderSlot(gpa, file, 0, &settings, &res);
    try std.testing.expectEqual(@as(usize, 4), res.entries.items.len);
    try std.testing.expect(
        std.mem.startsWith(
            u8,
            res.text(&res.entries.items[1]),
            "Record 2\n" ++ render_xml.declaration ++ "<E>",
        ),
    );
    try std.testing.expect(
        std.mem.startsWith(
            u8,
            res.text(&res.entries.items[2]),
            "Record 3 (recovered)\n" ++ render_xml.declaration ++ "<!-- recovered -->\n<E>",
        ),
    );
}

test "records --events excludes get no entry; the others keep their bytes" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = testing.carveTestRecord(&b, 1, &def);
    _ = testing.carveTestRecord(&b, 2, &def);
    const last = testing.carveTestRecord(&b, 3, &def);
    const file = try testing.fileWithRecords(gpa, &b, 3, last);
    defer gpa.free(file);
    // The reference prints only the records whose id is in a range (`--events 2,5-9`).
    const events = [_]options.Range{ .{ .first = 2, .last = 2 }, .{ .first = 5, .last = 9 } };
    const settings: Options = .{
        .format = .jsonl,
        .show_record_number = false,
        .event_ranges = &events,
    };
    var res = ChunkResult.init(gpa);
    defer res.deinit();
    try testing.renderSlot(gpa, file, 0, &settings, &res);
    try std.testing.expectEqual(@as(usize, 1), res.entries.items.len);
    const e = &res.entries.items[0];
    try std.testing.expectEqual(@as(?u64, 2), e.record_id);
    try std.testing.expectEqualStrings("{\"E\":{\"A\":2}}\n", res.text(e));
    try std.testing.expectEqualStrings(res.out.list.items, res.text(e));
}

test "a log cut inside its last chunk: one incomplete chunk error, complete records carved" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = testing.carveTestRecord(&b, 1, &def);
    _ = testing.carveTestRecord(&b, 2, &def);
    const last = testing.carveTestRecord(&b, 3, &def);
    const cut = last + 10; // Inside record 3.
    const one = try testing.fileWithRecords(gpa, &b, 3, last);
    defer gpa.free(one);
    const file = try std.mem.concat(gpa, u8, &.{ one, one[4096..][0..cut] });
    defer gpa.free(file);

    var settings: Options = .{ .format = .jsonl, .indent = false, .show_record_number = false };
    const f = try EvtxFile.open(gpa, Input.fromBytes(file), &settings);
    try std.testing.expectEqual(ChunkOrder{ .oldest = 0, .first_end = 2, .wrap_end = 0 }, f.order);
    var res = ChunkResult.init(gpa);
    defer res.deinit();
    for ([_]bool{ false, true }) |recover| {
        settings.recover_records = recover;
        try testing.renderSlot(gpa, file, 1, &settings, &res);
        const e = res.entries.items;
        try std.testing.expectEqual(@as(usize, if (recover) 3 else 1), e.len);
        try std.testing.expectEqual(@as(?errors.ErrorKind, .incomplete_chunk), e[0].kind());
        try std.testing.expectEqual(file_header.chunkOffset(1), e[0].file_offset);
        var missing: [32]u8 = undefined;
        try std.testing.expectEqualStrings(
            try std.fmt.bufPrint(&missing, "{d} bytes missing", .{chunk.size - cut}),
            e[0].detail(),
        );
        if (recover) {
            try std.testing.expectEqualStrings(
                "{\"recovered\":true,\"E\":{\"A\":1}}\n",
                res.text(&e[1]),
            );
            try std.testing.expectEqualStrings(
                "{\"recovered\":true,\"E\":{\"A\":2}}\n",
                res.text(&e[2]),
            );
        }
    }
    // `--validate-checksums` cannot check a partial chunk: the error alone.
    settings.validate_checksums = true;
    try testing.renderSlot(gpa, file, 1, &settings, &res);
    try std.testing.expectEqual(@as(usize, 1), res.entries.items.len);
    // Bytes without the chunk magic there are ignored, as the reference ignores them.
    const junk = try std.mem.concat(gpa, u8, &.{ one, "not a chunk" });
    defer gpa.free(junk);
    const g = try EvtxFile.open(gpa, Input.fromBytes(junk), &settings);
    try std.testing.expectEqual(ChunkOrder{ .oldest = 0, .first_end = 1, .wrap_end = 0 }, g.order);
}

test "a BinXml value that fails is read only if its template uses it" {
    const gpa = std.testing.allocator;
    const T = values_decode.T;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    _ = testing.carveTestRecord(&b, 1, &def);
    // A nested instance whose definition lies outside the chunk: it cannot be parsed.
    const broken = [_]u8{ 0x0F, 0x01, 0x01, 0x00, 0x0C, 0x01, 0, 0, 0, 0 } ++
        [_]u8{ 0x00, 0xFF, 0xFF, 0xFF, 0x00 };
    const two = [_]u8{ 2, 0, 0, 0 };
    // Records 2 (live) and 3 (stale) use `<E><A>%0</A></E>` with that value as value 1.
    var last: u32 = 0;
    inline for (.{ 2, 3 }) |id| {
        const at = b.beginRecord();
        b.fragment();
        b.instanceOf(def.?);
        b.valueList(
            &.{ .{ .vtype = T.uint32, .bytes = &two }, .{ .vtype = T.binxml, .bytes = &broken } },
        );
        b.byte(0x00);
        b.endRecord(at, id);
        if (id == 2) last = at;
    }
    // Record 4 (stale) uses it: `<F>%1</F>`.
    const at = b.beginRecord();
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("F", 0xFFFF, false);
    b.closeStart();
    b.sub(1, false, T.binxml);
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueList(
        &.{ .{ .vtype = T.uint32, .bytes = &two }, .{ .vtype = T.binxml, .bytes = &broken } },
    );
    b.byte(0x00);
    b.endRecord(at, 4);
    const file = try testing.fileWithRecords(gpa, &b, 2, last);
    defer gpa.free(file);

    var settings: Options = .{
        .format = .jsonl,
        .indent = false,
        .show_record_number = false,
        .recover_records = true,
    };
    var res = ChunkResult.init(gpa);
    defer res.deinit();
    try testing.renderSlot(gpa, file, 0, &settings, &res);
    var e = res.entries.items;
    try std.testing.expectEqual(@as(usize, 3), e.len);
    try std.testing.expectEqualStrings("{\"E\":{\"A\":1}}\n", res.text(&e[0]));
    // A live record too: the reference's compiled lane renders live records alike
    // (shared-fixtures/README.md, "Unused BinXML values"; fixture carving/unused-binxml).
    try std.testing.expectEqual(@as(?errors.ErrorKind, null), e[1].kind());
    try std.testing.expectEqualStrings("{\"E\":{\"A\":2}}\n", res.text(&e[1]));
    try std.testing.expectEqualStrings("{\"recovered\":true,\"E\":{\"A\":2}}\n", res.text(&e[2]));
    // JSON with separate attributes: the reference has no compiled lane there (record 2
    // fails, record 3 is dropped); our rule renders them in every format alike.
    settings.separate_json_attributes = true;
    try testing.renderSlot(gpa, file, 0, &settings, &res);
    e = res.entries.items;
    try std.testing.expectEqual(@as(usize, 3), e.len);
    try std.testing.expectEqual(@as(?errors.ErrorKind, null), e[1].kind());
    try std.testing.expectEqualStrings("{\"E\":{\"A\":2}}\n", res.text(&e[1]));
    try std.testing.expectEqualStrings("{\"recovered\":true,\"E\":{\"A\":2}}\n", res.text(&e[2]));
}

test "a chunk result counts its failed entries" {
    // PERF.md H174: the CLI's sink reads `failures` instead of every entry, and writes a chunk
    // without failures as one run, so the count must be exact for each chunk rendered into
    // the same reused result (a count left from the chunk before, or one that counts rendered
    // entries too, fails here); `renderChunk` also asserts that the spans tile the output.
    const gpa = std.testing.allocator;
    const names = [_][]const u8{
        "damaged/bad-records.evtx",
        "damaged/invalid-binxml.evtx",
        "synthetic/basic.evtx",
        "damaged/bad-chunks.evtx",
    };
    var failed_seen: usize = 0;
    var res = ChunkResult.init(gpa);
    defer res.deinit();
    for (names) |name| {
        const bytes = try testing.readFixture(gpa, name);
        defer gpa.free(bytes);
        const settings: Options = .{};
        const f = try EvtxFile.open(gpa, Input.fromBytes(bytes), &settings);
        var slots = f.order.iterator();
        while (slots.next()) |slot| {
            try testing.renderSlot(gpa, bytes, slot, &settings, &res);
            var failed: usize = 0;
            for (res.entries.items) |*e| failed += @intFromBool(e.outcome == .failed);
            try std.testing.expectEqual(failed, res.failures);
            failed_seen += failed;
        }
    }
    try std.testing.expect(failed_seen > 0);
}

/// Renders the first chunk of the shared fixture `name` under a 128 MiB bound on live bytes
/// (renderer, results and output alike): `count` records, record index `failed` refused for
/// its rendered size alone, the others rendered, one program stored, and the output never much
/// more than one record's limit (with the list's growth).
fn expectOutputLimitBounded(
    name: []const u8,
    settings: *const Options,
    count: usize,
    failed: usize,
) !void {
    assert(failed < count);
    const fixture = try testing.readFixture(std.testing.allocator, name);
    defer std.testing.allocator.free(fixture);
    var bounded = testing.BoundedAllocator.init(std.testing.allocator, 128 << 20);
    const gpa = bounded.allocator();
    var result = ChunkResult.init(gpa);
    defer result.deinit();
    const f = try EvtxFile.open(gpa, Input.fromBytes(fixture), settings);
    const renderer = try gpa.create(Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, settings);
    defer renderer.deinit();
    try renderer.renderChunk(&f.input, f.order.get(0).?, &result);
    const entries = result.entries.items;
    try std.testing.expectEqual(count, entries.len);
    for (entries, 0..) |entry, i| {
        if (i != failed) try std.testing.expect(entry.outcome == .rendered);
    }
    try std.testing.expect(entries[failed].outcome == .failed);
    try std.testing.expectEqualStrings("record output too large", entries[failed].detail());
    try std.testing.expect(entries[failed].outcome.failed.isOutputLimit());
    try std.testing.expectEqual(@as(usize, 1), renderer.programs.stores);
    try std.testing.expect(bounded.peak < 3 * limits.record_output_bytes_max);
}

test "replayRecord: a program replayed past the record output limit stops there (bounded memory)" {
    // damaged/record-output-large.evtx: record 2 replays record 1's program (the chunk's only
    // one) with a String of 15000 U+20AC substituted 3000 times, ~135 MB whole. The replay
    // must stop one value past 16 MiB and fail the record alone (`record output too large`,
    // the reference's failure too), with records 1 and 3 rendered; written whole it would pass
    // the bound and the chunk would fail with `OutOfMemory` (PERF.md H192).
    for ([_]Format{ .xml, .jsonl }) |format| {
        const settings: Options = .{ .format = format, .show_record_number = false };
        try expectOutputLimitBounded("damaged/record-output-large.evtx", &settings, 3, 1);
    }
}

test "renderTree: one element's many long values stop at the record output limit (H193)" {
    // damaged/record-output-element.evtx: record 1, its template's first (no program yet, so
    // rendered from its tree; it fails before storing one, record 2 stores it), holds a String
    // of 15000 U+20AC that its one <D> element substitutes 1000 times, ~45 MB. The renderers
    // must stop one value past 16 MiB and fail the record alone (`record output too large`,
    // the reference's failure too), with record 2 rendered; checked once per element, <D> was
    // written whole and, under the 64 MiB chunk bound, the record rendered (PERF.md H193).
    for ([_]Format{ .xml, .jsonl }) |format| {
        for ([_]bool{ false, true }) |separate| {
            const settings: Options = .{
                .format = format,
                .show_record_number = false,
                .separate_json_attributes = separate,
            };
            try expectOutputLimitBounded("damaged/record-output-element.evtx", &settings, 2, 0);
        }
    }
}

test "checkSize: a record's text counts from after its banner, its newline not counted" {
    // The reference's rule (evtx 0.15.1 `Budget::new` at the text's start, checked before the
    // newline): after `Record 1\n`, 16 MiB of text pass and one byte more fails (H193).
    const text_start = "Record 1\n".len;
    const end = text_start + limits.record_output_bytes_max;
    try Renderer.checkSize(end + 1, text_start, end);
    const past = Renderer.checkSize(end + 2, text_start, end + 1);
    try std.testing.expectError(error.OutputTooLarge, past);
    // The chunk's bound counts everything written, newline included.
    const late = limits.chunk_output_bytes_max - 10;
    try Renderer.checkSize(limits.chunk_output_bytes_max, late, limits.chunk_output_bytes_max - 1);
    try std.testing.expectError(
        error.OutputTooLarge,
        Renderer.checkSize(limits.chunk_output_bytes_max + 1, late, limits.chunk_output_bytes_max),
    );
}
