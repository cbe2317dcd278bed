//! `evtx-zig apply-wevt-cache`: one cached template (`.wevtcache`) rendered as an XML record
//! with substitution values given as JSON or taken from a record of a log, as `evtx_dump`
//! 0.15.1 does it (texts, options and exit statuses:
//! `shared-fixtures/generator/wevt-format.md`). The cache, the rendering, the records and
//! their values are the engine's (`evtx.wevt_cache`, `evtx.template_instances`); this parses
//! the options and the substitutions JSON and prints. Rust's mirror:
//! `rust/cli/src/apply_wevt_cache.rs`. Event definitions (EVNT) are not read, so a lookup by
//! provider, event id and version finds no template, as in the reference without them.
const std = @import("std");
const evtx = @import("evtx");
const limits = evtx.limits;
const arg_parser = @import("args.zig");
const commands = @import("commands.zig");
const dump_template_instances = @import("dump_template_instances.zig");
const assert = std.debug.assert;
const control = std.ascii.control_code;
const T = evtx.values_decode.T;
const wevt_cache = evtx.wevt_cache;
const template_instances = evtx.template_instances;
const RawValue = wevt_cache.RawValue;

pub const Options = struct {
    cache: []const u8 = "",
    template_guid: ?[]const u8 = null,
    provider_guid: ?[]const u8 = null,
    event_id: ?u16 = null,
    version: ?u8 = null,
    evtx: ?[]const u8 = null,
    record_id: ?u64 = null,
    template_instance_index: u64 = 0,
    substitutions: ?[]const u8 = null,
    substitutions_file: ?[]const u8 = null,
    output: ?[]const u8 = null,
};

/// The options out of the parsed command line (`commands.apply_wevt_cache`).
pub fn optionsOf(m: *const arg_parser.Matches) Options {
    const c = &commands.apply_wevt_cache;
    assert(m.command == c);
    var o: Options = .{
        .cache = m.text(c.id("cache")).?,
        .template_guid = m.text(c.id("template-guid")),
        .provider_guid = m.text(c.id("provider-guid")),
        .evtx = m.text(c.id("evtx")),
        .record_id = m.number(c.id("record-id")),
        .template_instance_index = m.number(c.id("template-instance-index")) orelse 0,
        .substitutions = m.text(c.id("substitutions")),
        .substitutions_file = m.text(c.id("substitutions-file")),
        .output = m.text(c.id("output")),
    };
    // Held to their ranges when parsed (`commands.Check.ranged`).
    if (m.number(c.id("event-id"))) |n| o.event_id = @intCast(n);
    if (m.number(c.id("version"))) |n| o.version = @intCast(n);
    return o;
}

/// Where the output goes.
pub const Report = struct {
    stdout: *std.Io.Writer,
    stderr: *std.Io.Writer,
};

/// Runs the command; returns the exit status (0, or 1 after `Error: ...`). Everything it
/// allocates lives in an arena freed at the end.
pub fn run(gpa: std.mem.Allocator, options: *const Options, report: Report) u8 {
    var arena = std.heap.ArenaAllocator.init(gpa);
    defer arena.deinit();
    var message: std.Io.Writer.Allocating = .init(arena.allocator());
    const status: u8 = if (runOrFail(arena.allocator(), options, report, &message.writer)) |_|
        0
    else |e| status: {
        if (e == error.OutOfMemory) {
            message.clearRetainingCapacity();
            message.writer.writeAll("out of memory") catch {};
        }
        report.stdout.flush() catch {};
        // A damaged cache's message is already its whole line (`damaged`).
        if (e == error.Damaged)
            report.stderr.writeAll(message.written()) catch {}
        else
            report.stderr.print("Error: {s}\n", .{message.written()}) catch {};
        break :status 1;
    };
    report.stdout.flush() catch {};
    report.stderr.flush() catch {};
    return status;
}

/// `Damaged`: the message is a damaged cache's one line, printed as it is.
const Failed = error{ Failed, Damaged, OutOfMemory };

/// Writes the reference's message to `m` and returns `error.Failed`.
fn fail(m: *std.Io.Writer, comptime fmt: []const u8, args: anytype) Failed {
    m.print(fmt, args) catch return error.OutOfMemory;
    return error.Failed;
}

