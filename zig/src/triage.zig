//! `triage`: what is in a log and whether anyone touched it, in one pass without printing
//! records (the contract: `shared-fixtures/README.md`, "Triage (beyond the reference)"). The
//! twin of `rust/evtx-core/src/triage.rs`.
//!
//! The log is walked as `evtx_dump --recover-records -o jsonl -t 1` walks it, by the dump's
//! own `Renderer` with a `Collector` attached: each record's five `System` fields are read as
//! the filter reads them (`filter.zig`: a program's `Plan` and the record's values where the
//! record is proven to render, its tree otherwise), the record's text is dropped, and the
//! `Report` is told of every record that rendered. Errors are the failed entries of the chunk
//! results, by kind. The file header and chunk checksums are read as `info` reads them.
//!
//! Memory: one renderer and one chunk result, as a dump at `-t 1`; the report's counts are
//! maps by provider, event id, channel and level, and its lists grow only with the log's
//! anomalies (runs of record ids, backward steps, silences, log events, carved records).
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const Writer = std.Io.Writer;
const chunk = @import("chunk.zig");
const dump = @import("dump.zig");
const errors = @import("error.zig");
const escape = @import("escape.zig");
const file_header = @import("file_header.zig");
const filter = @import("filter.zig");
const input = @import("input.zig");
const options = @import("options.zig");
const program = @import("program.zig");
const provenance = @import("provenance.zig");
const records = @import("records.zig");
const tokens = @import("tokens.zig");
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const Field = filter.Field;
const Value = values_decode.Value;
const T = values_decode.T;

/// The `schema` member of the JSON document.
pub const schema = "evtx-twin triage 1";
/// `--top`'s default and bounds.
pub const top_default = 10;
pub const top_max = 1_000_000;
/// `--silence`'s default and bounds (seconds).
pub const silence_default = 3600;
pub const silence_max = 315_360_000;
/// FILETIME ticks in a second.
const ticks_per_second = 10_000_000;
/// FILETIME ticks of 10000-01-01T00:00:00Z: a FILETIME value at or past it has no four-digit
/// year in its text, so it is read from its text (`filter.zig`'s rule).
const ticks_year_10000: u64 = 2_650_467_744_000_000_000;

/// A record that tells of the log itself: a provider (compared ASCII case-insensitively) and
/// event id, and what it means.
pub const LogEvent = struct { provider: []const u8, event_id: u32, what: []const u8 };

/// The log-event table. Sources: learn.microsoft.com's security audit pages, "1100(S): The
/// event logging service has shut down", "1101: Audit events have been dropped by the
/// transport", "1102(S): The audit log was cleared", "1104(S): The security log is now full",
/// "1105(S): Event log automatic backup", "1108(S): The event logging service encountered an
/// error", "4719(S): System audit policy was changed"; the System log's Eventlog 104 ("The
/// System log file was cleared") and EventLog 6005, 6006, 6008; Windows XP/2003 Security 517.
pub const log_events = [_]LogEvent{
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 1100, .what = "event logging " ++
        "service shut down" },
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 1101, .what = "audit events " ++
        "dropped by the transport" },
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 1102, .what = "audit log cleared" },
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 1104, .what = "security log full" },
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 1105, .what = "event log " ++
        "automatic backup" },
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 1108, .what = "event logging " ++
        "service error" },
    .{ .provider = "Microsoft-Windows-Eventlog", .event_id = 104, .what = "log cleared" },
    .{ .provider = "EventLog", .event_id = 6005, .what = "event log service started" },
    .{ .provider = "EventLog", .event_id = 6006, .what = "event log service stopped" },
    .{ .provider = "EventLog", .event_id = 6008, .what = "unexpected shutdown" },
    .{ .provider = "Microsoft-Windows-Security-Auditing", .event_id = 4719, .what = "system " ++
        "audit policy changed" },
    .{ .provider = "Security", .event_id = 517, .what = "audit log cleared (legacy)" },
};

/// The table's entry for a record's provider and event id, or null.
pub fn logEvent(provider: ?[]const u8, event_id: ?u32) ?*const LogEvent {
    const name = provider orelse return null;
    const id = event_id orelse return null;
    for (&log_events) |*e| {
        if (e.event_id == id and std.ascii.eqlIgnoreCase(e.provider, name)) return e;
    }
    return null;
}

/// The five fields of one record, as the filter reads them (`filter.Field`).
pub const Fields = struct {
    event_id: ?u32 = null,
    provider: ?[]const u8 = null,
    channel: ?[]const u8 = null,
    level: ?u32 = null,
    /// `TimeCreated/@SystemTime` as FILETIME ticks.
    time: ?u64 = null,
};

/// The number a field's text gives (ASCII digits, 0..=4294967295), else null.
fn numberOf(text: ?[]const u8) ?u32 {
    return std.math.cast(u32, filter.digits(text orelse return null) orelse return null);
}

/// The FILETIME ticks a field's text gives (the `--since` rule), else null.
fn timeOf(text: ?[]const u8) ?u64 {
    const parsed = filter.rfc3339(text orelse return null) orelse return null;
    return parsed;
}

/// A value's number without its text where the type allows (the filter's `holdsDirect`): an
/// unsigned integer for `EventID` and `Level`, a FILETIME before the year 10000 for the time.
fn directNumber(field: Field, bytes: []const u8, v: Value) ?u64 {
    if (v.start > bytes.len or bytes.len - v.start < v.len) return null;
    const b = bytes[v.start..][0..v.len];
    const number: u64 = switch (v.vtype) {
        T.uint8 => if (v.len == 1) b[0] else return null,
        T.uint16 => if (v.len == 2) std.mem.readInt(u16, b[0..2], .little) else return null,
        T.uint32 => if (v.len == 4) std.mem.readInt(u32, b[0..4], .little) else return null,
        T.uint64, T.filetime => if (v.len == 8)
            std.mem.readInt(u64, b[0..8], .little)
        else
            return null,
        else => return null,
    };
    return switch (field) {
        .event_id, .level => if (v.vtype == T.filetime) null else number,
        .time => if (v.vtype == T.filetime and number < ticks_year_10000) number else null,
        .provider, .channel => null,
    };
}

