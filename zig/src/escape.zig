//! Output buffer and text escaping: UTF-16LE (or decoded code points) to escaped UTF-8.
//!
//! One pass per string: a 16-lane `@Vector` loop copies runs of plain ASCII (narrowing all
//! sixteen units and advancing by the clean prefix), scalar code handles the rest. The rules
//! are section 8 of the contract: XML text / attribute, JSON strings, and raw (CDATA, PI).
const std = @import("std");
const builtin = @import("builtin");
const assert = std.debug.assert;

comptime {
    // The vector loop reinterprets 16 bytes as eight little-endian u16 lanes.
    assert(builtin.cpu.arch.endian() == .little);
}

pub const Error = error{OutOfMemory};

/// A growable output buffer. All renderers write here; callers reserve the worst case
/// before encoding in place so the hot loops do no capacity checks.
pub const Out = struct {
    list: std.ArrayList(u8) = .empty,
    gpa: std.mem.Allocator,

    pub fn init(gpa: std.mem.Allocator) Out {
        return .{ .gpa = gpa };
    }

    pub fn deinit(out: *Out) void {
        out.list.deinit(out.gpa);
    }

    pub inline fn len(out: *const Out) usize {
        return out.list.items.len;
    }

    pub inline fn ensure(out: *Out, n: usize) Error!void {
        if (out.list.capacity - out.list.items.len < n) try out.list.ensureUnusedCapacity(
            out.gpa,
            n,
        );
    }

    /// The reserved but unwritten bytes; commit with `advance`.
    pub inline fn spare(out: *Out) [*]u8 {
        return out.list.items.ptr + out.list.items.len;
    }

    pub inline fn advance(out: *Out, n: usize) void {
        assert(out.list.items.len + n <= out.list.capacity);
        out.list.items.len += n;
    }

    pub inline fn write(out: *Out, s: []const u8) Error!void {
        try out.ensure(s.len + 32);
        copyShort(out.spare(), s);
        out.list.items.len += s.len;
    }

    /// Appends `s` for the replay's literal runs (PERF.md H30): its first `pad_bytes` by two
    /// unconditional vector moves, the rest (rare, long XML runs) out of line, never a
    /// `memcpy` call. `s` must stay readable `pad_bytes` past its end; what is copied past
    /// `s.len` lands in reserved room that the next write overwrites.
    pub inline fn writePadded(out: *Out, s: []const u8) Error!void {
        try out.ensure(s.len + pad_bytes);
        const dst = out.spare();
        inline for (.{ 0, 32 }) |k| {
            const run: @Vector(32, u8) = s.ptr[k..][0..32].*;
            dst[k..][0..32].* = run;
        }
        if (s.len > pad_bytes) copyPaddedTail(dst, s);
        out.list.items.len += s.len;
    }

    pub inline fn byte(out: *Out, c: u8) Error!void {
        try out.ensure(1);
        out.spare()[0] = c;
        out.list.items.len += 1;
    }

    pub fn spaces(out: *Out, n: usize) Error!void {
        try out.ensure(n);
        @memset(out.spare()[0..n], ' ');
        out.list.items.len += n;
    }

    pub fn truncate(out: *Out, n: usize) void {
        assert(n <= out.list.items.len);
        out.list.items.len = n;
    }
};

/// Bytes a `Out.writePadded` source stays readable past its end.
pub const pad_bytes = 64;

/// `Out.writePadded` past its first `pad_bytes`: whole vectors, as far as `src.len` rounded up.
noinline fn copyPaddedTail(dst: [*]u8, src: []const u8) void {
    assert(src.len > pad_bytes);
    var k: usize = pad_bytes;
    while (k < src.len) : (k += 32) {
        const run: @Vector(32, u8) = src.ptr[k..][0..32].*;
        dst[k..][0..32].* = run;
    }
}