/// Writes an error with its cause as anyhow prints a context over an error
/// (`errors.caused`) and returns `error.Failed`.
fn caused(
    m: *std.Io.Writer,
    comptime context: []const u8,
    args: anytype,
    cause: []const u8,
) Failed {
    evtx.errors.caused(m, context, args, cause) catch return error.OutOfMemory;
    return error.Failed;
}

fn osError(buffer: []u8, e: anyerror) []const u8 {
    return std.fmt.bufPrint(buffer, "{f}", .{evtx.os_error.OsError.orIo(e)}) catch unreachable;
}

fn runOrFail(
    arena: std.mem.Allocator,
    options: *const Options,
    report: Report,
    m: *std.Io.Writer,
) Failed!void {
    var why: [128]u8 = undefined;
    const cache = try readBlobs(arena, options.cache, m);
    const blobs = cache.blobs;
    var temps: std.ArrayList(struct { blob: usize, temp: wevt_cache.TempRef }) = .empty;
    var found: std.ArrayList(wevt_cache.TempRef) = .empty;
    // Every blob is read before any is parsed, in the reference's order: a container fault
    // after a damaged manifest is the one reported.
    for (blobs, 0..) |b, i| {
        found.clearRetainingCapacity();
        var fault: wevt_cache.CrimError = undefined;
        wevt_cache.parseCrim(arena, b, &found, &fault) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            error.Crim => {
                const base = @intFromPtr(b.ptr) - @intFromPtr(cache.bytes.ptr);
                assert(base <= cache.bytes.len);
                const diag: wevt_cache.Diagnostic = .{ .crim = .{ .err = fault, .blob = base } };
                return cacheDamaged(m, diag, options.cache);
            },
        };
        for (found.items) |t| if (t.indexed) try temps.append(arena, .{ .blob = i, .temp = t });
    }
    const from_record = options.evtx != null and options.record_id != null;
    var json: ?Json = null;
    if (!from_record) {
        if (options.substitutions) |text| {
            json = try parseJson(arena, text, m, "failed to parse --substitutions as JSON");
        } else if (options.substitutions_file) |path| {
            const text = readWhole(arena, path) catch |e| {
                if (e == error.OutOfMemory) return error.OutOfMemory;
                const reason = osError(&why, e);
                return caused(m, "failed to read substitutions file `{s}`", .{path}, reason);
            };
            json = try parseJson(arena, text, m, "failed to parse substitutions file as JSON");
        }
    }
    if (!from_record and json == null) return fail(m, "Must provide substitutions via " ++
        "--evtx+--record-id or --substitutions/--substitutions-file", .{});
    const wanted = options.template_guid orelse {
        if (options.provider_guid != null and options.event_id != null and options.version != null)
            return fail(m, "no template_guid found in cache index for provider_guid={s} " ++
                "event_id={d} version={d}", .{
                options.provider_guid.?,
                options.event_id.?,
                options.version.?,
            });
        return fail(m, "Must provide either --template-guid or (--provider-guid, " ++
            "--event-id, --version)", .{});
    };
    const guid = try normalizeGuid(arena, wanted);
    var guid_text = evtx.escape.Out.init(arena);
    const hit = for (temps.items) |t| {
        if (std.mem.eql(u8, try guidLower(&guid_text, &t.temp.guid), guid)) break t;
    } else return fail(m, "template GUID `{s}` not found in cache `{s}`", .{ guid, options.cache });
    const temp = blobs[hit.blob][hit.temp.offset..][0..hit.temp.binxml_end];
    const values = if (from_record)
        try valuesFromRecord(
            arena,
            options.evtx.?,
            options.record_id.?,
            options.template_instance_index,
            m,
        )
    else
        try jsonValues(arena, json.?, m);
    const codec = evtx.values_format.default_codec;
    const xml = switch (try wevt_cache.renderWithValues(arena, temp, values, codec)) {
        .xml => |xml| xml,
        .failed => |cause| return renderFailed(m, cause, temp[wevt_cache.temp_header_size..]),
    };
    if (options.output) |path| {
        std.fs.cwd().writeFile(.{ .sub_path = path, .data = xml }) catch |e|
            return caused(m, "failed to write output `{s}`", .{path}, osError(&why, e));
    } else {
        report.stdout.writeAll(xml) catch {};
    }
}