/// Attached to a `dump.Renderer` (its `fields`): reads the fields of the record being
/// rendered, and hands each record that rendered to the report.
pub const Collector = struct {
    report: *Report,
    /// A field's text as it is read.
    scratch: escape.Out,
    /// The current record's provider and channel texts.
    provider_text: std.ArrayList(u8) = .empty,
    channel_text: std.ArrayList(u8) = .empty,
    fields: Fields = .{},
    /// The fields were read for the record being rendered.
    ready: bool = false,

    pub fn init(gpa: Allocator, report: *Report) Collector {
        return .{ .report = report, .scratch = escape.Out.init(gpa) };
    }

    pub fn deinit(c: *Collector) void {
        const gpa = c.scratch.gpa;
        c.provider_text.deinit(gpa);
        c.channel_text.deinit(gpa);
        c.scratch.deinit();
    }

    /// Sets `field` from its text (null: the record has none, or it is no text). An empty
    /// text is none: the reference's JSON shows empty content as `null` and leaves an empty
    /// attribute out.
    fn setText(c: *Collector, field: Field, given: ?[]const u8) Allocator.Error!void {
        const gpa = c.scratch.gpa;
        const text = if (given != null and given.?.len == 0) null else given;
        switch (field) {
            .event_id => c.fields.event_id = numberOf(text),
            .level => c.fields.level = numberOf(text),
            .time => c.fields.time = timeOf(text),
            .provider, .channel => {
                const list = if (field == .provider) &c.provider_text else &c.channel_text;
                list.clearRetainingCapacity();
                if (text) |t| try list.appendSlice(gpa, t);
                const kept: ?[]const u8 = if (text == null) null else list.items;
                if (field == .provider) c.fields.provider = kept else c.fields.channel = kept;
            },
        }
    }

    /// Reads the fields from the record tree whose root is `root` (the slow path).
    pub fn readTree(
        c: *Collector,
        p: *const tokens.Parser,
        format: values_format.Format,
        root: u32,
    ) Allocator.Error!void {
        const fields = filter.systemFields(p, root);
        for (fields, 0..) |nodes, at| {
            c.scratch.truncate(0);
            const ok = if (nodes) |ids|
                try filter.writeNodesText(&c.scratch, p, format, ids)
            else
                false;
            try c.setText(@enumFromInt(at), if (ok) c.scratch.list.items else null);
        }
        c.ready = true;
    }

    /// Reads the fields of a record that replays `prog`: from its plan and the record's value
    /// slots, or, where the plan needs it, from the record's tree.
    pub fn readPlan(
        c: *Collector,
        r: *dump.Renderer,
        prog: *const program.Program,
        format: values_format.Format,
        rec: *const records.RecordHeader,
    ) Allocator.Error!void {
        const plan = r.programs.plan(prog);
        const slots = r.programs.slotValues();
        for (plan.fields, 0..) |source, at| {
            const field: Field = @enumFromInt(at);
            switch (source) {
                .tree => return c.readAgain(r, format, rec),
                .absent => try c.setText(field, null),
                .fixed => |text| try c.setText(field, text),
                .slot => |k| {
                    if (k >= slots.len) return c.readAgain(r, format, rec);
                    try c.setValue(field, format, slots[k]);
                },
            }
        }
        c.ready = true;
    }

    fn setValue(
        c: *Collector,
        field: Field,
        format: values_format.Format,
        v: Value,
    ) Allocator.Error!void {
        if (directNumber(field, format.chunk, v)) |n| switch (field) {
            .event_id => c.fields.event_id = std.math.cast(u32, n),
            .level => c.fields.level = std.math.cast(u32, n),
            .time => c.fields.time = n,
            .provider, .channel => unreachable,
        } else {
            c.scratch.truncate(0);
            const ok = try filter.writeValueText(&c.scratch, format, v);
            try c.setText(field, if (ok) c.scratch.list.items else null);
        }
    }

    /// Reads the fields from the record's tree, parsed again (all null where it has none).
    fn readAgain(
        c: *Collector,
        r: *dump.Renderer,
        format: values_format.Format,
        rec: *const records.RecordHeader,
    ) Allocator.Error!void {
        @branchHint(.cold);
        switch (try r.parseAgain(rec)) {
            .root => |root| return c.readTree(&r.parser, format, root),
            // Not seen: a record that replays a program parses.
            .empty, .failed => {
                c.fields = .{};
                c.ready = true;
            },
        }
    }

    /// Record `rec` of chunk slot `slot` rendered: the report learns of it.
    pub fn add(c: *Collector, rec: *const records.RecordHeader, slot: u32) Allocator.Error!void {
        assert(c.ready);
        c.ready = false;
        if (rec.recovered) return c.report.addCarved(rec.id, &c.fields);
        return c.report.addLive(rec.id, slot, &c.fields);
    }
};

/// A live record, as the lists name it.
pub const Mark = struct { record_id: u64, time: ?u64 };

/// A maximal run of live records, consecutive in walk order, whose ids step by one.
const Run = struct { first: Mark, last: Mark };

pub const Gap = struct { before: Mark, after: Mark };

pub const IdBackwards = struct {
    record_id: u64,
    previous_record_id: u64,
    chunk: u32,
    chunk_boundary: bool,
};

/// A pair of consecutive live records with times (times backwards, silences).
pub const Step = struct { previous: Mark, record: Mark };

/// A text kept by the report: `texts[start..][0..len]`, or null.
const Text = struct {
    start: u32,
    len: u32,
    present: bool,
};

pub const Logged = struct { record: Mark, provider: Text, event_id: u32, what: []const u8 };

pub const Carved = struct { record: Mark, provider: Text, event_id: ?u32 };

pub const BadChecksum = struct { chunk: u64, what: enum { header, records } };

/// What the file header says.
pub const Header = struct {
    first_chunk: u64,
    last_chunk: u64,
    next_record_id: u64,
    chunks: u16,
    flags: u32,
    checksum: enum { ok, bad, none },
};

/// Counts by key (an owned text; events: the provider's presence and text after the id).
const Counts = std.StringArrayHashMapUnmanaged(u64);

