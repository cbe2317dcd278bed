//! `--mta FILE`: the localized strings of a log saved with display information
//! (`LocaleMetaData\<log>_<LCID>.MTA`), added to each record as a `RenderingInfo` element.
//!
//! Layout and lookup rules: `shared-fixtures/generator/mta-format.md`; the Rust engine's
//! `rust/evtx-core/src/mta.rs` follows the same text.
//!
//! Limits: every read is bounds-checked against the file; a page chain is followed at most
//! `section size / 888 + 1` pages; nothing is allocated for a count read from the file before
//! the bytes it claims are known to be there. All memory lives in one arena.
const std = @import("std");
const ReaderError = @import("reader_error.zig").ReaderError;
const tokens = @import("tokens.zig");
const tree = @import("tree.zig");
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const bytes_le = @import("bytes.zig");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;

const magic = "MTAFile\x00";
const header_size = 24;
const descriptor_size = 20;
const page_header_size = 888;
const page_next = 72;
const page_self = 80;
const page_slots = 88;
const record_header_size = 8;

pub const default_publisher = "DEFAULT_PUBLISHER";

/// Why a file was refused; `format` gives the reference's words.
pub const Diagnostic = union(enum) {
    invalid_magic: [8]u8,
    unsupported_version: struct { major: u32, minor: u32 },
    missing_section: []const u8,
    /// `offset` is the reference's number (where the part should be); `at` is where the
    /// reader found the fault: the part itself, or the slot or descriptor whose pointer
    /// leads out of the section or file.
    corrupt: struct { what: []const u8, offset: u64, at: u64 },
    /// `at`: the section's first byte, where its page chain starts.
    page_loop: struct { name: []const u8, at: u64 },

    /// The file offset of the fault (the rule in `reader_error.zig`).
    pub fn offset(d: Diagnostic) u64 {
        return switch (d) {
            .invalid_magic => 0,
            .unsupported_version => version_at,
            .missing_section => section_table,
            .corrupt => |c| c.at,
            .page_loop => |l| l.at,
        };
    }

    /// The error as the CLIs print it: offset and the reference's words.
    pub fn readerError(d: Diagnostic) ReaderError {
        return .init(.mta, d.offset(), d);
    }

    pub fn format(d: Diagnostic, w: *std.Io.Writer) std.Io.Writer.Error!void {
        switch (d) {
            .invalid_magic => |m| {
                try w.writeAll("not an MTA file (magic [");
                for (m, 0..) |b, i| {
                    if (i > 0) try w.writeAll(", ");
                    try w.print("{x:0>2}", .{b});
                }
                try w.writeAll("])");
            },
            .unsupported_version => |v| try w.print(
                "unsupported MTA version {d}.{d}",
                .{ v.major, v.minor },
            ),
            .missing_section => |name| try w.print("MTA file has no {s} section", .{name}),
            .corrupt => |c| try w.print(
                "MTA {s} at offset 0x{x} is truncated or out of bounds",
                .{ c.what, c.offset },
            ),
            .page_loop => |l| try w.print(
                "MTA {s} section has a page chain that does not end",
                .{l.name},
            ),
        }
    }
};

pub const Error = error{ Invalid, OutOfMemory };

/// Where the section descriptors start (a missing section is missing from that table).
const section_table = header_size;
/// Where the major version lies.
const version_at = 8;

/// A part at `offset` that does not fit in `len` bytes, reached through the pointer at `from`:
/// cut short, it is named at its first byte; starting past the end, at the pointer.
fn corruptVia(what: []const u8, offset: u64, len: u64, from: u64) Diagnostic {
    return .{
        .corrupt = .{ .what = what, .offset = offset, .at = if (offset < len) offset else from },
    };
}

fn corrupt(what: []const u8, offset: u64) Diagnostic {
    return .{ .corrupt = .{ .what = what, .offset = offset, .at = offset } };
}

const Message = struct { index: u32, text: []const u8 };
const Event = struct { index: u32, id: u64, message: ?u32 };
const Table = std.AutoHashMapUnmanaged(u32, []const u8);

const Publisher = struct {
    name: []const u8,
    levels: Table = .empty,
    tasks: Table = .empty,
    opcodes: Table = .empty,
    keywords: Table = .empty,
};

/// The `System` fields that select an event's strings.
pub const EventFields = struct {
    provider: []const u8 = "",
    event_record_id: u64 = 0,
    qualifiers: u16 = 0,
    level: u8 = 0,
    task: u16 = 0,
    opcode: u8 = 0,
    keywords: u64 = 0,
};