/// Writes the reference's error for the TEMP BinXML `binxml` that did not render with its
/// values (`cause`, where the engine knows it) and returns `error.Failed`.
fn renderFailed(m: *std.Io.Writer, cause: ?evtx.errors.Cause, binxml: []const u8) Failed {
    @branchHint(.cold);
    if (cause) |c| {
        const worded = wevt_cache.writeTempError(m, c, binxml) catch return error.OutOfMemory;
        if (worded) return error.Failed;
    }
    return fail(m, "failed to render the template", .{});
}

/// A file read whole into `arena`, bounded by `limits.whole_file_bytes_max`.
fn readWhole(arena: std.mem.Allocator, path: []const u8) ![]u8 {
    return std.fs.cwd().readFileAlloc(arena, path, limits.whole_file_bytes_max);
}

/// The CRIM blobs of the `.wevtcache` at `path`, slices of its `bytes`, or the error: the
/// reference's when the file cannot be read, the damaged cache's line otherwise.
fn readBlobs(
    arena: std.mem.Allocator,
    path: []const u8,
    m: *std.Io.Writer,
) Failed!struct { bytes: []const u8, blobs: []const []const u8 } {
    var why: [128]u8 = undefined;
    const bytes = readWhole(arena, path) catch |e| {
        if (e == error.OutOfMemory) return error.OutOfMemory;
        const reason = osError(&why, e);
        return caused(m, "I/O error while open `{s}`: {s}", .{ path, reason }, reason);
    };
    var blobs: std.ArrayList([]const u8) = .empty;
    var fault: wevt_cache.Fault = undefined;
    var reader = wevt_cache.Reader.init(bytes, &fault) catch
        return cacheDamaged(m, .{ .file = fault }, path);
    while (reader.next(&fault) catch return cacheDamaged(m, .{ .file = fault }, path)) |blob|
        try blobs.append(arena, blob);
    return .{ .bytes = bytes, .blobs = blobs.items };
}

/// Writes the damaged cache's one line, the one `--wevt-cache` prints for the same file
/// (shared-fixtures/README.md, "Damaged side files"), and returns `error.Damaged`.
fn cacheDamaged(m: *std.Io.Writer, diag: wevt_cache.Diagnostic, path: []const u8) Failed {
    assert(diag != .io);
    const damage = diag.readerError().?;
    damage.writeLine(m, path) catch return error.OutOfMemory;
    return error.Damaged;
}

/// The reference's `normalize_guid`: trimmed, braces stripped, lower case.
fn normalizeGuid(arena: std.mem.Allocator, text: []const u8) error{OutOfMemory}![]const u8 {
    var s = std.mem.trim(u8, text, &std.ascii.whitespace);
    s = std.mem.trimLeft(u8, s, "{");
    s = std.mem.trimRight(u8, s, "}");
    return std.ascii.allocLowerString(arena, s);
}

/// A template GUID as the reference's index keys it: lower case, no braces; `text` holds it.
fn guidLower(text: *evtx.escape.Out, g: *const [16]u8) error{OutOfMemory}![]const u8 {
    text.truncate(0);
    try evtx.values_format.writeGuidUpper(text, g);
    return std.ascii.lowerString(text.list.items, text.list.items);
}

// ---------------------------------------------------------------------------------------------
// Values from a record of a log.

/// The values of record `id`'s `index`-th top-level instance in the log at `path` (the first
/// record with that id). The search reads the log as `dump-template-instances` does, and the
/// first failure before the record ends it, as the reference's `?` on each chunk and record
/// does: the failure's line and, where the bytes tell it, its cause.
fn valuesFromRecord(
    arena: std.mem.Allocator,
    path: []const u8,
    id: u64,
    index: u64,
    m: *std.Io.Writer,
) Failed![]const RawValue {
    var log = dump_template_instances.openLog(arena, path, m) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Failed => return error.Failed,
    };
    defer log.close();
    var find: Find = .{ .arena = arena, .id = id, .index = index, .m = m };
    const visitor: template_instances.Visitor = .{ .context = &find, .visit = Find.visit };
    template_instances.readRecords(arena, &log.file, visitor) catch |e| switch (e) {
        // `m` is an allocating writer: it fails only for want of memory.
        error.OutOfMemory, error.WriteFailed => return error.OutOfMemory,
    };
    if (find.failed) return error.Failed;
    return find.values orelse fail(m, "record_id {d} not found in {s}", .{ id, path });
}

