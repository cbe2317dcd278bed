//! The element tree that token streams build and templates instantiate (contract 6.6-6.8),
//! in flat arrays (`Tree`): no per-node allocation, reset (not freed) between records. The
//! twin of `rust/evtx-core/src/tree.rs`; the token parser that fills it is tokens.zig's.
const std = @import("std");
const limits = @import("limits.zig");
const Allocator = std.mem.Allocator;
const values_decode = @import("values_decode.zig");
const escape = @import("escape.zig");
const Error = @import("tokens.zig").Error;
const assert = std.debug.assert;

pub const Kind = enum(u8) {
    element,
    attribute,
    /// A typed value; text nodes are values of type String / AnsiString.
    value,
    cdata,
    char_ref,
    entity_ref,
    pi_target,
    pi_data,
    /// Substitution in a template definition: `ref.index`, `vtype` = 1 if optional,
    /// `size.declared_type`.
    placeholder,
    /// A template instance not copied yet (record streams only): `ref.definition`, `kids` =
    /// its values. `materialize` replaces it by the instantiated element.
    instance,
};

pub const flag_self_closing: u8 = 1;
/// Definition nodes: the subtree holds placeholders or dependency ids (must be copied).
pub const flag_dynamic: u8 = 2;
/// Record-stream elements: the subtree holds `instance` nodes (see `materialize`).
pub const flag_lazy: u8 = 4;
/// Substitution values numbered for a compiled program: `dep` holds the slot, and for
/// items made by array expansion `kids.len` holds the item index + 1.
pub const flag_slot: u8 = 8;
/// A BinXml value of the record's own template instance whose stream failed to parse; the
/// record fails only if it needs the value (`Parser.deferred`, template.zig).
pub const flag_failed: u8 = 16;

pub const Span = struct {
    start: u32 = 0,
    len: u32 = 0,
};

pub const Node = struct {
    kind: Kind,
    /// Value type (values), optional flag (placeholders).
    vtype: u8 = 0,
    flags: u8 = 0,
    /// Dependency id (elements of template definitions), 0xFFFF = none.
    dep: u16 = 0xFFFF,
    /// What the node refers to; the member `kind` says (`Ref`).
    ref: Ref = .{ .name = 0 },
    /// How much of it; the member `kind` says (`Size`).
    size: Size = .{ .len = 0 },
    /// Children (element), value items (attribute), fragment elements (BinXml value).
    kids: Span = .{},
    attrs: Span = .{},

    pub fn value(n: *const Node) values_decode.Value {
        return .{ .vtype = n.vtype, .start = n.ref.offset, .len = n.size.len };
    }
};

/// `Node.ref`: one meaning per member, the node's kind picks the member (an extern union:
/// one 32-bit word, no tag, as the node was before it had names).
pub const Ref = extern union {
    /// element, attribute, entity_ref, pi_target: the name id (`Names`).
    name: u32,
    /// value, cdata, pi_data: the chunk offset of the bytes.
    offset: u32,
    /// char_ref: the code unit.
    code_unit: u32,
    /// placeholder: the index of the substitution value.
    index: u32,
    /// instance: the definition's root element (a `def` tree index).
    definition: u32,
};

/// `Node.size`: one meaning per member, the node's kind picks the member.
pub const Size = extern union {
    /// value, cdata, pi_data: the byte length.
    len: u32,
    /// placeholder: the value type the substitution token declares.
    declared_type: u32,
    /// root element of a definition: the index of its fingerprint (template.zig).
    fingerprint: u32,
};

comptime {
    // Named, the node is as small as it was.
    std.debug.assert(@sizeOf(Ref) == 4 and @sizeOf(Size) == 4);
}

pub const def_bit: u32 = 1 << 31;

/// A substituted BinXml value whose stream yielded no element: it renders nothing, is not
/// content, but makes an XML parent use the one-child-per-line layout (and is an
/// element-like item inside attributes).
pub fn isFragment(n: *const Node) bool {
    return n.kind == .value and n.vtype == values_decode.T.binxml;
}

/// Node arenas of one record (or of a chunk's template definitions): nodes, and "edges"
/// (child index lists). Reset, not freed, between records.
pub const Tree = struct {
    nodes: std.ArrayList(Node) = .empty,
    edges: std.ArrayList(u32) = .empty,

    pub fn deinit(s: *Tree, gpa: Allocator) void {
        s.nodes.deinit(gpa);
        s.edges.deinit(gpa);
    }

    pub fn clear(s: *Tree) void {
        s.nodes.clearRetainingCapacity();
        s.edges.clearRetainingCapacity();
    }
};

