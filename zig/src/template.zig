//! Template instances and definitions (contract 6.4, 6.5, 6.7, 6.8): reading an
//! instance's value table, the per-chunk definition cache, and instantiation (copying the
//! definition tree with substitutions resolved, dependency omission and array expansion).
//!
//! Static definition subtrees (no placeholders, no dependency ids below them) are shared
//! by reference instead of copied.
const std = @import("std");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const tokens = @import("tokens.zig");
const tree = @import("tree.zig");
const Parser = tokens.Parser;
const Error = tokens.Error;
const T = values_decode.T;

/// What is known of the definition at a chunk offset, cached per chunk in `Templates`
/// (Rust: `template::Templates` holding a `Result<Definition, BinXmlError>` per offset;
/// Zig adds `known`, a definition recognised by its tokens and parsed only when needed).
pub const Definition = union(enum) {
    /// Parsed: the root element (a `def` store index).
    root: u32,
    failed: Error,
    /// Not parsed yet, but its token fingerprint (held here) is one a successful parse
    /// produced before: it parses, and is parsed when a tree is first needed.
    known: u64,
};

/// The parsed template definitions of one chunk, by definition offset (`Parser.templates`,
/// cleared per chunk; the Rust engine's `template::Templates`).
pub const Templates = std.AutoHashMapUnmanaged(u32, Definition);

/// `fingerprintAt`'s answers in the current chunk, direct-mapped by definition offset
/// (`Parser.fingerprint_memo`, emptied by `Parser.resetChunk`): a chunk's records use a few
/// definitions over and over, and each instance scanned asked `Templates` (a Wyhash of the
/// offset and a probe). The Rust engine's `Identities::memo` (PERF.md H49, H74; here H147).
/// It cannot go stale within a chunk: an offset's fingerprint, once answered, is the one its
/// parse gives too (`definition` asserts it).
pub const FingerprintMemo = struct {
    entries: [slots]Entry = @splat(.{}),

    /// More than a chunk's usual count of definitions in use (Rust's `MEMO_SLOTS`).
    pub const slots = 1 << slot_bits;
    const slot_bits = 5;
    /// No definition starts there: a chunk is at most 64 KiB plus `--wevt-cache`'s extension.
    const empty = std.math.maxInt(u32);
    const Entry = struct { offset: u32 = empty, fingerprint: u64 = 0 };

    /// The top bits of a multiplicative hash, so that offsets differing in any bits spread.
    fn slot(offset: u32) usize {
        return (offset *% 0x9e37_79b9) >> (32 - slot_bits);
    }

    pub inline fn get(m: *const FingerprintMemo, offset: u32) ?u64 {
        const e = &m.entries[slot(offset)];
        return if (e.offset == offset) e.fingerprint else null;
    }

    fn put(m: *FingerprintMemo, offset: u32, fp: u64) void {
        assert(offset != empty);
        m.entries[slot(offset)] = .{ .offset = offset, .fingerprint = fp };
    }
};

/// An instance read up to its values: the definition and the value descriptor table.
pub const InstanceHead = struct {
    /// Chunk offset of the definition.
    definition: u32,
    /// Root element of the definition (a `def` store index), once loaded.
    root: ?u32,
    /// The definition's fingerprint, once loaded.
    fingerprint: u64,
    /// Number of values.
    count: u32,
    /// Chunk offset of the descriptor table (`count` entries of size u16, type u8, pad).
    descriptors: u32,

    pub fn size(h: InstanceHead, chunk: []const u8, i: u32) u16 {
        assert(i < h.count);
        return std.mem.readInt(u16, chunk[h.descriptors + 4 * i ..][0..2], .little);
    }

    pub fn vtype(h: InstanceHead, chunk: []const u8, i: u32) u8 {
        assert(i < h.count);
        return chunk[h.descriptors + 4 * i + 2];
    }

    /// The parser's check on the value types of descriptors `from..count`.
    pub fn checkTypes(h: InstanceHead, chunk: []const u8, from: u32) Error!void {
        assert(from <= h.count);
        var i = from;
        while (i < h.count) : (i += 1) {
            if (!values_decode.isKnownType(h.vtype(chunk, i))) return error.InvalidValueType;
        }
    }
};

/// Reads a template instance (after its 0x0C byte) up to its first value: skips an inline
/// definition; for `.tree` checks every descriptor's type. Shared by the token parser
/// (`.tree`, which loads the definition after the values, see `readInstance`) and the
/// compiled-program scan (`.fingerprint`, program.zig, which loads it first, checks the types
/// in its own pass (PERF.md H64) and never reports: a scan that fails hands the record to
/// the parser).
pub fn readInstanceHead(
    p: *Parser,
    pos: *u32,
    comptime need: enum { tree, fingerprint },
) Error!InstanceHead {
    const def_offset = try readDefinitionOffset(p.chunk, pos);
    const fp: u64 = switch (need) {
        .tree => 0,
        .fingerprint => try fingerprintAt(p, def_offset),
    };
    const head = try readDescriptors(p.chunk, pos, def_offset, fp);
    // The scan checks the types in its own pass over the values (PERF.md H64).
    if (need == .tree) try head.checkTypes(p.chunk, 0);
    return head;
}

/// `readInstanceHead` in bare chunk bytes, for readers without a parser
/// (`template_instances`): the definition neither loaded nor fingerprinted, the descriptors'
/// types the caller's to check. The Rust engine's `tokens::read_instance_head`.
pub fn instanceHead(chunk: []const u8, pos: *u32) Error!InstanceHead {
    const def_offset = try readDefinitionOffset(chunk, pos);
    return readDescriptors(chunk, pos, def_offset, 0);
}

/// The definition offset of the instance at `pos.*` (after its 0x0C byte); `pos.*` moves
/// past the instance's header and its inline definition, if any, to the value count.
inline fn readDefinitionOffset(chunk: []const u8, pos: *u32) Error!u32 {
    assert(chunk.len >= 4);
    pos.* += 5; // Unknown byte and template id: ignored.
    const def_offset = try readU32(chunk, pos);
    if (def_offset == pos.*) {
        var q = pos.* + 20;
        const data_size = try readU32(chunk, &q);
        if (data_size > chunk.len) return error.OutOfBounds;
        pos.* += 24 + data_size;
    }
    return def_offset;
}

/// The value count at `pos.*` and the descriptor table after it, which must lie in the
/// chunk; `pos.*` moves to the first value.
inline fn readDescriptors(
    chunk: []const u8,
    pos: *u32,
    def_offset: u32,
    fp: u64,
) Error!InstanceHead {
    const count = try readU32(chunk, pos);
    if (count > (chunk.len - @min(pos.*, chunk.len)) / 4) return error.OutOfBounds;
    const head: InstanceHead = .{
        .definition = def_offset,
        .root = null,
        .fingerprint = fp,
        .count = count,
        .descriptors = pos.*,
    };
    pos.* += 4 * count;
    return head;
}

/// `Parser.readU32` in bare chunk bytes (of at least 4).
inline fn readU32(chunk: []const u8, pos: *u32) Error!u32 {
    if (pos.* > chunk.len - 4) return error.OutOfBounds;
    defer pos.* += 4;
    return std.mem.readInt(u32, chunk[pos.*..][0..4], .little);
}

