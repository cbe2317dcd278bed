//! BinXML tokens (contract section 6): the token parser that turns a record stream, a
//! template definition body or a nested BinXml value into an element tree.
//!
//! Trees (tree.zig) live in flat arrays: nodes, and "edges" (child index lists). Two exist:
//! `def` lives as long as the chunk (template definitions, cached by offset) and `rec`
//! is cleared for every record. A node index or edge span with bit 31 set refers to the
//! `def` store. Record trees may point into definition trees (static subtrees are shared,
//! never copied), never the other way round.
const std = @import("std");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const template = @import("template.zig");
const tree = @import("tree.zig");
const errors = @import("error.zig");
const Kind = tree.Kind;
const Node = tree.Node;
const Span = tree.Span;
const Names = tree.Names;
const def_bit = tree.def_bit;
const flag_self_closing = tree.flag_self_closing;
const flag_dynamic = tree.flag_dynamic;
const flag_lazy = tree.flag_lazy;
const flag_failed = tree.flag_failed;

pub const Error = values_decode.Error || error{
    InvalidToken,
    BadState,
    NestingTooDeep,
    ValueOutsideElement,
    TemplateRoot,
    TemplateInDefinition,
    TooManyNodes,
    InvalidName,
    ElementInAttribute,
    PiInAttribute,
    PiDataWithoutTarget,
    OutputTooLarge,
    EmptyBinXml,
};

pub const StreamKind = enum { record, definition };

const Frame = struct {
    node: u32,
    children_mark: u32,
};

const Pending = struct {
    node: u32,
    attrs_mark: u32,
    /// Name id of the attribute being filled, if any.
    attr_name: ?u32 = null,
    items_mark: u32 = 0,
};