/// The strings found for one event; null (or no keywords) where the file has none.
pub const RenderingInfo = struct {
    message: ?[]const u8 = null,
    level: ?[]const u8 = null,
    task: ?[]const u8 = null,
    opcode: ?[]const u8 = null,
    keywords: [64][]const u8 = undefined,
    keyword_count: u8 = 0,

    fn isEmpty(info: *const RenderingInfo) bool {
        return info.message == null and info.level == null and info.task == null and
            info.opcode == null and info.keyword_count == 0;
    }
};

/// A parsed `.MTA` file.
pub const MtaFile = struct {
    arena: std.heap.ArenaAllocator,
    /// Sorted by entry index, unique.
    events: []Event = &.{},
    first_message: std.AutoHashMapUnmanaged(u64, ?u32) = .empty,
    messages: []Message = &.{},
    publishers: []Publisher = &.{},
    by_name: std.StringHashMapUnmanaged(usize) = .empty,
    by_lowercase_name: std.StringHashMapUnmanaged(usize) = .empty,
    default: ?usize = null,

    pub fn deinit(m: *MtaFile) void {
        m.arena.deinit();
    }

    fn publisher(m: *const MtaFile, name: []const u8, scratch: []u8) ?*const Publisher {
        if (m.by_name.get(name)) |i| return &m.publishers[i];
        if (name.len > scratch.len) return null;
        const lower = std.ascii.lowerString(scratch[0..name.len], name);
        const i = m.by_lowercase_name.get(lower) orelse return null;
        return &m.publishers[i];
    }

    /// The strings of an event whose record header id is `record_number`, or null when its
    /// publisher is not in the file.
    pub fn renderingInfo(
        m: *const MtaFile,
        record_number: u64,
        event: *const EventFields,
    ) ?RenderingInfo {
        var scratch: [1024]u8 = undefined;
        const p = m.publisher(event.provider, &scratch) orelse return null;
        const d: ?*const Publisher = if (m.default) |i| &m.publishers[i] else null;
        var info: RenderingInfo = .{};
        info.message = m.message(record_number, event.event_record_id);
        info.level = nonEmpty(find(p, d, .levels, event.level));
        info.task = nonEmpty(find(p, d, .tasks, event.task));
        if (event.qualifiers == 0) {
            const key = @as(u32, event.opcode) << 16;
            info.opcode = nonEmpty(
                find(p, d, .opcodes, key | event.task) orelse find(p, d, .opcodes, key),
            );
        }
        var mask = event.keywords;
        while (mask != 0) {
            const bit: u32 = @ctz(mask);
            mask &= mask - 1;
            if (nonEmpty(find(p, d, .keywords, bit))) |name| {
                info.keywords[info.keyword_count] = name;
                info.keyword_count += 1;
            }
        }
        return info;
    }

    fn message(m: *const MtaFile, record_number: u64, event_record_id: u64) ?[]const u8 {
        var index: ?u32 = null;
        var found = false;
        if (record_number >= 1 and record_number - 1 <= std.math.maxInt(u32)) {
            if (findEvent(m.events, @intCast(record_number - 1))) |e| {
                if (e.id == event_record_id) {
                    index = e.message;
                    found = true;
                }
            }
        }
        if (!found) index = m.first_message.get(event_record_id) orelse return null;
        const text = (findMessage(m.messages, index orelse return null) orelse return null).text;
        return nonEmpty(text);
    }
};

const TableName = enum { levels, tasks, opcodes, keywords };

/// The first table holding `key` wins, even with an empty string.
fn find(
    p: *const Publisher,
    d: ?*const Publisher,
    comptime table: TableName,
    key: u32,
) ?[]const u8 {
    if (@field(p, @tagName(table)).get(key)) |s| return s;
    if (d) |dp| return @field(dp, @tagName(table)).get(key);
    return null;
}

fn nonEmpty(s: ?[]const u8) ?[]const u8 {
    const t = s orelse return null;
    return if (t.len == 0) null else t;
}

fn findEvent(events: []const Event, index: u32) ?*const Event {
    const i = std.sort.binarySearch(Event, events, index, struct {
        fn order(k: u32, e: Event) std.math.Order {
            return std.math.order(k, e.index);
        }
    }.order) orelse return null;
    return &events[i];
}

fn findMessage(messages: []const Message, index: u32) ?*const Message {
    const i = std.sort.binarySearch(Message, messages, index, struct {
        fn order(k: u32, e: Message) std.math.Order {
            return std.math.order(k, e.index);
        }
    }.order) orelse return null;
    return &messages[i];
}

/// `b[start..start+len]`, or null when it passes the end.
fn slice(b: []const u8, start: u64, len: u64) ?[]const u8 {
    if (start > b.len or len > b.len - start) return null;
    return b[@intCast(start)..][0..@intCast(len)];
}