// Unused BinXml values (shared-fixtures/README.md, "Unused BinXML values"; Rust's
// `template::check_deferred` is the same). The reference renders a record that is one
// template instance through compiled programs when the instance passes their preflight;
// they read only the values the template uses, and follow a used BinXml value that is one
// whole instance the same way, up to 8 instances deep. A BinXml value that would not parse
// is then never read unless used. Otherwise it builds the whole tree and fails the record
// with its first fault. Carved records whose template was overwritten often hold such a
// value (5.4).
//
// So an instance at most `limits.defer_depth_max` deep (the record's own is 0) defers a
// BinXml value that fails (`Parser.deferred`); a value that deferred one inside stands only
// as one whole instance (`isWholeInstance`); an instance that deferred one stands only if
// `checkDeferred` accepts it.

/// An instance that deferred a failure below it and passed `checkDeferred`: chunk offsets
/// just after its 0x0C byte and just after its last value.
pub const Accepted = struct { start: u32, end: u32 };

/// An instance (definition root `root`, descriptors `head`, values from `values_start`,
/// value nodes `vals`) that deferred a failure below it: the record's first deferred fault
/// unless every value descriptor passes the preflight and the template uses no failed value.
fn checkDeferred(
    p: *const Parser,
    head: *const InstanceHead,
    values_start: u32,
    root: u32,
    vals: tree.Span,
) Error!void {
    const chunk = p.chunk;
    const first = p.deferred.?;
    if (head.count > limits.instance_values_max) return first;
    var off: u64 = values_start;
    var i: u32 = 0;
    while (i < head.count) : (i += 1) {
        const size = head.size(chunk, i);
        if (off + size > chunk.len) return first;
        if (!preflightAccepts(chunk, @intCast(off), size, head.vtype(chunk, i))) return first;
        off += size;
    }
    for (p.edges(vals), 0..) |vi, index| {
        if (p.node(vi).flags & tree.flag_failed == 0) continue;
        if (usesValue(p, root, @intCast(index))) return first;
    }
}

/// Whether the stream `start..end` is one instance that `checkDeferred` accepted (after an
/// optional fragment header; followed by nothing or an end-of-stream token), as the
/// reference's `single_instance_offset` and `ends_stream` see a stream.
pub fn isWholeInstance(p: *const Parser, start: u32, end: u32) bool {
    const chunk = p.chunk;
    assert(start <= end and end <= chunk.len);
    const single: u32 = if (end - start >= 6 and chunk[start] == 0x0F and chunk[start + 4] == 0x0C)
        start + 5
    else if (end > start and chunk[start] == 0x0C) start + 1 else return false;
    var i = p.accepted.items.len;
    while (i > 0) {
        i -= 1;
        const a = p.accepted.items[i];
        if (a.start == single and a.end <= end and (a.end == end or chunk[a.end] == 0x00))
            return true;
    }
    return false;
}

/// The reference preflight's check of one value descriptor (its declared size by type).
fn preflightAccepts(chunk: []const u8, off: u32, size: u16, vtype: u8) bool {
    return switch (vtype) {
        T.null_type, T.ansi, T.binary, T.binxml => true,
        T.string => size % 2 == 0,
        T.int8, T.uint8 => size == 1,
        T.int16, T.uint16 => size == 2,
        T.int32, T.uint32, T.real32, T.boolean, T.hex32 => size == 4,
        T.int64, T.uint64, T.real64, T.filetime, T.hex64 => size == 8,
        T.guid, T.systime => size == 16,
        T.size_t => size == 4 or size == 8,
        T.sid => size >= 2 and size == 8 + 4 * @as(u32, chunk[off + 1]),
        // String arrays only where the program expands them; not followed here.
        else => false,
    };
}

/// Whether definition subtree `n` substitutes value `index` anywhere.
fn usesValue(p: *const Parser, n: u32, index: u32) bool {
    const node = p.node(n);
    switch (node.kind) {
        .placeholder => return node.ref.index == index,
        .element, .attribute => {
            for (p.edges(node.attrs)) |k| if (usesValue(p, k, index)) return true;
            for (p.edges(node.kids)) |k| if (usesValue(p, k, index)) return true;
            return false;
        },
        else => return false,
    }
}

/// Reads a template instance (after its 0x0C byte) and returns the instantiated root.
///
/// Read order (one rule in both engines, shared-fixtures/README.md, the reference's): the
/// header and the descriptors, every value, the definition, then the BinXml values' streams.
pub fn readInstance(p: *Parser, pos: *u32) Error!u32 {
    const inst_start = pos.*;
    var head = try readInstanceHead(p, pos, .tree);
    const values_start = pos.*;
    var k: u32 = 0;
    while (k < head.count) : (k += 1) {
        const size = head.size(p.chunk, k);
        const start = pos.*;
        if (start > p.chunk.len) return error.OutOfBounds;
        const d = try values_decode.decodeSized(p.chunk, start, size, head.vtype(p.chunk, k), .cut);
        if (isAnsi(d.value.vtype)) try values_format.checkAnsi(p.ansi, p.chunk, d.value);
        pos.* = @max(d.end, start + size);
    }
    const root = try definition(p, head.definition);
    head.root = root;
    head.fingerprint = fingerprint(p, root);
    pos.* = values_start;
    // The record's own instance is at stream depth 1 (`Parser.depth`).
    const defers_start = p.defers;
    // Values go to the scratch stack; their indices form the instance's value list.
    const mark = p.stack.items.len;
    var i: u32 = 0;
    while (i < head.count) : (i += 1) {
        const size = head.size(p.chunk, i);
        const start = pos.*;
        if (start > p.chunk.len) return error.OutOfBounds;
        const d = try values_decode.decodeSized(p.chunk, start, size, head.vtype(p.chunk, i), .cut);
        if (isAnsi(d.value.vtype)) try values_format.checkAnsi(p.ansi, p.chunk, d.value);
        var n: tree.Node = .{
            .kind = .value,
            .vtype = d.value.vtype,
            .ref = .{ .offset = d.value.start },
            .size = .{ .len = d.value.len },
        };
        if (n.vtype == T.binxml) {
            const stack_mark = p.stack.items.len;
            const defers_before = p.defers;
            const parsed: Error!tree.Span = if (p.parseStream(start, start + size, .record)) |kids|
                // A value that deferred a failure inside stands only as one whole instance.
                (if (p.defers == defers_before or isWholeInstance(
                    p,
                    start,
                    start + size,
                )) kids else p.deferred.?)
            else |e|
                e;
            n.kids = parsed catch |e| kids: {
                // On the chain of used instances, a value that fails may not be needed.
                if (e == error.OutOfMemory or p.depth > limits.defer_depth_max + 1 or
                    !p.defer_unused) return e;
                p.stack.shrinkRetainingCapacity(stack_mark);
                if (p.deferred == null) p.deferred = e;
                p.defers += 1;
                n.flags |= tree.flag_failed;
                break :kids .{};
            };
        }
        try p.push(try p.newNode(n));
        pos.* = @max(d.end, start + size);
    }
    const vals = try p.commit(mark);
    if (p.defers != defers_start) {
        try checkDeferred(p, &head, values_start, head.root.?, vals);
        try p.accepted.append(p.gpa, .{ .start = inst_start, .end = pos.* });
    }
    // Record streams defer the copy: a compiled program may make it unnecessary.
    if (!p.target_def) return p.newNode(.{
        .kind = .instance,
        .ref = .{ .definition = head.root.? },
        .kids = vals,
    });
    return instantiate(p, head.root.?, vals);
}