/// Looks for the record among those `readRecords` hands it, in file order.
const Find = struct {
    arena: std.mem.Allocator,
    id: u64,
    index: u64,
    m: *std.Io.Writer,
    values: ?[]const RawValue = null,
    /// The search ended with the error in `m`.
    failed: bool = false,

    fn visit(
        context: *anyopaque,
        step: *const template_instances.Step,
    ) template_instances.VisitError!template_instances.Flow {
        const f: *Find = @ptrCast(@alignCast(context));
        const record = switch (step.*) {
            .failed => |failed| {
                f.failed = true;
                if (failed.cause) |cause| {
                    try evtx.errors.caused(f.m, "{s}", .{failed.line}, cause);
                } else try f.m.writeAll(failed.line);
                return .stop;
            },
            .record => |record| record,
        };
        if (record.id != f.id) return .next;
        f.values = try record.rawValues(f.arena, f.index);
        if (f.values == null) {
            f.failed = true;
            try f.m.print("record {d} has no TemplateInstance at index {d}", .{ f.id, f.index });
        }
        return .stop;
    }
};

// ---------------------------------------------------------------------------------------------
// Substitution values from JSON, read as serde_json reads them (its error texts and
// positions; objects keep their keys' order, the reference's `preserve_order`).

const Json = union(enum) {
    null,
    bool: bool,
    int: i64,
    uint: u64,
    float: f64,
    string: []const u8,
    /// Any other value: its compact JSON text, as serde_json writes it again.
    text: []const u8,
    array: []const Json,
};

fn parseJson(
    arena: std.mem.Allocator,
    text: []const u8,
    m: *std.Io.Writer,
    comptime context: []const u8,
) Failed!Json {
    var r: JsonReader = .{ .arena = arena, .s = text };
    const value = r.document() catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        error.Syntax => {
            var line: usize = 1;
            var start: usize = 0;
            for (text[0..r.at], 0..) |c, i| if (c == '\n') {
                line += 1;
                start = i + 1;
            };
            return fail(m, context ++ "\n\nCaused by:\n    {s} at line {d} column {d}", .{
                r.why,
                line,
                r.at - start,
            });
        },
    };
    return value;
}

/// The reference's conversion: null, bool (u32), integer (i64, else u64), float (f64),
/// string (UTF-16); anything else as its JSON text.
fn jsonValues(arena: std.mem.Allocator, json: Json, m: *std.Io.Writer) Failed![]const RawValue {
    const items = switch (json) {
        .array => |a| a,
        else => return fail(m, "substitutions JSON must be an array", .{}),
    };
    const values = try arena.alloc(RawValue, items.len);
    for (items, values) |item, *v| {
        v.* = switch (item) {
            .null => .{ .type = T.null_type, .bytes = "" },
            .bool => |b| .{ .type = T.boolean, .bytes = try le(arena, u32, @intFromBool(b)) },
            .int => |i| .{ .type = T.int64, .bytes = try le(arena, i64, i) },
            .uint => |u| .{ .type = T.uint64, .bytes = try le(arena, u64, u) },
            .float => |f| .{ .type = T.real64, .bytes = try le(arena, u64, @bitCast(f)) },
            .string, .text => |s| .{ .type = T.string, .bytes = try utf16(arena, s) },
            .array => .{ .type = T.string, .bytes = try utf16(arena, try compact(arena, item)) },
        };
    }
    return values;
}

fn le(arena: std.mem.Allocator, comptime I: type, v: I) error{OutOfMemory}![]const u8 {
    const b = try arena.alloc(u8, @sizeOf(I));
    std.mem.writeInt(I, b[0..@sizeOf(I)], v, .little);
    return b;
}

fn utf16(arena: std.mem.Allocator, s: []const u8) error{OutOfMemory}![]const u8 {
    const units = std.unicode.utf8ToUtf16LeAlloc(arena, s) catch |e| switch (e) {
        error.OutOfMemory => return error.OutOfMemory,
        error.InvalidUtf8 => unreachable, // The reader keeps only valid UTF-8.
    };
    return std.mem.sliceAsBytes(units);
}

/// serde_json's compact text of a value.
fn compact(arena: std.mem.Allocator, v: Json) error{OutOfMemory}![]const u8 {
    var out: std.Io.Writer.Allocating = .init(arena);
    writeCompact(&out.writer, v) catch return error.OutOfMemory;
    return out.written();
}