/// The state of one stream being parsed: the pending start tag and where its open
/// elements begin on `Parser.frames`. One method per token kind.
const Stream = struct {
    kind: StreamKind,
    frames_base: usize,
    pos: u32,
    pending: ?Pending = null,

    fn openStart(st: *Stream, p: *Parser, has_attributes: bool) Error!void {
        if (st.pending != null) return error.BadState;
        const dep: u16 = if (st.kind == .definition) try p.readU16(&st.pos) else 0xFFFF;
        _ = try p.readU32(&st.pos); // Element data size: ignored.
        const name = try p.readName(&st.pos);
        if (has_attributes) _ = try p.readU32(&st.pos); // Attribute list size: ignored.
        const n = try p.newNode(.{ .kind = .element, .ref = .{ .name = name }, .dep = dep });
        st.pending = .{ .node = n, .attrs_mark = @intCast(p.stack.items.len) };
    }

    fn closeStart(st: *Stream, p: *Parser) Error!void {
        const pe = st.pending orelse return error.BadState;
        try p.finishStartTag(pe);
        st.pending = null;
        const open = p.frames.items.len - st.frames_base;
        if (open >= limits.element_depth_max) return error.NestingTooDeep;
        if (p.frames.items.len == p.frames.capacity) try p.frames.ensureUnusedCapacity(p.gpa, 1);
        p.frames.appendAssumeCapacity(
            .{ .node = pe.node, .children_mark = @intCast(p.stack.items.len) },
        );
    }

    fn closeEmpty(st: *Stream, p: *Parser) Error!void {
        const pe = st.pending orelse return error.BadState;
        try p.finishStartTag(pe);
        st.pending = null;
        p.nodeMut(pe.node).flags |= flag_self_closing;
        if (st.kind == .definition) p.markDynamic(pe.node);
        try p.push(pe.node);
    }

    fn endElement(st: *Stream, p: *Parser) Error!void {
        if (st.pending != null) return error.BadState;
        if (p.frames.items.len == st.frames_base) return error.BadState;
        const frame = p.frames.pop().?;
        const kids = try p.commit(frame.children_mark);
        p.nodeMut(frame.node).kids = kids;
        if (st.kind == .definition) p.markDynamic(frame.node) else p.markLazy(frame.node);
        try p.push(frame.node);
    }

    fn valueText(st: *Stream, p: *Parser) Error!void {
        const vtype = try p.readU8(&st.pos);
        if (vtype == values_decode.T.binxml) {
            const len = try p.readU16(&st.pos);
            if (p.chunk.len - st.pos < len) return error.OutOfBounds;
            if (st.pending != null) return error.BadState;
            const frag = try p.parseStream(st.pos, st.pos + len, .record);
            st.pos += len;
            return p.attachElements(frag);
        }
        const d = try values_decode.decodeUnsized(p.chunk, st.pos, vtype);
        st.pos = d.end;
        const n = try p.newNode(.{
            .kind = .value,
            .vtype = d.value.vtype,
            .ref = .{ .offset = d.value.start },
            .size = .{ .len = d.value.len },
        });
        try st.content(p, n);
    }

    fn attribute(st: *Stream, p: *Parser) Error!void {
        var pe = st.pending orelse return error.BadState;
        const name = try p.readName(&st.pos);
        try p.finishAttribute(&pe);
        pe.attr_name = name;
        pe.items_mark = @intCast(p.stack.items.len);
        st.pending = pe;
    }

    /// CDATA and PI data: u16 count, then UTF-16 units (cut at the first NUL).
    fn units(st: *Stream, p: *Parser, kind: Kind) Error!void {
        const count: u32 = try p.readU16(&st.pos);
        if (p.chunk.len - st.pos < 2 * count) return error.OutOfBounds;
        const n_units = escape.unitsBeforeNul(p.chunk[st.pos..][0 .. 2 * count]);
        const n = try p.newNode(.{
            .kind = kind,
            .ref = .{ .offset = st.pos },
            .size = .{ .len = @intCast(2 * n_units) },
        });
        st.pos += 2 * count;
        try st.content(p, n);
    }

    fn substitution(st: *Stream, p: *Parser, optional: bool) Error!void {
        if (st.kind != .definition) return error.InvalidToken;
        const index = try p.readU16(&st.pos);
        const vtype = try p.readU8(&st.pos);
        if (!values_decode.isKnownType(vtype)) return error.InvalidValueType;
        const n = try p.newNode(.{
            .kind = .placeholder,
            .ref = .{ .index = index },
            .size = .{ .declared_type = vtype },
            .vtype = @intFromBool(optional),
        });
        try st.content(p, n);
    }

    /// A content item (value, CDATA, reference, PI, placeholder): into the current
    /// attribute while a start tag is pending (dropped before any attribute), else into
    /// the innermost open element.
    fn content(st: *Stream, p: *Parser, n: u32) Error!void {
        if (st.pending) |pe| {
            if (pe.attr_name != null) try p.push(n);
            return;
        }
        if (p.frames.items.len == st.frames_base) return error.ValueOutsideElement;
        try p.push(n);
    }
};