/// AnsiString or an AnsiString array.
pub inline fn isAnsi(vtype: u8) bool {
    return vtype & 0x7F == T.ansi;
}

/// Instantiates a deferred template instance (its BinXml values first).
pub fn materializeInstance(p: *Parser, inst_index: u32) Error!u32 {
    const inst = p.node(inst_index).*;
    assert(inst.kind == .instance);
    const mark = p.stack.items.len;
    var i: u32 = 0;
    while (i < inst.kids.len) : (i += 1) {
        const vi = p.edges(inst.kids)[i];
        const v = p.node(vi).*;
        if (v.vtype == T.binxml and v.kids.len > 0) {
            var copy = v;
            copy.kids = try p.materializeList(v.kids);
            try p.push(try p.newNode(copy));
        } else try p.push(vi);
    }
    const vals = try p.commit(mark);
    return instantiate(p, inst.ref.definition, vals);
}

/// The root element of the definition at `offset`, parsing it on first use in the chunk.
fn definition(p: *Parser, offset: u32) Error!u32 {
    const saved_depth = p.depth;
    defer p.depth = saved_depth;
    if (p.templates.get(offset)) |c| switch (c) {
        .root => |r| return r,
        .failed => |e| return e,
        // A known body has no nested streams: it needs one level, which it had at its
        // first use (`fingerprintAt`), whatever the depth of this one.
        .known => p.depth = 0,
    };
    const mark = p.stack.items.len;
    const result = parseDefinition(p, offset);
    // A fingerprint answered before the parse (a `known` body) is the parse's (H147).
    if (result) |r| {
        if (p.fingerprint_memo.get(offset)) |fp| assert(fp == fingerprint(p, r));
    } else |_| {}
    try p.templates.put(p.gpa, offset, if (result) |r| .{ .root = r } else |e| .{ .failed = e });
    if (p.wevt_fallback != null) {
        const e = if (result) |_| return result else |err| err;
        return @call(.never_inline, definitionFallback, .{ p, offset, e, mark });
    }
    return result;
}

/// `--wevt-cache` (wevt_cache.zig): the definition at `offset` failed with `e`; the cached
/// template standing in for it is its definition, if it parses (cached at its own offset
/// too); else `e` stands. Off the path of every log without a cache.
fn definitionFallback(p: *Parser, offset: u32, e: Error, mark: usize) Error!u32 {
    @branchHint(.cold);
    if (e == error.OutOfMemory) return e;
    const alt = p.wevt_fallback.?.get(offset) orelse return e;
    assert(alt != offset);
    // A failed stream leaves its items on the scratch stack.
    p.stack.shrinkRetainingCapacity(mark);
    const root = definition(p, alt) catch |e2| return if (e2 == error.OutOfMemory) e2 else e;
    try p.templates.put(p.gpa, offset, .{ .root = root });
    return root;
}

/// The token window of the definition at `offset`: after its 24-byte header (next
/// offset, GUID, data size), `data size` bytes, all inside the chunk. Shared by the parser
/// and the token walk, so both refuse the same definitions.
fn definitionBody(
    chunk: []const u8,
    offset: u32,
) error{OutOfBounds}!struct { start: u32, end: u32 } {
    if (offset > chunk.len or chunk.len - offset < 24) return error.OutOfBounds;
    const data_size = std.mem.readInt(u32, chunk[offset + 20 ..][0..4], .little);
    const start = offset + 24;
    if (data_size > chunk.len - start) return error.OutOfBounds;
    return .{ .start = start, .end = start + data_size };
}

fn parseDefinition(p: *Parser, offset: u32) Error!u32 {
    const body = definitionBody(p.chunk, offset) catch |e| {
        // A whole header whose data runs past the chunk: the reference's `template data out
        // of bounds` (a header cut by the chunk end is its reader's error).
        const whole_header = offset <= p.chunk.len and p.chunk.len - offset >= 24;
        return if (whole_header) p.fail(e, .definition_past_end, offset) else e;
    };
    const saved = p.target_def;
    p.target_def = true;
    defer p.target_def = saved;
    const top = try p.parseStream(body.start, body.end, .definition);
    if (top.len != 1) {
        // An empty one the reference refuses before it parses (`empty BinXML slice`).
        if (body.start == body.end) return p.fail(error.TemplateRoot, .empty_definition, offset);
        return error.TemplateRoot;
    }
    const root = p.edges(top)[0];
    const fp = if (p.bodies.fingerprint(p.gpa, p.chunk, &p.name_hashes, offset)) |fp| fp: {
        if (p.known_definitions.count() >= limits.known_definitions_max)
            p.known_definitions.clearRetainingCapacity();
        try p.known_definitions.put(p.gpa, fp, {});
        break :fp fp;
    } else p.uniqueFingerprint();
    p.nodeMut(root).size = .{ .fingerprint = @intCast(p.fingerprints.items.len) };
    try p.fingerprints.append(p.gpa, fp);
    return root;
}

/// The fingerprint of definition `root` (computed when it was parsed).
pub fn fingerprint(p: *const Parser, root: u32) u64 {
    return p.fingerprints.items[p.node(root).size.fingerprint];
}

/// The fingerprint of the definition at `offset`, for the compiled-program scan. A body
/// whose token fingerprint a successful parse has produced before (in any chunk) is not
/// parsed: equal tokens parse the same way. Any other body is parsed and cached as
/// `definition` does, errors included, so the scan fails where the parser would.
pub inline fn fingerprintAt(p: *Parser, offset: u32) Error!u64 {
    if (p.fingerprint_memo.get(offset)) |fp| return fp;
    const fp = try fingerprintAtUnmemoized(p, offset);
    p.fingerprint_memo.put(offset, fp);
    return fp;
}

/// `fingerprintAt` past its memo (out of line: the memo answers most instances).
noinline fn fingerprintAtUnmemoized(p: *Parser, offset: u32) Error!u64 {
    if (p.templates.get(offset)) |c| switch (c) {
        .root => |r| return fingerprint(p, r),
        .failed => |e| return e,
        .known => |fp| return fp,
    };
    if (p.depth < limits.stream_nesting_max) {
        if (p.bodies.fingerprint(p.gpa, p.chunk, &p.name_hashes, offset)) |fp| {
            if (p.known_definitions.contains(fp)) {
                try p.templates.put(p.gpa, offset, .{ .known = fp });
                return fp;
            }
        }
    }
    return fingerprint(p, try definition(p, offset));
}

/// The content fingerprint of the definition at `offset`, hashed from its tokens: every
/// byte the parser turns into the tree (structure, literal values, dependency ids,
/// substitutions), names by their characters instead of their offsets, and none of the
/// bytes it ignores (element and attribute-list sizes, fragment headers). Equal
/// fingerprints in different chunks mean the same tree, so compiled programs are shared
/// across chunks. Null when the walk cannot go on (bounds, a token the parser rejects)
/// and for bodies with a nested BinXml value, which it does not follow.
/// `names` caches name hashes for `chunk` (emptied when the chunk changes).
pub fn tokenFingerprint(chunk: []const u8, names: *NameHashes, offset: u32) ?u64 {
    return walkFingerprint(chunk, names, offset, null);
}