fn writeCompact(w: *std.Io.Writer, v: Json) std.Io.Writer.Error!void {
    switch (v) {
        .null => try w.writeAll("null"),
        .bool => |b| try w.writeAll(if (b) "true" else "false"),
        .int => |i| try w.print("{d}", .{i}),
        .uint => |u| try w.print("{d}", .{u}),
        .float => |f| try writeFloat(w, f),
        .string => |s| try evtx.escape.writeJsonString(w, s),
        .text => |t| try w.writeAll(t),
        .array => |items| {
            try w.writeByte('[');
            for (items, 0..) |item, i| {
                if (i > 0) try w.writeByte(',');
                try writeCompact(w, item);
            }
            try w.writeByte(']');
        },
    }
}

/// An f64 as serde_json (ryu) writes it: shortest digits, `.0` on an integral value,
/// an exponent outside 1e-5..1e16.
fn writeFloat(w: *std.Io.Writer, f: f64) std.Io.Writer.Error!void {
    const a = @abs(f);
    if (a != 0 and (a < 1e-5 or a >= 1e16)) {
        var buf: [64]u8 = undefined;
        const text = std.fmt.bufPrint(&buf, "{e}", .{f}) catch unreachable;
        const e = std.mem.indexOfScalar(u8, text, 'e').?;
        const mantissa = text[0..e];
        const integral = std.mem.endsWith(u8, mantissa, ".0");
        try w.writeAll(if (integral) mantissa[0 .. mantissa.len - 2] else mantissa);
        try w.writeByte('e');
        try w.writeAll(std.mem.trimLeft(u8, text[e + 1 ..], "+"));
        return;
    }
    var buf: [400]u8 = undefined;
    const text = std.fmt.bufPrint(&buf, "{d}", .{f}) catch unreachable;
    try w.writeAll(text);
    if (std.mem.indexOfAny(u8, text, ".e") == null) try w.writeAll(".0");
}

