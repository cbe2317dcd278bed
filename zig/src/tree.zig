//! The element tree that token streams build and templates instantiate (contract 6.6-6.8),
//! in flat arrays (`Tree`): no per-node allocation, reset (not freed) between records. The
//! twin of `rust/evtx-core/src/tree.rs`; the token parser that fills it is tokens.zig's.
const std = @import("std");
const Allocator = std.mem.Allocator;
const values_decode = @import("values_decode.zig");
const escape = @import("escape.zig");
const Error = @import("tokens.zig").Error;

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

/// Element and attribute names of one chunk, interned by text so that equal names
/// (possibly stored at different offsets) get the same id.
pub const Names = struct {
    by_offset: std.AutoHashMapUnmanaged(u32, u32) = .empty,
    by_text: std.StringHashMapUnmanaged(u32) = .empty,
    texts: std.ArrayList([]const u8) = .empty,
    arena: std.heap.ArenaAllocator,

    pub fn init(gpa: Allocator) Names {
        return .{ .arena = std.heap.ArenaAllocator.init(gpa) };
    }

    pub fn deinit(n: *Names, gpa: Allocator) void {
        n.by_offset.deinit(gpa);
        n.by_text.deinit(gpa);
        n.texts.deinit(gpa);
        n.arena.deinit();
    }

    pub fn clear(n: *Names) void {
        n.by_offset.clearRetainingCapacity();
        n.by_text.clearRetainingCapacity();
        n.texts.clearRetainingCapacity();
        _ = n.arena.reset(.retain_capacity);
    }

    pub fn text(n: *const Names, id: u32) []const u8 {
        return n.texts.items[id];
    }

    pub fn internText(n: *Names, gpa: Allocator, s: []const u8) Allocator.Error!u32 {
        const gop = try n.by_text.getOrPut(gpa, s);
        if (!gop.found_existing) {
            const copy = try n.arena.allocator().dupe(u8, s);
            gop.key_ptr.* = copy;
            gop.value_ptr.* = @intCast(n.texts.items.len);
            try n.texts.append(gpa, copy);
        }
        return gop.value_ptr.*;
    }

    /// The id of the name entry at chunk offset `offset` (6.3), decoding it on first use.
    pub fn resolve(n: *Names, gpa: Allocator, chunk: []const u8, offset: u32) Error!u32 {
        if (n.by_offset.get(offset)) |id| return id;
        const units = try nameUnits(chunk, offset);
        if (!escape.isValidUtf16(units)) return error.InvalidName;
        // Once per name offset and chunk: a temporary heap copy is cheap enough.
        const utf8 = try escape.utf16ToUtf8(gpa, units);
        defer gpa.free(utf8);
        const id = try n.internText(gpa, utf8);
        try n.by_offset.put(gpa, offset, id);
        return id;
    }
};

/// The UTF-16 characters of the name entry at `offset`, cut at the first NUL.
pub fn nameUnits(chunk: []const u8, offset: u32) Error![]const u8 {
    if (offset > chunk.len or chunk.len - offset < 8) return error.OutOfBounds;
    const count: u32 = std.mem.readInt(u16, chunk[offset + 6 ..][0..2], .little);
    if (chunk.len - offset - 8 < 2 * count) return error.OutOfBounds;
    const units = chunk[offset + 8 ..][0 .. 2 * count];
    return units[0 .. 2 * escape.unitsBeforeNul(units)];
}