/// The report of one log (the contract's members; `path` and `error` are the caller's).
pub const Report = struct {
    gpa: Allocator,
    silence_seconds: u64,
    size: u64 = 0,
    header: Header = undefined,
    chunk_slots: u64 = 0,
    bad_checksums: std.ArrayList(BadChecksum) = .empty,
    records: u64 = 0,
    recovered: u64 = 0,
    first_time: ?u64 = null,
    last_time: ?u64 = null,
    providers: Counts = .empty,
    event_ids: Counts = .empty,
    channels: Counts = .empty,
    levels: Counts = .empty,
    errors: [@typeInfo(errors.ErrorKind).@"enum".fields.len]u64 = @splat(0),
    runs: std.ArrayList(Run) = .empty,
    ids_backwards: std.ArrayList(IdBackwards) = .empty,
    times_backwards: std.ArrayList(Step) = .empty,
    silences: std.ArrayList(Step) = .empty,
    logged: std.ArrayList(Logged) = .empty,
    carved: std.ArrayList(Carved) = .empty,
    /// Provider texts of `logged` and `carved`.
    texts: std.ArrayList(u8) = .empty,
    /// The last live record in walk order, and its chunk slot.
    previous: ?struct { mark: Mark, slot: u32 } = null,
    /// Gaps, made by `finish` from `runs`.
    gaps: std.ArrayList(Gap) = .empty,
    /// A count's key as it is made.
    key: std.ArrayList(u8) = .empty,
    /// The row each table counted last (`count`).
    last_rows: [4]?u32 = @splat(null),

    pub fn init(gpa: Allocator, silence_seconds: u64) Report {
        assert(silence_seconds >= 1 and silence_seconds <= silence_max);
        return .{ .gpa = gpa, .silence_seconds = silence_seconds };
    }

    pub fn deinit(r: *Report) void {
        const gpa = r.gpa;
        for ([_]*Counts{ &r.providers, &r.event_ids, &r.channels, &r.levels }) |counts| {
            for (counts.keys()) |key| gpa.free(key);
            counts.deinit(gpa);
        }
        r.bad_checksums.deinit(gpa);
        r.runs.deinit(gpa);
        r.ids_backwards.deinit(gpa);
        r.times_backwards.deinit(gpa);
        r.silences.deinit(gpa);
        r.logged.deinit(gpa);
        r.carved.deinit(gpa);
        r.texts.deinit(gpa);
        r.gaps.deinit(gpa);
        r.key.deinit(gpa);
    }

    /// Counts `key` in `table`. Neighbouring records mostly share their keys: the row counted
    /// last is compared first (rows are never removed, so its index holds), before hashing.
    fn count(r: *Report, table: Table, key: []const u8) Allocator.Error!void {
        const counts = r.countsOf(table);
        const last = &r.last_rows[@intFromEnum(table)];
        if (last.*) |row| if (std.mem.eql(u8, counts.keys()[row], key)) {
            counts.values()[row] += 1;
            return;
        };
        const entry = try counts.getOrPut(r.gpa, key);
        if (!entry.found_existing) {
            entry.key_ptr.* = r.gpa.dupe(u8, key) catch |e| {
                counts.swapRemoveAt(entry.index);
                return e;
            };
            entry.value_ptr.* = 0;
        }
        entry.value_ptr.* += 1;
        last.* = @intCast(entry.index);
    }

    fn countsOf(r: *Report, table: Table) *Counts {
        return switch (table) {
            .providers => &r.providers,
            .event_ids => &r.event_ids,
            .channels => &r.channels,
            .levels => &r.levels,
        };
    }

    fn keepText(r: *Report, kept: ?[]const u8) Allocator.Error!Text {
        const t = kept orelse return .{ .start = 0, .len = 0, .present = false };
        const start: u32 = @intCast(r.texts.items.len);
        try r.texts.appendSlice(r.gpa, t);
        return .{ .start = start, .len = @intCast(t.len), .present = true };
    }

    pub fn text(r: *const Report, t: Text) ?[]const u8 {
        if (!t.present) return null;
        return r.texts.items[t.start..][0..t.len];
    }

    /// A live record in walk order.
    pub fn addLive(r: *Report, id: u64, slot: u32, f: *const Fields) Allocator.Error!void {
        r.records += 1;
        const mark: Mark = .{ .record_id = id, .time = f.time };
        if (f.time) |t| {
            r.first_time = @min(r.first_time orelse t, t);
            r.last_time = @max(r.last_time orelse t, t);
        }
        try r.countFields(f);
        if (logEvent(f.provider, f.event_id)) |e| try r.logged.append(r.gpa, .{
            .record = mark,
            .provider = try r.keepText(f.provider),
            .event_id = f.event_id.?,
            .what = e.what,
        });
        if (r.previous) |prev| try r.addStep(prev.mark, prev.slot, mark, slot) else {
            try r.runs.append(r.gpa, .{ .first = mark, .last = mark });
        }
        r.previous = .{ .mark = mark, .slot = slot };
    }

    fn countFields(r: *Report, f: *const Fields) Allocator.Error!void {
        const key = &r.key;
        key.clearRetainingCapacity();
        try key.appendSlice(r.gpa, &numberKey(f.level));
        try r.count(.levels, key.items);
        key.clearRetainingCapacity();
        try key.appendSlice(r.gpa, &numberKey(f.event_id));
        try appendTextKey(r.gpa, key, f.provider);
        try r.count(.event_ids, key.items);
        key.clearRetainingCapacity();
        try appendTextKey(r.gpa, key, f.provider);
        try r.count(.providers, key.items);
        key.clearRetainingCapacity();
        try appendTextKey(r.gpa, key, f.channel);
        try r.count(.channels, key.items);
    }

    /// The pair of consecutive live records `prev` (slot `prev_slot`), `mark` (slot `slot`).
    fn addStep(r: *Report, prev: Mark, prev_slot: u32, mark: Mark, slot: u32) !void {
        const run = &r.runs.items[r.runs.items.len - 1];
        if (prev.record_id != std.math.maxInt(u64) and mark.record_id == prev.record_id + 1) {
            run.last = mark;
        } else try r.runs.append(r.gpa, .{ .first = mark, .last = mark });
        if (mark.record_id <= prev.record_id) try r.ids_backwards.append(r.gpa, .{
            .record_id = mark.record_id,
            .previous_record_id = prev.record_id,
            .chunk = slot,
            .chunk_boundary = slot != prev_slot,
        });
        const pt = prev.time orelse return;
        const t = mark.time orelse return;
        const step: Step = .{ .previous = prev, .record = mark };
        if (t < pt) try r.times_backwards.append(r.gpa, step);
        if (t > pt and t - pt >= r.silence_seconds * ticks_per_second)
            try r.silences.append(r.gpa, step);
    }

    /// A carved record in walk order.
    pub fn addCarved(r: *Report, id: u64, f: *const Fields) Allocator.Error!void {
        r.recovered += 1;
        try r.carved.append(r.gpa, .{
            .record = .{ .record_id = id, .time = f.time },
            .provider = try r.keepText(f.provider),
            .event_id = f.event_id,
        });
    }

    /// The gaps of the sorted set of distinct live record ids, from the runs: a gap's lower
    /// neighbour ends every run that holds it (a run holding it and the next id would close
    /// the gap), its upper one starts every run that holds it; the first such run in walk
    /// order gives the record's time.
    pub fn finish(r: *Report) Allocator.Error!void {
        const gpa = r.gpa;
        const order = try gpa.alloc(u32, r.runs.items.len);
        defer gpa.free(order);
        for (order, 0..) |*o, i| o.* = @intCast(i);
        std.mem.sort(u32, order, r.runs.items, runLess);
        var firsts: std.AutoHashMapUnmanaged(u64, Mark) = .empty;
        defer firsts.deinit(gpa);
        var lasts: std.AutoHashMapUnmanaged(u64, Mark) = .empty;
        defer lasts.deinit(gpa);
        for (r.runs.items) |run| {
            const f = try firsts.getOrPut(gpa, run.first.record_id);
            if (!f.found_existing) f.value_ptr.* = run.first;
            const l = try lasts.getOrPut(gpa, run.last.record_id);
            if (!l.found_existing) l.value_ptr.* = run.last;
        }
        r.gaps.clearRetainingCapacity();
        var high: ?u64 = null;
        for (order) |i| {
            const run = r.runs.items[i];
            if (high) |h| if (run.first.record_id > h +| 1) try r.gaps.append(gpa, .{
                .before = lasts.get(h).?,
                .after = firsts.get(run.first.record_id).?,
            });
            high = @max(high orelse run.last.record_id, run.last.record_id);
        }
    }

    fn runLess(runs: []const Run, a: u32, b: u32) bool {
        return runs[a].first.record_id < runs[b].first.record_id;
    }

    pub fn errorCount(r: *const Report) u64 {
        var sum: u64 = 0;
        for (r.errors) |n| sum += n;
        return sum;
    }
};

/// A nullable number's key: its presence, then its value big-endian (5 bytes).
fn numberKey(n: ?u32) [5]u8 {
    var key: [5]u8 = undefined;
    key[0] = @intFromBool(n != null);
    std.mem.writeInt(u32, key[1..5], n orelse 0, .big);
    return key;
}

fn keyNumber(key: []const u8) ?u32 {
    assert(key.len >= 5);
    if (key[0] == 0) return null;
    return std.mem.readInt(u32, key[1..5], .big);
}

/// A nullable text's key: empty for null, else `1` and the text.
fn appendTextKey(gpa: Allocator, key: *std.ArrayList(u8), text: ?[]const u8) !void {
    const t = text orelse return;
    try key.append(gpa, 1);
    try key.appendSlice(gpa, t);
}

fn keyText(key: []const u8) ?[]const u8 {
    if (key.len == 0) return null;
    assert(key[0] == 1);
    return key[1..];
}