/// UTF-16LE text to UTF-8: an odd last byte dropped, cut at the first NUL, lone surrogates
/// become U+FFFD.
pub fn decodeUtf16(gpa: Allocator, bytes: []const u8) Allocator.Error![]u8 {
    var out: std.ArrayList(u8) = .empty;
    errdefer out.deinit(gpa);
    try out.ensureTotalCapacity(gpa, bytes.len / 2);
    const n = bytes.len / 2;
    var i: usize = 0;
    while (i < n) : (i += 1) {
        const u = std.mem.readInt(u16, bytes[2 * i ..][0..2], .little);
        if (u == 0) break;
        var cp: u21 = u;
        if (u >= 0xd800 and u < 0xdc00 and i + 1 < n) {
            const lo = std.mem.readInt(u16, bytes[2 * i + 2 ..][0..2], .little);
            if (lo >= 0xdc00 and lo < 0xe000) {
                cp = 0x10000 + ((@as(u21, u) - 0xd800) << 10) + (lo - 0xdc00);
                i += 1;
            } else cp = 0xfffd;
        } else if (u >= 0xd800 and u < 0xe000) cp = 0xfffd;
        var buf: [4]u8 = undefined;
        const len = std.unicode.utf8Encode(cp, &buf) catch unreachable;
        try out.appendSlice(gpa, buf[0..len]);
    }
    return out.toOwnedSlice(gpa);
}

/// Whether UTF-16LE `bytes` spell ASCII `name`, one trailing NUL unit allowed.
fn utf16Is(bytes: []const u8, name: []const u8) bool {
    var n = bytes.len / 2;
    if (n > 0 and bytes[2 * n - 2] == 0 and bytes[2 * n - 1] == 0) n -= 1;
    if (n != name.len) return false;
    for (name, 0..) |c, i| {
        if (bytes[2 * i] != c or bytes[2 * i + 1] != 0) return false;
    }
    return true;
}

const section_names = [_][]const u8{ "EVT", "MSG", "PUB" };

const Section = struct {
    name: []const u8,
    data: []const u8,
    base: u64,

    fn at(s: *const Section, offset: u64) u64 {
        return std.math.add(u64, s.base, offset) catch std.math.maxInt(u64);
    }
};

/// A reader of one section's page chain: `next` gives each record in order.
const Records = struct {
    s: *const Section,
    page: u64 = 0,
    /// Pages left before the chain counts as a loop.
    pages_left: usize,
    slot: usize = 100,
    header: []const u8 = &.{},
    done: bool,
    /// Where the pointer to `page` lies: the section's start, then a page's next field.
    from: u64,

    fn init(s: *const Section) Records {
        return .{
            .s = s,
            .pages_left = s.data.len / page_header_size + 1,
            .done = s.data.len == 0,
            .from = s.base,
        };
    }

    const Record = struct { index: u32, payload: []const u8, at: u64 };

    fn next(r: *Records, diag: *Diagnostic) Error!?Record {
        while (!r.done) {
            if (r.slot == 100) {
                if (r.header.len != 0) {
                    const next_page = bytes_le.getU64(r.header, page_next).?;
                    if (next_page == bytes_le.getU64(r.header, page_self).?) {
                        r.done = true;
                        return null;
                    }
                    r.from = r.s.at(r.page + page_next);
                    r.page = next_page;
                }
                if (r.pages_left == 0) {
                    diag.* = .{ .page_loop = .{ .name = r.s.name, .at = r.s.base } };
                    return error.Invalid;
                }
                r.pages_left -= 1;
                r.header = slice(r.s.data, r.page, page_header_size) orelse {
                    diag.* = corruptVia("page", r.s.at(r.page), r.s.at(r.s.data.len), r.from);
                    return error.Invalid;
                };
                assert(r.header.len == page_header_size);
                // An empty page has 0 here; its slots are not read.
                r.slot = if (bytes_le.getU32(r.header, 0).? == 0) 100 else 0;
                continue;
            }
            const slot_at = r.s.at(r.page + page_slots + 8 * r.slot);
            const offset = bytes_le.getU64(r.header, page_slots + 8 * r.slot).?;
            r.slot += 1;
            if (offset == 0) continue;
            const bad = corruptVia("record", r.s.at(offset), r.s.at(r.s.data.len), slot_at);
            const index = if (offset <= std.math.maxInt(u64) - 4) readU32OrNull(
                r.s.data,
                offset,
            ) else null;
            const size = if (offset <= std.math.maxInt(u64) - 8) readU32OrNull(
                r.s.data,
                offset + 4,
            ) else null;
            if (index == null or size == null or offset > std.math.maxInt(
                u64,
            ) - record_header_size) {
                diag.* = bad;
                return error.Invalid;
            }
            const payload = slice(r.s.data, offset + record_header_size, size.?) orelse {
                diag.* = bad;
                return error.Invalid;
            };
            return .{ .index = index.?, .payload = payload, .at = r.s.at(offset) };
        }
        return null;
    }
};

