//! BinXML value types (contract section 7), text forms: the text of each type, table-driven
//! (no `std.fmt` print on the hot path), and the ANSI code page of AnsiString values. The
//! twin of `rust/evtx-core/src/values_format.rs`; decoding is values_decode.zig's.
const std = @import("std");
const assert = std.debug.assert;
const escape = @import("escape.zig");
const code_pages = @import("code_pages.zig");
const values_decode = @import("values_decode.zig");
const Out = escape.Out;
const Error = values_decode.Error;
const T = values_decode.T;
const Value = values_decode.Value;
const isKnownType = values_decode.isKnownType;
const StringEnd = values_decode.StringEnd;
const decodeSized = values_decode.decodeSized;
const decodeUnsized = values_decode.decodeUnsized;
const Items = values_decode.Items;
const isEmpty = values_decode.isEmpty;
const readI32 = values_decode.readI32;

/// The ANSI code page: code points of bytes 0x80..0xFF (bytes below 0x80 are ASCII).
/// A zero entry means the byte is undefined in the code page (decoding error).
pub const AnsiTable = [128]u21;

pub const windows_1252: AnsiTable = blk: {
    var t: AnsiTable = undefined;
    for (0..128) |i| t[i] = 0x80 + i;
    const c1 = [32]u21{
        0x20AC, 0x81,   0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021,
        0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D,   0x017D, 0x8F,
        0x90,   0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014,
        0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,   0x017E, 0x0178,
    };
    for (c1, 0..) |c, i| t[i] = c;
    break :blk t;
};

/// The code page of AnsiString values (`--ansi-codec`; code_pages.zig).
pub const Codec = union(enum) {
    /// Bytes 0x80..0xFF of a single-byte code page.
    single_byte: *const AnsiTable,
    multi_byte: code_pages.MultiByte,
};

pub const default_codec: Codec = .{ .single_byte = &windows_1252 };

/// Formatting context shared by both renderers.
pub const Format = struct {
    chunk: []const u8,
    ansi: Codec,
    /// The renderer's texts of recent values (the replay's; null elsewhere).
    memo: ?*Memo = null,
};

/// Texts of recently written values, one per renderer (thread), kept across chunks: Security
/// logs name the same few SIDs in most records (PERF.md H31). Direct-mapped by the SID's last
/// sub-authority and length; a slot holds the bytes it was written from, so a collision only
/// costs a new formatting, never a wrong text.
pub const Memo = struct {
    sids: [sid_slots]SidText = @splat(.{}),
    /// GUIDs likewise (provider and activity ids repeat; PERF.md H45).
    guids: [guid_slots]GuidText = @splat(.{}),
    /// The day (since 1601-01-01) of the last FILETIME written, and its `YYYY-MM-DD`: a log's
    /// records come in time order, most of a day's records after each other (PERF.md H32).
    day: u64 = std.math.maxInt(u64),
    date: [10]u8 = undefined,

    const sid_slots = 64;
    /// The longest SID memoised: 15 sub-authorities (Windows' limit); longer ones are
    /// formatted every time.
    const sid_bytes_max = 8 + 4 * 15;
    /// Its text: `S-`, 3 + 1 + 15 digits of revision and authority, 15 × (1 + 10).
    const sid_text_max = 2 + 3 + 1 + 15 + 15 * 11;

    const guid_slots = 32;
    const guid_text_len = 38;

    const GuidText = struct {
        used: bool = false,
        key: [16]u8 = @splat(0),
        /// Padded for `Out.writePadded`.
        text: [escape.pad_bytes]u8 = @splat(0),
    };

    fn writeGuid(m: *Memo, out: *Out, g: *const [16]u8) Error!void {
        const lo = std.mem.readInt(u64, g[0..8], .little);
        const hi = std.mem.readInt(u64, g[8..16], .little);
        const e = &m.guids[((lo ^ hi) *% 0x9E3779B97F4A7C15) >> 59];
        if (e.used and @as(u128, @bitCast(e.key)) == @as(u128, @bitCast(g.*))) {
            return out.writePadded(e.text[0..guid_text_len]);
        }
        const start = out.len();
        try writeGuidText(out, g);
        @memcpy(e.text[0..guid_text_len], out.list.items[start..][0..guid_text_len]);
        e.key = g.*;
        e.used = true;
    }

    const SidText = struct {
        key_len: u8 = 0,
        text_len: u8 = 0,
        key: [sid_bytes_max]u8 = @splat(0),
        /// Padded for `Out.writePadded`.
        text: [sid_text_max + escape.pad_bytes]u8 = @splat(0),
    };

    fn writeFiletime(m: *Memo, out: *Out, value: u64) Error!void {
        if (value > 0x7FFFFFFFFFFFFFFF) return out.write("0000-00-00T00:00:00.0000000Z");
        const day = value / ticks_per_day;
        if (day != m.day) {
            const date = civilFromDays(day);
            m.date = dateText(date.year, date.month, date.day);
            m.day = day;
        }
        const rest = value % ticks_per_day;
        try out.ensure(28);
        const dst = out.spare();
        dst[0..10].* = m.date;
        putTime(dst[10..28], rest / 10_000_000, rest % 10_000_000);
        out.advance(28);
    }

    fn writeSid(m: *Memo, out: *Out, s: []const u8) Error!void {
        if (s.len > sid_bytes_max) return writeSidText(out, s);
        const last = std.mem.readInt(u32, s[s.len - 4 ..][0..4], .little);
        const slot = ((last *% 0x9E3779B1) >> 26 ^ @as(u32, @intCast(s.len))) % sid_slots;
        const e = &m.sids[slot];
        if (e.key_len == s.len and std.mem.eql(u8, e.key[0..s.len], s)) {
            return out.writePadded(e.text[0..e.text_len]);
        }
        const start = out.len();
        try writeSidText(out, s);
        const text = out.list.items[start..];
        assert(text.len <= sid_text_max);
        @memcpy(e.key[0..s.len], s);
        @memcpy(e.text[0..text.len], text);
        e.key_len = @intCast(s.len);
        e.text_len = @intCast(text.len);
    }
};

/// `writeValue` for the replay's hot loop: a string (most slots) goes straight to the
/// escaper, without `writeValue`'s stack frame around a tail call (PERF.md H28), and a short
/// clean one is written inline from its chunk (H53).
pub inline fn writeSlot(
    out: *Out,
    f: Format,
    v: *const Value,
    comptime mode: escape.Mode,
) Error!void {
    if (v.vtype == T.string) return escape.writeUtf16Within(out, f.chunk, v.start, v.len, mode);
    return writeValueAt(out, f, v, mode);
}