/// Parses BinXML streams of one chunk. Owned by one thread; reused across chunks.
pub const Parser = struct {
    gpa: Allocator,
    chunk: []const u8 = &.{},
    rec: tree.Tree = .{},
    def: tree.Tree = .{},
    /// Which store new nodes go to.
    target_def: bool = false,
    /// The code page every ANSI value is checked against as it is read.
    ansi: values_format.Codec = values_format.default_codec,
    names: Names,
    templates: template.Templates = .empty,
    /// `template.fingerprintAt`'s answers in this chunk, by definition offset (PERF.md H147).
    fingerprint_memo: template.FingerprintMemo = .{},
    /// `--wevt-cache`: definition offset → offset of the cached template standing in for it
    /// when the definition fails (wevt_cache.zig sets it for a chunk; template.zig reads it).
    wevt_fallback: ?*const std.AutoHashMapUnmanaged(u32, u32) = null,
    /// Content hash of each parsed definition (indexed by the root element's `b`).
    fingerprints: std.ArrayList(u64) = .empty,
    /// Token fingerprints of every definition parsed successfully in the run (bounded
    /// by `limits.known_definitions_max`): those need no parse to be identified.
    known_definitions: std.AutoHashMapUnmanaged(u64, void) = .empty,
    /// Token fingerprints of bodies seen in earlier chunks, checked by compares (H124).
    bodies: template.Bodies = .{},
    /// Hashes of the chunk's names for `template.tokenFingerprint`, by offset: the chunk's
    /// definitions share their names, so each is hashed once a chunk (H68).
    name_hashes: template.NameHashes = template.no_name_hashes,
    /// Fingerprints handed out to definitions without a token fingerprint: never shared.
    unique_definitions: u64 = 0,
    /// Scratch stack of node indices (children / attributes being collected).
    stack: std.ArrayList(u32) = .empty,
    frames: std.ArrayList(Frame) = .empty,
    depth: u32 = 0,
    /// A failing BinXml value of an instance on the chain of used instances fails the
    /// record only if the template uses it (template.zig, `checkDeferred`). Set per record.
    defer_unused: bool = false,
    /// The first failure deferred in the record (the reference's first fault in read order).
    deferred: ?Error = null,
    /// How many failures were deferred so far in the record.
    defers: u32 = 0,
    /// Instances that deferred a failure below them and passed the preflight (template.zig).
    accepted: std.ArrayList(template.Accepted) = .empty,
    event_name: u32 = 0,
    /// The reference's cause of the record's failure, where the bytes tell it (set beside the
    /// error; the driver reads it when the record fails). Set per record.
    fault: ?errors.Cause = null,
    /// Nodes and edges created for the current record, in either store (work budget).
    record_nodes: u32 = 0,
    record_edges: u32 = 0,
    /// Chunks started so far (`resetChunk`): what keeps per-chunk caches outside the parser
    /// (program.zig's `FragmentNames`) from outliving their chunk.
    chunks: u64 = 0,

    pub fn init(gpa: Allocator) Parser {
        return .{ .gpa = gpa, .names = Names.init(gpa) };
    }

    pub fn deinit(p: *Parser) void {
        p.rec.deinit(p.gpa);
        p.def.deinit(p.gpa);
        p.names.deinit(p.gpa);
        p.templates.deinit(p.gpa);
        p.fingerprints.deinit(p.gpa);
        p.known_definitions.deinit(p.gpa);
        p.bodies.deinit(p.gpa);
        p.stack.deinit(p.gpa);
        p.frames.deinit(p.gpa);
        p.accepted.deinit(p.gpa);
    }

    /// Starts a new chunk: drops every cached template and name offset (texts stay, H123).
    /// `chunk` is shorter than 65536 bytes only for a partial slot (carved, dump.zig), longer
    /// only with translated templates after it (`--wevt-cache`, wevt_cache.zig).
    pub fn resetChunk(p: *Parser, chunk: []const u8) Allocator.Error!void {
        assert(chunk.len <= 65536 + limits.chunk_extension_bytes_max);
        p.chunk = chunk;
        p.chunks += 1;
        p.def.clear();
        p.rec.clear();
        p.names.clear();
        p.templates.clearRetainingCapacity();
        p.fingerprint_memo = .{};
        p.fingerprints.clearRetainingCapacity();
        p.name_hashes = template.no_name_hashes;
        const event = std.unicode.utf8ToUtf16LeStringLiteral("Event");
        p.event_name = try p.names.internUnits(p.gpa, std.mem.sliceAsBytes(event));
    }

    /// A fingerprint no other definition has (one that `template.tokenFingerprint` does
    /// not describe): its programs are never shared.
    pub fn uniqueFingerprint(p: *Parser) u64 {
        p.unique_definitions += 1;
        return std.hash.Wyhash.hash(0x756e69717565, std.mem.asBytes(&p.unique_definitions));
    }

    /// Starts a new record: drops the record store.
    pub fn resetRecord(p: *Parser) void {
        p.rec.clear();
        p.stack.clearRetainingCapacity();
        p.frames.clearRetainingCapacity();
        p.target_def = false;
        p.depth = 0;
        p.deferred = null;
        p.defers = 0;
        p.fault = null;
        p.accepted.clearRetainingCapacity();
        p.record_nodes = 0;
        p.record_edges = 0;
    }

    pub inline fn node(p: *const Parser, i: u32) *const Node {
        if (i & def_bit != 0) return &p.def.nodes.items[i & ~def_bit];
        return &p.rec.nodes.items[i];
    }

    pub inline fn nodeMut(p: *Parser, i: u32) *Node {
        if (i & def_bit != 0) return &p.def.nodes.items[i & ~def_bit];
        return &p.rec.nodes.items[i];
    }

    pub inline fn edges(p: *const Parser, s: Span) []const u32 {
        if (s.start & def_bit != 0) return p.def.edges.items[s.start & ~def_bit ..][0..s.len];
        return p.rec.edges.items[s.start..][0..s.len];
    }

    pub fn nameText(p: *const Parser, id: u32) []const u8 {
        return p.names.text(id);
    }

    pub inline fn newNode(p: *Parser, n: Node) Error!u32 {
        p.record_nodes += 1;
        if (p.record_nodes > limits.record_nodes_max) return error.TooManyNodes;
        const store = if (p.target_def) &p.def else &p.rec;
        const i: u32 = @intCast(store.nodes.items.len);
        if (i >= def_bit - 1) return error.TooManyNodes;
        if (i == store.nodes.capacity) try store.nodes.ensureUnusedCapacity(p.gpa, 1);
        store.nodes.appendAssumeCapacity(n);
        return if (p.target_def) i | def_bit else i;
    }

    /// Moves `stack[mark..]` into the edges of the target store and pops it.
    pub fn commit(p: *Parser, mark: usize) Error!Span {
        const items = p.stack.items[mark..];
        p.record_edges += @intCast(items.len);
        if (p.record_edges > limits.record_edges_max) return error.TooManyNodes;
        const store = if (p.target_def) &p.def else &p.rec;
        const start: u32 = @intCast(store.edges.items.len);
        if (start + items.len >= def_bit) return error.TooManyNodes;
        if (store.edges.capacity - start < items.len) try store.edges.ensureUnusedCapacity(
            p.gpa,
            items.len,
        );
        store.edges.appendSliceAssumeCapacity(items);
        p.stack.items.len = mark;
        return .{
            .start = if (p.target_def) start | def_bit else start,
            .len = @intCast(items.len),
        };
    }

    pub inline fn push(p: *Parser, i: u32) Error!void {
        if (p.stack.items.len == p.stack.capacity) {
            if (p.stack.items.len >= limits.record_edges_max) return error.TooManyNodes;
            try p.stack.ensureUnusedCapacity(p.gpa, 1);
        }
        p.stack.appendAssumeCapacity(i);
    }

    pub fn readU8(p: *const Parser, pos: *u32) Error!u8 {
        if (pos.* >= p.chunk.len) return error.OutOfBounds;
        defer pos.* += 1;
        return p.chunk[pos.*];
    }

    pub fn readU16(p: *const Parser, pos: *u32) Error!u16 {
        if (pos.* > p.chunk.len - 2) return error.OutOfBounds;
        defer pos.* += 2;
        return std.mem.readInt(u16, p.chunk[pos.*..][0..2], .little);
    }

    pub fn readU32(p: *const Parser, pos: *u32) Error!u32 {
        if (pos.* > p.chunk.len - 4) return error.OutOfBounds;
        defer pos.* += 4;
        return std.mem.readInt(u32, p.chunk[pos.*..][0..4], .little);
    }

    /// Reads a name reference (6.3), skipping an inline name entry.
    fn readName(p: *Parser, pos: *u32) Error!u32 {
        const offset = try p.readU32(pos);
        if (offset == pos.*) {
            var q = offset + 6;
            const count = try p.readU16(&q);
            pos.* += 10 + 2 * @as(u32, count);
        }
        return p.names.resolve(p.gpa, p.chunk, offset) catch |e| {
            // The reference seeks to the name's length field, past its link (6 bytes).
            const field = std.math.add(u32, offset, 6) catch return e;
            if (e == error.OutOfBounds and field > p.chunk.len) {
                return p.fail(e, .name_past_end, field);
            }
            return e;
        };
    }

    /// Fails with `e`, the reference's cause `kind` at `offset` noted for the record.
    pub fn fail(p: *Parser, e: Error, kind: errors.CauseKind, offset: u32) Error {
        @branchHint(.cold);
        p.fault = .{ .kind = kind, .offset = offset };
        return e;
    }

    /// Parses the stream in chunk bytes `start..end` and returns its top-level elements.
    pub fn parseStream(p: *Parser, start: u32, end: u32, kind: StreamKind) Error!Span {
        assert(end <= p.chunk.len);
        if (p.depth >= limits.stream_nesting_max) return error.NestingTooDeep;
        p.depth += 1;
        defer p.depth -= 1;
        const base: u32 = @intCast(p.stack.items.len);
        var st: Stream = .{ .kind = kind, .frames_base = p.frames.items.len, .pos = start };
        defer p.frames.shrinkRetainingCapacity(st.frames_base);
        while (st.pos < end) {
            const token = p.chunk[st.pos];
            st.pos += 1;
            switch (token) {
                0x00 => break,
                0x01, 0x41 => try st.openStart(p, token == 0x41),
                0x02 => try st.closeStart(p),
                0x03 => try st.closeEmpty(p),
                0x04 => try st.endElement(p),
                0x05, 0x45 => try st.valueText(p),
                0x06, 0x46 => try st.attribute(p),
                0x07, 0x47, 0x0B => try st.units(p, if (token == 0x0B) .pi_data else .cdata),
                0x08, 0x48 => {
                    const code = try p.readU16(&st.pos);
                    try st.content(
                        p,
                        try p.newNode(.{ .kind = .char_ref, .ref = .{ .code_unit = code } }),
                    );
                },
                0x09, 0x49, 0x0A => {
                    const name = try p.readName(&st.pos);
                    const n = try p.newNode(
                        .{
                            .kind = if (token == 0x0A) .pi_target else .entity_ref,
                            .ref = .{ .name = name },
                        },
                    );
                    try st.content(p, n);
                },
                0x0C => {
                    if (kind == .definition) return error.TemplateInDefinition;
                    if (st.pending != null) return error.BadState;
                    try p.push(try template.readInstance(p, &st.pos));
                },
                0x0D, 0x0E => try st.substitution(p, token == 0x0E),
                0x0F => st.pos += 3,
                // The reference's cursor is past the byte it read.
                else => return p.fail(error.InvalidToken, .invalid_token, st.pos),
            }
            // Skips (inline definitions and names, declared value sizes) may jump past
            // the chunk: the reference fails the record then, even at the window's end.
            if (st.pos > p.chunk.len) return error.OutOfBounds;
        }
        if (st.pending != null) return error.BadState;
        if (p.frames.items.len != st.frames_base) return error.BadState;
        return p.commit(base);
    }

    /// Attaches a nested stream's elements at the current position (open element or top
    /// level: both are the top of the scratch stack).
    fn attachElements(p: *Parser, frag: Span) Error!void {
        // Edges may move while pushing; copy indices one at a time through the span.
        var i: u32 = 0;
        while (i < frag.len) : (i += 1) try p.push(p.edges(frag)[i]);
    }

    fn finishAttribute(p: *Parser, pe: *Pending) Error!void {
        const name = pe.attr_name orelse return;
        pe.attr_name = null;
        if (p.stack.items.len == pe.items_mark) return; // No items: discarded.
        var dynamic = false;
        for (p.stack.items[pe.items_mark..]) |item| {
            if (p.node(item).kind == .placeholder) dynamic = true;
        }
        const items = try p.commit(pe.items_mark);
        const a = try p.newNode(
            .{
                .kind = .attribute,
                .ref = .{ .name = name },
                .kids = items,
                .flags = if (dynamic) flag_dynamic else 0,
            },
        );
        try p.push(a);
    }

    fn finishStartTag(p: *Parser, pe_in: Pending) Error!void {
        var pe = pe_in;
        try p.finishAttribute(&pe);
        const attrs = try p.commit(pe.attrs_mark);
        p.nodeMut(pe.node).attrs = attrs;
    }

    /// Record streams: flags an element whose children hold uninstantiated templates.
    fn markLazy(p: *Parser, n: u32) void {
        if (n & def_bit != 0) return;
        const el = p.node(n);
        for (p.edges(el.kids)) |k| {
            const kid = p.node(k);
            if (kid.kind == .instance or (kid.kind == .element and kid.flags & flag_lazy != 0)) {
                p.nodeMut(n).flags |= flag_lazy;
                return;
            }
        }
    }

    /// Replaces uninstantiated templates under `n` by their copies (template.zig).
    pub fn materialize(p: *Parser, n: u32) Error!u32 {
        const node_copy = p.node(n).*;
        switch (node_copy.kind) {
            .instance => return template.materializeInstance(p, n),
            .element => {
                if (n & def_bit != 0 or node_copy.flags & flag_lazy == 0) return n;
                const kids = try p.materializeList(node_copy.kids);
                var copy = node_copy;
                copy.kids = kids;
                copy.flags &= ~flag_lazy;
                return p.newNode(copy);
            },
            else => return n,
        }
    }

    pub fn materializeList(p: *Parser, list: Span) Error!Span {
        const mark = p.stack.items.len;
        var i: u32 = 0;
        while (i < list.len) : (i += 1) {
            const m = try p.materialize(p.edges(list)[i]);
            try p.push(m);
        }
        return p.commit(mark);
    }

    /// Definitions: flags an element whose subtree needs per-instance copying.
    fn markDynamic(p: *Parser, n: u32) void {
        const el = p.node(n);
        var dynamic = false;
        for (p.edges(el.attrs)) |a| {
            if (p.node(a).flags & flag_dynamic != 0) dynamic = true;
        }
        for (p.edges(el.kids)) |k| {
            const kid = p.node(k);
            switch (kid.kind) {
                .placeholder => dynamic = true,
                .element => if (kid.flags & flag_dynamic != 0 or kid.dep != 0xFFFF) {
                    dynamic = true;
                },
                else => {},
            }
        }
        if (dynamic) p.nodeMut(n).flags |= flag_dynamic;
    }
};