fn readU32OrNull(b: []const u8, at: u64) ?u32 {
    if (at > b.len) return null;
    return bytes_le.getU32(b, @intCast(at));
}

/// Parses an `.MTA` file; on `error.Invalid`, `diag` says why (the first fault found).
pub fn parse(gpa: Allocator, bytes: []const u8, diag: *Diagnostic) Error!MtaFile {
    var m: MtaFile = .{ .arena = std.heap.ArenaAllocator.init(gpa) };
    errdefer m.deinit();
    const a = m.arena.allocator();
    const count = try readHeader(bytes, diag);
    const sections = try readSections(bytes, count, diag);
    const evt = &sections[0];
    const msg = &sections[1];
    const publ = &sections[2];
    m.messages = try readMessages(a, msg, diag);
    m.events = try readEvents(a, evt, diag);
    try m.first_message.ensureTotalCapacity(a, @intCast(m.events.len));
    for (m.events) |e| {
        const gop = m.first_message.getOrPutAssumeCapacity(e.id);
        if (!gop.found_existing) gop.value_ptr.* = e.message;
    }
    const list = try readPublishers(a, publ, m.messages, diag);
    for (list, 0..) |*p, i| {
        const exact = try m.by_name.getOrPut(a, p.name);
        if (!exact.found_existing) exact.value_ptr.* = i;
        const lower = try std.ascii.allocLowerString(a, p.name);
        const folded = try m.by_lowercase_name.getOrPut(a, lower);
        if (!folded.found_existing) folded.value_ptr.* = i;
    }
    m.publishers = list;
    m.default = m.by_name.get(default_publisher);
    return m;
}

/// The header's magic and major version, which every later read relies on; returns how many
/// section descriptors follow.
fn readHeader(bytes: []const u8, diag: *Diagnostic) Error!u32 {
    const header_bad = corrupt("header", 0);
    if (bytes.len < 8) {
        diag.* = header_bad;
        return error.Invalid;
    }
    if (!std.mem.eql(u8, bytes[0..8], magic)) {
        diag.* = .{ .invalid_magic = bytes[0..8].* };
        return error.Invalid;
    }
    const major = bytes_le.getU32(bytes, 8);
    const minor = bytes_le.getU32(bytes, 12);
    if (major == null or minor == null) {
        diag.* = header_bad;
        return error.Invalid;
    }
    if (major.? != 1) {
        diag.* = .{ .unsupported_version = .{ .major = major.?, .minor = minor.? } };
        return error.Invalid;
    }
    return bytes_le.getU32(bytes, 20) orelse {
        diag.* = header_bad;
        return error.Invalid;
    };
}

/// The three sections the reader needs (EVT, MSG, PUB), the first of each name; the others are
/// skipped but their descriptors must still be whole.
fn readSections(bytes: []const u8, count: u32, diag: *Diagnostic) Error![3]Section {
    var sections: [3]?Section = .{ null, null, null };
    var offset: usize = header_size;
    var k: u32 = 0;
    while (k < count) : (k += 1) {
        const at: u64 = offset;
        const start = bytes_le.getU64(bytes, offset);
        const size = bytes_le.getU64(bytes, offset + 8);
        const name_len = bytes_le.getU32(bytes, offset + 16);
        if (start == null or size == null or name_len == null) {
            diag.* = corrupt("section descriptor", at);
            return error.Invalid;
        }
        const name = slice(bytes, offset + descriptor_size, name_len.?) orelse {
            diag.* = corrupt("section name", at);
            return error.Invalid;
        };
        offset += descriptor_size + name.len;
        for (section_names, 0..) |known, i| {
            if (!utf16Is(name, known)) continue;
            const data = slice(bytes, start.?, size.?) orelse {
                diag.* = corruptVia("section", start.?, bytes.len, at);
                return error.Invalid;
            };
            if (sections[i] == null) sections[i] = .{
                .name = known,
                .data = data,
                .base = start.?,
            };
            break;
        }
    }
    var found: [3]Section = undefined;
    for (sections, section_names, &found) |s, name, *f| {
        f.* = s orelse {
            diag.* = .{ .missing_section = name };
            return error.Invalid;
        };
    }
    return found;
}

/// The MSG section's texts by entry index, which PUB entries and events point into.
fn readMessages(a: Allocator, msg: *const Section, diag: *Diagnostic) Error![]Message {
    var messages: std.ArrayList(Message) = .empty;
    var records = Records.init(msg);
    while (try records.next(diag)) |r| {
        const len = bytes_le.getU32(r.payload, 0);
        const text = if (len) |l| slice(r.payload, 4, l) else null;
        if (text == null) {
            diag.* = corrupt("MSG entry", r.at);
            return error.Invalid;
        }
        try messages.append(a, .{ .index = r.index, .text = try decodeUtf16(a, text.?) });
    }
    return sortUnique(Message, messages.items);
}