/// Writes the text form (7.3) of `v`; strings are escaped for `mode`. Every arm is a call in
/// tail position to a formatter out of line, so the dispatch itself needs no stack frame
/// (PERF.md H55): inlined formatters made every value pay their frame's saves.
pub inline fn writeValue(out: *Out, f: Format, v: Value, comptime mode: escape.Mode) Error!void {
    return writeValueAt(out, f, &v, mode);
}

/// `writeValue` of the value at `v`: the replay passes its slot in place, where a `Value`
/// argument was copied field by field to the stack first for every value (PERF.md H56).
pub fn writeValueAt(out: *Out, f: Format, v: *const Value, comptime mode: escape.Mode) Error!void {
    const c = f.chunk;
    const p = v.start;
    return switch (v.vtype) {
        T.null_type, T.binxml => {},
        // In its chunk, so the escaper's last step reads past the string, not a copy (H80).
        T.string => escape.writeUtf16In(out, c, p, v.len, mode, escape.json_kernel),
        T.ansi => writeAnsi(out, f, c[p..][0..v.len], mode),
        T.int8 => writeSigned(out, @as(i8, @bitCast(c[p]))),
        T.uint8 => writeUnsigned(out, c[p]),
        T.int16 => writeSigned(out, std.mem.readInt(i16, c[p..][0..2], .little)),
        T.uint16 => writeUnsigned(out, std.mem.readInt(u16, c[p..][0..2], .little)),
        T.int32 => writeSigned(out, std.mem.readInt(i32, c[p..][0..4], .little)),
        T.uint32 => writeUnsigned(out, std.mem.readInt(u32, c[p..][0..4], .little)),
        T.int64 => writeSigned(out, std.mem.readInt(i64, c[p..][0..8], .little)),
        T.uint64 => writeUnsigned(out, std.mem.readInt(u64, c[p..][0..8], .little)),
        T.real32 => writeFloat(out, f32, @bitCast(std.mem.readInt(u32, c[p..][0..4], .little))),
        T.real64 => writeFloat(out, f64, @bitCast(std.mem.readInt(u64, c[p..][0..8], .little))),
        T.boolean => writeBool(out, readI32(c, p) != 0),
        T.binary => writeBinary(out, c[p..][0..v.len]),
        T.guid => if (f.memo) |m| m.writeGuid(out, c[p..][0..16]) else writeGuidText(
            out,
            c[p..][0..16],
        ),
        T.hex32 => writeHex(out, std.mem.readInt(u32, c[p..][0..4], .little)),
        T.hex64 => writeHex(out, std.mem.readInt(u64, c[p..][0..8], .little)),
        T.filetime => if (f.memo) |m| m.writeFiletime(
            out,
            std.mem.readInt(u64, c[p..][0..8], .little),
        ) else writeFiletime(out, std.mem.readInt(u64, c[p..][0..8], .little)),
        T.systime => writeSystime(out, c[p..][0..16]),
        T.sid => if (f.memo) |m| m.writeSid(out, c[p..][0..v.len]) else writeSidText(
            out,
            c[p..][0..v.len],
        ),
        else => writeArray(out, f, v.*, mode),
    };
}

/// The items of array `v`, comma-separated.
noinline fn writeArray(out: *Out, f: Format, v: Value, comptime mode: escape.Mode) Error!void {
    assert(v.vtype > T.array);
    var it = Items.init(f.chunk, v);
    var first = true;
    while (it.next()) |item| {
        if (!first) try out.byte(',');
        first = false;
        try writeValue(out, f, item, mode);
    }
}

noinline fn writeBool(out: *Out, value: bool) Error!void {
    return out.write(if (value) "true" else "false");
}

/// Fails when ANSI value `v`, or an item of an ANSI array, is not valid in the code page.
/// The reference decodes every value of an instance, used or not, so both the parser and
/// the compiled-program scan check each one as they read it.
pub fn checkAnsi(codec: Codec, chunk: []const u8, v: Value) Error!void {
    assert(v.vtype == T.ansi or v.vtype == T.array | T.ansi);
    if (codec == .single_byte and codec.single_byte == &windows_1252) return; // Maps every byte.
    if (v.vtype == T.ansi) return checkAnsiBytes(codec, chunk[v.start..][0..v.len]);
    var it = Items.init(chunk, v);
    while (it.next()) |item| try checkAnsiBytes(codec, chunk[item.start..][0..item.len]);
}

fn checkAnsiBytes(codec: Codec, bytes: []const u8) Error!void {
    switch (codec) {
        .single_byte => |table| for (bytes) |b| {
            if (b >= 0x80 and table[b - 0x80] == 0) return error.InvalidAnsi;
        },
        .multi_byte => |multi_byte| {
            var decoder = code_pages.Decoder.init(multi_byte, bytes);
            while (try decoder.next()) |_| {}
        },
    }
}

/// NUL bytes are removed first (7.2); a byte or sequence the code page does not define
/// fails the record.
noinline fn writeAnsi(
    out: *Out,
    f: Format,
    bytes: []const u8,
    comptime mode: escape.Mode,
) Error!void {
    switch (f.ansi) {
        .single_byte => |table| return writeAnsiSingle(out, table, bytes, mode),
        .multi_byte => |codec| {
            var decoder = code_pages.Decoder.init(codec, bytes);
            while (try decoder.next()) |cp| try escape.writeCodepoint(out, cp, mode);
        },
    }
}