/// Nullable texts by bytes, null after every text.
fn textLess(a: ?[]const u8, b: ?[]const u8) std.math.Order {
    const x = a orelse return if (b == null) .eq else .gt;
    const y = b orelse return .lt;
    return std.mem.order(u8, x, y);
}

fn numberLess(a: ?u32, b: ?u32) std.math.Order {
    const x = a orelse return if (b == null) .eq else .gt;
    const y = b orelse return .lt;
    return std.math.order(x, y);
}

/// Which count table a row is of: how its key reads.
const Table = enum { providers, event_ids, channels, levels };

/// The order of one key of `table` against another (count aside).
fn keyOrder(table: Table, a: []const u8, b: []const u8) std.math.Order {
    return switch (table) {
        .providers, .channels => textLess(keyText(a), keyText(b)),
        .levels => numberLess(keyNumber(a), keyNumber(b)),
        .event_ids => switch (textLess(keyText(a[5..]), keyText(b[5..]))) {
            .eq => numberLess(keyNumber(a), keyNumber(b)),
            else => |o| o,
        },
    };
}

/// A count table's rows in the contract's order: by count descending, then by key.
fn sortedRows(gpa: Allocator, counts: *const Counts, table: Table) Allocator.Error![]u32 {
    const rows = try gpa.alloc(u32, counts.count());
    for (rows, 0..) |*row, i| row.* = @intCast(i);
    const Context = struct {
        counts: *const Counts,
        table: Table,
        fn less(c: @This(), a: u32, b: u32) bool {
            const na = c.counts.values()[a];
            const nb = c.counts.values()[b];
            if (na != nb) return na > nb;
            return keyOrder(c.table, c.counts.keys()[a], c.counts.keys()[b]) == .lt;
        }
    };
    std.mem.sort(u32, rows, Context{ .counts = counts, .table = table }, Context.less);
    return rows;
}

// ---------------------------------------------------------------------------------------
// The walk.

/// Triages the log `in`: its header and checksums as `info` reads them, its records as the
/// jsonl dump with `--recover-records` walks them at `-t 1`. A file that is not a log (too
/// short, no magic) fails as `EvtxFile.open` does; the caller words it.
pub fn triageInput(
    gpa: Allocator,
    in: *const input.Input,
    silence_seconds: u64,
) (file_header.Error || Allocator.Error)!Report {
    const settings: options.Options = .{
        .format = .jsonl,
        .indent = false,
        .show_record_number = false,
        .recover_records = true,
    };
    const file = try dump.EvtxFile.open(gpa, in.*, &settings);
    var report = Report.init(gpa, silence_seconds);
    errdefer report.deinit();
    var block: [file_header.block_size]u8 = undefined;
    readHeader(&report, in.read(0, &block), in.size);
    const renderer = try gpa.create(dump.Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, &settings);
    defer renderer.deinit();
    var collector = Collector.init(gpa, &report);
    defer collector.deinit();
    renderer.fields = &collector;
    var result = dump.ChunkResult.init(gpa);
    defer result.deinit();
    var slots = file.order.iterator();
    while (slots.next()) |slot| {
        try renderer.renderChunk(in, slot, &result);
        for (result.entries.items) |*e| {
            if (e.kind()) |kind| report.errors[@intFromEnum(kind)] += 1;
        }
    }
    try readChecksums(&report, in, &renderer.window);
    try report.finish();
    return report;
}

/// The file header's facts (`info`'s reading).
fn readHeader(report: *Report, block: []const u8, size: u64) void {
    assert(block.len == file_header.block_size);
    const h = file_header.parseBlock(block, size) catch unreachable;
    report.size = size;
    const body = size - file_header.block_size;
    report.chunk_slots = body / chunk.size + @intFromBool(body % chunk.size != 0);
    report.header = .{
        .first_chunk = h.first_chunk,
        .last_chunk = h.last_chunk,
        .next_record_id = h.next_record_id,
        .chunks = h.chunk_count,
        .flags = h.flags,
        .checksum = if (h.flags & file_header.flag_no_crc32 != 0)
            .none
        else if (h.checksum_stored == h.checksum_computed) .ok else .bad,
    };
}

/// The whole chunks `--validate-checksums` would refuse, in slot order.
fn readChecksums(report: *Report, in: *const input.Input, window: *input.ChunkSlot) !void {
    const slots = (report.size - file_header.block_size) / chunk.size;
    for (0..slots) |slot| {
        const got = in.read(file_header.chunkOffset(slot), &window.bytes);
        if (got.len < chunk.size or !chunk.hasMagic(got)) continue;
        const bytes: *const [chunk.size]u8 = got[0..chunk.size];
        const header = chunk.ChunkHeader.read(bytes);
        const kind = chunk.validateChecksums(bytes, &header) orelse continue;
        try report.bad_checksums.append(report.gpa, .{
            .chunk = slot,
            .what = if (kind == .bad_chunk_header_checksum) .header else .records,
        });
    }
}

// ---------------------------------------------------------------------------------------
// Writing.

/// `ticks` (FILETIME) as `YYYY-MM-DDTHH:MM:SS.fffffffZ`; `-`-free: the caller writes null.
pub fn writeTime(w: *Writer, ticks: u64) Writer.Error!void {
    const seconds = ticks / ticks_per_second;
    const fraction = ticks % ticks_per_second;
    // Days from 1601-01-01 to 1970-01-01.
    const days: i64 = @as(i64, @intCast(seconds / 86_400)) - 134_774;
    const in_day = seconds % 86_400;
    const civil = civilFromDays(days);
    try w.print("{d:0>4}-{d:0>2}-{d:0>2}T{d:0>2}:{d:0>2}:{d:0>2}.{d:0>7}Z", .{
        @as(u64, @intCast(civil.year)), civil.month,      civil.day,
        in_day / 3600,                  in_day / 60 % 60, in_day % 60,
        fraction,
    });
}

/// The proleptic Gregorian date `days` after 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civilFromDays(days: i64) struct { year: i64, month: u8, day: u8 } {
    const z = days + 719_468;
    const era = @divFloor(z, 146_097);
    const doe = z - era * 146_097;
    const yoe = @divFloor(doe - @divFloor(doe, 1460) + @divFloor(doe, 36_524) -
        @divFloor(doe, 146_096), 365);
    const doy = doe - (365 * yoe + @divFloor(yoe, 4) - @divFloor(yoe, 100));
    const mp = @divFloor(5 * doy + 2, 153);
    const d = doy - @divFloor(153 * mp + 2, 5) + 1;
    const m = if (mp < 10) mp + 3 else mp - 9;
    return .{
        .year = yoe + era * 400 + @intFromBool(m <= 2),
        .month = @intCast(m),
        .day = @intCast(d),
    };
}

/// A nullable time: JSON `null` or the quoted text.
fn jsonTime(w: *Writer, ticks: ?u64) Writer.Error!void {
    const t = ticks orelse return w.writeAll("null");
    try w.writeByte('"');
    try writeTime(w, t);
    try w.writeByte('"');
}

/// A nullable text as a JSON string (escaped as the provenance mark's `file`) or `null`.
fn jsonText(w: *Writer, text: ?[]const u8) Writer.Error!void {
    const t = text orelse return w.writeAll("null");
    try w.writeByte('"');
    try provenance.writeJsonEscaped(w, t);
    try w.writeByte('"');
}