/// Element and attribute names: an id per distinct text, keyed by its raw UTF-16 bytes (as
/// the Rust engine keys them), so that equal names (at different offsets or in different
/// chunks) get the same id. The texts and their ids outlive the chunk (PERF.md H123): a
/// chunk's first use of a name the run has seen costs one hash of its units, no UTF-16
/// check, no decoding; the id of an entry by its chunk offset (`by_offset`) is per chunk.
pub const Names = struct {
    by_offset: std.AutoHashMapUnmanaged(u32, u32) = .empty,
    /// Raw UTF-16 text (cut at its first NUL, valid) → id.
    by_units: std.StringHashMapUnmanaged(u32) = .empty,
    /// UTF-8 texts by id, for the renderers.
    texts: std.ArrayList([]const u8) = .empty,
    bytes: usize = 0,
    /// Bumped when the ids start afresh (`clear` past the bounds): caches of ids outside
    /// (program.zig's `FragmentNames.of_name`) check it.
    generation: u32 = 0,
    arena: std.heap.ArenaAllocator,

    pub fn init(gpa: Allocator) Names {
        return .{ .arena = std.heap.ArenaAllocator.init(gpa) };
    }

    pub fn deinit(n: *Names, gpa: Allocator) void {
        n.by_offset.deinit(gpa);
        n.by_units.deinit(gpa);
        n.texts.deinit(gpa);
        n.arena.deinit();
    }

    /// Starts a new chunk: offsets are forgotten, texts and ids kept within the bounds.
    pub fn clear(n: *Names) void {
        n.by_offset.clearRetainingCapacity();
        if (n.texts.items.len < limits.names_max and n.bytes < limits.name_bytes_max) return;
        n.by_units.clearRetainingCapacity();
        n.texts.clearRetainingCapacity();
        n.bytes = 0;
        n.generation +%= 1;
        _ = n.arena.reset(.retain_capacity);
    }

    pub fn text(n: *const Names, id: u32) []const u8 {
        return n.texts.items[id];
    }

    /// The id of valid UTF-16 text `units`, decoding it on its first use.
    pub fn internUnits(n: *Names, gpa: Allocator, units: []const u8) Allocator.Error!u32 {
        assert(units.len % 2 == 0);
        const gop = try n.by_units.getOrPut(gpa, units);
        if (!gop.found_existing) {
            errdefer n.by_units.removeByPtr(gop.key_ptr);
            const a = n.arena.allocator();
            gop.key_ptr.* = try a.dupe(u8, units);
            const utf8 = try escape.utf16ToUtf8(a, units);
            try n.texts.append(gpa, utf8);
            gop.value_ptr.* = @intCast(n.texts.items.len - 1);
            n.bytes += units.len + utf8.len;
        }
        return gop.value_ptr.*;
    }

    /// The id of raw text `units` if it was interned (no check, no decoding).
    pub fn unitsId(n: *const Names, units: []const u8) ?u32 {
        return n.by_units.get(units);
    }

    /// The id of the name entry at chunk offset `offset` (6.3), by its raw text.
    pub fn resolve(n: *Names, gpa: Allocator, chunk: []const u8, offset: u32) Error!u32 {
        if (n.by_offset.get(offset)) |id| return id;
        const units = try nameUnits(chunk, offset);
        const id = n.unitsId(units) orelse id: {
            if (!escape.isValidUtf16(units)) return error.InvalidName;
            break :id try n.internUnits(gpa, units);
        };
        try n.by_offset.put(gpa, offset, id);
        return id;
    }

    /// The id of the name entry at `offset` the simple way (tests: the oracle of `resolve`):
    /// decoded, then found by its UTF-8 text among `texts`.
    pub fn resolveSimple(n: *Names, gpa: Allocator, chunk: []const u8, offset: u32) Error!u32 {
        const units = try nameUnits(chunk, offset);
        if (!escape.isValidUtf16(units)) return error.InvalidName;
        const utf8 = try escape.utf16ToUtf8(gpa, units);
        defer gpa.free(utf8);
        for (n.texts.items, 0..) |t, id| if (std.mem.eql(u8, t, utf8)) return @intCast(id);
        return n.internUnits(gpa, units);
    }
};

/// The name entry at `offset` (6.3: next offset, hash, count, units) as stored from its hash
/// on: the 16-bit hash, the 16-bit count and `count` UTF-16 units, or null when the chunk
/// ends first. The one bounds check of an entry's count; `nameUnits`, the cache of known
/// bodies (`template.entryText`) and the fragment names' slots (`program.FragmentNames`)
/// slice it.
pub fn entryBytes(chunk: []const u8, offset: u32) ?[]const u8 {
    if (offset > chunk.len or chunk.len - offset < 8) return null;
    const count: u32 = std.mem.readInt(u16, chunk[offset + 6 ..][0..2], .little);
    if (chunk.len - offset - 8 < 2 * count) return null;
    return chunk[offset + 4 ..][0 .. 4 + 2 * count];
}