/// `tokenFingerprint`, noting the body's name references and its walked length in `refs`.
fn walkFingerprint(chunk: []const u8, names: *NameHashes, offset: u32, refs: ?*BodyRefs) ?u64 {
    const body = definitionBody(chunk, offset) catch return null;
    const end = body.end;
    var w: TokenWalk = .init(chunk, names, body.start);
    w.refs = refs;
    w.base = body.start;
    while (w.pos < end) {
        const token = chunk[w.pos];
        w.pos += 1;
        switch (token) {
            0x00 => break,
            0x01, 0x41 => {
                w.pos += 2; // Dependency id: hashed.
                w.skip(4) orelse return null; // Element data size: ignored.
                w.name() orelse return null;
                if (token == 0x41) w.skip(4) orelse return null; // Attribute list size.
            },
            0x02, 0x03, 0x04 => {},
            0x05, 0x45 => {
                const vtype = w.byte() orelse return null;
                if (vtype == T.binxml) return null;
                const d = values_decode.decodeUnsized(chunk, w.pos, vtype) catch return null;
                w.pos = d.end;
            },
            0x06, 0x46, 0x09, 0x49, 0x0A => w.name() orelse return null,
            0x07, 0x47, 0x0B => {
                const count = w.u16le() orelse return null;
                w.pos += 2 * @as(u32, count);
            },
            0x08, 0x48 => w.pos += 2,
            0x0D, 0x0E => {
                w.pos += 2; // Value index.
                const vtype = w.byte() orelse return null;
                if (!values_decode.isKnownType(vtype)) return null;
            },
            0x0F => w.skip(3) orelse return null,
            else => return null, // Includes 0x0C: no template inside a definition.
        }
        if (w.pos > chunk.len) return null;
    }
    if (w.pos > chunk.len) return null;
    if (refs) |r| r.walked = w.pos - body.start;
    return w.final();
}

/// Name hashes direct-mapped by offset: a chunk's definitions refer to a few names,
/// "Data" and "Name" again and again.
pub const NameHashes = [names_cached]NameHash;
pub const NameHash = struct { offset: u32, hash: u64 };
const names_cached = 256;
const no_offset = std.math.maxInt(u32);
pub const no_name_hashes: NameHashes = @splat(.{ .offset = no_offset, .hash = 0 });

/// The name references of one definition body as `walkFingerprint` met them (at most
/// `refs_max`; past that, or past a name it could not read, the body is not cached).
pub const BodyRefs = struct {
    items: [refs_max]BodyRef = undefined,
    /// The entry offset of each of `items` (for their `twin`).
    offsets: [refs_max]u32 = undefined,
    len: u32 = 0,
    overflow: bool = false,
    /// Bytes from the body's start to where the walk stopped.
    walked: u32 = 0,

    pub const refs_max = 64;

    fn add(r: *BodyRefs, chunk: []const u8, at: u32, offset: u32, is_inline: bool) void {
        if (r.len == refs_max) {
            r.overflow = true;
            return;
        }
        const text = if (is_inline) &.{} else entryText(chunk, offset) orelse {
            r.overflow = true;
            return;
        };
        var twin: u32 = r.len;
        if (!is_inline) {
            for (r.items[0..r.len], r.offsets[0..r.len], 0..) |earlier, o, k| {
                if (!earlier.is_inline and o == offset) {
                    twin = @intCast(k);
                    break;
                }
            }
        }
        r.items[r.len] = .{ .at = at, .is_inline = is_inline, .text = text, .twin = twin };
        r.offsets[r.len] = offset;
        r.len += 1;
    }
};

/// A name reference of a body: where its 4-byte offset field is (from the body's start),
/// whether the entry follows inline, and else the entry's count and units (`entryText`).
/// `twin`: the first reference of the body to the same entry (its own index if none), whose
/// text `Bodies.matches` has compared when both name one entry again (PERF.md H187).
pub const BodyRef = struct { at: u32, is_inline: bool, text: []const u8, twin: u32 };

/// The count field and the units of the name entry at `offset` (6.3), as stored: equal
/// bytes mean equal texts however `tree.nameUnits` cuts them (no NUL scan, H126).
fn entryText(chunk: []const u8, offset: u32) ?[]const u8 {
    const entry = tree.entryBytes(chunk, offset) orelse return null;
    return entry[2..];
}

/// Token fingerprints of definition bodies seen in earlier chunks, by template GUID and data
/// size, so that a chunk's first use of a known definition costs compares, not the token walk
/// and its hashing (PERF.md H124; the Rust engine's `Identities`). An entry holds the bytes
/// the walk covered and its name references; a body matches when its bytes are equal except
/// for the references' offset fields (and an inline entry's link), each reference is inline
/// in both or in neither, and each other entry has the same count and units. Then the walk
/// would take the same steps over equal bytes and hash equal name texts: the same
/// fingerprint. A body that does not match is walked and replaces the entry.
pub const Bodies = struct {
    by_key: std.AutoHashMapUnmanaged(Key, Entry) = .empty,
    /// The stored bodies and references, from the caller's allocator (no hidden allocator).
    arena: std.heap.ArenaAllocator.State = .{},
    bytes: usize = 0,
    /// Bodies matched without the walk (the tests read it).
    hits: u64 = 0,

    const Key = struct { guid: [16]u8, size: u32 };
    const Entry = struct { fingerprint: u64, body: []const u8, refs: []const BodyRef };

    pub fn deinit(b: *Bodies, gpa: std.mem.Allocator) void {
        b.by_key.deinit(gpa);
        b.arena.promote(gpa).deinit();
        b.* = undefined;
    }

    /// `tokenFingerprint(chunk, names, offset)`, from the cache when the body matches.
    pub fn fingerprint(
        b: *Bodies,
        gpa: std.mem.Allocator,
        chunk: []const u8,
        names: *NameHashes,
        offset: u32,
    ) ?u64 {
        const body = definitionBody(chunk, offset) catch return null;
        var key: Key = .{ .guid = undefined, .size = body.end - body.start };
        @memcpy(&key.guid, chunk[offset + 4 ..][0..16]);
        if (b.by_key.get(key)) |entry| if (matches(chunk, body.start, entry)) {
            b.hits += 1;
            return entry.fingerprint;
        };
        var refs: BodyRefs = .{};
        const fp = walkFingerprint(chunk, names, offset, &refs) orelse return null;
        const walked = chunk[body.start..][0..refs.walked];
        // Without room the body is walked again next time: no error to report.
        if (!refs.overflow) b.remember(gpa, key, walked, &refs, fp) catch {};
        return fp;
    }

    fn matches(chunk: []const u8, start: u32, entry: Entry) bool {
        if (entry.body.len > chunk.len - start) return false;
        const now = chunk[start..][0..entry.body.len];
        assert(entry.refs.len <= BodyRefs.refs_max);
        // The entry offset each reference has here, for the twins (H187).
        var offsets: [BodyRefs.refs_max]u32 = undefined;
        var from: u32 = 0;
        for (entry.refs, 0..) |r, k| {
            assert(from <= r.at and r.at + 4 <= now.len);
            assert(r.twin <= k);
            if (!std.mem.eql(u8, now[from..r.at], entry.body[from..r.at])) return false;
            const offset = std.mem.readInt(u32, now[r.at..][0..4], .little);
            if ((offset == start + r.at + 4) != r.is_inline) return false;
            offsets[k] = offset;
            if (r.is_inline) {
                from = r.at + 8; // The entry's link differs; its hash, count and text not.
            } else {
                // Naming its twin's entry again: that text was compared (the stored texts of
                // the two are one entry's), else compared here. Security's `Data` and
                // `Name` are named once an element (~54 references a body).
                if (r.twin == k or offsets[r.twin] != offset) {
                    const text = entryText(chunk, offset) orelse return false;
                    if (!std.mem.eql(u8, text, r.text)) return false;
                }
                from = r.at + 4;
            }
        }
        return std.mem.eql(u8, now[from..], entry.body[from..]);
    }

    fn remember(
        b: *Bodies,
        gpa: std.mem.Allocator,
        key: Key,
        body: []const u8,
        refs: *const BodyRefs,
        fp: u64,
    ) std.mem.Allocator.Error!void {
        var arena = b.arena.promote(gpa);
        defer b.arena = arena.state;
        if (b.bytes + body.len > limits.body_bytes_max or b.by_key.count() >= limits.bodies_max) {
            b.by_key.clearRetainingCapacity();
            _ = arena.reset(.retain_capacity);
            b.bytes = 0;
        }
        const a = arena.allocator();
        const stored = try a.alloc(BodyRef, refs.len);
        for (refs.items[0..refs.len], stored) |r, *d| {
            d.* = .{
                .at = r.at,
                .is_inline = r.is_inline,
                .text = try a.dupe(u8, r.text),
                .twin = r.twin,
            };
            b.bytes += r.text.len;
        }
        const entry: Entry = .{ .fingerprint = fp, .body = try a.dupe(u8, body), .refs = stored };
        b.bytes += body.len;
        try b.by_key.put(gpa, key, entry);
    }
};