/// The EVT section's (index, event id, message index) entries.
fn readEvents(a: Allocator, evt: *const Section, diag: *Diagnostic) Error![]Event {
    var events: std.ArrayList(Event) = .empty;
    var records = Records.init(evt);
    while (try records.next(diag)) |r| {
        const id = bytes_le.getU64(r.payload, 0);
        const message = bytes_le.getU64(r.payload, 8);
        if (id == null or message == null) {
            diag.* = corrupt("EVT entry", r.at);
            return error.Invalid;
        }
        const index: ?u32 = if (message.? <= std.math.maxInt(u32)) @intCast(message.?) else null;
        try events.append(a, .{ .index = r.index, .id = id.?, .message = index });
    }
    return sortUnique(Event, events.items);
}

/// The PUB section's publishers in entry order (their names resolved through `messages`).
fn readPublishers(
    a: Allocator,
    publ: *const Section,
    messages: []const Message,
    diag: *Diagnostic,
) Error![]Publisher {
    const Indexed = struct { index: u32, p: Publisher };
    var publishers: std.ArrayList(Indexed) = .empty;
    var records = Records.init(publ);
    while (try records.next(diag)) |r| {
        const p = try parsePublisher(a, r.payload, messages) orelse {
            diag.* = corrupt("PUB entry", r.at);
            return error.Invalid;
        };
        try publishers.append(a, .{ .index = r.index, .p = p });
    }
    std.sort.block(Indexed, publishers.items, {}, struct {
        fn less(_: void, x: Indexed, y: Indexed) bool {
            return x.index < y.index;
        }
    }.less);
    const list = try a.alloc(Publisher, publishers.items.len);
    for (publishers.items, list) |ip, *p| p.* = ip.p;
    return list;
}

/// Sorts by entry index (stable) and keeps the first entry of each index.
fn sortUnique(comptime T: type, items: []T) []T {
    std.sort.block(T, items, {}, struct {
        fn less(_: void, x: T, y: T) bool {
            return x.index < y.index;
        }
    }.less);
    var n: usize = 0;
    for (items) |item| {
        if (n > 0 and items[n - 1].index == item.index) continue;
        items[n] = item;
        n += 1;
    }
    return items[0..n];
}

/// A PUB payload: four tables (u32 count, count × (u32 key, u32 MSG index)), then the name.
/// Null when a part passes the payload.
fn parsePublisher(
    a: Allocator,
    payload: []const u8,
    messages: []const Message,
) Allocator.Error!?Publisher {
    var offset: usize = 0;
    var tables: [4]Table = .{ .empty, .empty, .empty, .empty };
    for (&tables, 0..) |*table, t| {
        const count = bytes_le.getU32(payload, offset) orelse return null;
        const entries = slice(payload, offset + 4, @as(u64, count) * 8) orelse return null;
        offset += 4 + entries.len;
        const mask: u32 = if (t == 1) 0xffff else std.math.maxInt(u32);
        var i: usize = 0;
        while (i < entries.len) : (i += 8) {
            const key = bytes_le.getU32(entries, i).? & mask;
            const index = bytes_le.getU32(entries, i + 4).?;
            const text = (findMessage(messages, index) orelse continue).text;
            const gop = try table.getOrPut(a, key);
            if (!gop.found_existing) gop.value_ptr.* = text;
        }
    }
    const name_len = bytes_le.getU32(payload, offset) orelse return null;
    const name = slice(payload, offset + 4, name_len) orelse return null;
    return .{
        .name = try decodeUtf16(a, name),
        .levels = tables[0],
        .tasks = tables[1],
        .opcodes = tables[2],
        .keywords = tables[3],
    };
}