test "entryBytes: hash, count and units within the chunk, else null" {
    var chunk: [64]u8 = undefined;
    var prng = std.Random.DefaultPrng.init(0x4831_3433);
    const random = prng.random();
    for (0..2000) |_| {
        random.bytes(&chunk);
        const len = random.uintAtMost(usize, chunk.len);
        const offset = random.uintAtMost(u32, chunk.len + 8);
        const count = if (random.boolean()) random.uintAtMost(u16, 30) else random.int(u16);
        if (offset + 8 <= chunk.len) {
            std.mem.writeInt(u16, chunk[offset + 6 ..][0..2], count, .little);
        }
        // Whole when its last unit is inside the chunk's first `len` bytes.
        const whole = offset + 8 + 2 * @as(usize, count) <= len;
        const got = entryBytes(chunk[0..len], offset);
        if (!whole) {
            try std.testing.expect(got == null);
            continue;
        }
        const bytes = got orelse return error.TestExpectedEntry;
        try std.testing.expectEqual(@intFromPtr(&chunk[offset + 4]), @intFromPtr(bytes.ptr));
        try std.testing.expectEqual(4 + 2 * @as(usize, count), bytes.len);
        try std.testing.expectEqual(count, std.mem.readInt(u16, bytes[2..4], .little));
    }
}

/// The UTF-16 characters of the name entry at `offset`, cut at the first NUL.
pub fn nameUnits(chunk: []const u8, offset: u32) Error![]const u8 {
    const entry = entryBytes(chunk, offset) orelse return error.OutOfBounds;
    return entryUnits(entry);
}

/// The UTF-16 characters of a name entry as `entryBytes` gives it, cut at the first NUL.
pub fn entryUnits(entry: []const u8) []const u8 {
    assert(entry.len >= 4 and entry.len % 2 == 0);
    const units = entry[4..];
    return units[0 .. 2 * escape.unitsBeforeNul(units)];
}

test "Names.resolve by raw UTF-16 text across chunks equals decoding every name (H123)" {
    const gpa = std.testing.allocator;
    // A pool of texts (6.3 entries): equal texts, texts one unit apart, a NUL inside the
    // count, non-ASCII, a surrogate pair, lone surrogates; placed at random offsets of
    // random chunks, plus an entry the chunk's end cuts short.
    const pool = [_][]const u16{
        &.{ 'D', 'a', 't', 'a' },
        &.{ 'D', 'a', 't', 'e' },
        &.{ 'D', 'a', 0, 'x' },
        &.{ 'D', 'a' },
        &.{ 'D', 0xE9, 't', 'a' },
        &.{ 'D', 0xD800, 't' },
        &.{ 0xD83D, 0xDE00, 'x' },
        &.{ 0xDC00, 'y' },
        &.{},
        &.{ 'S', 'y', 's', 't', 'e', 'm' },
        &.{ 'S', 'y', 's', 't', 'e', 'n' },
    };
    var prng = std.Random.DefaultPrng.init(0x4831_3233);
    const random = prng.random();
    var fast = Names.init(gpa);
    defer fast.deinit(gpa);
    var chunk: [4096]u8 = undefined;
    for (0..24) |round| {
        @memset(&chunk, 0);
        var offsets: [17]u32 = undefined;
        for (offsets[0..16], 0..) |*at, k| {
            at.* = @intCast(256 + 32 * k + 2 * random.uintLessThan(u32, 8));
            const units = pool[random.uintLessThan(usize, pool.len)];
            std.mem.writeInt(u16, chunk[at.* + 6 ..][0..2], @intCast(units.len), .little);
            for (units, 0..) |u, j| {
                std.mem.writeInt(u16, chunk[at.* + 8 + 2 * j ..][0..2], u, .little);
            }
        }
        offsets[16] = chunk.len - 6;
        // Past the bounds every fourth round: the next chunk starts afresh.
        if (round % 4 == 3) fast.bytes = limits.name_bytes_max;
        const generation = fast.generation;
        fast.clear();
        try std.testing.expectEqual(round % 4 == 3, fast.generation != generation);
        var simple = Names.init(gpa);
        defer simple.deinit(gpa);
        for (0..2) |_| for (offsets) |offset| {
            const want = simple.resolveSimple(gpa, &chunk, offset);
            const got = fast.resolve(gpa, &chunk, offset);
            if (want) |id| {
                const name = try got;
                try std.testing.expectEqualStrings(simple.text(id), fast.text(name));
                // One id per text: the text's first id in `fast`.
                for (fast.texts.items, 0..) |t, k| if (std.mem.eql(u8, t, fast.text(name))) {
                    try std.testing.expectEqual(@as(u32, @intCast(k)), name);
                    break;
                };
            } else |err| try std.testing.expectError(err, got);
        };
    }
}