/// A recursive-descent JSON reader with serde_json's error words; `at` is the position the
/// error names (bytes consumed).
const JsonReader = struct {
    arena: std.mem.Allocator,
    s: []const u8,
    at: usize = 0,
    why: []const u8 = "",
    depth: usize = 0,

    const Error = error{ Syntax, OutOfMemory };

    /// Fails at the character just read (serde's `peek_error` after a peek: its column).
    fn failHere(r: *JsonReader, why: []const u8) Error {
        r.why = why;
        r.at = @min(r.at + 1, r.s.len);
        return error.Syntax;
    }

    fn failEof(r: *JsonReader, why: []const u8) Error {
        r.why = why;
        r.at = r.s.len;
        return error.Syntax;
    }

    fn skipSpace(r: *JsonReader) void {
        while (r.at < r.s.len and std.mem.indexOfScalar(u8, " \t\n\r", r.s[r.at]) != null)
            r.at += 1;
    }

    fn document(r: *JsonReader) Error!Json {
        const v = try r.value();
        r.skipSpace();
        if (r.at < r.s.len) return r.failHere("trailing characters");
        return v;
    }

    fn value(r: *JsonReader) Error!Json {
        r.skipSpace();
        if (r.at == r.s.len) return r.failEof("EOF while parsing a value");
        const start = r.at;
        switch (r.s[r.at]) {
            'n' => return r.literal("null", .null),
            't' => return r.literal("true", .{ .bool = true }),
            'f' => return r.literal("false", .{ .bool = false }),
            '"' => {
                r.at += 1;
                return .{ .string = try r.string() };
            },
            '-', '0'...'9' => return r.number(),
            '[' => {
                r.depth += 1;
                if (r.depth > limits.json_depth_max) return r.failHere("recursion limit exceeded");
                r.at += 1;
                defer r.depth -= 1;
                return .{ .array = try r.array() };
            },
            '{' => {
                r.depth += 1;
                if (r.depth > limits.json_depth_max) return r.failHere("recursion limit exceeded");
                r.at += 1;
                defer r.depth -= 1;
                try r.object();
                return .{ .text = try r.objectText(start) };
            },
            else => return r.failHere("expected value"),
        }
    }

    fn literal(r: *JsonReader, comptime word: []const u8, v: Json) Error!Json {
        for (word) |c| {
            if (r.at == r.s.len) return r.failEof("EOF while parsing a value");
            if (r.s[r.at] != c) return r.failHere("expected ident");
            r.at += 1;
        }
        return v;
    }

    fn array(r: *JsonReader) Error![]const Json {
        var items: std.ArrayList(Json) = .empty;
        r.skipSpace();
        if (r.at == r.s.len) return r.failEof("EOF while parsing a list");
        if (r.s[r.at] == ']') {
            r.at += 1;
            return items.items;
        }
        while (true) {
            try items.append(r.arena, try r.value());
            r.skipSpace();
            if (r.at == r.s.len) return r.failEof("EOF while parsing a list");
            switch (r.s[r.at]) {
                ']' => {
                    r.at += 1;
                    return items.items;
                },
                ',' => {
                    r.at += 1;
                    r.skipSpace();
                    if (r.at < r.s.len and r.s[r.at] == ']') return r.failHere("trailing comma");
                },
                else => return r.failHere("expected `,` or `]`"),
            }
        }
    }

    /// An object, checked (the opening brace read); its members are kept as its text.
    fn object(r: *JsonReader) Error!void {
        r.skipSpace();
        if (r.at == r.s.len) return r.failEof("EOF while parsing an object");
        if (r.s[r.at] == '}') {
            r.at += 1;
            return;
        }
        while (true) {
            r.skipSpace();
            if (r.at == r.s.len) return r.failEof("EOF while parsing an object");
            if (r.s[r.at] != '"') return r.failHere("key must be a string");
            r.at += 1;
            _ = try r.string();
            r.skipSpace();
            if (r.at == r.s.len) return r.failEof("EOF while parsing an object");
            if (r.s[r.at] != ':') return r.failHere("expected `:`");
            r.at += 1;
            _ = try r.value();
            r.skipSpace();
            if (r.at == r.s.len) return r.failEof("EOF while parsing an object");
            switch (r.s[r.at]) {
                '}' => {
                    r.at += 1;
                    return;
                },
                ',' => {
                    r.at += 1;
                    r.skipSpace();
                    if (r.at < r.s.len and r.s[r.at] == '}') return r.failHere("trailing comma");
                },
                else => return r.failHere("expected `,` or `}`"),
            }
        }
    }

    /// The compact text of the object at `start` (read again, members in order).
    fn objectText(r: *JsonReader, start: usize) Error![]const u8 {
        var again: JsonReader = .{ .arena = r.arena, .s = r.s[0..r.at], .at = start + 1 };
        var out: std.Io.Writer.Allocating = .init(r.arena);
        const w = &out.writer;
        w.writeByte('{') catch return error.OutOfMemory;
        again.skipSpace();
        var first = true;
        while (again.s[again.at] != '}') {
            if (!first) w.writeByte(',') catch return error.OutOfMemory;
            first = false;
            again.skipSpace();
            again.at += 1; // the key's quote
            evtx.escape.writeJsonString(w, try again.string()) catch return error.OutOfMemory;
            again.skipSpace();
            again.at += 1; // the colon
            w.writeByte(':') catch return error.OutOfMemory;
            writeCompact(w, try again.value()) catch return error.OutOfMemory;
            again.skipSpace();
            if (again.s[again.at] == ',') again.at += 1;
            again.skipSpace();
        }
        w.writeByte('}') catch return error.OutOfMemory;
        return out.written();
    }

    /// A string's contents (the opening quote read), escapes resolved.
    fn string(r: *JsonReader) Error![]const u8 {
        var out: std.ArrayList(u8) = .empty;
        while (true) {
            if (r.at == r.s.len) return r.failEof("EOF while parsing a string");
            const c = r.s[r.at];
            switch (c) {
                '"' => {
                    r.at += 1;
                    return out.items;
                },
                '\\' => {
                    r.at += 1;
                    try r.escape(&out);
                },
                // The control codes, NUL to US.
                control.nul...control.us => return r.failHere("control character " ++
                    "(\\u0000-\\u001F) found while parsing a string"),
                else => {
                    const len = std.unicode.utf8ByteSequenceLength(c) catch
                        return r.failHere("invalid unicode code point");
                    if (len > r.s.len - r.at or !std.unicode.utf8ValidateSlice(r.s[r.at..][0..len]))
                        return r.failHere("invalid unicode code point");
                    try out.appendSlice(r.arena, r.s[r.at..][0..len]);
                    r.at += len;
                },
            }
        }
    }

    fn escape(r: *JsonReader, out: *std.ArrayList(u8)) Error!void {
        if (r.at == r.s.len) return r.failEof("EOF while parsing a string");
        const c = r.s[r.at];
        r.at += 1;
        const simple: ?u8 = switch (c) {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => 0x08,
            'f' => 0x0C,
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => null,
            else => {
                r.at -= 1;
                return r.failHere("invalid escape");
            },
        };
        if (simple) |s| return out.append(r.arena, s);
        var cp: u21 = try r.hex4();
        if (cp >= 0xD800 and cp <= 0xDBFF) {
            if (r.s.len - r.at < 2 or r.s[r.at] != '\\' or r.s[r.at + 1] != 'u')
                return r.failHere("unexpected end of hex escape");
            r.at += 2;
            const low = try r.hex4();
            if (low < 0xDC00 or low > 0xDFFF)
                return r.failHere("lone leading surrogate in hex escape");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 and cp <= 0xDFFF) {
            return r.failHere("lone leading surrogate in hex escape");
        }
        var buf: [4]u8 = undefined;
        const n = std.unicode.utf8Encode(cp, &buf) catch unreachable;
        try out.appendSlice(r.arena, buf[0..n]);
    }

    fn hex4(r: *JsonReader) Error!u16 {
        if (r.s.len - r.at < 4) return r.failEof("EOF while parsing a string");
        const v = std.fmt.parseInt(u16, r.s[r.at..][0..4], 16) catch
            return r.failHere("invalid escape");
        r.at += 4;
        return v;
    }

    fn number(r: *JsonReader) Error!Json {
        const start = r.at;
        if (r.s[r.at] == '-') r.at += 1;
        const digits_at = r.at;
        while (r.at < r.s.len and std.ascii.isDigit(r.s[r.at])) r.at += 1;
        if (r.at == digits_at) {
            if (r.at == r.s.len) return r.failEof("EOF while parsing a value");
            return r.failHere("invalid number");
        }
        if (r.s[digits_at] == '0' and r.at - digits_at > 1) {
            r.at = digits_at;
            return r.failHere("invalid number");
        }
        var float = false;
        if (r.at < r.s.len and r.s[r.at] == '.') {
            float = true;
            r.at += 1;
            const f = r.at;
            while (r.at < r.s.len and std.ascii.isDigit(r.s[r.at])) r.at += 1;
            if (r.at == f) {
                if (r.at == r.s.len) return r.failEof("EOF while parsing a value");
                return r.failHere("invalid number");
            }
        }
        if (r.at < r.s.len and (r.s[r.at] == 'e' or r.s[r.at] == 'E')) {
            float = true;
            r.at += 1;
            if (r.at < r.s.len and (r.s[r.at] == '+' or r.s[r.at] == '-')) r.at += 1;
            const e = r.at;
            while (r.at < r.s.len and std.ascii.isDigit(r.s[r.at])) r.at += 1;
            if (r.at == e) {
                if (r.at == r.s.len) return r.failEof("EOF while parsing a value");
                return r.failHere("invalid number");
            }
        }
        const text = r.s[start..r.at];
        if (!float) {
            if (std.fmt.parseInt(i64, text, 10)) |i| return .{ .int = i } else |_| {}
            if (std.fmt.parseInt(u64, text, 10)) |u| return .{ .uint = u } else |_| {}
        }
        const f = std.fmt.parseFloat(f64, text) catch unreachable;
        if (std.math.isInf(f)) {
            r.why = "number out of range";
            return error.Syntax;
        }
        return .{ .float = f };
    }
};