/// Hashes a definition body in runs of raw bytes, broken where a field is left out or a
/// name offset is replaced by the name's characters.
const TokenWalk = struct {
    chunk: []const u8,
    pos: u32,
    /// Start of the raw bytes not hashed yet.
    run: u32,
    hasher: std.hash.Wyhash,
    /// Bytes gathered for the hasher: runs between skipped fields are short, and one
    /// `update` per run cost more than the walk itself.
    buffer: [buffer_size]u8 = undefined,
    buffered: usize = 0,
    /// The hashes of the chunk's names seen so far (the parser's, kept across definitions).
    names: *NameHashes,
    /// Where the body's name references are, when the caller records them (`Bodies`).
    refs: ?*BodyRefs = null,
    /// The body's first byte (`refs` positions are relative to it).
    base: u32 = 0,

    const buffer_size = 1024;

    fn init(chunk: []const u8, names: *NameHashes, body: u32) TokenWalk {
        return .{ .chunk = chunk, .names = names, .pos = body, .run = body, .hasher = .init(0) };
    }

    fn feed(w: *TokenWalk, bytes: []const u8) void {
        if (w.buffered + bytes.len > buffer_size) {
            w.hasher.update(w.buffer[0..w.buffered]);
            w.buffered = 0;
            if (bytes.len > buffer_size) return w.hasher.update(bytes);
        }
        @memcpy(w.buffer[w.buffered..][0..bytes.len], bytes);
        w.buffered += bytes.len;
    }

    /// Feeds the raw bytes up to `pos`.
    fn flushRun(w: *TokenWalk) void {
        assert(w.run <= w.pos and w.pos <= w.chunk.len);
        w.feed(w.chunk[w.run..w.pos]);
    }

    fn final(w: *TokenWalk) u64 {
        w.flushRun();
        w.hasher.update(w.buffer[0..w.buffered]);
        return w.hasher.final();
    }

    fn byte(w: *TokenWalk) ?u8 {
        if (w.pos >= w.chunk.len) return null;
        w.pos += 1;
        return w.chunk[w.pos - 1];
    }

    fn u16le(w: *TokenWalk) ?u16 {
        if (w.pos > w.chunk.len - 2) return null;
        w.pos += 2;
        return std.mem.readInt(u16, w.chunk[w.pos - 2 ..][0..2], .little);
    }

    /// Leaves `n` bytes out of the hash.
    fn skip(w: *TokenWalk, n: u32) ?void {
        if (w.pos > w.chunk.len or w.chunk.len - w.pos < n) return null;
        w.flushRun();
        w.pos += n;
        w.run = w.pos;
    }

    /// A name reference (6.3): hashes a hash of the name's characters, skips an inline
    /// entry as `Parser.readName` does.
    fn name(w: *TokenWalk) ?void {
        if (w.pos > w.chunk.len - 4) return null;
        w.flushRun();
        const field = w.pos;
        const offset = std.mem.readInt(u32, w.chunk[w.pos..][0..4], .little);
        w.pos += 4;
        if (offset == w.pos) {
            if (offset > w.chunk.len - 8) return null;
            const count: u32 = std.mem.readInt(u16, w.chunk[offset + 6 ..][0..2], .little);
            w.pos += 10 + 2 * count;
        }
        w.run = w.pos;
        if (w.refs) |refs| refs.add(w.chunk, field - w.base, offset, offset == field + 4);
        const slot = &w.names[offset % names_cached];
        if (offset >= w.chunk.len) return null; // No name there (nor the empty mark).
        assert(offset != no_offset);
        if (slot.offset != offset) {
            const units = tree.nameUnits(w.chunk, offset) catch return null;
            slot.* = .{ .offset = offset, .hash = std.hash.Wyhash.hash(0x6e616d65, units) };
        }
        w.feed(std.mem.asBytes(&slot.hash));
    }
};

/// Copies definition `root` with the instance values `vals` (6.7).
fn instantiate(p: *Parser, root: u32, vals: tree.Span) Error!u32 {
    return copyElement(p, root, vals);
}

fn isNullValue(p: *const Parser, vals: tree.Span, dep: u16) bool {
    if (dep == 0xFFFF or dep >= vals.len) return false;
    return p.node(p.edges(vals)[dep]).vtype == T.null_type;
}

/// Pushes what placeholder `(index, optional)` produces onto the stack.
fn resolvePlaceholder(p: *Parser, ph: tree.Node, vals: tree.Span) Error!void {
    if (ph.ref.index >= vals.len) return;
    const vi = p.edges(vals)[ph.ref.index];
    const v = p.node(vi).*;
    if (v.vtype == T.binxml) {
        // A fragment without elements in a substitution not declared as BinXml still
        // occupies the position (as in the reference): XML lays its parent out as having
        // element children, JSON ignores it. See `tree.isFragment`.
        if (v.kids.len == 0) {
            if (ph.size.declared_type != T.binxml) try p.push(vi);
            return;
        }
        var i: u32 = 0;
        while (i < v.kids.len) : (i += 1) try p.push(p.edges(v.kids)[i]);
        return;
    }
    if (ph.vtype != 0 and values_decode.isEmpty(p.chunk, v.value())) return;
    try p.push(vi);
}