/// Reads the `System` fields of a materialized record tree: null when the record gets no
/// `RenderingInfo` (the root is not `Event`, has no `System`, or has a `RenderingInfo`).
/// `scratch` holds the provider name the result points into.
pub fn eventFields(
    p: *const tokens.Parser,
    f: values_format.Format,
    root: u32,
    scratch: *escape.Out,
) Allocator.Error!?EventFields {
    const r = p.node(root);
    if (r.kind != .element or !std.mem.eql(u8, p.nameText(r.ref.name), "Event")) return null;
    var system: ?*const tree.Node = null;
    for (p.edges(r.kids)) |id| {
        const n = p.node(id);
        if (n.kind != .element) continue;
        const name = p.nameText(n.ref.name);
        if (std.mem.eql(u8, name, "System")) {
            if (system == null) system = n;
        } else if (std.mem.eql(u8, name, "RenderingInfo")) return null;
    }
    const sys = system orelse return null;
    var fields: EventFields = .{};
    var qualifiers: ?u64 = null;
    var level: ?u64 = null;
    var task: ?u64 = null;
    var opcode: ?u64 = null;
    var keywords: ?u64 = null;
    var record_id: ?u64 = null;
    var provider: ?[]const u32 = null;
    for (p.edges(sys.kids)) |id| {
        const n = p.node(id);
        if (n.kind != .element) continue;
        const name = p.nameText(n.ref.name);
        const kids = p.edges(n.kids);
        if (std.mem.eql(u8, name, "Provider")) {
            provider = attribute(p, n, "Name");
        } else if (std.mem.eql(u8, name, "EventID")) {
            qualifiers = try number(p, f, attribute(p, n, "Qualifiers"), scratch);
        } else if (std.mem.eql(u8, name, "Level")) {
            level = try number(p, f, kids, scratch);
        } else if (std.mem.eql(u8, name, "Task")) {
            task = try number(p, f, kids, scratch);
        } else if (std.mem.eql(u8, name, "Opcode")) {
            opcode = try number(p, f, kids, scratch);
        } else if (std.mem.eql(u8, name, "Keywords")) {
            keywords = try number(p, f, kids, scratch);
        } else if (std.mem.eql(u8, name, "EventRecordID")) {
            record_id = try number(p, f, kids, scratch);
        }
    }
    fields.qualifiers = narrow(u16, qualifiers);
    fields.level = narrow(u8, level);
    fields.task = narrow(u16, task);
    fields.opcode = narrow(u8, opcode);
    fields.keywords = keywords orelse 0;
    fields.event_record_id = record_id orelse 0;
    scratch.truncate(0);
    if (provider) |items| try stringText(p, f, items, scratch);
    fields.provider = scratch.list.items;
    return fields;
}

/// A missing or out-of-range field counts as 0.
fn narrow(comptime T: type, v: ?u64) T {
    const x = v orelse return 0;
    return std.math.cast(T, x) orelse 0;
}

fn hasContent(p: *const tokens.Parser, n: *const tree.Node) bool {
    return switch (n.kind) {
        .value => !tree.isFragment(n) and !values_decode.isEmpty(p.chunk, n.value()),
        .cdata => n.size.len > 0,
        .char_ref, .entity_ref => true,
        else => false,
    };
}

/// The items of the first attribute `name` with content (the reference's tree leaves out
/// attributes whose substitutions are empty); none when there is none.
fn attribute(p: *const tokens.Parser, element: *const tree.Node, name: []const u8) []const u32 {
    for (p.edges(element.attrs)) |id| {
        const attr = p.node(id);
        if (!std.mem.eql(u8, p.nameText(attr.ref.name), name)) continue;
        const items = p.edges(attr.kids);
        for (items) |item| {
            if (hasContent(p, p.node(item))) return items;
        }
    }
    return &.{};
}

/// Appends the concatenated string text of `items` (other nodes read as nothing).
fn stringText(
    p: *const tokens.Parser,
    f: values_format.Format,
    items: []const u32,
    out: *escape.Out,
) Allocator.Error!void {
    for (items) |id| {
        const n = p.node(id);
        if (n.kind != .value) continue;
        if (n.vtype != values_decode.T.string and n.vtype != values_decode.T.ansi) continue;
        values_format.writeValue(out, f, n.value(), .raw) catch |e| switch (e) {
            error.OutOfMemory => return error.OutOfMemory,
            // An undecodable ANSI string reads as what decoded before it.
            else => {},
        };
    }
}

/// One integer value, or else the text in decimal or `0x` hex (Rust's `u64` parsing).
fn number(
    p: *const tokens.Parser,
    f: values_format.Format,
    items: []const u32,
    scratch: *escape.Out,
) Allocator.Error!?u64 {
    if (items.len == 1) {
        const n = p.node(items[0]);
        if (n.kind == .value) {
            const T = values_decode.T;
            const c = p.chunk;
            const at = n.ref.offset;
            const fits = struct {
                fn ok(chunk: []const u8, start: u32, len: u32, need: u32) bool {
                    return len >= need and start <= chunk.len and chunk.len - start >= need;
                }
            }.ok;
            const v: ?u64 = switch (n.vtype) {
                T.uint8 => if (fits(c, at, n.size.len, 1)) c[at] else null,
                T.uint16 => if (fits(c, at, n.size.len, 2)) std.mem.readInt(
                    u16,
                    c[at..][0..2],
                    .little,
                ) else null,
                T.uint32, T.hex32 => if (fits(c, at, n.size.len, 4)) std.mem.readInt(
                    u32,
                    c[at..][0..4],
                    .little,
                ) else null,
                T.uint64, T.hex64 => if (fits(c, at, n.size.len, 8)) std.mem.readInt(
                    u64,
                    c[at..][0..8],
                    .little,
                ) else null,
                T.int8 => if (fits(c, at, n.size.len, 1)) std.math.cast(
                    u64,
                    @as(i8, @bitCast(c[at])),
                ) else null,
                T.int16 => if (fits(c, at, n.size.len, 2)) std.math.cast(
                    u64,
                    std.mem.readInt(i16, c[at..][0..2], .little),
                ) else null,
                T.int32 => if (fits(c, at, n.size.len, 4)) std.math.cast(
                    u64,
                    std.mem.readInt(i32, c[at..][0..4], .little),
                ) else null,
                T.int64 => if (fits(c, at, n.size.len, 8)) std.math.cast(
                    u64,
                    std.mem.readInt(i64, c[at..][0..8], .little),
                ) else null,
                else => null,
            };
            if (v != null) return v;
        }
    }
    scratch.truncate(0);
    try stringText(p, f, items, scratch);
    return parseNumber(trimUnicode(scratch.list.items));
}