test "JSON values as the reference converts them, errors in serde_json's words" {
    var arena = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    var message: std.Io.Writer.Allocating = .init(a);
    // The reference's texts for these `--substitutions` (evtx_dump 0.15.1).
    const cases = [_][2][]const u8{
        .{ "[1", "EOF while parsing a list at line 1 column 2" },
        .{ "[", "EOF while parsing a list at line 1 column 1" },
        .{ "", "EOF while parsing a value at line 1 column 0" },
        .{ "x", "expected value at line 1 column 1" },
        .{ "[1,]", "trailing comma at line 1 column 4" },
        .{ "[1 2]", "expected `,` or `]` at line 1 column 4" },
        .{ "\"ab", "EOF while parsing a string at line 1 column 3" },
        .{ "[1]x", "trailing characters at line 1 column 4" },
        .{ "[1.5e400]", "number out of range at line 1 column 8" },
    };
    for (cases) |c| {
        message.clearRetainingCapacity();
        try std.testing.expectError(error.Failed, parseJson(a, c[0], &message.writer, "ctx"));
        const cause = message.written()["ctx\n\nCaused by:\n    ".len..];
        try std.testing.expectEqualStrings(c[1], cause);
    }
    // Nested values become their compact text (the reference:
    // `{"b":1,"a":[2.5,1000.0,-0.0,"\n"]}`).
    const text = "[{\"b\":1, \"a\":[2.50,1e3,-0.0,\"\\n\"]}, 7]";
    const json = try parseJson(a, text, &message.writer, "");
    const values = try jsonValues(a, json, &message.writer);
    try std.testing.expectEqual(@as(usize, 2), values.len);
    const want = try utf16(a, "{\"b\":1,\"a\":[2.5,1000.0,-0.0,\"\\n\"]}");
    try std.testing.expectEqualSlices(u8, want, values[0].bytes);
    try std.testing.expectEqual(@as(u8, T.int64), values[1].type);
}