// ---------------------------------------------------------------------------------------
// Token tests: hand-built streams, expected text from the contract (9.3, 10.4, 6.6).
const testing = @import("testing.zig");

test "entity references (10.4): JSON resolves the five XML entities" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.fragment();
    b.open("Ent", null, false);
    b.closeStart();
    b.text("a");
    b.byte(0x09);
    b.name("amp");
    b.byte(0x49);
    b.name("lt");
    b.byte(0x09);
    b.name("foo");
    b.text("b");
    b.end();
    b.byte(0x00);
    try testing.expectRender(&b, .json, "{\"Ent\":\"a&<&foo;b\"}");
    try testing.expectRender(
        &b,
        .xml,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Ent>a&amp;&lt;&foo;b</Ent>\n",
    );
}

test "character references (9.3, 10.4)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("CharRef", null, false);
    b.closeStart();
    b.byte(0x08);
    b.u16le(65);
    b.byte(0x48);
    b.u16le(9786);
    b.end();
    try testing.expectRender(&b, .json, "{\"CharRef\":\"A\xE2\x98\xBA\"}");
    try testing.expectRender(
        &b,
        .xml_flat,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<CharRef>&#65;&#9786;</CharRef>",
    );
}

test "CDATA: raw in JSON, split `]]>` in XML" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("C", null, false);
    b.closeStart();
    b.byte(0x07);
    const s = "x < y ]]> & z";
    b.u16le(s.len);
    b.units(s);
    b.end();
    try testing.expectRender(&b, .json, "{\"C\":\"x < y ]]> & z\"}");
    try testing.expectRender(
        &b,
        .xml_flat,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<C><![CDATA[x < y ]]]]><![CDATA[> & z]]></C>",
    );
}