/// Rust's `str::trim`: Unicode White_Space at both ends.
fn trimUnicode(s: []const u8) []const u8 {
    var start: usize = 0;
    var end: usize = s.len;
    while (start < end) {
        const len = std.unicode.utf8ByteSequenceLength(s[start]) catch break;
        if (start + len > end) break;
        const cp = std.unicode.utf8Decode(s[start..][0..len]) catch break;
        if (!isWhiteSpace(cp)) break;
        start += len;
    }
    while (end > start) {
        var b = end - 1;
        while (b > start and s[b] & 0xc0 == 0x80) b -= 1;
        const cp = std.unicode.utf8Decode(s[b..end]) catch break;
        if (!isWhiteSpace(cp)) break;
        end = b;
    }
    return s[start..end];
}

fn isWhiteSpace(cp: u21) bool {
    return switch (cp) {
        0x09...0x0d,
        0x20,
        0x85,
        0xa0,
        0x1680,
        0x2000...0x200a,
        0x2028,
        0x2029,
        0x202f,
        0x205f,
        0x3000,
        => true,
        else => false,
    };
}

/// Decimal, or hex after `0x`/`0X`; an optional `+` after the prefix; at least one digit.
fn parseNumber(s: []const u8) ?u64 {
    var t = s;
    var radix: u8 = 10;
    if (t.len >= 2 and t[0] == '0' and (t[1] == 'x' or t[1] == 'X')) {
        radix = 16;
        t = t[2..];
    }
    if (t.len > 0 and t[0] == '+') t = t[1..];
    if (t.len == 0) return null;
    var v: u64 = 0;
    for (t) |c| {
        const d = std.fmt.charToDigit(c, radix) catch return null;
        v = std.math.mul(u64, v, radix) catch return null;
        v = std.math.add(u64, v, d) catch return null;
    }
    return v;
}

/// Appends `info` as the last child of the rendered record at `out[body..]`: XML before
/// `</Event>`, JSON before the root object's last two braces. False, writing nothing, when
/// the record does not end as a rendered `Event` does.
pub fn splice(
    out: *escape.Out,
    body: usize,
    info: *const RenderingInfo,
    json: bool,
    indent: bool,
) escape.Error!bool {
    var fragment = escape.Out.init(out.gpa);
    defer fragment.deinit();
    const rendered = out.list.items[body..];
    var at: usize = undefined;
    if (json) {
        if (!std.mem.endsWith(u8, rendered, "}}")) return false;
        try writeJson(&fragment, info);
        at = out.len() - 2;
    } else {
        const close: []const u8 = if (indent) "</Event>\n" else "</Event>";
        if (!std.mem.endsWith(u8, rendered, close)) return false;
        try writeXml(&fragment, info, indent);
        at = out.len() - close.len;
    }
    try out.list.insertSlice(out.gpa, at, fragment.list.items);
    return true;
}

fn writeEscaped(out: *escape.Out, s: []const u8, comptime mode: escape.Mode) escape.Error!void {
    var it = std.unicode.Utf8View.initUnchecked(s).iterator();
    while (it.nextCodepoint()) |cp| try escape.writeCodepoint(out, cp, mode);
}

fn xmlLine(out: *escape.Out, indent: bool, depth: usize, tag: []const u8) escape.Error!void {
    if (indent) try out.spaces(2 * depth);
    try out.write(tag);
    if (indent) try out.byte('\n');
}

fn xmlText(
    out: *escape.Out,
    indent: bool,
    depth: usize,
    name: []const u8,
    s: []const u8,
) escape.Error!void {
    if (indent) try out.spaces(2 * depth);
    try out.byte('<');
    try out.write(name);
    try out.byte('>');
    try writeEscaped(out, s, .xml_text);
    try out.write("</");
    try out.write(name);
    try out.byte('>');
    if (indent) try out.byte('\n');
}

