//! BinXML value types (contract section 7), decoding: substitution values and value-text
//! payloads into spans over the chunk, emptiness, array items. Their text forms are
//! values_format.zig's. The twin of `rust/evtx-core/src/values_decode.rs`.
//!
//! A decoded value is a `Value`: a (possibly normalised) type code plus a byte range of the
//! chunk. Normalisation applies the contract's and our shared rules once, at decode time:
//! SizeT / EvtHandle become HexInt32/64, Bool values other than 0/1 become Int32, an empty
//! BinXml becomes Null, EvtXml becomes String, a Binary array becomes Binary and a SizeT
//! array becomes a HexInt32/64 array.
const std = @import("std");
const assert = std.debug.assert;
const escape = @import("escape.zig");

pub const Error = error{
    OutOfMemory,
    OutOfBounds,
    InvalidValueType,
    UnsupportedValueType,
    OddStringSize,
    BadSizeTSize,
    MisalignedArray,
    InvalidAnsi,
};

pub const T = struct {
    pub const null_type = 0x00;
    pub const string = 0x01;
    pub const ansi = 0x02;
    pub const int8 = 0x03;
    pub const uint8 = 0x04;
    pub const int16 = 0x05;
    pub const uint16 = 0x06;
    pub const int32 = 0x07;
    pub const uint32 = 0x08;
    pub const int64 = 0x09;
    pub const uint64 = 0x0A;
    pub const real32 = 0x0B;
    pub const real64 = 0x0C;
    pub const boolean = 0x0D;
    pub const binary = 0x0E;
    pub const guid = 0x0F;
    pub const size_t = 0x10;
    pub const filetime = 0x11;
    pub const systime = 0x12;
    pub const sid = 0x13;
    pub const hex32 = 0x14;
    pub const hex64 = 0x15;
    pub const evt_handle = 0x20;
    pub const binxml = 0x21;
    pub const evt_xml = 0x23;
    pub const array = 0x80;
};

/// A decoded value: a normalised type code and its bytes in the chunk.
pub const Value = struct {
    vtype: u8,
    start: u32,
    len: u32,
};

/// True for the type codes of table 7.1 (arrays 0x81..0x95 included).
pub fn isKnownType(t: u8) bool {
    return switch (t) {
        0x00...0x15, 0x20, 0x21, 0x23, 0x81...0x95 => true,
        else => false,
    };
}

/// Natural width of fixed-size scalar types; 0 for variable-size ones.
pub fn fixedWidth(t: u8) u32 {
    return switch (t) {
        T.int8, T.uint8 => 1,
        T.int16, T.uint16 => 2,
        T.int32, T.uint32, T.real32, T.boolean, T.hex32 => 4,
        T.int64, T.uint64, T.real64, T.filetime, T.hex64 => 8,
        T.guid, T.systime => 16,
        else => 0,
    };
}

/// JSON writes these as bare numbers / booleans (7.5).
pub fn isBare(t: u8) bool {
    return (t >= T.int8 and t <= T.uint64) or t == T.boolean;
}

pub const Decoded = struct {
    value: Value,
    /// Chunk offset where the decoder stopped.
    end: u32,
};

inline fn need(chunk: []const u8, pos: usize, n: usize) Error!void {
    if (pos > chunk.len or chunk.len - pos < n) return error.OutOfBounds;
}

fn sidLength(chunk: []const u8, pos: u32) Error!u32 {
    try need(chunk, pos, 8);
    const len: u32 = 8 + 4 * @as(u32, chunk[pos + 1]);
    try need(chunk, pos, len);
    return len;
}

pub fn readI32(chunk: []const u8, pos: usize) i32 {
    return std.mem.readInt(i32, chunk[pos..][0..4], .little);
}

/// What `decodeSized` does with a string's first NUL unit.
pub const StringEnd = enum {
    /// The value ends there (its `len` is exact).
    cut,
    /// The value keeps its declared size: for writers that stop at the first NUL
    /// themselves (`escape.writeUtf16`), which saves a scan of every string.
    declared,
};