test "processing instructions render inline in XML, nothing in JSON" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("P", null, false);
    b.closeStart();
    b.byte(0x0A);
    b.name("target");
    b.byte(0x0B);
    b.u16le(4);
    b.units("data");
    b.end();
    try testing.expectRender(
        &b,
        .xml_flat,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<P><?target data?></P>",
    );
    try testing.expectRender(&b, .json, "{\"P\":null}");
}

test "mixed content (9.2, 10.3)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("Mixed", null, true);
    b.attribute("k");
    b.text("v");
    b.closeStart();
    b.text("hello ");
    b.open("Inner", null, false);
    b.closeStart();
    b.text("in");
    b.end();
    b.text(" world");
    b.end();
    try testing.expectRender(&b, .xml, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n" ++
        "<Mixed k=\"v\">\n  hello \n  <Inner>in</Inner>\n   world\n</Mixed>\n");
    try testing.expectRender(
        &b,
        .json,
        "{\"Mixed\":{\"#attributes\":{\"k\":\"v\"},\"#text\":\"hello  world\",\"Inner\":\"in\"}}",
    );
}

test "an empty stream yields an empty Event root (6.9)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.fragment();
    b.byte(0x00);
    try testing.expectRender(&b, .json, "{\"Event\":null}");
    try testing.expectRender(
        &b,
        .xml,
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Event></Event>\n",
    );
}