fn jsonNumber(w: *Writer, n: ?u32) Writer.Error!void {
    if (n) |v| try w.print("{d}", .{v}) else try w.writeAll("null");
}

fn jsonMark(w: *Writer, m: Mark) Writer.Error!void {
    try w.print("{{\"record_id\":{d},\"time\":", .{m.record_id});
    try jsonTime(w, m.time);
    try w.writeByte('}');
}

/// The file flags named in the report, in this order.
const flag_names = [_]struct { bit: u32, name: []const u8 }{
    .{ .bit = 0x1, .name = "DIRTY" },
    .{ .bit = 0x2, .name = "FULL" },
    .{ .bit = 0x4, .name = "NO_CRC32" },
};

/// The report of an input that could not be read: its path and the first line of `why`.
pub fn writeJsonFailed(w: *Writer, path: []const u8, why: []const u8) Writer.Error!void {
    try w.writeAll("{\"path\":");
    try jsonText(w, path);
    try w.writeAll(",\"error\":");
    try jsonText(w, firstLine(why));
    try w.writeByte('}');
}

pub fn firstLine(text: []const u8) []const u8 {
    return text[0 .. std.mem.indexOfScalar(u8, text, '\n') orelse text.len];
}

/// The report of one log as the JSON object of the document's `files` (no newline).
pub fn writeJson(
    r: *const Report,
    gpa: Allocator,
    w: *Writer,
    path: []const u8,
) (Allocator.Error || Writer.Error)!void {
    try w.writeAll("{\"path\":");
    try jsonText(w, path);
    try w.print(",\"error\":null,\"size\":{d},\"header\":", .{r.size});
    try jsonHeader(w, &r.header);
    try w.print(",\"chunk_slots\":{d},\"bad_checksums\":[", .{r.chunk_slots});
    for (r.bad_checksums.items, 0..) |b, i| {
        if (i > 0) try w.writeByte(',');
        try w.print("{{\"chunk\":{d},\"what\":\"{s}\"}}", .{ b.chunk, @tagName(b.what) });
    }
    try w.print("],\"records\":{d},\"recovered\":{d},\"first_time\":", .{ r.records, r.recovered });
    try jsonTime(w, r.first_time);
    try w.writeAll(",\"last_time\":");
    try jsonTime(w, r.last_time);
    inline for (.{ "providers", "event_ids", "channels", "levels" }) |name| {
        try w.writeAll(",\"" ++ name ++ "\":[");
        const table = @field(Table, name);
        const counts = &@field(r, name);
        const rows = try sortedRows(gpa, counts, table);
        defer gpa.free(rows);
        for (rows, 0..) |row, i| {
            if (i > 0) try w.writeByte(',');
            try jsonRow(w, table, counts.keys()[row], counts.values()[row]);
        }
        try w.writeByte(']');
    }
    try w.writeAll(",\"errors\":[");
    try jsonErrors(w, r);
    try w.writeAll("],\"gaps\":[");
    try jsonGaps(w, r);
    try w.writeAll("],\"ids_backwards\":[");
    for (r.ids_backwards.items, 0..) |b, i| {
        if (i > 0) try w.writeByte(',');
        try w.print("{{\"record_id\":{d},\"previous_record_id\":{d},\"chunk\":{d}," ++
            "\"chunk_boundary\":{}}}", .{
            b.record_id, b.previous_record_id, b.chunk, b.chunk_boundary,
        });
    }
    try w.writeAll("],\"times_backwards\":[");
    for (r.times_backwards.items, 0..) |s, i| {
        if (i > 0) try w.writeByte(',');
        try w.print("{{\"record_id\":{d},\"time\":", .{s.record.record_id});
        try jsonTime(w, s.record.time);
        try w.print(",\"previous_record_id\":{d},\"previous_time\":", .{s.previous.record_id});
        try jsonTime(w, s.previous.time);
        try w.writeByte('}');
    }
    try w.writeAll("],\"silences\":[");
    try jsonSilences(w, r);
    try w.writeAll("],\"log_events\":[");
    try jsonLogged(w, r);
    try w.writeAll("],\"carved\":[");
    for (r.carved.items, 0..) |c, i| {
        if (i > 0) try w.writeByte(',');
        try w.print("{{\"record_id\":{d},\"time\":", .{c.record.record_id});
        try jsonTime(w, c.record.time);
        try w.writeAll(",\"provider\":");
        try jsonText(w, r.text(c.provider));
        try w.writeAll(",\"event_id\":");
        try jsonNumber(w, c.event_id);
        try w.writeByte('}');
    }
    try w.writeAll("]}");
}

fn jsonHeader(w: *Writer, h: *const Header) Writer.Error!void {
    try w.print("{{\"first_chunk\":{d},\"last_chunk\":{d},\"next_record_id\":{d}," ++
        "\"chunks\":{d},\"flags\":[", .{ h.first_chunk, h.last_chunk, h.next_record_id, h.chunks });
    var first = true;
    for (flag_names) |f| {
        if (h.flags & f.bit == 0) continue;
        if (!first) try w.writeByte(',');
        first = false;
        try w.print("\"{s}\"", .{f.name});
    }
    try w.print("],\"checksum\":\"{s}\"}}", .{@tagName(h.checksum)});
}

fn jsonRow(w: *Writer, table: Table, key: []const u8, n: u64) Writer.Error!void {
    switch (table) {
        .providers, .channels => {
            try w.writeAll("{\"name\":");
            try jsonText(w, keyText(key));
        },
        .levels => {
            try w.writeAll("{\"level\":");
            try jsonNumber(w, keyNumber(key));
        },
        .event_ids => {
            try w.writeAll("{\"provider\":");
            try jsonText(w, keyText(key[5..]));
            try w.writeAll(",\"event_id\":");
            try jsonNumber(w, keyNumber(key));
        },
    }
    try w.print(",\"count\":{d}}}", .{n});
}

/// The error kinds with a count, sorted by their text.
fn errorKinds(r: *const Report, buf: []errors.ErrorKind) []errors.ErrorKind {
    var n: usize = 0;
    for (r.errors, 0..) |count, k| {
        if (count == 0) continue;
        buf[n] = @enumFromInt(k);
        n += 1;
    }
    const kinds = buf[0..n];
    std.mem.sort(errors.ErrorKind, kinds, {}, struct {
        fn less(_: void, a: errors.ErrorKind, b: errors.ErrorKind) bool {
            return std.mem.lessThan(u8, a.text(), b.text());
        }
    }.less);
    return kinds;
}

fn jsonErrors(w: *Writer, r: *const Report) Writer.Error!void {
    var buf: [@typeInfo(errors.ErrorKind).@"enum".fields.len]errors.ErrorKind = undefined;
    for (errorKinds(r, &buf), 0..) |kind, i| {
        if (i > 0) try w.writeByte(',');
        try w.print("{{\"kind\":\"{s}\",\"count\":{d}}}", .{
            kind.text(), r.errors[@intFromEnum(kind)],
        });
    }
}

fn jsonGaps(w: *Writer, r: *const Report) Writer.Error!void {
    for (r.gaps.items, 0..) |g, i| {
        if (i > 0) try w.writeByte(',');
        const a = g.before.record_id + 1;
        const b = g.after.record_id - 1;
        try w.print("{{\"first_missing\":{d},\"last_missing\":{d},\"missing\":{d},\"before\":", .{
            a, b, b - a + 1,
        });
        try jsonMark(w, g.before);
        try w.writeAll(",\"after\":");
        try jsonMark(w, g.after);
        try w.writeByte('}');
    }
}