/// ANSI text of a single-byte code page (PERF.md H78): 32 bytes a step are tested at once
/// for what a plain copy cannot take (bytes >= 0x80, NUL, the mode's escapes) and stored as
/// one vector; only the byte that ends the clean prefix goes through the code page's table
/// and the escaper, where it used to be a `writeCodepoint` call per byte. On an undefined
/// byte the text before it stays written, as it did byte by byte.
fn writeAnsiSingle(
    out: *Out,
    table: *const AnsiTable,
    bytes: []const u8,
    comptime mode: escape.Mode,
) Error!void {
    try out.ensure(bytes.len * escape.bytes_per_codepoint_max + escape.byte_lanes);
    const dst = out.spare();
    var d: usize = 0;
    var i: usize = 0;
    const escapes = escape.escapesFor(mode, false);
    while (i < bytes.len) {
        assert(d <= i * escape.bytes_per_codepoint_max);
        const step = escape.loadBytes(bytes, i, mode);
        dst[d..][0..escape.byte_lanes].* = step.bytes;
        if (step.dirty == 0) {
            i += escape.byte_lanes;
            d += escape.byte_lanes;
            continue;
        }
        const clean = @ctz(step.dirty);
        if (i + clean < bytes.len and bytes[i + clean] < 0x80) {
            // An ASCII escape or NUL first: it and the step's next ones in place (PERF.md
            // H91); a high byte ends them.
            const high: u32 = @bitCast(step.bytes >= @as(@TypeOf(step.bytes), @splat(0x80)));
            const stop = high | step.past;
            const taken = escape.escapeLanes(32, step.bytes, step.dirty, stop, escapes, dst + d);
            i += taken.lanes;
            d += taken.bytes;
            continue;
        }
        i += clean;
        d += clean;
        if (i >= bytes.len) break;
        const b = bytes[i];
        i += 1;
        if (b == 0) continue;
        const cp: u21 = if (b < 0x80) b else table[b - 0x80];
        if (cp == 0) {
            out.advance(d);
            return error.InvalidAnsi;
        }
        d += escape.putCodepoint(dst + d, cp, mode);
    }
    out.advance(d);
}

/// Powers of ten 10^0 ..= 10^19 (all that fit in a u64).
const pow10 = blk: {
    var t: [20]u64 = undefined;
    var x: u64 = 1;
    for (&t, 0..) |*e, k| {
        e.* = x;
        if (k < 19) x *= 10;
    }
    break :blk t;
};

/// Decimal digits of `value` (1 for zero): floor(log10) from the bit length, then one
/// comparison. `value | 1` changes no digit count (powers of ten are even) except zero's.
pub inline fn decimalLen(value: u64) usize {
    const v = value | 1;
    const bits: u64 = 64 - @clz(v);
    const guess = (bits * 1233) >> 12; // floor(bits * log10(2)), exact for bits <= 64.
    return guess + @intFromBool(v >= pow10[guess]);
}

/// Writes integer `value` in decimal (the Rust engine's `write_int`): one name for both
/// signednesses, dispatched at compile time.
pub inline fn writeInt(out: *Out, value: anytype) Error!void {
    return switch (@typeInfo(@TypeOf(value)).int.signedness) {
        .unsigned => writeUnsigned(out, value),
        .signed => writeSigned(out, value),
    };
}

/// Writes `value` in decimal straight into the output: the length first, then two
/// digits a step from the end (no scratch buffer, no copy). A leaf when the output has room
/// (PERF.md H79): the growth call, which made every integer save registers and set up a
/// frame, is a tail call to `writeUnsignedGrow`.
noinline fn writeUnsigned(out: *Out, value: u64) Error!void {
    if (out.list.capacity - out.list.items.len < decimal_len_max) {
        return writeUnsignedGrow(out, value);
    }
    const dst = out.spare();
    // Most integers of a record have one or two digits (levels, opcodes, tasks, versions):
    // their pair from the table in one store, without the length or the loop.
    if (value < 100) {
        const pair: u16 = @bitCast(std.fmt.digits2(@intCast(value)));
        const one = value < 10;
        dst[0..2].* = @bitCast(if (one) pair >> 8 else pair);
        return out.advance(2 - @as(usize, @intFromBool(one)));
    }
    out.advance(putUnsigned(dst, value));
}

/// Digits of the largest u64.
const decimal_len_max = 20;

noinline fn writeUnsignedGrow(out: *Out, value: u64) Error!void {
    @branchHint(.cold);
    try out.ensure(decimal_len_max);
    return writeUnsigned(out, value);
}

/// Writes `value` in decimal at `dst`, which has room for 20 bytes; returns the length.
inline fn putUnsigned(dst: [*]u8, value: u64) usize {
    const len = decimalLen(value);
    var i: usize = len;
    var v = value;
    while (v >= 100) {
        i -= 2;
        dst[i..][0..2].* = std.fmt.digits2(@intCast(v % 100));
        v /= 100;
    }
    if (v >= 10) {
        i -= 2;
        dst[i..][0..2].* = std.fmt.digits2(@intCast(v));
    } else {
        i -= 1;
        dst[i] = '0' + @as(u8, @intCast(v));
    }
    assert(i == 0);
    return len;
}

noinline fn writeSigned(out: *Out, value: i64) Error!void {
    if (value < 0) {
        try out.byte('-');
        try writeUnsigned(out, @as(u64, 0) -% @as(u64, @bitCast(value)));
    } else try writeUnsigned(out, @intCast(value));
}

const hex_lower = "0123456789abcdef";
const hex_upper = "0123456789ABCDEF";

/// Writes `0x` and the lower-case hex digits of `value`, straight into the output.
pub noinline fn writeHex(out: *Out, value: u64) Error!void {
    try out.ensure(18);
    const nibbles: usize = (64 - @clz(value | 1) + 3) / 4;
    const dst = out.spare();
    dst[0..2].* = "0x".*;
    var v = value;
    var i: usize = 2 + nibbles;
    // Two digits a step from the pair table (PERF.md H43), the odd first one alone.
    while (i > 3) {
        i -= 2;
        dst[i..][0..2].* = hex_pairs[@intCast(v & 0xFF)];
        v >>= 8;
    }
    if (i == 3) {
        dst[2] = hex_lower[@intCast(v)];
        v >>= 4;
    }
    assert(v == 0);
    out.advance(2 + nibbles);
}

noinline fn writeBinary(out: *Out, bytes: []const u8) Error!void {
    try out.ensure(bytes.len * 2);
    const dst = out.spare();
    for (bytes, 0..) |b, i| {
        dst[2 * i] = hex_upper[b >> 4];
        dst[2 * i + 1] = hex_upper[b & 15];
    }
    out.advance(bytes.len * 2);
}

/// Two lower-case hex digits per byte value, so a GUID byte is one load and one store.
const hex_pairs: [256][2]u8 = blk: {
    var t: [256][2]u8 = undefined;
    for (&t, 0..) |*pair, b| pair.* = .{ hex_lower[b >> 4], hex_lower[b & 15] };
    break :blk t;
};

