//! Compiled record programs: the rendered text of a record is a fixed sequence of literal
//! bytes and substitution values once the template (and nested templates) and the "shape"
//! of every value are fixed. The shape is the signature: definition, value count, and per
//! value its normalised type and emptiness (what every rendering decision depends on).
//!
//! The first record with a signature renders the slow way (tree copy + renderer) while a
//! `Capture` records where each substitution value was written; later records with the
//! same signature replay literals and format their values directly. Programs are per
//! run, shared across chunks: definitions are identified by a content fingerprint (names
//! by text), not by their chunk offset. Records the signature cannot describe
//! (arrays with several items, fragments that are not template instances, Data names built
//! from substitutions) always take the slow path.
const std = @import("std");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const values = @import("values.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const template = @import("template.zig");
const Parser = tokens.Parser;
const Out = escape.Out;
const T = values.T;

pub const Mode = enum(u8) { json, xml_text, xml_attr };

/// Substitution values one program may reference.
pub const slots_max = 4096;

/// Array items a signature describes one by one; longer arrays take the slow path.
pub const array_items_max = 64;
/// `Op.item` of a whole value (not an array item).
pub const whole_value: u16 = 0xFFFF;

const Op = struct {
    literal_start: u32,
    literal_len: u32,
    slot: u16,
    /// Array item index (array expansion), or `whole_value`.
    item: u16,
    mode: Mode,
};

const Program = struct {
    signature_start: u32,
    signature_len: u32,
    ops_start: u32,
    ops_len: u32,
    tail_start: u32,
    tail_len: u32,
};

/// Records substitution writes during a slow-path rendering.
pub const Capture = struct {
    start: usize,
    ops: std.ArrayList(Write) = .empty,
    /// A substitution influenced the output beyond its own text (e.g. a Data name).
    poisoned: bool = false,

    pub const Write = struct { begin: u32, end: u32, slot: u16, item: u16, mode: Mode };
};

/// Limits of one renderer's program cache; past them it starts over.
pub const programs_max = 16384;
pub const literal_bytes_max = 32 << 20;

/// Per-renderer cache of compiled programs, kept across chunks.
pub const Cache = struct {
    gpa: Allocator,
    programs: std.ArrayList(Program) = .empty,
    by_hash: std.AutoHashMapUnmanaged(u64, u32) = .empty,
    signatures: std.ArrayList(u32) = .empty,
    ops: std.ArrayList(Op) = .empty,
    literals: std.ArrayList(u8) = .empty,
    /// Scratch: the current record's signature and its slot -> value node table.
    signature: std.ArrayList(u32) = .empty,
    slots: std.ArrayList(u32) = .empty,
    capture: Capture = .{ .start = 0 },

    pub fn init(gpa: Allocator) Cache {
        return .{ .gpa = gpa };
    }

    pub fn deinit(c: *Cache) void {
        c.programs.deinit(c.gpa);
        c.by_hash.deinit(c.gpa);
        c.signatures.deinit(c.gpa);
        c.ops.deinit(c.gpa);
        c.literals.deinit(c.gpa);
        c.signature.deinit(c.gpa);
        c.slots.deinit(c.gpa);
        c.capture.ops.deinit(c.gpa);
    }

    /// Starts over when the cache has grown past its limits (called between chunks).
    pub fn trim(c: *Cache) void {
        if (c.programs.items.len > programs_max or c.literals.items.len > literal_bytes_max) c.clear();
    }

    pub fn clear(c: *Cache) void {
        c.programs.clearRetainingCapacity();
        c.by_hash.clearRetainingCapacity();
        c.signatures.clearRetainingCapacity();
        c.ops.clearRetainingCapacity();
        c.literals.clearRetainingCapacity();
    }

    /// Computes the signature of the record rooted at instance `root` and numbers its
    /// substitution values. False when the record needs the slow path.
    pub fn sign(c: *Cache, p: *Parser, root: u32) Allocator.Error!bool {
        c.signature.clearRetainingCapacity();
        c.slots.clearRetainingCapacity();
        return c.signInstance(p, root);
    }

    fn signInstance(c: *Cache, p: *Parser, inst_index: u32) Allocator.Error!bool {
        const inst = p.node(inst_index).*;
        assert(inst.kind == .instance);
        if (inst.kids.len > slots_max) return false;
        // Reserve once per instance so the per-value appends need no capacity checks.
        try c.signature.ensureUnusedCapacity(c.gpa, 3 + inst.kids.len);
        try c.slots.ensureUnusedCapacity(c.gpa, inst.kids.len);
        const fp = template.fingerprint(p, inst.a);
        c.signature.appendAssumeCapacity(@truncate(fp));
        c.signature.appendAssumeCapacity(@truncate(fp >> 32));
        c.signature.appendAssumeCapacity(inst.kids.len);
        const vals = p.edges(inst.kids);
        for (vals) |vi| {
            const v = p.node(vi);
            if (v.vtype == T.binxml) {
                c.signature.appendAssumeCapacity(T.binxml | (v.kids.len << 8));
                const kids = v.kids;
                var k: u32 = 0;
                while (k < kids.len) : (k += 1) {
                    const kid = p.edges(kids)[k];
                    if (p.node(kid).kind != .instance) return false;
                    if (!try c.signInstance(p, kid)) return false;
                }
                // Nested signing may have grown the scratch lists; reserve again.
                try c.signature.ensureUnusedCapacity(c.gpa, inst.kids.len);
                try c.slots.ensureUnusedCapacity(c.gpa, inst.kids.len);
                continue;
            }
            var empty: u32 = undefined;
            var count: usize = 0;
            if (v.vtype > T.array) {
                count = values.itemCount(p.chunk, v.value());
                if (count > array_items_max) return false;
                empty = @intFromBool(count == 0);
            } else empty = @intFromBool(values.isEmpty(p.chunk, v.value()));
            c.signature.appendAssumeCapacity(v.vtype | (empty << 8));
            if (count > 1) {
                // Expanded arrays: the item count and which string items are empty (an
                // empty item produces no node) decide the structure.
                try c.signature.ensureUnusedCapacity(c.gpa, 2 + inst.kids.len);
                var mask: u64 = 0;
                var it = values.Items.init(p.chunk, v.value());
                var k: u6 = 0;
                while (it.next()) |item| : (k +%= 1) {
                    if (values.isEmpty(p.chunk, item)) mask |= @as(u64, 1) << k;
                }
                c.signature.appendAssumeCapacity(@intCast(count));
                c.signature.appendAssumeCapacity(@truncate(mask));
                try c.signature.append(c.gpa, @truncate(mask >> 32));
                try c.signature.ensureUnusedCapacity(c.gpa, inst.kids.len);
            }
            if (c.slots.items.len >= slots_max) return false;
            const vm = p.nodeMut(vi);
            vm.dep = @intCast(c.slots.items.len);
            vm.flags |= tokens.flag_slot;
            c.slots.appendAssumeCapacity(vi);
        }
        return true;
    }

    fn hash(c: *const Cache) u64 {
        return std.hash.Wyhash.hash(0, std.mem.sliceAsBytes(c.signature.items));
    }

    /// The program for the current signature, if compiled.
    pub fn find(c: *const Cache) ?*const Program {
        const index = c.by_hash.get(c.hash()) orelse return null;
        const prog = &c.programs.items[index];
        const stored = c.signatures.items[prog.signature_start..][0..prog.signature_len];
        if (!std.mem.eql(u32, stored, c.signature.items)) return null;
        return prog;
    }

    /// Writes a record with program `prog`.
    pub fn replay(c: *const Cache, prog: *const Program, p: *const Parser, out: *Out, f: values.Format) values.Error!void {
        for (c.ops.items[prog.ops_start..][0..prog.ops_len]) |op| {
            try out.write(c.literals.items[op.literal_start..][0..op.literal_len]);
            var v = p.node(c.slots.items[op.slot]).value();
            if (op.item != whole_value) v = arrayItem(p.chunk, v, op.item);
            switch (op.mode) {
                .json => try values.writeText(out, f, v, .json),
                .xml_text => try values.writeText(out, f, v, .xml_text),
                .xml_attr => try values.writeText(out, f, v, .xml_attr),
            }
        }
        try out.write(c.literals.items[prog.tail_start..][0..prog.tail_len]);
    }

    fn arrayItem(chunk: []const u8, v: values.Value, index: u16) values.Value {
        var it = values.Items.init(chunk, v);
        var k: u16 = 0;
        while (it.next()) |item| : (k += 1) {
            if (k == index) return item;
        }
        // The signature fixed the item count, so the item exists.
        return .{ .vtype = T.null_type, .start = v.start, .len = 0 };
    }

    /// Starts capturing a slow-path rendering that begins at output offset `start`.
    pub fn beginCapture(c: *Cache, start: usize) *Capture {
        c.capture.start = start;
        c.capture.ops.clearRetainingCapacity();
        c.capture.poisoned = false;
        return &c.capture;
    }

    /// Stores the captured rendering `out[capture.start..]` as the current signature's
    /// program.
    pub fn endCapture(c: *Cache, out: *const Out) Allocator.Error!void {
        const cap = &c.capture;
        if (cap.poisoned) return;
        const text = out.list.items[cap.start..];
        const prog: Program = .{
            .signature_start = @intCast(c.signatures.items.len),
            .signature_len = @intCast(c.signature.items.len),
            .ops_start = @intCast(c.ops.items.len),
            .ops_len = @intCast(cap.ops.items.len),
            .tail_start = 0,
            .tail_len = 0,
        };
        try c.signatures.appendSlice(c.gpa, c.signature.items);
        var at: u32 = 0;
        for (cap.ops.items) |w| {
            assert(w.begin >= at);
            const lit_start: u32 = @intCast(c.literals.items.len);
            try c.literals.appendSlice(c.gpa, text[at..w.begin]);
            try c.ops.append(c.gpa, .{ .literal_start = lit_start, .literal_len = w.begin - at, .slot = w.slot, .item = w.item, .mode = w.mode });
            at = w.end;
        }
        var p2 = prog;
        p2.tail_start = @intCast(c.literals.items.len);
        p2.tail_len = @intCast(text.len - at);
        try c.literals.appendSlice(c.gpa, text[at..]);
        try c.by_hash.put(c.gpa, c.hash(), @intCast(c.programs.items.len));
        try c.programs.append(c.gpa, p2);
    }
};

/// Writes value node `n` for a renderer, recording it when it is a numbered substitution.
pub fn emit(out: *Out, f: values.Format, n: *const tokens.Node, comptime mode: escape.Mode, capture: ?*Capture) values.Error!void {
    if (capture) |cap| {
        if (n.flags & tokens.flag_slot != 0) {
            const begin = out.len() - cap.start;
            try values.writeText(out, f, n.value(), mode);
            const m: Mode = switch (mode) {
                .json => .json,
                .xml_text => .xml_text,
                .xml_attr => .xml_attr,
                .raw => @compileError("raw text is never a substitution value"),
            };
            const item: u16 = if (n.kids.len > 0) @intCast(n.kids.len - 1) else whole_value;
            try cap.ops.append(out.gpa, .{ .begin = @intCast(begin), .end = @intCast(out.len() - cap.start), .slot = n.dep, .item = item, .mode = m });
            return;
        }
    }
    try values.writeText(out, f, n.value(), mode);
}