fn jsonSilences(w: *Writer, r: *const Report) Writer.Error!void {
    for (r.silences.items, 0..) |s, i| {
        if (i > 0) try w.writeByte(',');
        try w.writeAll("{\"after\":");
        try jsonMark(w, s.previous);
        try w.writeAll(",\"before\":");
        try jsonMark(w, s.record);
        try w.print(",\"seconds\":{d}}}", .{silenceSeconds(s)});
    }
}

fn silenceSeconds(s: Step) u64 {
    return (s.record.time.? - s.previous.time.?) / ticks_per_second;
}

fn jsonLogged(w: *Writer, r: *const Report) Writer.Error!void {
    for (r.logged.items, 0..) |e, i| {
        if (i > 0) try w.writeByte(',');
        try w.print("{{\"record_id\":{d},\"time\":", .{e.record.record_id});
        try jsonTime(w, e.record.time);
        try w.writeAll(",\"provider\":");
        try jsonText(w, r.text(e.provider));
        try w.print(",\"event_id\":{d},\"what\":\"{s}\"}}", .{ e.event_id, e.what });
    }
}

/// The document's totals over its files.
pub const Totals = struct {
    files: u64 = 0,
    unreadable: u64 = 0,
    records: u64 = 0,
    recovered: u64 = 0,
    errors: u64 = 0,
    gaps: u64 = 0,
    log_events: u64 = 0,

    pub fn add(t: *Totals, r: *const Report) void {
        t.files += 1;
        t.records += r.records;
        t.recovered += r.recovered;
        t.errors += r.errorCount();
        t.gaps += r.gaps.items.len;
        t.log_events += r.logged.items.len;
    }

    pub fn addUnreadable(t: *Totals) void {
        t.files += 1;
        t.unreadable += 1;
    }
};

/// The document's head, up to the first file's object.
pub fn writeJsonStart(w: *Writer) Writer.Error!void {
    try w.writeAll("{\"schema\":\"" ++ schema ++ "\",\"files\":[");
}

/// The document's tail after the last file's object, newline included.
pub fn writeJsonEnd(w: *Writer, t: *const Totals) Writer.Error!void {
    try w.print("],\"totals\":{{\"files\":{d},\"unreadable\":{d},\"records\":{d}," ++
        "\"recovered\":{d},\"errors\":{d},\"gaps\":{d},\"log_events\":{d}}}}}\n", .{
        t.files, t.unreadable, t.records, t.recovered, t.errors, t.gaps, t.log_events,
    });
}

/// A nullable time in the text form: the time, or `-`.
const TextTime = struct {
    ticks: ?u64,
    pub fn format(t: TextTime, w: *Writer) Writer.Error!void {
        if (t.ticks) |ticks| try writeTime(w, ticks) else try w.writeByte('-');
    }
};

/// A nullable text or number in the text form, `-` for null.
const Dash = struct {
    text: ?[]const u8 = null,
    number: ?u32 = null,
    pub fn format(d: Dash, w: *Writer) Writer.Error!void {
        if (d.text) |t| return w.writeAll(t);
        if (d.number) |n| return w.print("{d}", .{n});
        try w.writeByte('-');
    }
};

fn dashText(text: ?[]const u8) Dash {
    return .{ .text = text };
}

fn dashNumber(n: ?u32) Dash {
    return .{ .number = n };
}

/// The text report of one log given alone (the single-file form).
pub fn writeText(
    r: *const Report,
    gpa: Allocator,
    w: *Writer,
    path: []const u8,
    top: usize,
) (Allocator.Error || Writer.Error)!void {
    assert(top >= 1);
    const h = &r.header;
    try w.print("file {s}\nsize {d} bytes, {d} chunk slots; header: chunks {d}, next record id " ++
        "{d}, flags ", .{ path, r.size, r.chunk_slots, h.chunks, h.next_record_id });
    var first = true;
    for (flag_names) |f| {
        if (h.flags & f.bit == 0) continue;
        if (!first) try w.writeByte('|');
        first = false;
        try w.writeAll(f.name);
    }
    if (first) try w.writeAll("none");
    try w.print(", checksum {s}\nrecords {d}, recovered {d}, from {f} to {f}\n", .{
        @tagName(h.checksum),              r.records,                        r.recovered,
        TextTime{ .ticks = r.first_time }, TextTime{ .ticks = r.last_time },
    });
    try textErrors(w, r);
    try w.writeAll("bad checksums:");
    for (r.bad_checksums.items, 0..) |b, i| try w.print("{s} chunk {d} {s}", .{
        if (i == 0) "" else ",", b.chunk, @tagName(b.what),
    });
    try w.writeAll(if (r.bad_checksums.items.len == 0) " none\n" else "\n");
    inline for (.{ "providers", "event_ids", "channels", "levels" }) |name| {
        try textTable(gpa, w, @field(Table, name), &@field(r, name), top);
    }
    try textLists(r, w, top);
}

fn textErrors(w: *Writer, r: *const Report) Writer.Error!void {
    var buf: [@typeInfo(errors.ErrorKind).@"enum".fields.len]errors.ErrorKind = undefined;
    const kinds = errorKinds(r, &buf);
    try w.writeAll("errors:");
    for (kinds, 0..) |kind, i| try w.print("{s} {s} {d}", .{
        if (i == 0) "" else ",", kind.text(), r.errors[@intFromEnum(kind)],
    });
    try w.writeAll(if (kinds.len == 0) " none\n" else "\n");
}

fn textTable(
    gpa: Allocator,
    w: *Writer,
    table: Table,
    counts: *const Counts,
    top: usize,
) (Allocator.Error || Writer.Error)!void {
    try w.writeAll(switch (table) {
        .providers => "providers:",
        .event_ids => "event ids:",
        .channels => "channels:",
        .levels => "levels:",
    });
    const rows = try sortedRows(gpa, counts, table);
    defer gpa.free(rows);
    for (rows[0..@min(rows.len, top)], 0..) |row, i| {
        const key = counts.keys()[row];
        try w.writeAll(if (i == 0) " " else ", ");
        switch (table) {
            .providers, .channels => try w.print("{f}", .{dashText(keyText(key))}),
            .levels => try w.print("{f}", .{dashNumber(keyNumber(key))}),
            .event_ids => try w.print("{f}/{f}", .{
                dashText(keyText(key[5..])), dashNumber(keyNumber(key)),
            }),
        }
        try w.print(" {d}", .{counts.values()[row]});
    }
    try w.writeAll(if (rows.len == 0) " none\n" else "\n");
}

/// `  ... <k> more` after the first `top` lines of a list of `len`.
fn textMore(w: *Writer, len: usize, top: usize) Writer.Error!void {
    if (len > top) try w.print("  ... {d} more\n", .{len - top});
}