noinline fn writeGuidText(out: *Out, g: *const [16]u8) Error!void {
    // Byte order of the text: d1 (LE u32), d2 (LE u16), d3 (LE u16), then bytes 8..16;
    // `at[i]` is where the digits of byte `order[i]` go in `{xxxxxxxx-xxxx-xxxx-xxxx-x…}`.
    const order = [16]u8{ 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
    const at = [16]u8{ 1, 3, 5, 7, 10, 12, 15, 17, 20, 22, 25, 27, 29, 31, 33, 35 };
    const text_len = 38;
    try out.ensure(text_len);
    const dst = out.spare();
    dst[0] = '{';
    inline for (order, at) |o, d| dst[d..][0..2].* = hex_pairs[g[o]];
    inline for (.{ 9, 14, 19, 24 }) |d| dst[d] = '-';
    dst[text_len - 1] = '}';
    out.advance(text_len);
}

/// A GUID as the reference's `Guid` displays it (`dump-template-instances`' `template_guid`):
/// `D1-D2-D3-D4A-D4B`, upper case, no braces. The Rust engine's `write_guid_upper`.
pub fn writeGuidUpper(out: *Out, g: *const [16]u8) escape.Error!void {
    const start = out.len();
    writeGuidText(out, g) catch |e| return outOfMemory(e);
    const text = out.list.items[start..];
    assert(text.len == Memo.guid_text_len and text[0] == '{' and text[text.len - 1] == '}');
    const inner = text.len - 2;
    for (text[0..inner], text[1..][0..inner]) |*d, c| d.* = std.ascii.toUpper(c);
    out.truncate(start + inner);
}

/// `S-R-A-S1-S2-…`, reserved once (a sub-authority is at most 10 digits, the 48-bit
/// authority 15) and written in place.
noinline fn writeSidText(out: *Out, s: []const u8) Error!void {
    assert(s.len >= 8);
    const count: usize = s[1];
    assert(s.len == 8 + 4 * count);
    try out.ensure(2 + 3 + 1 + 20 + count * 21);
    const dst = out.spare();
    dst[0..2].* = "S-".*;
    var d: usize = 2;
    d += putUnsigned(dst + d, s[0]);
    dst[d] = '-';
    d += 1;
    var authority: u64 = 0;
    for (s[2..8]) |b| authority = (authority << 8) | b;
    d += putUnsigned(dst + d, authority);
    for (0..count) |k| {
        dst[d] = '-';
        d += 1;
        d += putUnsigned(dst + d, std.mem.readInt(u32, s[8 + 4 * k ..][0..4], .little));
    }
    out.advance(d);
}

/// Writes `YYYY-MM-DDTHH:MM:SS.fffffffZ` (year modulo 10000).
fn writeTimestamp(
    out: *Out,
    year: u64,
    month: u64,
    day: u64,
    seconds_of_day: u64,
    fraction: u64,
) Error!void {
    var buf: [28]u8 = "0000-00-00T00:00:00.0000000Z".*;
    buf[0..10].* = dateText(year, month, day);
    putTime(buf[10..], seconds_of_day, fraction);
    try out.write(&buf);
}

/// `YYYY-MM-DD` (year modulo 10000).
fn dateText(year: u64, month: u64, day: u64) [10]u8 {
    var buf: [10]u8 = "0000-00-00".*;
    const y = year % 10000;
    buf[0..2].* = std.fmt.digits2(@intCast(y / 100));
    buf[2..4].* = std.fmt.digits2(@intCast(y % 100));
    buf[5..7].* = std.fmt.digits2(@intCast(month));
    buf[8..10].* = std.fmt.digits2(@intCast(day));
    return buf;
}

/// `THH:MM:SS.fffffffZ` at `buf`.
inline fn putTime(buf: *[18]u8, seconds_of_day: u64, fraction: u64) void {
    buf[0] = 'T';
    buf[1..3].* = std.fmt.digits2(@intCast(seconds_of_day / 3600));
    buf[3] = ':';
    buf[4..6].* = std.fmt.digits2(@intCast(seconds_of_day / 60 % 60));
    buf[6] = ':';
    buf[7..9].* = std.fmt.digits2(@intCast(seconds_of_day % 60));
    buf[9] = '.';
    var fr = fraction;
    var i: usize = 17;
    while (i > 11) {
        i -= 2;
        buf[i..][0..2].* = std.fmt.digits2(@intCast(fr % 100));
        fr /= 100;
    }
    buf[10] = '0' + @as(u8, @intCast(fr));
    buf[17] = 'Z';
}

const Civil = struct { year: u64, month: u64, day: u64 };

/// Proleptic Gregorian date of `days` since 1601-01-01 (days >= 0).
fn civilFromDays(days: u64) Civil {
    // Shift to 0000-03-01 based eras (Hinnant's algorithm), all non-negative here.
    const z = days + 584694; // 1601-01-01 is day 584694 after 0000-03-01.
    const era = z / 146097;
    const doe = z - era * 146097;
    const yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const mp = (5 * doy + 2) / 153;
    const day = doy - (153 * mp + 2) / 5 + 1;
    const month = if (mp < 10) mp + 3 else mp - 9;
    const year = yoe + era * 400 + @intFromBool(month <= 2);
    return .{ .year = year, .month = month, .day = day };
}

const ticks_per_day = 864_000_000_000;

pub noinline fn writeFiletime(out: *Out, value: u64) Error!void {
    if (value > 0x7FFFFFFFFFFFFFFF) return out.write("0000-00-00T00:00:00.0000000Z");
    const date = civilFromDays(value / ticks_per_day);
    const rest = value % ticks_per_day;
    try writeTimestamp(out, date.year, date.month, date.day, rest / 10_000_000, rest % 10_000_000);
}

/// A FILETIME as the reference displays a record's timestamp (`dump-template-instances`'
/// `timestamp`): `writeFiletime`'s text with the fraction's trailing zeros cut, and its dot
/// too when nothing is left (`2024-03-01T08:00:01Z`). The Rust engine's
/// `write_filetime_trimmed`.
pub fn writeFiletimeTrimmed(out: *Out, ft: u64) escape.Error!void {
    const start = out.len();
    writeFiletime(out, ft) catch |e| return outOfMemory(e);
    // `YYYY-MM-DDTHH:MM:SS.fffffffZ`: the dot at 19, the `Z` last.
    const text = out.list.items[start..];
    assert(text.len == 28 and text[19] == '.' and text[27] == 'Z');
    const digits = std.mem.trimRight(u8, text[20..27], "0").len;
    out.truncate(start + if (digits == 0) 19 else 20 + digits);
    try out.byte('Z');
}

/// The error of a writer that only grows `out` (`Error` is the decoders' wider set).
fn outOfMemory(e: Error) escape.Error {
    assert(e == error.OutOfMemory);
    return error.OutOfMemory;
}

fn isLeap(y: u64) bool {
    return (y % 4 == 0 and y % 100 != 0) or y % 400 == 0;
}

noinline fn writeSystime(out: *Out, s: *const [16]u8) Error!void {
    var f: [8]u64 = undefined;
    for (&f, 0..) |*x, i| x.* = std.mem.readInt(u16, s[2 * i ..][0..2], .little);
    const year = f[0];
    const month = f[1];
    const day = f[3];
    const month_days = [12]u64{ 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
    const valid = year >= 1601 and year <= 30827 and month >= 1 and month <= 12 and day >= 1 and
        day <= month_days[@intCast((month -% 1) % 12)] + @intFromBool(
            month == 2 and isLeap(year),
        ) and
        f[4] < 24 and f[5] < 60 and f[6] < 60 and f[7] < 1000;
    if (!valid) return out.write("1601-01-01T00:00:00.0000000Z");
    try writeTimestamp(out, year, month, day, f[4] * 3600 + f[5] * 60 + f[6], f[7] * 10000);
}

/// Shortest round-trip float text (7.3).
pub noinline fn writeFloat(out: *Out, comptime F: type, value: F) Error!void {
    if (std.math.isNan(value)) return out.write("NaN");
    if (std.math.isInf(value)) return out.write(if (value < 0) "-inf" else "inf");
    if (value == 0) return out.write(if (std.math.signbit(value)) "-0.0" else "0.0");
    const bits: u64 = @as(std.meta.Int(.unsigned, @bitSizeOf(F)), @bitCast(value));
    const fl = std.fmt.float;
    const d = fl.binaryToDecimal(
        u64,
        bits,
        std.math.floatMantissaBits(F),
        std.math.floatExponentBits(F),
        false,
        &fl.Backend64_TablesFull,
    );
    var mantissa = d.mantissa;
    var exp10: i32 = d.exponent;
    while (mantissa % 10 == 0) {
        mantissa /= 10;
        exp10 += 1;
    }
    var digits_buf: [20]u8 = undefined;
    var n: usize = 0;
    {
        var m = mantissa;
        var i: usize = digits_buf.len;
        while (m > 0) : (m /= 10) {
            i -= 1;
            digits_buf[i] = '0' + @as(u8, @intCast(m % 10));
        }
        n = digits_buf.len - i;
        std.mem.copyForwards(u8, digits_buf[0..n], digits_buf[i..]);
    }
    const digits = digits_buf[0..n];
    const e: i32 = exp10 + @as(i32, @intCast(n)) - 1;
    const fixed_min: i32 = if (F == f32) -6 else -5;
    const fixed_max: i32 = if (F == f32) 12 else 15;
    try out.ensure(64);
    if (d.sign) try out.byte('-');
    if (e >= fixed_min and e <= fixed_max) {
        const ni: i32 = @intCast(n);
        if (e >= ni - 1) {
            try out.write(digits);
            for (0..@intCast(e - ni + 1)) |_| try out.byte('0');
            try out.write(".0");
        } else if (e >= 0) {
            const k: usize = @intCast(e + 1);
            try out.write(digits[0..k]);
            try out.byte('.');
            try out.write(digits[k..]);
        } else {
            try out.write("0.");
            for (0..@intCast(-e - 1)) |_| try out.byte('0');
            try out.write(digits);
        }
    } else {
        try out.byte(digits[0]);
        if (n > 1) {
            try out.byte('.');
            try out.write(digits[1..]);
        }
        try out.byte('e');
        try out.byte(if (e < 0) '-' else '+');
        try writeUnsigned(out, @abs(e));
    }
}

// ---------------------------------------------------------------------------------------
// Tests: expected strings come from the contract's examples (7.3, 14).

/// Both string ends must write the same text: the compiled-program scan keeps declared
/// sizes and relies on the writer stopping at the first NUL.
fn expectText(bytes: []const u8, vtype: u8, expected: []const u8) !void {
    inline for (.{ StringEnd.cut, StringEnd.declared }) |string_end| {
        var out = Out.init(std.testing.allocator);
        defer out.deinit();
        const d = try decodeSized(bytes, 0, @intCast(bytes.len), vtype, string_end);
        try writeValue(&out, .{ .chunk = bytes, .ansi = default_codec }, d.value, .json);
        try std.testing.expectEqualStrings(expected, out.list.items);
    }
}

test "integers" {
    try expectText(&.{0xFB}, T.int8, "-5");
    try expectText(&.{ 0x00, 0x12 }, T.uint16, "4608");
    try expectText(
        &.{ 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF },
        T.uint64,
        "18446744073709551615",
    );
    try expectText(&.{ 0, 0, 0, 0, 0, 0, 0, 0x80 }, T.int64, "-9223372036854775808");
    try expectText(&.{ 0xC8, 0x01, 0, 0 }, T.uint32, "456");
}

test "hex, SizeT, EvtHandle" {
    try expectText(&.{ 0, 0, 0, 0, 0, 0, 0x20, 0x80 }, T.hex64, "0x8020000000000000");
    try expectText(&.{ 0xE7, 0x03, 0, 0 }, T.hex32, "0x3e7");
    try expectText(&.{ 0, 0, 0, 0 }, T.hex32, "0x0");
    try expectText(&.{ 0xEC, 0x7E, 0, 0 }, T.size_t, "0x7eec");
    try expectText(&.{ 0xEC, 0x7E, 0, 0, 0, 0, 0, 0 }, T.evt_handle, "0x7eec");
    try std.testing.expectError(error.BadSizeTSize, decodeSized(&.{ 1, 2 }, 0, 2, T.size_t, .cut));
}

test "decimal and hex writers agree with std.fmt at every digit-count edge and at random" {
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    var want: [24]u8 = undefined;
    var prng = std.Random.DefaultPrng.init(0x14);
    const random = prng.random();
    // Every value to 1000: the one- and two-digit step (H79) and the loop on both sides of it.
    for (0..1001) |v| {
        out.truncate(0);
        try writeUnsigned(&out, v);
        const text = try std.fmt.bufPrint(&want, "{d}", .{v});
        try std.testing.expectEqualStrings(text, out.list.items);
    }
    var k: usize = 0;
    while (k < 4000) : (k += 1) {
        // Edges around every power of ten and of sixteen, then random values of every width.
        const v: u64 = switch (k % 4) {
            0 => pow10[k / 4 % 20] -% @intFromBool(k / 80 % 2 == 1),
            1 => @as(u64, 1) << @intCast(k / 4 % 64),
            2 => (@as(u64, 1) << @intCast(k / 4 % 64)) -% 1,
            else => random.int(u64) >> random.int(u6),
        };
        out.truncate(0);
        try writeUnsigned(&out, v);
        try std.testing.expectEqualStrings(
            try std.fmt.bufPrint(&want, "{d}", .{v}),
            out.list.items,
        );
        out.truncate(0);
        try writeHex(&out, v);
        try std.testing.expectEqualStrings(
            try std.fmt.bufPrint(&want, "0x{x}", .{v}),
            out.list.items,
        );
    }
}

test "bool: 0/1 are booleans, anything else an Int32" {
    try expectText(&.{ 1, 0, 0, 0 }, T.boolean, "true");
    try expectText(&.{ 0, 0, 0, 0 }, T.boolean, "false");
    try expectText(&.{ 16, 0, 0, 0 }, T.boolean, "16");
    try expectText(&.{ 0, 0, 1, 0 }, T.boolean, "65536");
}

test "guid" {
    const g = [16]u8{ 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    try expectText(&g, T.guid, "{03020100-0504-0706-0809-0a0b0c0d0e0f}");
    const g2 = [16]u8{
        0x25,
        0x96,
        0x84,
        0x54,
        0x78,
        0x54,
        0x94,
        0x49,
        0xA5,
        0xBA,
        0x3E,
        0x3B,
        0x03,
        0x28,
        0xC3,
        0x0D,
    };
    try expectText(&g2, T.guid, "{54849625-5478-4994-a5ba-3e3b0328c30d}");
}

test "filetime" {
    try expectText(
        &.{ 0x18, 0x96, 0x57, 0x57, 0x44, 0xD9, 0xD1, 0x01 },
        T.filetime,
        "2016-07-08T18:12:51.6816408Z",
    );
    try expectText(&.{ 0, 0, 0, 0, 0, 0, 0, 0 }, T.filetime, "1601-01-01T00:00:00.0000000Z");
    try expectText(
        &.{ 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F },
        T.filetime,
        "0828-09-14T02:48:05.4775807Z",
    );
    try expectText(&.{ 0, 0, 0, 0, 0, 0, 0, 0x80 }, T.filetime, "0000-00-00T00:00:00.0000000Z");
}

test "systemtime" {
    // 2019-03-08 (Friday) 23:23:05.789
    const s = [16]u8{ 0xE3, 0x07, 3, 0, 5, 0, 8, 0, 23, 0, 23, 0, 5, 0, 0x15, 0x03 };
    try expectText(&s, T.systime, "2019-03-08T23:23:05.7890000Z");
    try expectText(&([_]u8{0} ** 16), T.systime, "1601-01-01T00:00:00.0000000Z");
}

test "sid" {
    const s = [_]u8{
        1,
        5,
        0,
        0,
        0,
        0,
        0,
        5,
        0x15,
        0x00,
        0x00,
        0x00,
        0xF2,
        0x0A,
        0xEA,
        0x48,
        0xBD,
        0x22,
        0xAE,
        0xC4,
        0xA6,
        0xFF,
        0x26,
        0x57,
        0xF4,
        0x01,
        0x00,
        0x00,
    };
    try expectText(&s, T.sid, "S-1-5-21-1223297778-3299746493-1462173606-500");
    try expectText(&.{ 0, 0, 0, 0, 0, 0, 0, 0 }, T.sid, "S-0-0");
    // Widest fields: revision 255, a 48-bit authority, 15 sub-authorities of 2^32 - 1.
    var wide: [8 + 4 * 15]u8 = @splat(0xFF);
    wide[1] = 15;
    var want: std.ArrayList(u8) = .empty;
    defer want.deinit(std.testing.allocator);
    try want.appendSlice(std.testing.allocator, "S-255-281474976710655");
    for (0..15) |_| try want.appendSlice(std.testing.allocator, "-4294967295");
    try expectText(&wide, T.sid, want.items);
}

/// The memo tests' one check: a value written through a memo (that keeps its state from one
/// value to the next) must be the formatter's text without it.
const MemoCheck = struct {
    gpa: std.mem.Allocator,
    memo: *Memo,
    got: Out,
    want: Out,

    fn init(gpa: std.mem.Allocator) std.mem.Allocator.Error!MemoCheck {
        const memo = try gpa.create(Memo);
        memo.* = .{};
        return .{ .gpa = gpa, .memo = memo, .got = Out.init(gpa), .want = Out.init(gpa) };
    }

    fn deinit(check: *MemoCheck) void {
        check.want.deinit();
        check.got.deinit();
        check.gpa.destroy(check.memo);
    }

    /// Writes `v` of `chunk` as JSON through the memo and without it; the texts must match.
    fn expectSame(check: *MemoCheck, chunk: []const u8, v: Value) !void {
        const plain: Format = .{ .chunk = chunk, .ansi = default_codec };
        var memoised = plain;
        memoised.memo = check.memo;
        check.got.truncate(0);
        check.want.truncate(0);
        try writeValue(&check.got, memoised, v, .json);
        try writeValue(&check.want, plain, v, .json);
        try std.testing.expectEqualStrings(check.want.list.items, check.got.list.items);
    }
};

test "the memo writes every SID as the formatter does, after hits, misses and collisions" {
    // 3,000 SIDs from a pool of 200 (0-16 sub-authorities; 16 is past what the memo keeps)
    // through one memo: repeats hit, the 64 slots collide; each text must be the formatter's.
    const gpa = std.testing.allocator;
    var prng = std.Random.DefaultPrng.init(0x51D);
    const random = prng.random();
    var pool: [200][8 + 4 * 16]u8 = undefined;
    for (&pool) |*sid| {
        random.bytes(sid);
        sid[1] = random.uintAtMost(u8, 16);
    }
    var check = try MemoCheck.init(gpa);
    defer check.deinit();
    for (0..3000) |_| {
        const choices = if (random.boolean()) 8 else pool.len;
        const sid = &pool[random.uintLessThan(usize, choices)];
        const bytes = sid[0 .. 8 + 4 * @as(usize, sid[1])];
        try check.expectSame(bytes, .{ .vtype = T.sid, .start = 0, .len = @intCast(bytes.len) });
    }
}

test "the memo writes every GUID as the formatter does, after hits, misses and collisions" {
    // 2,000 GUIDs from a pool of 100 (the zero GUID among them) through one memo's 32 slots.
    const gpa = std.testing.allocator;
    var prng = std.Random.DefaultPrng.init(0x6D1D);
    const random = prng.random();
    var pool: [100][16]u8 = undefined;
    for (&pool) |*guid| random.bytes(guid);
    pool[0] = @splat(0);
    var check = try MemoCheck.init(gpa);
    defer check.deinit();
    for (0..2000) |_| {
        const guid = &pool[random.uintLessThan(usize, pool.len)];
        try check.expectSame(guid, .{ .vtype = T.guid, .start = 0, .len = 16 });
    }
}

test "the memo writes every FILETIME as the formatter does, across days and back" {
    // Ticks within a day, across midnight and years, back to an earlier day, the largest
    // valid value and past it, then random ones: each text must be the formatter's.
    var check = try MemoCheck.init(std.testing.allocator);
    defer check.deinit();
    var prng = std.Random.DefaultPrng.init(0xF17E);
    const random = prng.random();
    const base: u64 = 0x01D1D94457579618; // 2016-07-08T18:12:51.6816408Z
    const day = ticks_per_day;
    const fixed = [_]u64{
        base,    base + 1, base + day,         base - day * 400,   base, 0,
        day - 1, day,      0x7FFFFFFFFFFFFFFF, 0x8000000000000000, base,
    };
    for (0..1000) |k| {
        const spread = random.int(u64) % (day * 3);
        const ticks = if (k < fixed.len) fixed[k] else base +% spread -% day;
        var bytes: [8]u8 = undefined;
        std.mem.writeInt(u64, &bytes, ticks, .little);
        try check.expectSame(&bytes, .{ .vtype = T.filetime, .start = 0, .len = 8 });
    }
}

test "binary is uppercase hex" {
    try expectText(&.{ 0xDE, 0xAD, 0xBE, 0xEF }, T.binary, "DEADBEEF");
    try expectText(&.{ 0x01, 0x02 }, T.array | T.binary, "0102");
}

fn expectFloat(comptime F: type, v: F, expected: []const u8) !void {
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    try writeFloat(&out, F, v);
    try std.testing.expectEqualStrings(expected, out.list.items);
}

test "floats (7.3)" {
    try expectFloat(f64, 1.5, "1.5");
    try expectFloat(f64, 0.00001, "0.00001");
    try expectFloat(f64, 1e16, "1e+16");
    try expectFloat(f64, 3.0, "3.0");
    try expectFloat(f64, 1e15, "1000000000000000.0");
    try expectFloat(f64, 123456789012345.6, "123456789012345.6");
    try expectFloat(f64, 1.25e-7, "1.25e-7");
    try expectFloat(f64, 5e-324, "5e-324");
    try expectFloat(f64, -0.0, "-0.0");
    try expectFloat(f64, std.math.inf(f64), "inf");
    try expectFloat(f64, -std.math.inf(f64), "-inf");
    try expectFloat(f64, std.math.nan(f64), "NaN");
    try expectFloat(f32, 3.4028235e+38, "3.4028235e+38");
    try expectFloat(f32, 0.000001, "0.000001");
    try expectFloat(f32, 1.5, "1.5");
}

test "strings: odd size fails, NUL truncates, string arrays" {
    try std.testing.expectError(
        error.OddStringSize,
        decodeSized(&.{ 'a', 0, 'b' }, 0, 3, T.string, .cut),
    );
    try expectText(&.{ 'a', 0, 0, 0, 'b', 0 }, T.string, "a");
    try expectText(
        &.{ 'a', 0, 0, 0, 0, 0, 'c', 0, ',', 0, 'd', 0, 0, 0 },
        T.array | T.string,
        "a,,c,d",
    );
}

test "ansi: NUL removal and windows-1252" {
    try expectText(&.{ 'a', 0, 'b', 0x80, 0x81 }, T.ansi, "ab\xE2\x82\xAC\xC2\x81");
    try expectText(&.{ 'x', 0, 0, 'y', 0 }, T.array | T.ansi, "x,,y");
}

/// ANSI text one byte at a time through `writeCodepoint` (the form before H78): the oracle
/// for `writeAnsiSingle`.
fn writeAnsiScalar(
    out: *Out,
    table: *const AnsiTable,
    bytes: []const u8,
    comptime mode: escape.Mode,
) Error!void {
    for (bytes) |b| {
        if (b == 0) continue;
        const cp: u21 = if (b < 0x80) b else table[b - 0x80];
        if (cp == 0) return error.InvalidAnsi;
        try escape.writeCodepoint(out, cp, mode);
    }
}

/// Both ANSI writers on `bytes` in every mode: the same text, or the same error after the
/// same text.
fn expectAnsiAgrees(table: *const AnsiTable, bytes: []const u8) !void {
    var fast = Out.init(std.testing.allocator);
    defer fast.deinit();
    var slow = Out.init(std.testing.allocator);
    defer slow.deinit();
    const M = escape.Mode;
    const modes = .{ M.json, M.xml_text, M.xml_attr, M.raw };
    inline for (modes) |mode| {
        fast.truncate(0);
        slow.truncate(0);
        const a = writeAnsiSingle(&fast, table, bytes, mode);
        const b = writeAnsiScalar(&slow, table, bytes, mode);
        if (b) |_| try a else |e| try std.testing.expectError(e, a);
        try std.testing.expectEqualStrings(slow.list.items, fast.list.items);
    }
}

test "ansi: the vector writer equals the byte-by-byte one, a dirty byte at every position" {
    // Byte classes: every escape of every mode, controls, NUL, DEL, high bytes (one undefined
    // in windows-1253), in a clean run of every length 0..=40 at every position.
    const pool = [_]u8{
        '&',  '<',  '>',  '"',  '\'', '\\', '\n', '\r', '\t', 0x01, 0x08, 0x1F, 0,
        0x7F, 0x80, 0x81, 0x9D, 0xAA, 0xC0, 0xE9, 0xFF,
    };
    const greek = @import("code_pages.zig").lookup("windows-1253").?.single_byte;
    var buf: [40]u8 = undefined;
    for (0..buf.len + 1) |len| {
        for (buf[0..len], 0..) |*b, k| b.* = 'a' + @as(u8, @intCast(k % 26));
        try expectAnsiAgrees(&windows_1252, buf[0..len]);
        for (0..len) |at| for (pool) |dirty| {
            const keep = buf[at];
            buf[at] = dirty;
            try expectAnsiAgrees(&windows_1252, buf[0..len]);
            try expectAnsiAgrees(greek, buf[0..len]);
            buf[at] = keep;
        };
    }
}

test "property: the vector ANSI writer equals the byte-by-byte one on random text" {
    var prng = std.Random.DefaultPrng.init(0xA451);
    const random = prng.random();
    const greek = @import("code_pages.zig").lookup("windows-1253").?.single_byte;
    var buf: [200]u8 = undefined;
    for (0..2000) |_| {
        const len = random.uintAtMost(usize, buf.len);
        const dirt = random.uintAtMost(u8, 8); // Dirty bytes per 16, from none to half.
        for (buf[0..len]) |*b| b.* = if (random.uintLessThan(u8, 16) < dirt)
            random.int(u8)
        else
            ' ' + random.uintLessThan(u8, 95);
        try expectAnsiAgrees(&windows_1252, buf[0..len]);
        try expectAnsiAgrees(greek, buf[0..len]);
    }
}

test "checkAnsi: every value and array item against the code page" {
    const sjis: Codec = .{ .multi_byte = .shift_jis };
    const ok = "\x93\x00\xFAx";
    try checkAnsi(sjis, ok, .{ .vtype = T.ansi, .start = 0, .len = ok.len });
    const cut = "ok\x82";
    try std.testing.expectError(
        error.InvalidAnsi,
        checkAnsi(sjis, cut, .{ .vtype = T.ansi, .start = 0, .len = cut.len }),
    );
    try checkAnsi(default_codec, cut, .{ .vtype = T.ansi, .start = 0, .len = cut.len });
    // Array items are decoded one by one: a sequence cannot run across the NUL between them.
    const items = "\x93\x00\xFA\x00";
    try std.testing.expectError(
        error.InvalidAnsi,
        checkAnsi(sjis, items, .{ .vtype = T.array | T.ansi, .start = 0, .len = items.len }),
    );
    const greek: Codec = .{
        .single_byte = @import("code_pages.zig").lookup("windows-1253").?.single_byte,
    };
    try std.testing.expectError(
        error.InvalidAnsi,
        checkAnsi(greek, "\xAA", .{ .vtype = T.ansi, .start = 0, .len = 1 }),
    );
}

test "numeric arrays and misalignment" {
    try expectText(&.{ 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0 }, T.array | T.int32, "-1,2");
    try expectText(&.{ 1, 0, 0, 0, 2, 0, 0, 0 }, T.array | T.boolean, "1,2");
    try expectText(&.{ 1, 0, 0, 0, 0, 0, 0, 0 }, T.array | T.boolean, "true,false");
    try expectText(&.{ 1, 0, 0, 0, 0, 0, 0, 0 }, T.array | T.size_t, "0x1");
    try expectText(&.{ 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0 }, T.array | T.size_t, "0x1,0x2,0x3");
    try std.testing.expectError(
        error.MisalignedArray,
        decodeSized(&.{ 1, 0, 0 }, 0, 3, T.array | T.int16, .cut),
    );
    try std.testing.expectError(
        error.BadSizeTSize,
        decodeSized(&.{ 1, 0, 0 }, 0, 3, T.array | T.size_t, .cut),
    );
}

test "emptiness (7.4)" {
    const c = [_]u8{ 0, 0, 0, 0 };
    try std.testing.expect(isEmpty(&c, .{ .vtype = T.null_type, .start = 0, .len = 0 }));
    try std.testing.expect(isEmpty(&c, .{ .vtype = T.ansi, .start = 0, .len = 4 }));
    try std.testing.expect(!isEmpty(&c, .{ .vtype = T.uint32, .start = 0, .len = 4 }));
    try std.testing.expect(isEmpty(&c, .{ .vtype = T.array | T.int32, .start = 0, .len = 0 }));
    try std.testing.expectEqual(
        T.null_type,
        (try decodeSized(&c, 0, 0, T.binxml, .cut)).value.vtype,
    );
}

test "unknown types are invalid; value-text rejects sized-only types" {
    try std.testing.expect(!isKnownType(0x16));
    try std.testing.expect(!isKnownType(0x22));
    try std.testing.expect(!isKnownType(0x96));
    try std.testing.expectError(error.UnsupportedValueType, decodeUnsized(&.{ 1, 0 }, 0, T.binary));
    try std.testing.expectError(
        error.UnsupportedValueType,
        decodeUnsized(&.{ 1, 0 }, 0, T.array | T.int8),
    );
}

test "GUIDs as the reference displays them" {
    // `wevt/instances.evtx` record 1's inline definition GUID, as the reference prints it:
    // d1, d2 and d3 are little-endian, the last eight bytes as stored.
    const g = "\x43\x2A\x2C\x5F\x86\xAA\x81\x24\x02\xF3\xEC\xE8\x17\x38\x36\x95";
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    try out.byte('x');
    try writeGuidUpper(&out, g);
    try std.testing.expectEqualStrings("x5F2C2A43-AA86-2481-02F3-ECE817383695", out.list.items);
}

test "record timestamps without trailing zeros" {
    // 2024-03-01T08:00:01Z is Unix 1709280001, 11644473600 s after 1601-01-01.
    const ft: u64 = (1_709_280_001 + 11_644_473_600) * 10_000_000;
    const cases = [_]struct { ft: u64, text: []const u8 }{
        .{ .ft = ft, .text = "x2024-03-01T08:00:01Z" },
        .{ .ft = ft + 1_234_500, .text = "x2024-03-01T08:00:01.12345Z" },
        .{ .ft = ft + 1, .text = "x2024-03-01T08:00:01.0000001Z" },
        .{ .ft = ft + 9_000_000, .text = "x2024-03-01T08:00:01.9Z" },
        // Out of range: the zero date, its fraction cut too.
        .{ .ft = std.math.maxInt(u64), .text = "x0000-00-00T00:00:00Z" },
    };
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    for (cases) |c| {
        out.truncate(0);
        try out.byte('x');
        try writeFiletimeTrimmed(&out, c.ft);
        try std.testing.expectEqualStrings(c.text, out.list.items);
    }
}