/// Decodes a substitution value of declared `size` at chunk offset `pos` (7.2).
pub fn decodeSized(
    chunk: []const u8,
    pos: u32,
    size: u16,
    vtype: u8,
    comptime string_end: StringEnd,
) Error!Decoded {
    if (vtype > T.array) return decodeArray(chunk, pos, size, vtype);
    const size32: u32 = size;
    switch (vtype) {
        T.null_type, T.ansi, T.binary => {
            try need(chunk, pos, size32);
            return done(vtype, pos, size32);
        },
        T.binxml => {
            try need(chunk, pos, size32);
            return done(if (size == 0) T.null_type else T.binxml, pos, size32);
        },
        T.string, T.evt_xml => {
            if (size % 2 != 0) return error.OddStringSize;
            try need(chunk, pos, size32);
            const len = switch (string_end) {
                .cut => 2 * escape.unitsBeforeNul(chunk[pos..][0..size32]),
                .declared => size32,
            };
            return .{
                .value = .{ .vtype = T.string, .start = pos, .len = @intCast(len) },
                .end = pos + size32,
            };
        },
        T.size_t, T.evt_handle => {
            if (size != 4 and size != 8) return error.BadSizeTSize;
            try need(chunk, pos, size32);
            return done(if (size == 4) T.hex32 else T.hex64, pos, size32);
        },
        T.sid => {
            const len = try sidLength(chunk, pos);
            return done(T.sid, pos, len);
        },
        T.boolean => {
            try need(chunk, pos, 4);
            const v = readI32(chunk, pos);
            return done(if (v == 0 or v == 1) T.boolean else T.int32, pos, 4);
        },
        else => {
            const w = fixedWidth(vtype);
            if (w == 0) return error.InvalidValueType;
            try need(chunk, pos, w);
            return done(vtype, pos, w);
        },
    }
}

fn done(vtype: u8, pos: u32, len: u32) Decoded {
    return .{ .value = .{ .vtype = vtype, .start = pos, .len = len }, .end = pos + len };
}

/// `decodeSized` of an array type (`vtype > 0x80`, section 7.3). Out of line: arrays are rare
/// in logs, and the scalar cases stay small enough to inline.
noinline fn decodeArray(chunk: []const u8, pos: u32, size: u16, vtype: u8) Error!Decoded {
    assert(vtype > T.array);
    const size32: u32 = size;
    switch (vtype) {
        T.array | T.string => return decodeStringArray(chunk, pos, size32),
        T.array | T.ansi => {
            try need(chunk, pos, size32);
            return done(vtype, pos, size32);
        },
        // Binary array: one Binary value (shared-fixtures rule).
        T.array | T.binary => {
            try need(chunk, pos, size32);
            return done(T.binary, pos, size32);
        },
        T.array | T.size_t => return decodeSizeTArray(chunk, pos, size32),
        T.array | T.sid => return decodeSidArray(chunk, pos, size32),
        else => return decodeFixedArray(chunk, pos, size32, vtype),
    }
}

/// String array: NUL-terminated strings until at least `size` bytes are consumed.
fn decodeStringArray(chunk: []const u8, pos: u32, size: u32) Error!Decoded {
    var p: usize = pos;
    while (p - pos < size) {
        // Read one NUL-terminated string, even past `size`.
        while (true) {
            try need(chunk, p, 2);
            const nul = chunk[p] == 0 and chunk[p + 1] == 0;
            p += 2;
            if (nul) break;
        }
    }
    return done(T.array | T.string, pos, @intCast(p - pos));
}

/// SizeT array: 8-byte items when possible, else 4-byte items.
fn decodeSizeTArray(chunk: []const u8, pos: u32, size: u32) Error!Decoded {
    try need(chunk, pos, size);
    if (size % 8 == 0) return done(T.array | T.hex64, pos, size);
    if (size % 4 == 0) return done(T.array | T.hex32, pos, size);
    return error.BadSizeTSize;
}

/// SID array: whole SIDs until at least `size` bytes are consumed.
fn decodeSidArray(chunk: []const u8, pos: u32, size: u32) Error!Decoded {
    var p = pos;
    while (p - pos < size) p += try sidLength(chunk, p);
    return done(T.array | T.sid, pos, p - pos);
}

/// Array of a fixed-width type; a Bool array with an item other than 0 or 1 reads as Int32.
fn decodeFixedArray(chunk: []const u8, pos: u32, size: u32, vtype: u8) Error!Decoded {
    const w = fixedWidth(vtype & 0x7F);
    if (w == 0) return error.InvalidValueType;
    if (size % w != 0) return error.MisalignedArray;
    try need(chunk, pos, size);
    if (vtype != (T.array | T.boolean)) return done(vtype, pos, size);
    var i: u32 = 0;
    while (i < size) : (i += 4) {
        const v = readI32(chunk, pos + i);
        if (v != 0 and v != 1) return done(T.array | T.int32, pos, size);
    }
    return done(vtype, pos, size);
}