fn textLists(r: *const Report, w: *Writer, top: usize) Writer.Error!void {
    var missing: u64 = 0;
    for (r.gaps.items) |g| missing += g.after.record_id - g.before.record_id - 1;
    try w.print("gaps: {d} ({d} ids missing)\n", .{ r.gaps.items.len, missing });
    for (r.gaps.items[0..@min(top, r.gaps.items.len)]) |g| {
        const a = g.before.record_id + 1;
        const b = g.after.record_id - 1;
        if (a == b) try w.print("  {d}", .{a}) else try w.print("  {d}-{d}", .{ a, b });
        try w.print(" ({d}) after record {d} at {f}, before record {d} at {f}\n", .{
            b - a + 1,                          g.before.record_id,
            TextTime{ .ticks = g.before.time }, g.after.record_id,
            TextTime{ .ticks = g.after.time },
        });
    }
    try textMore(w, r.gaps.items.len, top);
    try w.print("ids backwards: {d}\n", .{r.ids_backwards.items.len});
    for (r.ids_backwards.items[0..@min(top, r.ids_backwards.items.len)]) |b| {
        try w.print("  record {d} after {d} in chunk {d}{s}\n", .{
            b.record_id,                                           b.previous_record_id, b.chunk,
            if (b.chunk_boundary) ", at a chunk boundary" else "",
        });
    }
    try textMore(w, r.ids_backwards.items.len, top);
    try w.print("times backwards: {d}\n", .{r.times_backwards.items.len});
    for (r.times_backwards.items[0..@min(top, r.times_backwards.items.len)]) |s| {
        try w.print("  record {d} at {f}, after record {d} at {f}\n", .{
            s.record.record_id,   TextTime{ .ticks = s.record.time },
            s.previous.record_id, TextTime{ .ticks = s.previous.time },
        });
    }
    try textMore(w, r.times_backwards.items.len, top);
    try textEvents(r, w, top);
}

fn textEvents(r: *const Report, w: *Writer, top: usize) Writer.Error!void {
    try w.print("silences of {d} s or more: {d}\n", .{ r.silence_seconds, r.silences.items.len });
    for (r.silences.items[0..@min(top, r.silences.items.len)]) |s| {
        try w.print("  {d} s after record {d} at {f}, before record {d} at {f}\n", .{
            silenceSeconds(s),                    s.previous.record_id,
            TextTime{ .ticks = s.previous.time }, s.record.record_id,
            TextTime{ .ticks = s.record.time },
        });
    }
    try textMore(w, r.silences.items.len, top);
    try w.print("log events: {d}\n", .{r.logged.items.len});
    for (r.logged.items[0..@min(top, r.logged.items.len)]) |e| {
        try w.print("  record {d} at {f}: {s}/{d} {s}\n", .{
            e.record.record_id, TextTime{ .ticks = e.record.time }, r.text(e.provider).?,
            e.event_id,         e.what,
        });
    }
    try textMore(w, r.logged.items.len, top);
    try w.print("carved: {d}\n", .{r.carved.items.len});
    for (r.carved.items[0..@min(top, r.carved.items.len)]) |c| {
        try w.print("  record {d} at {f}: {f}/{f}\n", .{
            c.record.record_id,           TextTime{ .ticks = c.record.time },
            dashText(r.text(c.provider)), dashNumber(c.event_id),
        });
    }
    try textMore(w, r.carved.items.len, top);
}

/// One log's line of the many-inputs form.
pub fn writeLine(r: *const Report, w: *Writer, path: []const u8) Writer.Error!void {
    try w.print("{s}: records {d}, recovered {d}, errors {d}, gaps {d}, log events {d}, " ++
        "from {f} to {f}\n", .{
        path,                              r.records,                        r.recovered,
        r.errorCount(),                    r.gaps.items.len,                 r.logged.items.len,
        TextTime{ .ticks = r.first_time }, TextTime{ .ticks = r.last_time },
    });
}

/// An unreadable input's line of the many-inputs form.
pub fn writeLineFailed(w: *Writer, path: []const u8, why: []const u8) Writer.Error!void {
    try w.print("{s}: error: {s}\n", .{ path, firstLine(why) });
}

/// The many-inputs form's last line.
pub fn writeTotals(w: *Writer, t: *const Totals) Writer.Error!void {
    try w.print("total: files {d}, unreadable {d}, records {d}, recovered {d}, errors {d}, " ++
        "gaps {d}, log events {d}\n", .{
        t.files, t.unreadable, t.records, t.recovered, t.errors, t.gaps, t.log_events,
    });
}

// ---------------------------------------------------------------------------------------
const testing = @import("testing.zig");

/// The triage of the shared fixture `name` (`silence` seconds); caller deinits.
fn triageFixture(gpa: Allocator, name: []const u8, silence: u64) !Report {
    const bytes = try testing.readFixture(gpa, name);
    defer gpa.free(bytes);
    return triageInput(gpa, &input.Input.fromBytes(bytes), silence);
}

fn jsonOf(gpa: Allocator, r: *const Report, path: []const u8) ![]u8 {
    var out: Writer.Allocating = .init(gpa);
    defer out.deinit();
    try writeJson(r, gpa, &out.writer, path);
    return out.toOwnedSlice();
}

/// The count of `key` in `counts` (made as `Report.countFields` makes it), 0 when absent.
fn countOf(counts: *const Counts, key: []const u8) u64 {
    return counts.get(key) orelse 0;
}

test "triage: synthetic/filters.evtx, fields as the filter reads them, times, silences" {
    // The generator's description (shared-fixtures/generator/src/more.rs, `filters`) and the
    // filter table of filter.zig: EventIDs 4624 (records 1, 3, 5, 6, 9), 4625 (2, 10), 7045
    // (4); levels 4 (3, 4, 6, 9, 10) and 0-2 (1, 2, 5); channel Security in any case (1, 2, 3,
    // 6, 8, 9, 10); times t0, t0+1, t0+1 s, t0+1 h, t0-1, none, none, t0+0.5 s, t0+2, t0+3.
    const gpa = std.testing.allocator;
    var r = try triageFixture(gpa, "synthetic/filters.evtx", 1);
    defer r.deinit();
    try std.testing.expectEqual(@as(u64, 10), r.records);
    try std.testing.expectEqual(@as(u64, 0), r.recovered);
    try std.testing.expectEqual(@as(u64, 0), r.errorCount());
    var ids: [3]u64 = @splat(0);
    for (r.event_ids.keys(), r.event_ids.values()) |key, n| {
        const id = keyNumber(key) orelse continue;
        for ([_]u32{ 4624, 4625, 7045 }, &ids) |want, *sum| if (id == want) {
            sum.* += n;
        };
    }
    try std.testing.expectEqual([3]u64{ 5, 2, 1 }, ids);
    try std.testing.expectEqual(@as(u64, 5), countOf(&r.levels, &numberKey(4)));
    const low = countOf(&r.levels, &numberKey(0)) + countOf(&r.levels, &numberKey(1)) +
        countOf(&r.levels, &numberKey(2));
    try std.testing.expectEqual(@as(u64, 3), low);
    var security: u64 = 0;
    for (r.channels.keys(), r.channels.values()) |key, n| {
        const name = keyText(key) orelse continue;
        if (std.ascii.eqlIgnoreCase(name, "security")) security += n;
    }
    try std.testing.expectEqual(@as(u64, 7), security);
    // Record 7 has no System: every field null.
    try std.testing.expectEqual(@as(u64, 1), countOf(&r.providers, ""));
    var problem: filter.Problem = undefined;
    const t0 = try filter.parseTime("2024-05-01T08:00:00Z", &problem);
    try std.testing.expectEqual(@as(?u64, t0 - 1), r.first_time);
    try std.testing.expectEqual(@as(?u64, t0 + 3600 * ticks_per_second), r.last_time);
    // Backwards: 5 after 4, 9 after 8; the one silence of 1 s or more: 3599 s from 3 to 4.
    try std.testing.expectEqual(@as(usize, 2), r.times_backwards.items.len);
    try std.testing.expectEqual(@as(u64, 5), r.times_backwards.items[0].record.record_id);
    try std.testing.expectEqual(@as(u64, 9), r.times_backwards.items[1].record.record_id);
    try std.testing.expectEqual(@as(usize, 1), r.silences.items.len);
    try std.testing.expectEqual(@as(u64, 3), r.silences.items[0].previous.record_id);
    try std.testing.expectEqual(@as(u64, 3599), silenceSeconds(r.silences.items[0]));
    try std.testing.expectEqual(@as(usize, 0), r.gaps.items.len);
    // The default threshold, an hour: none.
    var hour = try triageFixture(gpa, "synthetic/filters.evtx", silence_default);
    defer hour.deinit();
    try std.testing.expectEqual(@as(usize, 0), hour.silences.items.len);
}