test "template GUIDs are matched as the reference normalizes them" {
    var arena = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena.deinit();
    const g = [16]u8{
        0x43, 0x2A, 0x2C, 0x5F, 0x86, 0xAA, 0x81, 0x24,
        0x02, 0xF3, 0xEC, 0xE8, 0x17, 0x38, 0x36, 0x95,
    };
    var text = evtx.escape.Out.init(arena.allocator());
    const want = try normalizeGuid(arena.allocator(), " {5F2C2A43-AA86-2481-02F3-ECE817383695} ");
    try std.testing.expectEqualStrings(want, try guidLower(&text, &g));
}

test "the fixtures' caches: a template rendered and the damaged ones in the reference's words" {
    var arena = std.heap.ArenaAllocator.init(std.testing.allocator);
    defer arena.deinit();
    const a = arena.allocator();
    const dir = @import("unit_test_options").fixtures ++ "/wevt/";
    var message: std.Io.Writer.Allocating = .init(a);
    // `apply-wevt-cache --cache templates.wevtcache --template-guid 00000000-0000-0000-0000-
    // 000000000000 --substitutions [7,"zero"]`, the reference's output.
    const options: Options = .{
        .cache = dir ++ "templates.wevtcache",
        .template_guid = "00000000-0000-0000-0000-000000000000",
        .substitutions = "[7,\"zero\"]",
    };
    var out: std.Io.Writer.Allocating = .init(a);
    try runOrFail(a, &options, .{ .stdout = &out.writer, .stderr = undefined }, &message.writer);
    try std.testing.expectEqualStrings(
        \\<?xml version="1.0" encoding="utf-8"?>
        \\<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
        \\  <System>
        \\    <EventRecordID>7</EventRecordID>
        \\  </System>
        \\  <EventData>
        \\    <Data>zero</Data>
        \\  </EventData>
        \\</Event>
        \\
    , out.written());
    // The damaged caches: the dump's `--wevt-cache` line, at the generator's offset
    // (shared-fixtures/wevt/damage.json), the reference's text joined to its cause.
    const cases = [_][2][]const u8{
        .{ "damaged-ttbl-count.wevtcache", "offset 0x531: failed to parse CRIM/WEVT blob: " ++
            "buffer too small for TEMP header at offset 1304 (need 40 bytes, have 0)" },
        .{ "damaged-crim-magic.wevtcache", "offset 0x19: failed to parse CRIM/WEVT blob: " ++
            "invalid signature at offset 0: expected [67, 82, 73, 77], got [67, 82, 73, 88]" },
        .{ "damaged-temp-size.wevtcache", "offset 0x81: failed to parse CRIM/WEVT blob: " ++
            "size 65535 out of bounds for TEMP.size at offset 104" },
    };
    inline for (cases) |c| {
        message.clearRetainingCapacity();
        const path = dir ++ c[0];
        var bad = options;
        bad.cache = path;
        const report: Report = .{ .stdout = &out.writer, .stderr = undefined };
        try std.testing.expectError(error.Damaged, runOrFail(a, &bad, report, &message.writer));
        const line = "error: " ++ path ++ ": " ++ c[1] ++ "\n";
        try std.testing.expectEqualStrings(line, message.written());
    }
}