/// Decodes the payload of a value-text token (no declared size) at `pos`.
/// BinXml (0x21) is handled by the token parser, not here.
pub fn decodeUnsized(chunk: []const u8, pos: u32, vtype: u8) Error!Decoded {
    switch (vtype) {
        T.null_type => return done(T.null_type, pos, 0),
        T.string, T.evt_xml => {
            try need(chunk, pos, 2);
            const n: u32 = std.mem.readInt(u16, chunk[pos..][0..2], .little);
            try need(chunk, pos + 2, 2 * n);
            const units = escape.unitsBeforeNul(chunk[pos + 2 ..][0 .. 2 * n]);
            return .{
                .value = .{ .vtype = T.string, .start = pos + 2, .len = @intCast(units * 2) },
                .end = pos + 2 + 2 * n,
            };
        },
        T.sid => return done(T.sid, pos, try sidLength(chunk, pos)),
        T.boolean => {
            try need(chunk, pos, 4);
            const v = readI32(chunk, pos);
            return done(if (v == 0 or v == 1) T.boolean else T.int32, pos, 4);
        },
        T.ansi, T.binary, T.size_t, T.evt_handle => return error.UnsupportedValueType,
        else => {
            if (!isKnownType(vtype)) return error.InvalidValueType;
            const w = fixedWidth(vtype);
            if (w == 0) return error.UnsupportedValueType;
            try need(chunk, pos, w);
            return done(vtype, pos, w);
        },
    }
}

/// Iterates the items of an array value as scalar values. String and ANSI items keep
/// their (possibly empty) spans; the caller decides what an empty item produces.
pub const Items = struct {
    chunk: []const u8,
    vtype: u8,
    pos: u32,
    end: u32,
    /// ANSI arrays only: the last piece has been returned.
    finished: bool,

    pub fn init(chunk: []const u8, v: Value) Items {
        assert(v.vtype > T.array);
        var end = v.start + v.len;
        // ANSI arrays: drop one trailing NUL, then split on NUL.
        if (v.vtype == T.array | T.ansi and v.len > 0 and chunk[end - 1] == 0) end -= 1;
        return .{
            .chunk = chunk,
            .vtype = v.vtype & 0x7F,
            .pos = v.start,
            .end = end,
            .finished = v.len == 0,
        };
    }

    pub fn next(it: *Items) ?Value {
        switch (it.vtype) {
            T.string => {
                if (it.pos >= it.end) return null;
                const start = it.pos;
                var p = start;
                while (p + 2 <= it.end and !(it.chunk[p] == 0 and it.chunk[p + 1] == 0)) p += 2;
                it.pos = p + 2;
                return .{ .vtype = T.string, .start = start, .len = p - start };
            },
            T.ansi => {
                if (it.finished) return null;
                const start = it.pos;
                var p = start;
                while (p < it.end and it.chunk[p] != 0) p += 1;
                if (p >= it.end) it.finished = true else it.pos = p + 1;
                return .{ .vtype = T.ansi, .start = start, .len = p - start };
            },
            T.sid => {
                if (it.pos >= it.end) return null;
                const len: u32 = 8 + 4 * @as(u32, it.chunk[it.pos + 1]);
                const start = it.pos;
                it.pos += len;
                return .{ .vtype = T.sid, .start = start, .len = len };
            },
            else => {
                const w = fixedWidth(it.vtype);
                assert(w > 0);
                if (it.pos + w > it.end) return null;
                const start = it.pos;
                it.pos += w;
                var t = it.vtype;
                if (t == T.boolean) {
                    const v = readI32(it.chunk, start);
                    if (v != 0 and v != 1) t = T.int32;
                }
                return .{ .vtype = t, .start = start, .len = w };
            },
        }
    }
};

/// Number of items of an array value.
pub fn itemCount(chunk: []const u8, v: Value) usize {
    var it = Items.init(chunk, v);
    var n: usize = 0;
    while (it.next()) |_| n += 1;
    return n;
}

/// Emptiness (7.4).
pub fn isEmpty(chunk: []const u8, v: Value) bool {
    if (v.vtype > T.array) return itemCount(chunk, v) == 0;
    return isEmptyScalar(chunk, v);
}

/// Emptiness of a value that is not an array. A string is empty when its first unit is
/// NUL, so this holds for either `StringEnd`.
pub inline fn isEmptyScalar(chunk: []const u8, v: Value) bool {
    assert(v.vtype < T.array);
    return switch (v.vtype) {
        T.null_type => true,
        T.string => v.len == 0 or (chunk[v.start] == 0 and chunk[v.start + 1] == 0),
        T.binary, T.binxml => v.len == 0,
        T.ansi => std.mem.indexOfNone(u8, chunk[v.start..][0..v.len], "\x00") == null,
        else => false,
    };
}