fn fieldList(info: *const RenderingInfo) [4]struct { []const u8, ?[]const u8 } {
    return .{
        .{ "Message", info.message },
        .{ "Level", info.level },
        .{ "Task", info.task },
        .{ "Opcode", info.opcode },
    };
}

fn writeXml(out: *escape.Out, info: *const RenderingInfo, indent: bool) escape.Error!void {
    if (info.isEmpty()) return xmlLine(out, indent, 1, "<RenderingInfo></RenderingInfo>");
    try xmlLine(out, indent, 1, "<RenderingInfo>");
    for (fieldList(info)) |field| {
        if (field[1]) |s| try xmlText(out, indent, 2, field[0], s);
    }
    if (info.keyword_count > 0) {
        try xmlLine(out, indent, 2, "<Keywords>");
        for (info.keywords[0..info.keyword_count]) |k| try xmlText(out, indent, 3, "Keyword", k);
        try xmlLine(out, indent, 2, "</Keywords>");
    }
    try xmlLine(out, indent, 1, "</RenderingInfo>");
}

fn jsonMember(
    out: *escape.Out,
    first: bool,
    key: []const u8,
    n: usize,
    s: []const u8,
) escape.Error!void {
    if (!first) try out.byte(',');
    try out.byte('"');
    try out.write(key);
    if (n > 0) {
        var buf: [24]u8 = undefined;
        try out.write(std.fmt.bufPrint(&buf, "_{d}", .{n}) catch unreachable);
    }
    try out.write("\":\"");
    try writeEscaped(out, s, .json);
    try out.byte('"');
}

fn writeJson(out: *escape.Out, info: *const RenderingInfo) escape.Error!void {
    try out.write(",\"RenderingInfo\":");
    if (info.isEmpty()) return out.write("null");
    try out.byte('{');
    var first = true;
    for (fieldList(info)) |field| {
        if (field[1]) |s| {
            try jsonMember(out, first, field[0], 0, s);
            first = false;
        }
    }
    if (info.keyword_count > 0) {
        if (!first) try out.byte(',');
        try out.write("\"Keywords\":{");
        for (info.keywords[0..info.keyword_count], 0..) |k, i| try jsonMember(
            out,
            i == 0,
            "Keyword",
            i,
            k,
        );
        try out.byte('}');
    }
    try out.byte('}');
}

const testing = std.testing;

fn expectDiagnostic(bytes: []const u8, expected: []const u8) !void {
    var diag: Diagnostic = undefined;
    try testing.expectError(error.Invalid, parse(testing.allocator, bytes, &diag));
    var buf: [200]u8 = undefined;
    var w: std.Io.Writer = .fixed(&buf);
    try diag.format(&w);
    try testing.expectEqualStrings(expected, w.buffered());
}

test "error texts are the reference's" {
    // Words and number forms from evtx 0.15.1's `MtaError` (src/mta.rs).
    try expectDiagnostic("", "MTA header at offset 0x0 is truncated or out of bounds");
    try expectDiagnostic(
        "XTAFile\x00\x01\x00\x00\x00\x01\x00\x00\x00" ++ "\x00" ** 8,
        "not an MTA file (magic [58, 54, 41, 46, 69, 6c, 65, 00])",
    );
    try expectDiagnostic(
        "MTAFile\x00\x02\x00\x00\x00\x07\x00\x00\x00" ++ "\x00" ** 8,
        "unsupported MTA version 2.7",
    );
    try expectDiagnostic(
        "MTAFile\x00\x01\x00\x00\x00\x01\x00\x00\x00" ++ "\x00" ** 8,
        "MTA file has no EVT section",
    );
    // A section count of u32::MAX ends at the first descriptor past the end.
    try expectDiagnostic(
        "MTAFile\x00\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff",
        "MTA section descriptor at offset 0x18 is truncated or out of bounds",
    );
}

test "utf16 text and numbers" {
    const bytes = [_]u8{ 'a', 0, 0x00, 0xd8, 'b', 0, 0, 0, 'c', 0, 'x' };
    const s = try decodeUtf16(testing.allocator, &bytes);
    defer testing.allocator.free(s);
    try testing.expectEqualStrings("a\u{fffd}b", s);
    try testing.expect(utf16Is("E\x00V\x00T\x00\x00\x00", "EVT") and !utf16Is("E\x00V\x00", "EVT"));
    try testing.expectEqual(@as(?u64, 4), parseNumber(trimUnicode(" +4\u{a0}")));
    try testing.expectEqual(@as(?u64, 0x1f), parseNumber("0X1f"));
    try testing.expectEqual(@as(?u64, null), parseNumber("1_0"));
    try testing.expectEqual(@as(?u64, null), parseNumber("18446744073709551616"));
}