/// Copies `src` to `dst`; short copies use overlapping word moves instead of a `memcpy`
/// call (most names and punctuation are a few bytes). `dst` must have room for
/// `src.len`.
pub inline fn copyShort(dst: [*]u8, src: []const u8) void {
    const n = src.len;
    if (n <= 16) {
        if (n >= 8) {
            const a: u64 = @bitCast(src[0..8].*);
            const b: u64 = @bitCast(src[n - 8 ..][0..8].*);
            dst[0..8].* = @bitCast(a);
            dst[n - 8 ..][0..8].* = @bitCast(b);
        } else if (n >= 4) {
            const a: u32 = @bitCast(src[0..4].*);
            const b: u32 = @bitCast(src[n - 4 ..][0..4].*);
            dst[0..4].* = @bitCast(a);
            dst[n - 4 ..][0..4].* = @bitCast(b);
        } else if (n > 0) {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
    } else if (n <= 32) {
        const a: @Vector(16, u8) = src[0..16].*;
        const b: @Vector(16, u8) = src[n - 16 ..][0..16].*;
        dst[0..16].* = a;
        dst[n - 16 ..][0..16].* = b;
    } else {
        @memcpy(dst[0..n], src);
    }
}

pub const Mode = enum { xml_text, xml_attr, json, raw };

/// Escape text for ASCII code units per mode; null = copy as is.
fn asciiTable(comptime mode: Mode, comptime upper: bool) [128]?[]const u8 {
    var t: [128]?[]const u8 = @splat(null);
    const hex = if (upper) "0123456789ABCDEF" else "0123456789abcdef";
    switch (mode) {
        .xml_text, .xml_attr => {
            for (0..0x20) |c| t[c] = "_";
            t['\t'] = null;
            t['\n'] = null;
            t['\r'] = null;
            t['&'] = "&amp;";
            t['<'] = "&lt;";
            t['>'] = "&gt;";
            if (mode == .xml_attr) {
                t['"'] = "&quot;";
                t['\''] = "&apos;";
            }
        },
        .json => {
            for (0..0x20) |c| t[c] = "\\u00" ++ [_]u8{ hex[c >> 4], hex[c & 15] };
            t['\n'] = "\\n";
            t['\r'] = "\\r";
            t['\t'] = "\\t";
            t[0x08] = "\\b";
            t[0x0C] = "\\f";
            t['"'] = "\\\"";
            t['\\'] = "\\\\";
        },
        .raw => {},
    }
    return t;
}

fn tableFor(comptime mode: Mode, comptime upper: bool) *const [128]?[]const u8 {
    const S = struct {
        const t = asciiTable(mode, upper);
    };
    return &S.t;
}

/// What one ASCII byte is written as (PERF.md H91): its escape or itself, at most 6 bytes,
/// padded to 8 for one store, its length in the last byte (0 for NUL: ANSI text drops it).
pub const Escape = [8]u8;

fn escapeTable(comptime mode: Mode, comptime upper: bool) [128]Escape {
    @setEvalBranchQuota(10_000);
    var t: [128]Escape = undefined;
    for (&t, 0..) |*e, c| {
        e.* = @splat(0);
        const text: []const u8 = asciiTable(mode, upper)[c] orelse &.{@as(u8, @intCast(c))};
        assert(text.len <= bytes_per_unit_max);
        @memcpy(e[0..text.len], text);
        e[7] = if (c == 0) 0 else @intCast(text.len);
    }
    return t;
}

/// The escape table of `mode`: JSON control escapes in upper-case hex for UTF-16 text,
/// lower-case for ANSI text (8.2).
pub fn escapesFor(comptime mode: Mode, comptime upper: bool) *const [128]Escape {
    const S = struct {
        const t = escapeTable(mode, upper);
    };
    return &S.t;
}

/// Lanes taken and bytes written by `escapeLanes`.
pub const Taken = struct { lanes: usize, bytes: usize };

/// Writes one vector step of ASCII bytes `v`, already stored at `dst`, again with each
/// `dirty` lane before the first `stop` lane as its escape from `table` (PERF.md H91, the
/// Rust engine's H75 and H88): a dirty lane no longer ends the step, which cost a scalar step
/// and a new load and test of the next step per escape. After an escape the step's bytes
/// after it are stored again behind it, from a copy of the step. Stops at the first `stop`
/// lane (non-ASCII, a string's NUL, past its end), which the caller's next step takes. The
/// first dirty lane must not stop (callers test it: a step whose first dirty lane ends the
/// string or is not ASCII pays nothing here). `dst` needs room for the lanes' escapes plus
/// `width` bytes; `stop` lanes must be `dirty` too.
pub inline fn escapeLanes(
    comptime width: comptime_int,
    v: @Vector(width, u8),
    dirty: std.meta.Int(.unsigned, width),
    stop: std.meta.Int(.unsigned, width),
    table: *const [128]Escape,
    dst: [*]u8,
) Taken {
    const Mask = std.meta.Int(.unsigned, width);
    assert(stop & ~dirty == 0);
    const first_stop: usize = @ctz(stop);
    const before: Mask = if (first_stop == width) ~@as(Mask, 0) else (@as(Mask, 1) <<
        @intCast(first_stop)) - 1;
    var escapes = dirty & before;
    assert(@ctz(escapes) == @ctz(dirty));
    var step: [2 * width]u8 = undefined;
    step[0..width].* = v;
    var lane: usize = 0; // The next lane not yet written in place.
    var d: usize = 0; // Where it goes.
    while (escapes != 0) : (escapes &= escapes - 1) {
        const j: usize = @ctz(escapes);
        const c = step[j];
        assert(c < 0x80);
        d += j - lane;
        const e = table[c];
        dst[d..][0..8].* = e;
        d += e[7];
        dst[d..][0..width].* = step[j + 1 ..][0..width].*;
        lane = j + 1;
    }
    return .{ .lanes = first_stop, .bytes = d + first_stop - lane };
}

/// How `writeUtf16In` writes a JSON step whose escapes it can take in place.
pub const JsonKernel = enum {
    /// `escapeLanes`: one table entry and one re-store of the step per escaped lane.
    lanes,
    /// `jsonExpand`: every escape of the step at once, by two `pshufb` (PERF.md H183).
    expand,
};

/// `pshufb` is one instruction only where the CPU is known at compile time to have SSSE3
/// (the CLI is built for the machine, the callgrind build for x86-64-v3); the portable
/// libraries (baseline x86-64, PERF.md P7) keep `escapeLanes`, with no runtime dispatch.
pub const json_kernel: JsonKernel = if (builtin.cpu.arch == .x86_64 and
    std.Target.x86.featureSetHas(builtin.cpu.features, .ssse3)) .expand else .lanes;

const Bytes16 = @Vector(16, u8);

extern fn @"llvm.x86.ssse3.pshuf.b.128"(Bytes16, Bytes16) Bytes16;

/// `pshufb`: lane k of the result is `table[index[k] & 15]`, or 0 when `index[k]` has its
/// high bit set. Outside LLVM (the Debug tests' own x86 backend has no LLVM intrinsics) and
/// without SSSE3 the same rule one lane at a time, so the tests run `jsonExpand` everywhere.
inline fn shuffleBytes(table: Bytes16, index: Bytes16) Bytes16 {
    if (json_kernel == .expand and builtin.zig_backend == .stage2_llvm) {
        return @"llvm.x86.ssse3.pshuf.b.128"(table, index);
    }
    var r: Bytes16 = undefined;
    inline for (0..16) |k| r[k] = if (index[k] >= 0x80) 0 else table[index[k] & 15];
    return r;
}

/// JSON's short escapes by control byte (`pshufb` index 0-15); 0: none (`\u00XX`, or not
/// a control at all). 0x10-0x1f have none.
const json_short: Bytes16 = .{ 0, 0, 0, 0, 0, 0, 0, 0, 'b', 't', 'n', 0, 'f', 'r', 0, 0 };

/// `pshufb` indices that spread 8 lanes over 8 + popcount(mask) bytes, each lane in `mask`
/// after a `\` (index 8: the source's upper half is eight `\`), the rest zero (PERF.md H183,
/// the Rust engine's `EXPAND` of H155).
const json_expansions: [256]Bytes16 = blk: {
    @setEvalBranchQuota(20_000);
    var t: [256]Bytes16 = undefined;
    for (&t, 0..) |*e, mask| {
        var index: [16]u8 = @splat(0x80);
        var p: usize = 0;
        for (0..8) |k| {
            if (mask >> k & 1 == 1) {
                index[p] = 8;
                p += 1;
            }
            index[p] = k;
            p += 1;
        }
        assert(p == 8 + @as(usize, @popCount(@as(u8, mask))));
        e.* = index;
    }
    break :blk t;
};

/// `@shuffle` mask: lanes `first`..`first + 7` of the first vector, then the second's 0-7.
fn halfThenSecond(comptime first: i32) [16]i32 {
    var mask: [16]i32 = undefined;
    for (0..8) |k| {
        mask[k] = first + @as(i32, k);
        mask[8 + k] = ~@as(i32, k);
    }
    return mask;
}

/// Writes one JSON step of 16 units `v` at `dst` as far as its first lane that this kernel
/// cannot write (PERF.md H183): non-ASCII, NUL, a control written `\u00XX`, or a `past`
/// lane. The lanes before it are written whole, `"`, `\` and the controls with a short
/// escape (`\b \t \n \f \r`) after a `\`, by one `pshufb` per 8 lanes from a table of
/// 256 expansions, not lane by lane. May take 0 lanes (its first lane is such a lane); the
/// caller's scalar step takes that lane. `dst` needs 32 bytes of room; what lies past the
/// bytes returned is scratch.
pub inline fn jsonExpand(v: Lanes, past: u16, dst: [*]u8) Taken {
    // `past` lanes are the step's last ones.
    assert(past == 0 or @clz(past) == 0 and @ctz(past) + @popCount(past) == lanes);
    // Units from 0x80 up saturate to 0xff: one byte class for every non-ASCII unit.
    const bytes: Bytes16 = @truncate(@min(v, @as(Lanes, @splat(0xff))));
    // Bytes 0x00-0x0f index `json_short` (+0x70 keeps the high bit clear), the rest
    // saturate to 0x80 and up, which reads 0.
    const short = shuffleBytes(json_short, bytes +| @as(Bytes16, @splat(0x70)));
    const has_short = short != @as(Bytes16, @splat(0));
    const control = bytes < @as(Bytes16, @splat(0x20));
    const bad_lanes = (bytes >= @as(Bytes16, @splat(0x80))) | (control & ~has_short);
    const bad: u16 = @as(u16, @bitCast(bad_lanes)) | past;
    const escaped: u16 = @bitCast((bytes == @as(Bytes16, @splat('"'))) |
        (bytes == @as(Bytes16, @splat('\\'))) | has_short);
    // The byte after a `\`: the short escape, or `"` / `\` itself (their `short` is 0).
    const after = @max(bytes, short);
    const backslashes: Bytes16 = @splat('\\');
    const low: u8 = @truncate(escaped);
    const high: u8 = @truncate(escaped >> 8);
    const low_half = @shuffle(u8, after, backslashes, halfThenSecond(0));
    const high_half = @shuffle(u8, after, backslashes, halfThenSecond(8));
    dst[0..16].* = shuffleBytes(low_half, json_expansions[low]);
    const second = 8 + @as(usize, @popCount(low));
    dst[second..][0..16].* = shuffleBytes(high_half, json_expansions[high]);
    const taken: usize = @ctz(@as(u32, bad) | 0x1_0000);
    assert(taken <= lanes);
    const before: u32 = (@as(u32, 1) << @intCast(taken)) - 1;
    const written: usize = taken + @popCount(escaped & before);
    assert(written <= 2 * taken);
    assert(written <= 8 + @as(usize, @popCount(low)) + 16);
    return .{ .lanes = taken, .bytes = written };
}

/// Worst-case output bytes per UTF-16 unit (`\u00XX` / `&quot;`).
pub const bytes_per_unit_max = 6;

/// Writes UTF-16LE `src` (even length) up to its first NUL unit, escaped for `mode`. Lone
/// surrogates become `_` (XML) or U+FFFD (JSON, raw). Stopping at NUL here spares the
/// callers a scan: NUL is a dirty lane in every mode, so the check costs nothing on clean
/// runs.
pub fn writeUtf16(out: *Out, src: []const u8, comptime mode: Mode) Error!void {
    return writeUtf16In(out, src, 0, src.len, mode, json_kernel);
}

/// `writeUtf16` of `region[start..][0..len]`: the vector steps may read past the string as
/// far as `region` goes (PERF.md H54), so only a string that ends within 32 bytes of the
/// region's end pays a zero-padded copy for its last step. JSON's in-place escapes are taken
/// by `kernel`: callers pass `json_kernel`, the tests each kernel (H183).
pub fn writeUtf16In(
    out: *Out,
    region: []const u8,
    start: usize,
    len: usize,
    comptime mode: Mode,
    comptime kernel: JsonKernel,
) Error!void {
    assert(len % 2 == 0);
    assert(start + len <= region.len);
    const src = region[start..][0..len];
    const n = len / 2;
    // A step writes up to 2 × `lanes` bytes past `d` (`jsonExpand`'s two stores).
    try out.ensure(n * bytes_per_unit_max + 2 * lanes);
    const dst = out.spare();
    var d: usize = 0;
    var i: usize = 0;
    const table = tableFor(mode, true);
    const escapes = escapesFor(mode, true);
    while (i < n) {
        const step = loadStep(region, start + 2 * i, n - i, mode);
        const v = step.units;
        const narrow: @Vector(lanes, u8) = @truncate(v);
        dst[d..][0..lanes].* = narrow;
        if (step.dirty == 0) {
            i += lanes;
            d += lanes;
            continue;
        }
        const clean = @ctz(step.dirty);
        // An ASCII escape first (not a string's end, its NUL or non-ASCII text: strings cut
        // by a NUL before their declared length are common): it and the step's next ones in
        // place.
        if (i + clean < n and unitAt(src, i + clean) -% 1 < 0x7F) {
            if (mode == .json and kernel == .expand) {
                // All of them by `jsonExpand` (H183), unless its first dirty lane is a control
                // that it leaves to the scalar step below.
                const taken = jsonExpand(v, step.past, dst + d);
                assert(taken.lanes >= clean);
                if (taken.lanes == @min(lanes, n - i)) {
                    // As far as the string goes: the next step's load does not wait on
                    // the masks behind `taken` (the Rust engine's H155 second form).
                    i += lanes;
                    d += taken.bytes;
                    continue;
                }
                if (taken.lanes > clean) {
                    i += taken.lanes;
                    d += taken.bytes;
                    continue;
                }
            } else {
                // Lane by lane from the mode's table (H91).
                const stop: u16 = @as(u16, @bitCast((v >= @as(Lanes, @splat(0x80))) |
                    (v == @as(Lanes, @splat(0))))) | step.past;
                const taken = escapeLanes(lanes, narrow, step.dirty, stop, escapes, dst + d);
                i += taken.lanes;
                d += taken.bytes;
                continue;
            }
        }
        i += clean;
        d += clean;
        if (i >= n) break;
        const u = unitAt(src, i);
        i += 1;
        if (u == 0) break;
        if (mode == .json and (u == '\\' or u == '"')) {
            // The common JSON escapes (every path has backslashes), without the table's
            // variable-length copy.
            dst[d..][0..2].* = .{ '\\', @intCast(u) };
            d += 2;
        } else if (u < 0x80) {
            if (table[u]) |esc| {
                copyShort(dst + d, esc);
                d += esc.len;
            } else {
                dst[d] = @intCast(u);
                d += 1;
            }
        } else if (u < 0x800) {
            dst[d] = @intCast(0xC0 | (u >> 6));
            dst[d + 1] = @intCast(0x80 | (u & 0x3F));
            d += 2;
        } else if (u >= 0xD800 and u < 0xE000) {
            if (u < 0xDC00 and i < n) {
                const lo = unitAt(src, i);
                if (lo >= 0xDC00 and lo < 0xE000) {
                    i += 1;
                    const cp: u32 = 0x10000 + ((@as(u32, u) - 0xD800) << 10) + (lo - 0xDC00);
                    dst[d] = @intCast(0xF0 | (cp >> 18));
                    dst[d + 1] = @intCast(0x80 | ((cp >> 12) & 0x3F));
                    dst[d + 2] = @intCast(0x80 | ((cp >> 6) & 0x3F));
                    dst[d + 3] = @intCast(0x80 | (cp & 0x3F));
                    d += 4;
                    continue;
                }
            }
            d += lone(dst[d..], mode);
        } else if (u >= 0xFFFE and (mode == .xml_text or mode == .xml_attr)) {
            dst[d] = '_';
            d += 1;
        } else {
            dst[d] = @intCast(0xE0 | (u >> 12));
            dst[d + 1] = @intCast(0x80 | ((u >> 6) & 0x3F));
            dst[d + 2] = @intCast(0x80 | (u & 0x3F));
            d += 3;
        }
    }
    out.advance(d);
}

/// UTF-16 units of one vector step (one 32-byte load, an AVX2 register): `writeUtf16In`'s
/// steps and the inline step of `writeUtf16Within`.
pub const lanes = 16;
const Lanes = @Vector(lanes, u16);

/// One vector step: `lanes` units from byte `at` of `region`, and the mask of the lanes that
/// need the scalar path. `rest` units of the string are left; lanes past them count as dirty,
/// so the clean prefix never runs past the string. The units come straight from `region`
/// when it has the bytes, else (the region's last 32 bytes) from a zero-padded copy.
inline fn loadStep(region: []const u8, at: usize, rest: usize, comptime mode: Mode) struct {
    units: Lanes,
    dirty: u16,
    /// The lanes past the string (in `dirty` too).
    past: u16,
} {
    assert(rest > 0);
    var v: Lanes = undefined;
    if (region.len - at >= 2 * lanes) {
        v = @bitCast(region[at..][0 .. 2 * lanes].*);
    } else {
        assert(rest < lanes);
        var tail: [2 * lanes]u8 = @splat(0);
        copyShort(&tail, region[at..][0 .. rest * 2]);
        v = @bitCast(tail);
    }
    const past: u16 = if (rest < lanes) @truncate(@as(u32, 0xFFFF) << @intCast(rest)) else 0;
    const m: u16 = @bitCast(restDirtyLanes(v, mode));
    return .{ .units = v, .dirty = m | past, .past = past };
}

/// `dirtyLanes` of `writeUtf16In`'s steps (PERF.md H90, the Rust engine's H89): XML writes
/// tab, LF and CR as they are, so there the step copies them too instead of leaving them to
/// the scalar step and loading the next step after each (privilege lists, messages). The
/// inline first step (`writeUtf16Within`) keeps the shorter test: most strings have none.
inline fn restDirtyLanes(v: Lanes, comptime mode: Mode) @Vector(lanes, bool) {
    const m = dirtyLanes(lanes, v, mode);
    if (mode != .xml_text and mode != .xml_attr) return m;
    const kept = (v == @as(Lanes, @splat('\t'))) | (v == @as(Lanes, @splat('\n'))) |
        (v == @as(Lanes, @splat('\r')));
    return m & ~kept;
}

/// Writes the UTF-16LE string `region[start..][0..len]` as `writeUtf16` does (PERF.md H53).
/// Most strings of a record are short and clean (names, `-`, numbers as text): when the
/// string has at most `lanes` units, `region` holds 32 bytes from `start` and no unit
/// before the end needs an escape, one vector step writes it in place, with no call; any
/// other string goes to `writeUtf16In`. The load reads past the string into `region` (its
/// chunk); the lanes past the end are masked off and never written past `len / 2` bytes.
pub inline fn writeUtf16Within(
    out: *Out,
    region: []const u8,
    start: usize,
    len: usize,
    comptime mode: Mode,
) Error!void {
    assert(len % 2 == 0);
    assert(start + len <= region.len);
    const units = len / 2;
    const room = out.list.capacity - out.list.items.len;
    if (units <= lanes and region.len - start >= 2 * lanes and room >= lanes) {
        const v: Lanes = @bitCast(region[start..][0 .. 2 * lanes].*);
        const dirty: u16 = @bitCast(dirtyLanes(lanes, v, mode));
        const live: u16 = @truncate((@as(u32, 1) << @intCast(units)) - 1);
        const first = dirty & live;
        if (first == 0) {
            const narrow: @Vector(lanes, u8) = @truncate(v);
            out.spare()[0..lanes].* = narrow;
            return out.advance(units);
        }
        // A clean run cut by a NUL (strings stored with their terminator): the same step
        // writes it (PERF.md H185), not `writeUtf16In`'s call.
        const nul: u16 = @bitCast(v == @as(Lanes, @splat(0)));
        if (first & (~first +% 1) & nul != 0) {
            const narrow: @Vector(lanes, u8) = @truncate(v);
            out.spare()[0..lanes].* = narrow;
            return out.advance(@ctz(first));
        }
    }
    return writeUtf16In(out, region, start, len, mode, json_kernel);
}

fn lone(dst: [*]u8, comptime mode: Mode) usize {
    if (mode == .xml_text or mode == .xml_attr) {
        dst[0] = '_';
        return 1;
    }
    dst[0..3].* = "\xEF\xBF\xBD".*;
    return 3;
}

inline fn unitAt(src: []const u8, i: usize) u16 {
    return std.mem.readInt(u16, src[i * 2 ..][0..2], .little);
}

/// The lanes of `v` (UTF-16 units or ANSI bytes) that a plain copy cannot take for `mode`:
/// non-ASCII, NUL, and the mode's escapes (XML's tab, newline and return too, copied as is by
/// the scalar step).
inline fn dirtyLanes(
    comptime width: comptime_int,
    v: anytype,
    comptime mode: Mode,
) @Vector(width, bool) {
    const V = @TypeOf(v);
    comptime assert(@typeInfo(V).vector.len == width);
    const high = v >= @as(V, @splat(0x80));
    if (mode == .raw) return high | (v == @as(V, @splat(0)));
    const ctl = v < @as(V, @splat(0x20));
    var m = high | ctl;
    const specials: []const u16 = switch (mode) {
        .xml_text => &.{ '&', '<', '>' },
        .xml_attr => &.{ '&', '<', '>', '"', '\'' },
        .json => &.{ '"', '\\' },
        .raw => unreachable,
    };
    inline for (specials) |c| m = m | (v == @as(V, @splat(c)));
    return m;
}

/// Writes one Unicode scalar value (not a surrogate) escaped for `mode`. JSON control
/// escapes use lowercase hex: this path serves ANSI text and resolved references (8.2).
pub fn writeCodepoint(out: *Out, cp: u21, comptime mode: Mode) Error!void {
    try out.ensure(bytes_per_codepoint_max);
    out.advance(putCodepoint(out.spare(), cp, mode));
}

/// Worst-case output bytes of one code point: `\u00XX` / `&quot;` (UTF-8 takes at most 4).
pub const bytes_per_codepoint_max = 6;

/// `writeCodepoint` into reserved room at `dst` (`bytes_per_codepoint_max` bytes); returns
/// the bytes written. A surrogate code point is written as a lone surrogate.
pub inline fn putCodepoint(dst: [*]u8, cp: u21, comptime mode: Mode) usize {
    if (cp < 0x80) {
        if (tableFor(mode, false)[cp]) |esc| {
            copyShort(dst, esc);
            return esc.len;
        }
        dst[0] = @intCast(cp);
        return 1;
    }
    if (cp < 0x800) {
        dst[0] = @intCast(0xC0 | (cp >> 6));
        dst[1] = @intCast(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp >= 0xD800 and cp < 0xE000) return lone(dst, mode);
    if ((mode == .xml_text or mode == .xml_attr) and (cp == 0xFFFE or cp == 0xFFFF)) {
        dst[0] = '_';
        return 1;
    }
    if (cp < 0x10000) {
        dst[0] = @intCast(0xE0 | (cp >> 12));
        dst[1] = @intCast(0x80 | ((cp >> 6) & 0x3F));
        dst[2] = @intCast(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp > 0x10FFFF) return lone(dst, mode); // Not a code point (UTF-8 would refuse it).
    dst[0] = @intCast(0xF0 | (cp >> 18));
    dst[1] = @intCast(0x80 | ((cp >> 12) & 0x3F));
    dst[2] = @intCast(0x80 | ((cp >> 6) & 0x3F));
    dst[3] = @intCast(0x80 | (cp & 0x3F));
    return 4;
}

/// Bytes of one vector step over ANSI text (one AVX2 register).
pub const byte_lanes = 32;
const ByteLanes = @Vector(byte_lanes, u8);

/// One vector step over ANSI `bytes` from `at` (PERF.md H78): the bytes, and the mask of
/// those that need the scalar step (`dirtyLanes`; lanes past the end count as dirty, so the
/// clean prefix never runs past it). The last step of a string reads a zero-padded copy.
pub inline fn loadBytes(bytes: []const u8, at: usize, comptime mode: Mode) struct {
    bytes: ByteLanes,
    dirty: u32,
    /// The lanes past the end (in `dirty` too).
    past: u32,
} {
    assert(at < bytes.len);
    const rest = bytes.len - at;
    if (rest >= byte_lanes) {
        const v: ByteLanes = bytes[at..][0..byte_lanes].*;
        return .{ .bytes = v, .dirty = @bitCast(dirtyLanes(byte_lanes, v, mode)), .past = 0 };
    }
    var tail: [byte_lanes]u8 = @splat(0);
    copyShort(&tail, bytes[at..]);
    const v: ByteLanes = tail;
    const past: u32 = @as(u32, 0xFFFF_FFFF) << @intCast(rest);
    const dirty: u32 = @bitCast(dirtyLanes(byte_lanes, v, mode));
    return .{ .bytes = v, .dirty = dirty | past, .past = past };
}

/// Counts UTF-16 units before the first NUL unit in `src` (even length).
pub fn unitsBeforeNul(src: []const u8) usize {
    const n = src.len / 2;
    var i: usize = 0;
    while (i + 8 <= n) : (i += 8) {
        const v: @Vector(8, u16) = @bitCast(src[i * 2 ..][0..16].*);
        const zero: u8 = @bitCast(v == @as(@Vector(8, u16), @splat(0)));
        if (zero != 0) return i + @ctz(zero);
    }
    while (i < n) : (i += 1) {
        if (src[2 * i] == 0 and src[2 * i + 1] == 0) return i;
    }
    return n;
}

/// True when `src` (UTF-16LE) contains no lone surrogate.
pub fn isValidUtf16(src: []const u8) bool {
    const n = src.len / 2;
    var i: usize = 0;
    while (i < n) : (i += 1) {
        const u = unitAt(src, i);
        if (u >= 0xD800 and u < 0xDC00) {
            if (i + 1 >= n) return false;
            const lo = unitAt(src, i + 1);
            if (lo < 0xDC00 or lo >= 0xE000) return false;
            i += 1;
        } else if (u >= 0xDC00 and u < 0xE000) return false;
    }
    return true;
}

/// Decodes valid UTF-16LE to UTF-8 without escaping (names). Asserts validity was checked.
pub fn utf16ToUtf8(gpa: std.mem.Allocator, src: []const u8) Error![]u8 {
    var out = Out.init(gpa);
    errdefer out.deinit();
    try writeUtf16(&out, src, .raw);
    return out.list.toOwnedSlice(gpa);
}

/// UTF-8 `text` as serde_json writes a string (the template subcommands' JSON lines and a
/// substitutions JSON's compact text): quoted, the JSON escapes of 8.2 in lower-case hex, NUL
/// as `\u0000`, every other byte as it is.
pub fn writeJsonString(w: *std.Io.Writer, text: []const u8) std.Io.Writer.Error!void {
    const table = tableFor(.json, false);
    try w.writeByte('"');
    var plain: usize = 0;
    for (text, 0..) |c, i| {
        const escaped = if (c < 0x80) table[c] orelse continue else continue;
        try w.writeAll(text[plain..i]);
        try w.writeAll(escaped);
        plain = i + 1;
    }
    try w.writeAll(text[plain..]);
    try w.writeByte('"');
}

fn u16le(comptime s: []const u16) [s.len * 2]u8 {
    var r: [s.len * 2]u8 = undefined;
    for (s, 0..) |u, i| {
        r[2 * i] = @truncate(u);
        r[2 * i + 1] = @truncate(u >> 8);
    }
    return r;
}

fn expectEscaped(comptime mode: Mode, comptime src: []const u16, expected: []const u8) !void {
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    const bytes = u16le(src);
    try writeUtf16(&out, &bytes, mode);
    try std.testing.expectEqualStrings(expected, out.list.items);
}

test "xml text and attribute escaping (8.1)" {
    const s = [_]u16{ 'a', '&', '<', '>', '"', '\'', 0x01, '\t', 0xFFFE, 0xD800, 'z' };
    try expectEscaped(.xml_text, &s, "a&amp;&lt;&gt;\"'_\t__z");
    try expectEscaped(.xml_attr, &s, "a&amp;&lt;&gt;&quot;&apos;_\t__z");
}

test "json escaping (8.2): uppercase hex from UTF-16, U+FFFD for lone surrogates" {
    const s = [_]u16{ '"', '\\', '\n', '\r', '\t', 0x08, 0x0C, 0x1F, '/', 0x7F, 0xDC00, 0xFFFF };
    try expectEscaped(.json, &s, "\\\"\\\\\\n\\r\\t\\b\\f\\u001F/\x7f\xEF\xBF\xBD\xEF\xBF\xBF");
}

test "writeJsonString: serde_json's escapes, lower-case hex, NUL kept" {
    var text: [64]u8 = undefined;
    var w: std.Io.Writer = .fixed(&text);
    try writeJsonString(&w, "a\"\\\t\n\x01\x00\x1f\x7f\xc3\xa9/");
    try std.testing.expectEqualStrings(
        "\"a\\\"\\\\\\t\\n\\u0001\\u0000\\u001f\x7f\xc3\xa9/\"",
        w.buffered(),
    );
}

test "vector path: long ASCII runs, surrogate pairs and non-ASCII" {
    const s = [_]u16{
        'H',
        'e',
        'l',
        'l',
        'o',
        ' ',
        'w',
        'o',
        'r',
        'l',
        'd',
        '!',
        0xE9,
        0xD83D,
        0xDE00,
        'x',
        'y',
        'z',
        'a',
        'b',
        'c',
        'd',
        'e',
        'f',
    };
    try expectEscaped(.json, &s, "Hello world!\xC3\xA9\xF0\x9F\x98\x80xyzabcdef");
    try expectEscaped(.raw, &[_]u16{ 'a', 0xD800, '<' }, "a\xEF\xBF\xBD<");
}

test "writing stops at the first NUL unit, inside a vector step and in the tail" {
    const long = [_]u16{
        'a',
        'b',
        'c',
        'd',
        'e',
        'f',
        'g',
        'h',
        'i',
        'j',
        0,
        'x',
        'y',
        'z',
        'w',
        'v',
        'u',
    };
    const short = [_]u16{ 'a', '<', 0, 'x' };
    inline for (.{ Mode.json, Mode.xml_text, Mode.xml_attr, Mode.raw }) |mode| {
        try expectEscaped(mode, &long, "abcdefghij");
        try expectEscaped(mode, &short, if (mode == .json or mode == .raw) "a<" else "a&lt;");
        try expectEscaped(mode, &[_]u16{ 0, 'a' }, "");
    }
}

test "unitsBeforeNul finds the first NUL unit in and after the vector loop" {
    const a = u16le(&[_]u16{ 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 0, 'k' });
    try std.testing.expectEqual(@as(usize, 9), unitsBeforeNul(&a));
    const b = u16le(&[_]u16{ 'a', 0x100, 0, 'd', 'e', 'f', 'g', 'h', 'i' });
    try std.testing.expectEqual(@as(usize, 2), unitsBeforeNul(&b));
    const c = u16le(&[_]u16{ 'a', 'b' });
    try std.testing.expectEqual(@as(usize, 2), unitsBeforeNul(&c));
}

test "codepoint escaping uses lowercase hex in JSON" {
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    try writeCodepoint(&out, 0x1F, .json);
    try writeCodepoint(&out, 0x263A, .json);
    try writeCodepoint(&out, '&', .xml_text);
    try std.testing.expectEqualStrings("\\u001f\xE2\x98\xBA&amp;", out.list.items);
}

/// One unit at a time, the rules written out plainly: the oracle for the vector path.
fn writeUtf16Scalar(out: *Out, src: []const u8, comptime mode: Mode) Error!void {
    const n = src.len / 2;
    var i: usize = 0;
    while (i < n) : (i += 1) {
        const u = unitAt(src, i);
        if (u == 0) return;
        if (u >= 0xD800 and u < 0xDC00 and i + 1 < n) {
            const lo = unitAt(src, i + 1);
            if (lo >= 0xDC00 and lo < 0xE000) {
                i += 1;
                try writeCodepoint(
                    out,
                    @intCast(0x10000 + ((@as(u32, u) - 0xD800) << 10) + (lo - 0xDC00)),
                    mode,
                );
                continue;
            }
        }
        if (u >= 0xD800 and u < 0xE000) {
            try out.ensure(3);
            out.advance(lone(out.spare(), mode));
        } else if (u < 0x80 and mode == .json and tableFor(.json, true)[u] != null) {
            try out.write(tableFor(.json, true)[u].?); // Upper-case hex from UTF-16.
        } else try writeCodepoint(out, u, mode);
    }
}

test "property: the vector escaper equals the scalar one on random strings" {
    var prng = std.Random.DefaultPrng.init(0xE5C);
    const random = prng.random();
    // Unit classes: plain ASCII, every escaped ASCII, NUL, two- and three-byte, both
    // surrogate halves, U+FFFE/FFFF.
    const pool = [_]u16{
        'a',
        'Z',
        '0',
        ' ',
        '/',
        0x7F,
        '&',
        '<',
        '>',
        '"',
        '\'',
        '\\',
        '\n',
        '\r',
        '\t',
        0x08,
        0x0C,
        0x01,
        0x1F,
        0,
        0xE9,
        0x7FF,
        0x800,
        0x263A,
        0xD83D,
        0xDE00,
        0xDBFF,
        0xDC00,
        0xFFFE,
        0xFFFF,
    };
    var buf: [96]u8 = undefined;
    var fast = Out.init(std.testing.allocator);
    defer fast.deinit();
    var slow = Out.init(std.testing.allocator);
    defer slow.deinit();
    var k: usize = 0;
    while (k < 4000) : (k += 1) {
        for (0..buf.len / 2) |j| {
            const u = if (random.uintLessThan(u8, 4) == 0) pool[
                random.uintLessThan(
                    usize,
                    pool.len,
                )
            ] else 'a' + random.uintLessThan(
                u16,
                26,
            );
            std.mem.writeInt(u16, buf[2 * j ..][0..2], u, .little);
        }
        const units = random.uintAtMost(usize, 40);
        const at = 2 * random.uintAtMost(usize, buf.len / 2 - units);
        inline for (.{ Mode.json, Mode.xml_text, Mode.xml_attr, Mode.raw }) |mode| {
            fast.truncate(0);
            slow.truncate(0);
            try writeUtf16(&fast, buf[at..][0 .. units * 2], mode);
            try writeUtf16Scalar(&slow, buf[at..][0 .. units * 2], mode);
            try std.testing.expectEqualStrings(slow.list.items, fast.list.items);
            // Each JSON kernel (H183), whichever this CPU's build takes.
            inline for (.{ JsonKernel.lanes, JsonKernel.expand }) |kernel| {
                fast.truncate(0);
                try writeUtf16In(&fast, &buf, at, units * 2, mode, kernel);
                try std.testing.expectEqualStrings(slow.list.items, fast.list.items);
            }
            // The in-region form (H53), whose vector step reads up to 32 bytes of `buf` past
            // the string when they exist: the same text, whichever way it takes.
            fast.truncate(0);
            try writeUtf16Within(&fast, &buf, at, units * 2, mode);
            try std.testing.expectEqualStrings(slow.list.items, fast.list.items);
        }
    }
}

test "writePadded appends exactly its run, at any length, after any earlier text" {
    // Runs of every length 0..=200 at every offset mod 4 of a source padded as the program
    // store pads its literals, appended after text that the over-copy must not disturb.
    var src: [208 + pad_bytes]u8 = undefined;
    for (&src, 0..) |*b, i| b.* = @intCast(32 + i % 90);
    var out = Out.init(std.testing.allocator);
    defer out.deinit();
    var expected: std.ArrayList(u8) = .empty;
    defer expected.deinit(std.testing.allocator);
    for (0..201) |len| {
        const run = src[len % 4 ..][0..len];
        try out.writePadded(run);
        try out.byte('|');
        try expected.appendSlice(std.testing.allocator, run);
        try expected.append(std.testing.allocator, '|');
    }
    try std.testing.expectEqualStrings(expected.items, out.list.items);
}

test "escapeLanes: dense escapes, every stop lane, against one table lookup a lane" {
    // Steps of 16 and 32 bytes, from one to all lanes escaped, each with a random first stop
    // lane: the kernel writes the lanes before it, each dirty one as its table text.
    var prng = std.Random.DefaultPrng.init(0x4891);
    const random = prng.random();
    const specials = "&<>\"'\\\n\r\t\x00\x01\x1f";
    inline for (.{ 16, 32 }) |width| {
        const Mask = std.meta.Int(.unsigned, width);
        inline for (.{ Mode.json, Mode.xml_text, Mode.xml_attr, Mode.raw }) |mode| {
            const table = escapesFor(mode, true);
            for (0..2000) |_| {
                var step: [width]u8 = undefined;
                const dense = random.uintAtMost(u8, 16);
                for (&step) |*c| c.* = if (random.uintLessThan(u8, 16) < dense)
                    specials[random.uintLessThan(usize, specials.len)]
                else
                    'a' + random.uintLessThan(u8, 26);
                var dirty: Mask = 0;
                for (step, 0..) |c, k| {
                    const marked = asciiTable(mode, true)[c] != null or c == 0;
                    if (marked) dirty |= @as(Mask, 1) << @intCast(k);
                }
                const first_stop = random.uintAtMost(usize, width);
                const stop: Mask = if (first_stop == width) 0 else @as(Mask, 1) <<
                    @intCast(first_stop);
                // The callers go to the kernel only for a step whose first dirty lane is an
                // escape, the step already stored.
                if (@ctz(dirty | stop) == first_stop) continue;
                var dst: [width * 6 + width]u8 = undefined;
                dst[0..width].* = step;
                const taken = escapeLanes(width, step, dirty | stop, stop, table, &dst);
                var expected: [width * 6]u8 = undefined;
                var e: usize = 0;
                for (step[0..first_stop]) |c| {
                    const text = table[c][0..table[c][7]];
                    @memcpy(expected[e..][0..text.len], text);
                    e += text.len;
                }
                try std.testing.expectEqual(first_stop, taken.lanes);
                try std.testing.expectEqualStrings(expected[0..e], dst[0..taken.bytes]);
            }
        }
    }
}

test "jsonExpand: every escape mask in both halves, every first bad lane, as the scalar writer" {
    // Each mask of escaped lanes in the low half (the high half `mask ^ 0xa5`) and in the high
    // half (the low half `mask ^ 0x5a`), the escapes taken in turn from every short one; the
    // kernel must stop at its first lane of each class it leaves to the scalar step, at every
    // position, and write the lanes before it as the scalar writer does.
    const escapes = [_]u16{ '"', '\\', '\n', '\r', '\t', 0x08, 0x0C };
    const plain = [_]u16{ 'a', 'Z', '/', 0x7F, ' ', '0', '\'' };
    // Non-ASCII (some with an escape's low byte), NUL, controls written `\u00XX`, past.
    const bads = [_]?u16{ 0xE9, 0x8022, 0x010A, 0x015C, 0xD83D, 0, 0x01, 0x0B, 0x1F, null };
    var expected = Out.init(std.testing.allocator);
    defer expected.deinit();
    var turn: usize = 0;
    for (0..2) |half| {
        for (0..256) |m| {
            const byte: u16 = @intCast(m);
            const mask: u16 = if (half == 0)
                byte | (byte ^ 0xa5) << 8
            else
                (byte ^ 0x5a) | byte << 8;
            var units: [lanes]u16 = undefined;
            for (&units, 0..) |*u, k| {
                turn += 1;
                const escaped = mask >> @intCast(k) & 1 == 1;
                u.* = if (escaped) escapes[turn % escapes.len] else plain[turn % plain.len];
            }
            for (0..lanes + 1) |first_bad| {
                const bad = bads[(turn + first_bad) % bads.len];
                var step = units;
                var past: u16 = 0;
                if (first_bad < lanes) {
                    if (bad) |u| {
                        step[first_bad] = u;
                    } else past = @truncate(@as(u32, 0xFFFF) << @intCast(first_bad));
                }
                var dst: [2 * lanes + 2 * lanes]u8 = undefined;
                const taken = jsonExpand(@as(Lanes, step), past, &dst);
                try std.testing.expectEqual(first_bad, taken.lanes);
                const bytes: [2 * lanes]u8 = @bitCast(step);
                expected.truncate(0);
                try writeUtf16Scalar(&expected, bytes[0 .. 2 * first_bad], .json);
                try std.testing.expectEqualStrings(expected.list.items, dst[0..taken.bytes]);
            }
        }
    }
}