fn copyElement(p: *Parser, src: u32, vals: tree.Span) Error!u32 {
    const s = p.node(src).*;
    assert(s.kind == .element);
    if (s.flags & tree.flag_dynamic == 0) return src;
    const attrs_mark = p.stack.items.len;
    var ai: u32 = 0;
    while (ai < s.attrs.len) : (ai += 1) {
        const attr_index = p.edges(s.attrs)[ai];
        const attr = p.node(attr_index).*;
        if (attr.flags & tree.flag_dynamic == 0) {
            try p.push(attr_index);
            continue;
        }
        const items_mark = p.stack.items.len;
        var ii: u32 = 0;
        while (ii < attr.kids.len) : (ii += 1) {
            const item_index = p.edges(attr.kids)[ii];
            const item = p.node(item_index).*;
            if (item.kind == .placeholder) try resolvePlaceholder(
                p,
                item,
                vals,
            ) else try p.push(item_index);
        }
        if (p.stack.items.len == items_mark) continue; // Empty: dropped.
        const items = try p.commit(items_mark);
        try p.push(
            try p.newNode(
                .{ .kind = .attribute, .ref = .{ .name = attr.ref.name }, .kids = items },
            ),
        );
    }
    const attrs = try p.commit(attrs_mark);
    const kids_mark = p.stack.items.len;
    var ki: u32 = 0;
    while (ki < s.kids.len) : (ki += 1) {
        const kid_index = p.edges(s.kids)[ki];
        const kid = p.node(kid_index).*;
        switch (kid.kind) {
            .element => {
                if (isNullValue(p, vals, kid.dep)) continue;
                const copy = try copyElement(p, kid_index, vals);
                try expandArrays(p, copy);
            },
            .placeholder => try resolvePlaceholder(p, kid, vals),
            else => try p.push(kid_index),
        }
    }
    const kids = try p.commit(kids_mark);
    return p.newNode(.{
        .kind = .element,
        .ref = .{ .name = s.ref.name },
        .flags = s.flags & tree.flag_self_closing,
        .kids = kids,
        .attrs = attrs,
    });
}

fn isExpandable(p: *const Parser, n: *const tree.Node) bool {
    return n.kind == .value and n.vtype > T.array and values_decode.itemCount(
        p.chunk,
        n.value(),
    ) > 1;
}

/// Array expansion (6.8): pushes one or more elements for copied element `el`.
fn expandArrays(p: *Parser, el_index: u32) Error!void {
    const el = p.node(el_index).*;
    if (el_index & tree.def_bit != 0) return p.push(el_index); // Shared static subtree.
    // Find the first array value with more than one item: children, then attributes.
    var found_kid: ?u32 = null;
    var found_attr: ?u32 = null;
    var found_item: u32 = 0;
    for (p.edges(el.kids), 0..) |k, i| {
        if (isExpandable(p, p.node(k))) {
            found_kid = @intCast(i);
            break;
        }
    }
    if (found_kid == null) {
        outer: for (p.edges(el.attrs), 0..) |a, i| {
            for (p.edges(p.node(a).kids), 0..) |item, j| {
                if (isExpandable(p, p.node(item))) {
                    found_attr = @intCast(i);
                    found_item = @intCast(j);
                    break :outer;
                }
            }
        }
    }
    if (found_kid == null and found_attr == null) return p.push(el_index);
    const array_index = if (found_kid) |k| p.edges(el.kids)[k] else p.edges(
        p.node(p.edges(el.attrs)[found_attr.?]).kids,
    )[found_item];
    const array_node = p.node(array_index).*;
    const array = array_node.value();
    var it = values_decode.Items.init(p.chunk, array);
    var item_index: u32 = 0;
    while (it.next()) |item| : (item_index += 1) {
        const skip = (item.vtype == T.string or item.vtype == T.ansi) and values_decode.isEmpty(
            p.chunk,
            item,
        );
        var n: tree.Node = .{
            .kind = .value,
            .vtype = item.vtype,
            .ref = .{ .offset = item.start },
            .size = .{ .len = item.len },
        };
        if (array_node.flags & tree.flag_slot != 0) {
            // Numbered for a compiled program: same slot, item index + 1 in `kids.len`.
            n.flags = tree.flag_slot;
            n.dep = array_node.dep;
            n.kids.len = item_index + 1;
        }
        const item_node: ?u32 = if (skip) null else try p.newNode(n);
        var copy = el;
        if (found_kid) |k| {
            copy.kids = try replaced(p, el.kids, k, item_node);
        } else {
            const ai = found_attr.?;
            const attr = p.node(p.edges(el.attrs)[ai]).*;
            const items = try replaced(p, attr.kids, found_item, item_node);
            const mark = p.stack.items.len;
            for (0..el.attrs.len) |i| {
                if (i == ai) {
                    if (items.len > 0) try p.push(
                        try p.newNode(
                            .{
                                .kind = .attribute,
                                .ref = .{ .name = attr.ref.name },
                                .kids = items,
                            },
                        ),
                    );
                } else try p.push(p.edges(el.attrs)[i]);
            }
            copy.attrs = try p.commit(mark);
        }
        try expandArrays(p, try p.newNode(copy));
    }
}

/// A copy of edge list `list` with entry `at` replaced by `with` (or removed).
fn replaced(p: *Parser, list: tree.Span, at: u32, with: ?u32) Error!tree.Span {
    const mark = p.stack.items.len;
    for (0..list.len) |i| {
        if (i == at) {
            if (with) |w| try p.push(w);
        } else try p.push(p.edges(list)[i]);
    }
    return p.commit(mark);
}

// ---------------------------------------------------------------------------------------
// Template tests: the contract's synthetic examples (14.1), byte for byte.
const testing = @import("testing.zig");

/// `<E><A>%0</A><B>%1</B></E>` with the given values and declared sizes.
fn twoValueRecord(
    b: *testing.Builder,
    list: []const testing.Builder.Value,
    sizes: []const u16,
) void {
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("E", 0xFFFF, false);
    b.closeStart();
    b.open("A", 0xFFFF, false);
    b.closeStart();
    b.sub(0, false, T.uint32);
    b.end();
    b.open("B", 0xFFFF, false);
    b.closeStart();
    b.sub(1, false, T.string);
    b.end();
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueListSized(list, sizes);
    b.byte(0x00);
}

test "oversized declared value: extra bytes skipped (14.1)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    const vals = [_]testing.Builder.Value{
        .{ .vtype = T.uint32, .bytes = &.{ 7, 0, 0, 0, 0x63, 0, 0, 0 } },
        .{ .vtype = T.string, .bytes = &.{ 'o', 0, 'k', 0 } },
    };
    twoValueRecord(&b, &vals, &.{ 8, 4 });
    try testing.expectRender(&b, .json, "{\"E\":{\"A\":7,\"B\":\"ok\"}}");
}

test "undersized declared value: the decoder's later position wins (14.1)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    const vals = [_]testing.Builder.Value{
        .{ .vtype = T.uint32, .bytes = &.{ 7, 0, 0x6F, 0 } },
        .{ .vtype = T.string, .bytes = &.{ 'k', 0, 'a', 0, 'y', 0, 0, 0x3D } },
    };
    twoValueRecord(&b, &vals, &.{ 2, 8 });
    try testing.expectRender(&b, .json, "{\"E\":{\"A\":7274503,\"B\":\"kay\xE3\xB4\x80\"}}");
}