test "token errors: invalid token, value outside element, unbalanced end" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.byte(0x4A);
    try testing.expectError(&b, .json, error.InvalidToken);
    b.pos = 512;
    b.text("loose");
    try testing.expectError(&b, .json, error.ValueOutsideElement);
    b.pos = 512;
    b.end();
    try testing.expectError(&b, .json, error.BadState);
    b.pos = 512;
    b.open("A", null, false);
    b.closeStart();
    try testing.expectError(&b, .json, error.BadState);
}

test "nesting limit: 512 open elements render, 513 fail (6.6)" {
    const gpa = std.testing.allocator;
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    for ([_]u32{ limits.element_depth_max, limits.element_depth_max + 1 }) |depth| {
        b.pos = 512;
        b.open("A", null, false); // Defines the name inline once; later ones refer to it.
        b.closeStart();
        for (1..depth) |_| {
            b.byte(0x01);
            b.u32le(0);
            b.u32le(512 + 9); // The first element's inline name.
            b.closeStart();
        }
        for (0..depth) |_| b.end();
        if (depth == limits.element_depth_max) {
            const text = try testing.render(gpa, &b, .json);
            defer gpa.free(text);
            try std.testing.expect(std.mem.startsWith(u8, text, "{\"A\":{\"A\":{"));
        } else try testing.expectError(&b, .json, error.NestingTooDeep);
    }
}