test "triage: damaged and carving fixtures count what the dump outputs" {
    // shared-fixtures/README.md's tables: live records and errors of the jsonl dump, and
    // live plus carved records with `--recover-records` (our rules where they differ).
    const gpa = std.testing.allocator;
    const Case = struct { name: []const u8, live: u64, failed: u64, all: u64 };
    const cases = [_]Case{
        .{ .name = "damaged/bad-chunks.evtx", .live = 5, .failed = 4, .all = 5 },
        .{ .name = "damaged/wrapped.evtx", .live = 90, .failed = 0, .all = 90 },
        .{ .name = "damaged/chunk-header-ids.evtx", .live = 8, .failed = 1, .all = 12 },
        .{ .name = "damaged/bad-records.evtx", .live = 43, .failed = 11, .all = 43 },
        .{ .name = "damaged/bad-offsets.evtx", .live = 10, .failed = 6, .all = 10 },
        .{ .name = "damaged/invalid-binxml.evtx", .live = 22, .failed = 16, .all = 22 },
        .{ .name = "damaged/unsupported-types.evtx", .live = 9, .failed = 3, .all = 9 },
        .{ .name = "damaged/record-output-large.evtx", .live = 2, .failed = 1, .all = 2 },
        .{ .name = "damaged/unused-binxml-json.evtx", .live = 6, .failed = 1, .all = 12 },
        .{ .name = "carving/cleared-chunk.evtx", .live = 5, .failed = 0, .all = 119 },
        .{ .name = "carving/slack-and-gaps.evtx", .live = 7, .failed = 2, .all = 11 },
        .{ .name = "carving/template-gone.evtx", .live = 24, .failed = 0, .all = 58 },
        .{ .name = "carving/unused-binxml.evtx", .live = 7, .failed = 2, .all = 11 },
        .{ .name = "carving/wrapped-stale.evtx", .live = 40, .failed = 0, .all = 59 },
        .{ .name = "carving/cut-last-chunk.evtx", .live = 20, .failed = 1, .all = 52 },
    };
    for (cases) |case| {
        var r = try triageFixture(gpa, case.name, silence_default);
        defer r.deinit();
        errdefer std.debug.print("{s}\n", .{case.name});
        try std.testing.expectEqual(case.live, r.records);
        try std.testing.expectEqual(case.all - case.live, r.recovered);
        try std.testing.expectEqual(case.failed, r.errorCount());
        try std.testing.expectEqual(r.recovered, r.carved.items.len);
    }
}

test "triage: gaps, ids backwards and the checksums of a hand-made log" {
    // Records 1, 2, 5, 3, 6 in one chunk: the set {1, 2, 3, 5, 6} misses 4 (between record 3,
    // seen after 5, and record 5); 3 after 5 steps back inside the chunk. The records CRC is
    // left zero, so the chunk fails `--validate-checksums` on it.
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    var last: u32 = 0;
    for ([_]u32{ 1, 2, 5, 3, 6 }) |id| last = testing.carveTestRecord(&b, id, &def);
    const file = try testing.fileWithRecords(gpa, &b, 6, last);
    defer gpa.free(file);
    // A correct chunk header CRC: only the records CRC fails.
    const c = file[file_header.block_size..][0..chunk.size];
    std.mem.writeInt(u32, c[124..128], chunk.headerChecksum(c), .little);
    var r = try triageInput(gpa, &input.Input.fromBytes(file), silence_default);
    defer r.deinit();
    try std.testing.expectEqual(@as(u64, 5), r.records);
    try std.testing.expectEqual(@as(usize, 1), r.gaps.items.len);
    const g = r.gaps.items[0];
    try std.testing.expectEqual(@as(u64, 3), g.before.record_id);
    try std.testing.expectEqual(@as(u64, 5), g.after.record_id);
    try std.testing.expectEqual(@as(usize, 1), r.ids_backwards.items.len);
    const back = r.ids_backwards.items[0];
    try std.testing.expectEqual(@as(u64, 3), back.record_id);
    try std.testing.expectEqual(@as(u64, 5), back.previous_record_id);
    try std.testing.expect(!back.chunk_boundary);
    try std.testing.expectEqual(@as(usize, 1), r.bad_checksums.items.len);
    try std.testing.expectEqual(.records, r.bad_checksums.items[0].what);
    try std.testing.expectEqual(@as(u64, 1), r.chunk_slots);
    const json = try jsonOf(gpa, &r, "a\"b.evtx");
    defer gpa.free(json);
    try std.testing.expect(std.mem.startsWith(u8, json, "{\"path\":\"a\\\"b.evtx\",\"error\"" ++
        ":null,\"size\":69632,\"header\":{\"first_chunk\":0,\"last_chunk\":0," ++
        "\"next_record_id\":0,\"chunks\":0,\"flags\":[],\"checksum\":\"bad\"}," ++
        "\"chunk_slots\":1,\"bad_checksums\":[{\"chunk\":0,\"what\":\"records\"}]," ++
        "\"records\":5,\"recovered\":0,\"first_time\":null,\"last_time\":null,"));
    try std.testing.expect(std.mem.indexOf(u8, json, "\"gaps\":[{\"first_missing\":4," ++
        "\"last_missing\":4,\"missing\":1,\"before\":{\"record_id\":3,\"time\":null}," ++
        "\"after\":{\"record_id\":5,\"time\":null}}]") != null);
}

test "triage: times as text, the log-event table" {
    var buf: [64]u8 = undefined;
    var w: Writer = .fixed(&buf);
    // Python: datetime(1601,1,1) + timedelta(microseconds=131124751716816408 // 10).
    try writeTime(&w, 131_124_751_716_816_408);
    try std.testing.expectEqualStrings("2016-07-08T18:12:51.6816408Z", w.buffered());
    w = .fixed(&buf);
    try writeTime(&w, 0);
    try std.testing.expectEqualStrings("1601-01-01T00:00:00.0000000Z", w.buffered());
    w = .fixed(&buf);
    try writeTime(&w, ticks_year_10000 - 1);
    try std.testing.expectEqualStrings("9999-12-31T23:59:59.9999999Z", w.buffered());
    try std.testing.expectEqualStrings(
        "audit log cleared",
        logEvent("microsoft-windows-EVENTLOG", 1102).?.what,
    );
    try std.testing.expect(logEvent("Microsoft-Windows-Eventlog", 6005) == null);
    try std.testing.expect(logEvent(null, 1102) == null);
}