test "dependency ids omit children of NULL values; the root is kept (14.1)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("Event", 0, false);
    b.closeStart();
    const children = [_]struct {
        name: []const u8,
        dep: u16,
    }{ .{ .name = "A", .dep = 0 }, .{ .name = "B", .dep = 1 }, .{ .name = "C", .dep = 2 } };
    for (children) |c| {
        b.open(c.name, c.dep, false);
        b.closeStart();
        b.text(&.{std.ascii.toLower(c.name[0])});
        b.end();
    }
    b.open("Holder", 0xFFFF, false);
    b.closeStart();
    b.open("D", 0, false);
    b.closeStart();
    b.text("d");
    b.end();
    b.end();
    b.open("E", 7, false);
    b.closeStart();
    b.text("e");
    b.end();
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueList(&.{
        .{ .vtype = T.null_type, .bytes = &.{} },
        .{ .vtype = T.uint8, .bytes = &.{1} },
        .{ .vtype = T.binxml, .bytes = &.{} },
    });
    b.byte(0x00);
    try testing.expectRender(&b, .xml, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n" ++
        "<Event>\n  <B>b</B>\n  <Holder></Holder>\n  <E>e</E>\n</Event>\n");
    try testing.expectRender(&b, .json, "{\"Event\":{\"B\":\"b\",\"Holder\":null,\"E\":\"e\"}}");
}

test "optional vs normal substitutions of empty values (14.1)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("R", 0xFFFF, false);
    b.closeStart();
    b.open("OptEmpty", 0xFFFF, false);
    b.closeStart();
    b.sub(2, true, T.string);
    b.end();
    b.open("NonOptNull", 0xFFFF, false);
    b.closeStart();
    b.sub(1, false, T.null_type);
    b.end();
    b.open("AttrEmpty", 0xFFFF, true);
    b.attribute("e");
    b.text("");
    b.attribute("n");
    b.sub(1, false, T.null_type);
    b.closeEmpty();
    b.open("AttrOnly", 0xFFFF, true);
    b.attribute("a");
    b.text("A");
    b.closeStart();
    b.end();
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueList(&.{
        .{ .vtype = T.uint8, .bytes = &.{0} },
        .{ .vtype = T.null_type, .bytes = &.{} },
        .{ .vtype = T.string, .bytes = &.{} },
    });
    b.byte(0x00);
    try testing.expectRender(&b, .xml_flat, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n" ++
        "<R><OptEmpty></OptEmpty><NonOptNull></NonOptNull><AttrEmpty/><AttrOnly " ++
        "a=\"A\"></AttrOnly></R>");
    try testing.expectRender(
        &b,
        .json,
        "{\"R\":{\"OptEmpty\":null,\"NonOptNull\":null,\"AttrEmpty\":null,\"AttrOnly\":{" ++
            "\"#attributes\":{\"a\":\"A\"}}}}",
    );
}

/// `<Event><EventData><Data Name="I32A">%0</Data></EventData>`
/// `<XI32A>%0</XI32A><AI32A v=%0/></Event>`
fn arrayRecord(b: *testing.Builder, array: []const u8) void {
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("Event", 0xFFFF, false);
    b.closeStart();
    b.open("EventData", 0xFFFF, false);
    b.closeStart();
    b.open("Data", 0xFFFF, true);
    b.attribute("Name");
    b.text("I32A");
    b.closeStart();
    b.sub(0, false, T.array | T.int32);
    b.end();
    b.end();
    b.open("XI32A", 0xFFFF, false);
    b.closeStart();
    b.sub(0, false, T.array | T.int32);
    b.end();
    b.open("AI32A", 0xFFFF, true);
    b.attribute("v");
    b.sub(0, false, T.array | T.int32);
    b.closeEmpty();
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueList(&.{.{ .vtype = T.array | T.int32, .bytes = array }});
    b.byte(0x00);
}

test "array expansion in three positions (6.8, 14.1)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    arrayRecord(&b, &.{ 0xFF, 0xFF, 0xFF, 0xFF, 2, 0, 0, 0 });
    try testing.expectRender(&b, .json, "{\"Event\":{\"EventData\":{\"I32A\":[-1,2]}," ++
        "\"XI32A\":-1,\"XI32A_1\":2," ++
        "\"AI32A\":{\"#attributes\":{\"v\":-1}},\"AI32A_1\":{\"#attributes\":{\"v\":2}}}}");
    try testing.expectRender(&b, .xml_flat, "<?xml version=\"1.0\" " ++
        "encoding=\"utf-8\"?>\n<Event><EventData>" ++
        "<Data Name=\"I32A\">-1</Data><Data Name=\"I32A\">2</Data></EventData>" ++
        "<XI32A>-1</XI32A><XI32A>2</XI32A><AI32A v=\"-1\"/><AI32A v=\"2\"/></Event>");
}

test "a one-item array is not expanded and stays a string (14.1)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    arrayRecord(&b, &.{ 7, 0, 0, 0 });
    try testing.expectRender(
        &b,
        .json,
        "{\"Event\":{\"EventData\":{\"I32A\":\"7\"},\"XI32A\":\"7\",\"AI32A\":{" ++
            "\"#attributes\":{\"v\":\"7\"}}}}",
    );
}

test "a template definition needs exactly one root element (6.5)" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.byte(0x00);
    b.endDefinition(size_at);
    b.valueList(&.{});
    b.byte(0x00);
    try testing.expectError(&b, .json, error.TemplateRoot);
}

/// Writes the definition `<E A="{literal}">%0</E>` at the builder's position and returns its
/// offset. Names are inline when `names` is null, else references to the entries at
/// `names` (E, A), which are set to this definition's entries when it writes them inline.
/// `ignored` goes into the element and attribute-list size fields the parser skips.
fn writeDefinition(b: *testing.Builder, names: *?[2]u32, ignored: u32, literal: []const u8) u32 {
    const offset = b.pos;
    b.u32le(0); // Next definition.
    b.raw(&([_]u8{0xAB} ** 16)); // GUID.
    const size_at = b.pos;
    b.u32le(0);
    b.fragment();
    b.byte(0x41);
    b.u16le(0xFFFF);
    b.u32le(ignored);
    const refs = names.*;
    var entries: [2]u32 = undefined;
    if (refs) |r| b.u32le(r[0]) else {
        entries[0] = b.pos + 4;
        b.name("E");
    }
    b.u32le(ignored);
    b.byte(0x06);
    if (refs) |r| b.u32le(r[1]) else {
        entries[1] = b.pos + 4;
        b.name("A");
    }
    b.text(literal);
    b.closeStart();
    b.sub(0, false, T.string);
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    if (refs == null) names.* = entries;
    return offset;
}

/// A fingerprint with no name hashes cached (the test changes names in place).
fn freshFingerprint(chunk: []const u8, offset: u32) ?u64 {
    var names = no_name_hashes;
    return tokenFingerprint(chunk, &names, offset);
}

test "token fingerprints: names by their characters, skipped fields left out" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.pos = 512;
    var names: ?[2]u32 = null;
    const inline_names = writeDefinition(&b, &names, 0, "v");
    const referenced = writeDefinition(&b, &names, 0x1234, "v");
    const other_literal = writeDefinition(&b, &names, 0, "w");
    const fp = freshFingerprint(b.chunk, inline_names).?;
    try std.testing.expectEqual(fp, freshFingerprint(b.chunk, referenced).?);
    try std.testing.expect(fp != freshFingerprint(b.chunk, other_literal).?);
    // A renamed element is another template.
    const e_entry = names.?[0];
    b.chunk[e_entry + 8] = 'F';
    try std.testing.expect(fp != freshFingerprint(b.chunk, referenced).?);
    // Bodies the walk cannot finish have none.
    try std.testing.expectEqual(@as(?u64, null), freshFingerprint(b.chunk, 65536 - 10));
    b.chunk[inline_names + 24 + 4] = 0x0C; // A template token inside the definition.
    try std.testing.expectEqual(@as(?u64, null), freshFingerprint(b.chunk, inline_names));
}