test "a skip past the chunk end fails the record, even at the end of its window" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.start = 65535;
    b.pos = 65535;
    b.byte(0x0F); // Fragment header: skips 3 bytes, past the chunk's 65536.
    try testing.expectError(&b, .json, error.OutOfBounds);
}

test "a failing record notes the reference's cause and offset" {
    var p = Parser.init(std.testing.allocator);
    defer p.deinit();
    var bytes = [_]u8{0} ** 64;
    p.chunk = &bytes;
    // Not a token: the reference's cursor is past the byte.
    bytes[10] = 0x4A;
    p.resetRecord();
    try std.testing.expectError(error.InvalidToken, p.parseStream(10, 20, .record));
    try std.testing.expectEqual(errors.Cause{ .kind = .invalid_token, .offset = 11 }, p.fault.?);
    // An entity reference to a name past the chunk: the reference seeks to its length field.
    bytes[10] = 0x09;
    std.mem.writeInt(u32, bytes[11..15], 1000, .little);
    p.resetRecord();
    try std.testing.expectError(error.OutOfBounds, p.parseStream(10, 20, .record));
    try std.testing.expectEqual(errors.Cause{ .kind = .name_past_end, .offset = 1006 }, p.fault.?);
    // A name whose length field is inside the chunk but cut short: not told.
    std.mem.writeInt(u32, bytes[11..15], 57, .little);
    p.resetRecord();
    try std.testing.expectError(error.OutOfBounds, p.parseStream(10, 20, .record));
    try std.testing.expectEqual(null, p.fault);
}