test "Bodies: a fingerprint from the cache equals the token walk's (H124)" {
    const gpa = std.testing.allocator;
    var bodies: Bodies = .{};
    defer bodies.deinit(gpa);
    var prng = std.Random.DefaultPrng.init(0x4831_3234);
    const random = prng.random();
    // Texts of one length ("Data", "Name") and one unit apart ("Data", "Datb").
    const texts = [_][]const u8{ "Data", "Name", "Datb", "Event" };
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var resets: u32 = 0;
    for (0..600) |round| {
        // Now and then the cache is full: the next body stored starts it afresh.
        if (round % 50 == 49) bodies.bytes = limits.body_bytes_max;
        const before = bodies.by_key.count();
        // A chunk: the texts as entries at random places, then one definition of one to
        // three elements naming them inline or by reference, under one of two GUIDs.
        @memset(b.chunk, 0);
        b.pos = 512 + 2 * random.uintLessThan(u32, 64);
        // Mostly each text at its own index; sometimes "Data" and "Name" swapped (equal
        // bytes, other names).
        const swap = random.uintLessThan(u32, 4) == 0;
        var entries: [texts.len]u32 = undefined;
        for (texts, &entries, 0..) |_, *e, k| {
            const t = texts[if (swap and k < 2) 1 - k else k];
            b.pos += 2 * random.uintLessThan(u32, 8);
            e.* = b.pos;
            b.u32le(0);
            b.u16le(0);
            b.u16le(@intCast(t.len));
            b.units(t);
            b.u16le(0);
        }
        b.pos += 2 * random.uintLessThan(u32, 16);
        const offset = b.pos;
        b.u32le(0);
        // The body from one of eight plans, so that equal bodies meet in other chunks.
        const plan = random.uintLessThan(u64, 8);
        var plan_prng = std.Random.DefaultPrng.init(plan);
        const shape = plan_prng.random();
        b.raw(&([_]u8{0xAB + @as(u8, @intCast(plan % 2))} ** 16));
        const size_at = b.pos;
        b.u32le(0);
        b.fragment();
        for (0..1 + shape.uintLessThan(u32, 3)) |_| {
            b.byte(0x41);
            b.u16le(0xFFFF);
            // Left out of the walk's hash (a body that differs there is walked again).
            b.u32le(@as(u32, @intFromBool(random.uintLessThan(u32, 8) == 0)) * 0x1234);
            bodyName(&b, shape, &texts, &entries);
            b.u32le(0);
            b.byte(0x06);
            bodyName(&b, shape, &texts, &entries);
            b.text(if (shape.boolean()) "v" else "w");
            b.closeStart();
            b.sub(shape.uintLessThan(u16, 2), false, T.string);
            b.end();
        }
        b.byte(0x00);
        b.endDefinition(size_at);
        if (random.uintLessThan(u32, 4) == 0) {
            // One bit flipped anywhere in the body: offsets, links, names, tokens.
            const at = offset + 24 + random.uintLessThan(u32, b.pos - offset - 24);
            b.chunk[at] ^= @as(u8, 1) << random.int(u3);
        }
        var names = no_name_hashes;
        const got = bodies.fingerprint(gpa, b.chunk, &names, offset);
        try std.testing.expectEqual(freshFingerprint(b.chunk, offset), got);
        if (bodies.by_key.count() < before) resets += 1;
    }
    try std.testing.expect(bodies.hits > 100);
    try std.testing.expect(resets > 0);
}

/// A name reference in a test body: inline, or to one of the chunk's `entries`.
fn bodyName(
    b: *testing.Builder,
    random: std.Random,
    texts: []const []const u8,
    entries: []const u32,
) void {
    const k = random.uintLessThan(usize, texts.len);
    if (random.boolean()) b.u32le(entries[k]) else b.name(texts[k]);
}

test "BodyRefs: a reference's twin is the body's first to name its entry (H187)" {
    // Three entries with count 0 (8 bytes each) at 0, 8 and 16; references to them and
    // inline ones in a random order, against a plain search for the first earlier one.
    const chunk: [24]u8 = @splat(0);
    var prng = std.Random.DefaultPrng.init(0x4831_3837);
    const random = prng.random();
    for (0..500) |_| {
        var refs: BodyRefs = .{};
        const n = random.uintAtMost(u32, BodyRefs.refs_max);
        for (0..n) |k| {
            const is_inline = random.uintLessThan(u32, 4) == 0;
            const entry = 8 * random.uintLessThan(u32, 3);
            const offset: u32 = if (is_inline) 100 + @as(u32, @intCast(k)) else entry;
            refs.add(&chunk, @intCast(8 * k), offset, is_inline);
        }
        try std.testing.expect(!refs.overflow);
        for (refs.items[0..refs.len], 0..) |r, k| {
            var first: usize = k;
            if (!r.is_inline) for (0..k) |j| {
                if (!refs.items[j].is_inline and refs.offsets[j] == refs.offsets[k]) {
                    first = j;
                    break;
                }
            };
            try std.testing.expectEqual(first, r.twin);
        }
    }
}

test "fingerprintAt: the memo answers as the definitions do, per chunk (H147)" {
    const gpa = std.testing.allocator;
    var p = Parser.init(gpa);
    defer p.deinit();
    var prng = std.Random.DefaultPrng.init(0x4831_3437);
    const random = prng.random();
    // Two chunks with definitions at the same offsets but other literals ("v.." and "w..",
    // one length): more definitions than memo slots, so some share a slot.
    const count = FingerprintMemo.slots + 16;
    var chunks: [2]testing.Builder = undefined;
    var offsets: [2][count]u32 = undefined;
    for (&chunks, &offsets, [_]u8{ 'v', 'w' }) |*b, *at, letter| {
        b.* = try testing.Builder.init(gpa);
        var names: ?[2]u32 = null;
        for (at, 0..) |*o, k| {
            const k8: u8 = @intCast(k);
            const literal = [_]u8{ letter, 'a' + k8 / 26, 'a' + k8 % 26 };
            o.* = writeDefinition(b, &names, 0, &literal);
        }
    }
    defer for (&chunks) |*b| b.deinit(gpa);
    try std.testing.expectEqualSlices(u32, &offsets[0], &offsets[1]);
    var shared_slot = false;
    for (offsets[0], 0..) |a, k| {
        for (offsets[0][k + 1 ..]) |b| {
            if (FingerprintMemo.slot(a) == FingerprintMemo.slot(b)) shared_slot = true;
        }
    }
    try std.testing.expect(shared_slot);
    var memo_answers: u32 = 0;
    for (0..6) |round| {
        const chunk = chunks[round % 2].chunk;
        try p.resetChunk(chunk);
        for (0..400) |_| {
            const o = offsets[0][random.uintLessThan(usize, count)];
            if (p.fingerprint_memo.get(o) != null) memo_answers += 1;
            try std.testing.expectEqual(freshFingerprint(chunk, o).?, try fingerprintAt(&p, o));
        }
    }
    try std.testing.expect(memo_answers > 1000);
}
