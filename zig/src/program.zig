//! Compiled record programs: the rendered text of a record is a fixed sequence of literal
//! bytes and substitution values once the template (and nested templates) and the "shape"
//! of every value are fixed. The shape is the signature: definition, value count, and per
//! value its normalised type and emptiness (what every rendering decision depends on).
//!
//! The first record with a signature renders the slow way (tree copy + renderer) while a
//! `Recorder` records where each substitution value was written; later records with the
//! same signature replay literals and format their values directly. `sign` finds the
//! signature and the values of such a record from its bytes, without a tree (`scan`);
//! `signTree` does the same over a parsed tree when the scan gives up; both say what the
//! cache has for it (`Sign`). Programs are per run, shared across
//! chunks: definitions are identified by a content fingerprint (names by text), not by
//! their chunk offset. Records the signature cannot describe (arrays with several items,
//! fragments that are not template instances, Data names built from substitutions) always
//! take the slow path.
const std = @import("std");
const filter = @import("filter.zig");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const Allocator = std.mem.Allocator;
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const tree = @import("tree.zig");
const template = @import("template.zig");
const Parser = tokens.Parser;
const Out = escape.Out;
const T = values_decode.T;
const Value = values_decode.Value;

pub const Mode = enum(u8) { json, xml_text, xml_attr };

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

/// One stored program: its signature's words in `Programs` and its `Body`, by index.
pub const Program = struct {
    signature_start: u32,
    signature_len: u32,
    body: u32,
};

/// One learnt program's steps and literal bytes (the ops' literals from 0, then the tail,
/// then `escape.pad_bytes` zero bytes so `Out.writePadded` can move whole vectors from any
/// run), never changed once made. At `-t 2` and up every renderer that replays a program
/// holds the same `Body`, owned by `Shared` (PERF.md H137): an import is a pointer copy, not
/// a copy of the program into the renderer's own arrays (H118: those copies were a third of
/// the corpus run's page faults at `-t 2`). The Rust engine's `program::Body`.
pub const Body = struct {
    ops: []Op,
    literals: []u8,
    tail_start: u32,
    tail_len: u32,
    /// Where a filter finds the record's `System` fields (filter.zig); learnt only when the
    /// run has a filter.
    plan: filter.Plan = .{},

    /// What the program counts against `limits.program_bytes_max`: its literal bytes (without the
    /// padding) and 8 per operation, the accounting of the Rust engine's `Body::cost`.
    fn cost(b: *const Body) usize {
        return b.literals.len - escape.pad_bytes + 8 * b.ops.len;
    }

    fn free(b: *const Body, gpa: Allocator) void {
        b.plan.deinit(gpa);
        gpa.free(b.ops);
        gpa.free(b.literals);
    }
};

/// What the program cache has for one record (`Programs.sign`, `Programs.signTree`), the
/// Rust engine's `Sign`.
pub const Sign = union(enum) {
    /// A program for this signature exists: replay it.
    hit: Program,
    /// No program yet: render the slow way, recording under the current signature.
    miss,
    /// Not a shape programs describe: render the slow way, do not record.
    unsupported,
};

/// Records substitution writes during a slow-path rendering.
pub const Recorder = struct {
    start: usize,
    ops: std.ArrayList(Write) = .empty,
    /// A substitution influenced the output beyond its own text (e.g. a Data name).
    poisoned: bool = false,

    pub const Write = struct { begin: u32, end: u32, slot: u16, item: u16, mode: Mode };
};

/// The signature words of a raw element fragment's structure (`Programs.scanFragment`,
/// `Programs.signFragment`): above every class word and name id a fragment's position can
/// hold, so a signature reads one way only.
const fragment = struct {
    const begin: u32 = 0xf1a6_0000;
    const element: u32 = 0xf1a6_0001;
    const attribute: u32 = 0xf1a6_0002;
    const close_start: u32 = 0xf1a6_0003;
    const close_empty: u32 = 0xf1a6_0004;
    const end: u32 = 0xf1a6_0005;
    const instance: u32 = 0xf1a6_0006;
    const end_fragment: u32 = 0xf1a6_0007;
    /// Followed by the name's id, as `element` and `attribute` (PERF.md H146).
    const entity_ref: u32 = 0xf1a6_0008;
    /// Followed by the reference's code unit (H146).
    const char_ref: u32 = 0xf1a6_0009;
};

/// Entries of `FragmentNames.recent` (a power of two; `recentName`).
const recent_names = 1 << recent_name_bits;
const recent_name_bits = 10;

/// The names raw fragments use, each as one signature word: an id per distinct text, kept
/// across chunks as the programs are; and, for the current chunk only (`chunk`, the parser's
/// `chunks`), the id of the name entry at a chunk offset, direct-mapped (a fragment names the
/// same few entries record after record; PERF.md H69).
const FragmentNames = struct {
    recent: [recent_names]Recent = @splat(.{}),
    chunk: u64 = 0,
    ids: std.StringHashMapUnmanaged(u32) = .empty,
    bytes: usize = 0,
    /// The same ids by the parser's name id (`tree.Names`, which keys names by their raw
    /// UTF-16 text across chunks), `no_id` where not looked up yet; valid for the parser's
    /// `Names.generation` (`generation`). A chunk's first use of a name the run has seen costs
    /// a hash of its units in `Names` and an index here (PERF.md H104, H123).
    of_name: std.ArrayList(u32) = .empty,
    generation: u32 = 0,
    /// The parser's name id by an entry's stored hash, count and units, across chunks,
    /// direct-mapped by the stored hash and count: a chunk's first use of a name seen in an
    /// earlier chunk costs one compare, not the NUL scan, the hash of its units and the map
    /// probe (PERF.md H128). Valid for the parser's `Names.generation` kept in the slot.
    raw: [raw_slots]Raw = @splat(.{}),
    /// Names found in `raw` (the tests read it).
    raw_hits: u64 = 0,

    const no_id = std.math.maxInt(u32);
    const raw_slots = 1024;
    /// Longest stored hash, count and units a `raw` slot keeps (30 units).
    const raw_bytes_max = 64;
    const Raw = struct {
        len: u8 = 0,
        bytes: [raw_bytes_max]u8 = undefined,
        id: u32 = 0,
        generation: u32 = 0,
    };

    /// The entry `entry` (`tree.entryBytes`: hash, count and units as stored) if a slot
    /// holds it, else null.
    fn rawBytes(entry: []const u8) ?[]const u8 {
        return if (entry.len > raw_bytes_max) null else entry;
    }

    fn rawSlot(n: *FragmentNames, bytes: []const u8) *Raw {
        assert(bytes.len >= 4 and bytes.len <= raw_bytes_max);
        const hash = std.mem.readInt(u16, bytes[0..2], .little);
        return &n.raw[(hash +% bytes.len *% 31) % raw_slots];
    }
    const Recent = struct { offset: u32 = std.math.maxInt(u32), id: u32 = 0 };

    /// `recent`'s slot for the name entry at chunk offset `offset`: the top bits of a
    /// multiplicative hash (`offset ^ offset >> 8` put nearby entries in one slot more
    /// often), as the Rust engine's `recent_slot` (its H134; here PERF.md H149).
    fn recentName(offset: u32) usize {
        return (offset *% 0x9e37_79b1) >> (32 - recent_name_bits);
    }

    /// Empties `recent` for chunk number `chunk` (the parser's `chunks`), out of line: once a
    /// chunk, not on `nameWord`'s inline path.
    noinline fn startChunk(n: *FragmentNames, chunk: u64) void {
        assert(n.chunk != chunk);
        n.recent = @splat(.{});
        n.chunk = chunk;
    }

    fn deinit(n: *FragmentNames, gpa: Allocator) void {
        var keys = n.ids.keyIterator();
        while (keys.next()) |k| gpa.free(k.*);
        n.ids.deinit(gpa);
        n.of_name.deinit(gpa);
    }

    /// The id of name text `text` (UTF-8, as `Names` holds it), or null past the bounds;
    /// at `-t 2` and up the run's (`shared`).
    fn intern(
        n: *FragmentNames,
        gpa: Allocator,
        text: []const u8,
        shared: ?*Shared,
    ) Allocator.Error!?u32 {
        if (n.ids.get(text)) |id| return id;
        if (n.ids.count() >= limits.fragment_name_ids_max or
            n.bytes + text.len > limits.fragment_name_bytes_max) return null;
        const id: u32 = if (shared) |sh| try sh.name(text) orelse return null else n.ids.count();
        const key = try gpa.dupe(u8, text);
        errdefer gpa.free(key);
        try n.ids.put(gpa, key, id);
        n.bytes += text.len;
        return id;
    }
};

/// `list.ensureUnusedCapacity(gpa, n)` with its common case, room already there, tested
/// inline: the call (not inlined by LLVM) cost ~26 instructions twice per instance scanned
/// (PERF.md H125).
inline fn ensureRoom(
    comptime E: type,
    list: *std.ArrayList(E),
    gpa: Allocator,
    n: usize,
) Allocator.Error!void {
    if (list.capacity - list.items.len >= n) return;
    try list.ensureUnusedCapacity(gpa, n);
}

test "recentName: a chunk's name entries, one after another, take their own slots (H149)" {
    var prng = std.Random.DefaultPrng.init(0x4831_3439);
    const random = prng.random();
    var distinct: u32 = 0;
    for (0..200) |_| {
        // 80 entries as a chunk's string table lays them out: 10 bytes of link, hash and
        // count, the units, a NUL; names of 1 to 30 units, from a random start.
        var used: [recent_names]bool = @splat(false);
        var offset: u32 = 512 + 2 * random.uintLessThan(u32, 16384);
        for (0..80) |_| {
            const at = FragmentNames.recentName(offset);
            try std.testing.expect(at < recent_names);
            if (!used[at]) distinct += 1;
            used[at] = true;
            offset += 10 + 2 * random.uintAtMost(u32, 30) + 2;
        }
    }
    // A slot shared by two entries in use costs a lookup of each every time they alternate:
    // 78.4 of 80 slots apart on average (a random map: 77.0); H69's `offset ^ offset >> 8`
    // had 70.2 at 256 slots and 75.7 at 1,024.
    try std.testing.expect(distinct >= 77 * 200);
}

test "fragmentText: a text as decodeUnsized reads it, sized to the writer's NUL (H168)" {
    var prng = std.Random.DefaultPrng.init(0x4831_3638);
    const random = prng.random();
    var chunk: [96]u8 = undefined;
    var texts: u32 = 0;
    var empty: u32 = 0;
    for (0..20_000) |_| {
        random.bytes(&chunk);
        // Few NUL units by chance: set some, at the start or further in.
        for (0..random.uintLessThan(usize, 3)) |_| {
            const at = 2 * random.uintLessThan(usize, chunk.len / 2);
            chunk[at] = 0;
            chunk[at + 1] = 0;
        }
        const len = random.uintAtMost(usize, chunk.len);
        const pos = random.uintAtMost(u32, @intCast(len + 2));
        if (pos + 2 <= len) {
            // Counts that fit, just do not, or are far past the end.
            const room: u32 = @intCast((len - pos - 2) / 2);
            const n: u32 = switch (random.uintLessThan(u32, 4)) {
                0 => room,
                1 => room + 1,
                2 => random.uintLessThan(u32, 4),
                else => random.int(u16),
            };
            std.mem.writeInt(u16, chunk[pos..][0..2], @truncate(n), .little);
        }
        const bytes = chunk[0..len];
        const want = values_decode.decodeUnsized(bytes, pos, T.string) catch {
            try std.testing.expect(Programs.fragmentText(bytes, pos) == null);
            continue;
        };
        const got = Programs.fragmentText(bytes, pos) orelse return error.TestExpectedText;
        texts += 1;
        try std.testing.expectEqual(want.end, got.end);
        try std.testing.expectEqual(want.value.start, got.value.start);
        try std.testing.expectEqual(want.value.vtype, got.value.vtype);
        // The same text up to the first NUL, and the same class word's emptiness.
        const units = bytes[got.value.start..][0..got.value.len];
        try std.testing.expectEqual(want.value.len, 2 * escape.unitsBeforeNul(units));
        const is_empty = values_decode.isEmptyScalar(bytes, got.value);
        try std.testing.expectEqual(values_decode.isEmptyScalar(bytes, want.value), is_empty);
        if (is_empty) empty += 1;
    }
    try std.testing.expect(texts > 5_000 and empty > 500);
}

test "ensureRoom leaves room for n more, as ensureUnusedCapacity (H125)" {
    const gpa = std.testing.allocator;
    var list: std.ArrayList(u32) = .empty;
    defer list.deinit(gpa);
    var prng = std.Random.DefaultPrng.init(0x4831_3235);
    const random = prng.random();
    for (0..2000) |_| {
        const n = random.uintLessThan(usize, 40);
        try ensureRoom(u32, &list, gpa, n);
        try std.testing.expect(list.capacity - list.items.len >= n);
        for (0..n) |k| list.appendAssumeCapacity(@intCast(k));
        if (random.uintLessThan(u32, 16) == 0) list.clearRetainingCapacity();
    }
}

/// What the renderers of one `-t N` run share (PERF.md H95, the Rust engine's
/// `program::Shared`): the ids of fragment names, which signature words use, and the
/// programs learnt under the signatures. Without it each renderer learnt every program on its
/// own: corpus-30mb rendered 456 more records the slow way at `-t 2` than at `-t 1` (+12 %
/// instructions). A renderer keeps its own ids and locks this only where it has none: a
/// new name, a `.miss`. Every `Body` a renderer makes is handed to this table, which frees
/// them all at `deinit` (after the renderers: they replay them). Definitions need nothing
/// shared: their fingerprints are content hashes, and the pipeline gives each renderer's
/// unique ones their own range.
pub const Shared = struct {
    gpa: Allocator,
    mutex: std.Thread.Mutex = .{},
    names: std.StringHashMapUnmanaged(u32) = .empty,
    name_bytes: usize = 0,
    /// Signature words (as bytes) → the program, replayed by every renderer that has it.
    programs: std.StringHashMapUnmanaged(Body) = .empty,
    program_bytes: usize = 0,
    /// Bodies offered past the bounds: their makers replay them, no one else finds them.
    unlisted: std.ArrayList(Body) = .empty,

    pub fn init(gpa: Allocator) Shared {
        return .{ .gpa = gpa };
    }

    pub fn deinit(sh: *Shared) void {
        var names = sh.names.keyIterator();
        while (names.next()) |k| sh.gpa.free(k.*);
        sh.names.deinit(sh.gpa);
        var it = sh.programs.iterator();
        while (it.next()) |e| {
            sh.gpa.free(e.key_ptr.*);
            e.value_ptr.free(sh.gpa);
        }
        sh.programs.deinit(sh.gpa);
        for (sh.unlisted.items) |*b| b.free(sh.gpa);
        sh.unlisted.deinit(sh.gpa);
    }

    /// The id of fragment name `text`, given one if new; null past the bounds.
    fn name(sh: *Shared, text: []const u8) Allocator.Error!?u32 {
        sh.mutex.lock();
        defer sh.mutex.unlock();
        if (sh.names.get(text)) |id| return id;
        if (sh.names.count() >= limits.fragment_name_ids_max or
            sh.name_bytes + text.len > limits.fragment_name_bytes_max) return null;
        const id: u32 = sh.names.count();
        const key = try sh.gpa.dupe(u8, text);
        errdefer sh.gpa.free(key);
        try sh.names.put(sh.gpa, key, id);
        sh.name_bytes += text.len;
        return id;
    }

    /// Takes `body` (made by a renderer under signature `key`, both owned by the table from
    /// now on, also on error) and returns the body the renderer replays: the one known under
    /// `key` when another renderer offered it first (`body` is then freed), else `body`. The
    /// caller makes both before the lock is taken: allocating may map memory and fault it in,
    /// and the other renderer would wait for that (PERF.md H122).
    fn put(sh: *Shared, key: []u8, body: Body) Allocator.Error!Body {
        var keep_key = false;
        var keep_body = false;
        defer if (!keep_key) sh.gpa.free(key);
        defer if (!keep_body) body.free(sh.gpa);
        const cost = body.cost() + key.len;
        sh.mutex.lock();
        defer sh.mutex.unlock();
        if (sh.programs.count() < limits.programs_max and
            sh.program_bytes + cost <= limits.program_bytes_max)
        {
            const slot = try sh.programs.getOrPut(sh.gpa, key);
            if (slot.found_existing) return slot.value_ptr.*;
            slot.value_ptr.* = body;
            sh.program_bytes += cost;
            keep_key = true;
        } else {
            try sh.unlisted.append(sh.gpa, body);
        }
        keep_body = true;
        return body;
    }

    /// The program stored under `key`, if any. A body is never changed or freed before
    /// `deinit`, so the caller keeps it after the lock is released.
    fn find(sh: *Shared, key: []const u8) ?Body {
        sh.mutex.lock();
        defer sh.mutex.unlock();
        return sh.programs.get(key);
    }
};

/// Per-renderer cache of compiled programs, kept across chunks.
pub const Programs = struct {
    gpa: Allocator,
    programs: std.ArrayList(Program) = .empty,
    by_hash: std.AutoHashMapUnmanaged(u64, u32) = .empty,
    /// The programs last found or added by signature head and length (`recentSlot`), the
    /// latest first, `no_program` if none: `find` compares their signatures first and
    /// hashes only when all differ (PERF.md H142; `recent_ways` of them H144: one template's
    /// shapes of one length share a slot).
    recent: [recent_slots][recent_ways]u32 = @splat(@splat(no_program)),
    signatures: std.ArrayList(u32) = .empty,
    /// The programs' bodies, by `Program.body`: this renderer's own at `-t 1`, `shared`'s
    /// (and replayed by the other renderers too) at `-t 2` and up (PERF.md H137).
    bodies: std.ArrayList(Body) = .empty,
    /// The bodies' `Body.cost`, summed (bounded by `limits.program_bytes_max`).
    bytes: usize = 0,
    /// Scratch: the current record's signature and its substitution values by slot.
    signature: std.ArrayList(u32) = .empty,
    slots: std.ArrayList(values_decode.Value) = .empty,
    recorder: Recorder = .{ .start = 0 },
    /// Raw fragments' names as signature words (`nameWord`).
    names: FragmentNames = .{},
    /// The run's shared names and programs, at `-t 2` and up.
    shared: ?*Shared = null,
    /// Programs this renderer recorded itself (not imported), for the tests.
    stores: usize = 0,

    const recent_slots = 256;
    const recent_ways = 4;
    const no_program = std.math.maxInt(u32);

    pub fn init(gpa: Allocator) Programs {
        return .{ .gpa = gpa };
    }

    pub fn deinit(c: *Programs) void {
        c.programs.deinit(c.gpa);
        c.by_hash.deinit(c.gpa);
        c.signatures.deinit(c.gpa);
        c.freeBodies();
        c.bodies.deinit(c.gpa);
        c.signature.deinit(c.gpa);
        c.slots.deinit(c.gpa);
        c.recorder.ops.deinit(c.gpa);
        c.names.deinit(c.gpa);
    }

    /// How many of this renderer's program bodies are `other`'s, the same allocations
    /// (PERF.md H137: an import shares, never copies). For the tests.
    pub fn sharedBodies(c: *const Programs, other: *const Programs) usize {
        var count: usize = 0;
        for (c.bodies.items) |mine| {
            for (other.bodies.items) |theirs| {
                if (mine.literals.ptr == theirs.literals.ptr) count += 1;
            }
        }
        return count;
    }

    /// Whether the cache has room for another program (limits.zig): `bytes`, the accounting
    /// of the Rust engine's `Programs::insert`.
    fn full(c: *const Programs) bool {
        return c.programs.items.len >= limits.programs_max or c.bytes > limits.program_bytes_max;
    }

    /// Frees the bodies this renderer owns: all of them without a shared table, none with
    /// one (`Shared` owns them).
    fn freeBodies(c: *Programs) void {
        if (c.shared != null) return;
        for (c.bodies.items) |*b| b.free(c.gpa);
    }

    pub fn clear(c: *Programs) void {
        c.freeBodies();
        c.programs.clearRetainingCapacity();
        c.by_hash.clearRetainingCapacity();
        c.recent = @splat(@splat(no_program));
        c.signatures.clearRetainingCapacity();
        c.bodies.clearRetainingCapacity();
        c.bytes = 0;
    }

    /// The program lookup of the record stream `start..end`, read from the chunk bytes
    /// (`scan`): `.hit` replays, `.miss` and `.unsupported` take the full parse (which may
    /// then `signTree`). The Rust engine's `Programs::sign`.
    pub fn sign(c: *Programs, p: *Parser, start: u32, end: u32) Allocator.Error!Sign {
        if (!try c.scan(p, start, end)) return .unsupported;
        const found = c.lookup();
        if (found == .miss) if (c.shared) |sh| return c.import(sh);
        return found;
    }

    /// A `.miss` at `-t 2` and up: the program another renderer learnt for this signature
    /// (PERF.md H95), its body shared, not copied (H137), else still `.miss`.
    fn import(c: *Programs, sh: *Shared) Allocator.Error!Sign {
        @branchHint(.cold);
        const body = sh.find(std.mem.sliceAsBytes(c.signature.items)) orelse return .miss;
        if (c.full()) return .miss;
        try c.reserveProgram();
        return .{ .hit = c.add(body) };
    }

    /// Room in the lists `add` appends to, so that it cannot fail once a body is made.
    fn reserveProgram(c: *Programs) Allocator.Error!void {
        try c.signatures.ensureUnusedCapacity(c.gpa, c.signature.items.len);
        try c.bodies.ensureUnusedCapacity(c.gpa, 1);
        try c.programs.ensureUnusedCapacity(c.gpa, 1);
        try c.by_hash.ensureUnusedCapacity(c.gpa, 1);
    }

    /// Adds `body` under the current signature (room made by `reserveProgram`).
    fn add(c: *Programs, body: Body) Program {
        assert(body.literals.len >= body.tail_start + body.tail_len + escape.pad_bytes);
        const prog: Program = .{
            .signature_start = @intCast(c.signatures.items.len),
            .signature_len = @intCast(c.signature.items.len),
            .body = @intCast(c.bodies.items.len),
        };
        c.signatures.appendSliceAssumeCapacity(c.signature.items);
        c.bodies.appendAssumeCapacity(body);
        c.bytes += body.cost();
        c.by_hash.putAssumeCapacity(c.hash(), @intCast(c.programs.items.len));
        c.remember(c.recentSlot(), @intCast(c.programs.items.len));
        c.programs.appendAssumeCapacity(prog);
        return prog;
    }

    /// The program lookup of a parsed record rooted at instance `root`, for when the byte
    /// scan gave up: `.miss` records the slow path's output under the signature.
    pub fn signTree(c: *Programs, p: *Parser, root: u32) Allocator.Error!Sign {
        c.signature.clearRetainingCapacity();
        c.slots.clearRetainingCapacity();
        if (!try c.signInstance(p, root)) return .unsupported;
        const found = c.lookup();
        if (found == .miss) if (c.shared) |sh| return c.import(sh);
        return found;
    }

    /// The current signature's program, or `.miss`.
    fn lookup(c: *Programs) Sign {
        const prog = c.find() orelse return .miss;
        return .{ .hit = prog.* };
    }

    fn signInstance(c: *Programs, p: *Parser, inst_index: u32) Allocator.Error!bool {
        const inst = p.node(inst_index).*;
        assert(inst.kind == .instance);
        if (inst.kids.len > limits.program_values_max) return false;
        try c.signHead(template.fingerprint(p, inst.ref.definition), inst.kids.len);
        const vals = p.edges(inst.kids);
        for (vals) |vi| {
            const v = p.node(vi);
            if (v.flags & tree.flag_failed != 0) return false;
            if (v.vtype == T.binxml) {
                const kids = v.kids;
                if (!onlyInstances(p, kids)) {
                    if (!try c.signFragment(p, kids)) return false;
                    continue;
                }
                try c.reserve(1);
                c.signature.appendAssumeCapacity(T.binxml | (kids.len << 8));
                var k: u32 = 0;
                while (k < kids.len) : (k += 1) {
                    const kid = p.edges(kids)[k];
                    if (p.node(kid).kind != .instance) return false;
                    if (!try c.signInstance(p, kid)) return false;
                }
                continue;
            }
            if (!try c.signValue(p.chunk, v.value())) return false;
            const vm = p.nodeMut(vi);
            vm.dep = @intCast(c.slots.items.len - 1);
            vm.flags |= tree.flag_slot;
        }
        return true;
    }

    /// Whether a BinXml value's elements are template instances only (at least one): the
    /// stream was instances, not a raw element fragment.
    fn onlyInstances(p: *const Parser, kids: tree.Span) bool {
        if (kids.len == 0) return false;
        for (p.edges(kids)) |k| {
            if (p.node(k).kind != .instance) return false;
        }
        return true;
    }

    /// Signs a BinXml value whose stream is a raw element fragment (top-level `kids`) and
    /// numbers its values, the words `scanFragment` reads from the bytes (PERF.md H69).
    fn signFragment(c: *Programs, p: *Parser, kids: tree.Span) Allocator.Error!bool {
        try c.signature.appendSlice(c.gpa, &.{ T.binxml | (1 << 8), fragment.begin });
        var k: u32 = 0;
        while (k < kids.len) : (k += 1) {
            if (!try c.signFragmentNode(p, p.edges(kids)[k], 0)) return false;
        }
        try c.signature.append(c.gpa, fragment.end_fragment);
        return true;
    }

    /// One node of a raw fragment (`signFragment`): an element with its attributes and
    /// children, a value, a reference (H146), or a template instance; anything else gives up.
    fn signFragmentNode(c: *Programs, p: *Parser, n: u32, depth: u32) Allocator.Error!bool {
        if (depth > limits.element_depth_max) return false;
        const node = p.node(n).*;
        switch (node.kind) {
            .element => {
                const name = try c.fragmentId(p, node.ref.name) orelse return false;
                try c.signature.appendSlice(c.gpa, &.{ fragment.element, name });
                var a: u32 = 0;
                while (a < node.attrs.len) : (a += 1) {
                    const attr = p.node(p.edges(node.attrs)[a]).*;
                    const attr_name = try c.fragmentId(p, attr.ref.name) orelse return false;
                    try c.signature.appendSlice(c.gpa, &.{ fragment.attribute, attr_name });
                    var i: u32 = 0;
                    while (i < attr.kids.len) : (i += 1) {
                        const item = p.edges(attr.kids)[i];
                        switch (p.node(item).kind) {
                            .value => if (!try c.signFragmentValue(p, item)) return false,
                            .char_ref, .entity_ref => {
                                if (!try c.signFragmentReference(p, item)) return false;
                            },
                            else => return false,
                        }
                    }
                }
                if (node.flags & tree.flag_self_closing != 0) {
                    try c.signature.append(c.gpa, fragment.close_empty);
                    return true;
                }
                try c.signature.append(c.gpa, fragment.close_start);
                var i: u32 = 0;
                while (i < node.kids.len) : (i += 1) {
                    if (!try c.signFragmentNode(p, p.edges(node.kids)[i], depth + 1)) return false;
                }
                try c.signature.append(c.gpa, fragment.end);
                return true;
            },
            .value => return c.signFragmentValue(p, n),
            .instance => {
                try c.signature.append(c.gpa, fragment.instance);
                return c.signInstance(p, n);
            },
            .char_ref, .entity_ref => return c.signFragmentReference(p, n),
            else => return false,
        }
    }

    /// A reference of a raw fragment (PERF.md H146): its text is its name's or code's alone
    /// (`&quot;`, `\"` in JSON; `&#65;`), literal bytes of the program, so the signature
    /// holds the name's id or the code unit, the words `scanFragment` reads.
    fn signFragmentReference(c: *Programs, p: *Parser, n: u32) Allocator.Error!bool {
        const node = p.node(n).*;
        if (node.kind == .char_ref) {
            try c.signature.appendSlice(c.gpa, &.{ fragment.char_ref, node.ref.code_unit });
            return true;
        }
        assert(node.kind == .entity_ref);
        const name = try c.fragmentId(p, node.ref.name) orelse return false;
        try c.signature.appendSlice(c.gpa, &.{ fragment.entity_ref, name });
        return true;
    }

    /// An inline value of a raw fragment: signed and numbered as the next slot (arrays,
    /// which no expansion follows here, give up as `scanFragment` does).
    fn signFragmentValue(c: *Programs, p: *Parser, n: u32) Allocator.Error!bool {
        const v = p.node(n).value();
        if (v.vtype >= T.array or v.vtype == T.binxml) return false;
        if (!try c.signValue(p.chunk, v)) return false;
        const vm = p.nodeMut(n);
        vm.dep = @intCast(c.slots.items.len - 1);
        vm.flags |= tree.flag_slot;
        return true;
    }

    /// Signature words of an instance: its definition's fingerprint and value count.
    fn signHead(c: *Programs, fp: u64, count: u32) Allocator.Error!void {
        assert(count <= limits.program_values_max);
        // Most values then find their room already reserved.
        try ensureRoom(u32, &c.signature, c.gpa, 3 + count);
        try ensureRoom(Value, &c.slots, c.gpa, count);
        c.signature.appendAssumeCapacity(headWord(fp));
        c.signature.appendAssumeCapacity(@truncate(fp >> 32));
        c.signature.appendAssumeCapacity(count);
    }

    /// An instance's first signature word, the fingerprint's low half, moved off the
    /// `fragment` markers: where a BinXml value's words begin, an instance and a raw fragment
    /// must read apart (Rust's instances begin with a value count, below every marker).
    pub fn headWord(fp: u64) u32 {
        const low: u32 = @truncate(fp);
        const word = if (low >> 16 == fragment.begin >> 16) low ^ 0x8000_0000 else low;
        assert(word >> 16 != fragment.begin >> 16);
        return word;
    }

    /// Signs substitution value `v` (not BinXml) and numbers it as the next slot.
    inline fn signValue(
        c: *Programs,
        chunk: []const u8,
        v: values_decode.Value,
    ) Allocator.Error!bool {
        assert(v.vtype != T.binxml);
        if (c.slots.items.len >= limits.program_values_max) return false;
        if (v.vtype > T.array) return c.signArray(chunk, v);
        const empty: u32 = @intFromBool(values_decode.isEmptyScalar(chunk, v));
        try c.reserve(1);
        c.signature.appendAssumeCapacity(v.vtype | (empty << 8));
        c.slots.appendAssumeCapacity(v);
        return true;
    }

    fn signArray(c: *Programs, chunk: []const u8, v: values_decode.Value) Allocator.Error!bool {
        assert(v.vtype > T.array);
        const count = values_decode.itemCount(chunk, v);
        if (count > limits.program_array_items_max) return false;
        try c.reserve(4);
        c.signature.appendAssumeCapacity(v.vtype | (@as(u32, @intFromBool(count == 0)) << 8));
        if (count > 1) {
            // Expanded arrays: the item count and which string items are empty (an
            // empty item produces no node) decide the structure.
            var mask: u64 = 0;
            var it = values_decode.Items.init(chunk, v);
            var k: u6 = 0;
            while (it.next()) |item| : (k +%= 1) {
                if (values_decode.isEmpty(chunk, item)) mask |= @as(u64, 1) << k;
            }
            c.signature.appendSliceAssumeCapacity(
                &.{ @intCast(count), @truncate(mask), @truncate(mask >> 32) },
            );
        }
        c.slots.appendAssumeCapacity(v);
        return true;
    }

    /// Room for `words` more signature words and one more slot.
    inline fn reserve(c: *Programs, words: usize) Allocator.Error!void {
        if (c.signature.capacity - c.signature.items.len < words)
            try c.signature.ensureUnusedCapacity(c.gpa, words);
        if (c.slots.capacity == c.slots.items.len) try c.slots.ensureUnusedCapacity(c.gpa, 1);
    }

    /// The fast path of a record stream `start..end` that is one template instance: signs
    /// it and numbers its values straight from the chunk bytes, building no tree. Reads in
    /// the token parser's order with its checks (definitions are parsed and cached as the
    /// parser would), and gives up (false) on anything else: other token shapes and every
    /// error, which the full parse then reproduces and reports.
    fn scan(c: *Programs, p: *Parser, start: u32, end: u32) Allocator.Error!bool {
        c.signature.clearRetainingCapacity();
        c.slots.clearRetainingCapacity();
        return c.scanStream(p, start, end) catch |e| switch (e) {
            error.OutOfMemory => error.OutOfMemory,
            else => false,
        };
    }

    /// A stream of exactly: fragment headers, one template instance, then the end of the
    /// window or an end-of-stream token.
    fn scanStream(c: *Programs, p: *Parser, start: u32, end: u32) tokens.Error!bool {
        assert(end <= p.chunk.len);
        if (p.depth >= limits.stream_nesting_max) return false;
        p.depth += 1;
        defer p.depth -= 1;
        var pos = start;
        while (pos < end and p.chunk[pos] == 0x0F) pos += 4;
        if (pos >= end) return false;
        if (p.chunk[pos] != 0x0C) {
            // Nested in a value: a raw element fragment (PERF.md H69).
            if (p.depth < 2) return false;
            return c.scanFragment(p, pos, end);
        }
        pos += 1;
        if (!try c.scanInstance(p, &pos)) return false;
        if (pos > p.chunk.len) return false;
        return pos >= end or p.chunk[pos] == 0x00;
    }

    /// Signs a BinXml value's stream `start..end` that is a raw element fragment, not a
    /// template instance (PERF.md H69): the words `signFragment` gives its tree (element and
    /// attribute names by interned text, start-tag ends, end tags, nested instances) and one
    /// word per inline value, numbered as the next slot. Checks what `parseStream` checks, and
    /// drops what it drops (attributes without values, values before a start tag's first
    /// attribute), so a signature seen rendered once parses again; gives up on every other
    /// token (CDATA, references, PIs, nested BinXml values, arrays), which then render the
    /// slow way.
    noinline fn scanFragment(c: *Programs, p: *Parser, start: u32, end: u32) tokens.Error!bool {
        const chunk = p.chunk;
        var pos = start;
        var open: u32 = 0;
        var pending = false;
        // The pending start tag's current attribute: its name word, until its first value.
        var attribute: ?u32 = null;
        var attribute_signed = false;
        try c.signature.appendSlice(c.gpa, &.{fragment.begin});
        while (pos < end) {
            const token = chunk[pos];
            pos += 1;
            switch (token) {
                0x00 => break,
                0x0F => pos += 3,
                0x01, 0x41 => {
                    if (pending) return false;
                    _ = try p.readU32(&pos); // Element data size: ignored.
                    const name = try c.nameWord(p, &pos) orelse return false;
                    if (token == 0x41) _ = try p.readU32(&pos); // Attribute list size.
                    try c.signature.appendSlice(c.gpa, &.{ fragment.element, name });
                    pending = true;
                    attribute = null;
                },
                0x02, 0x03 => {
                    if (!pending) return false;
                    pending = false;
                    attribute = null;
                    if (token == 0x03) {
                        try c.signature.append(c.gpa, fragment.close_empty);
                    } else {
                        if (open >= limits.element_depth_max) return false;
                        open += 1;
                        try c.signature.append(c.gpa, fragment.close_start);
                    }
                },
                0x04 => {
                    if (pending or open == 0) return false;
                    open -= 1;
                    try c.signature.append(c.gpa, fragment.end);
                },
                0x05, 0x45 => {
                    const vtype = try p.readU8(&pos);
                    if (vtype == T.binxml or vtype >= T.array) return false;
                    const d = if (vtype == T.string)
                        fragmentText(chunk, pos) orelse return false
                    else
                        try values_decode.decodeUnsized(chunk, pos, vtype);
                    pos = d.end;
                    if (!(try c.placeContent(pending, attribute, &attribute_signed, open) orelse
                        return false)) continue;
                    if (!try c.signValue(chunk, d.value)) return false;
                },
                0x06, 0x46 => {
                    if (!pending) return false;
                    attribute = try c.nameWord(p, &pos) orelse return false;
                    attribute_signed = false;
                },
                // A reference's text is its name's or code's alone (H146): the parser's
                // `content` places it as it places a value (dropped before a start tag's
                // first attribute, refused outside every element), so the checks are the
                // value's. CAPI2's HTTP header lists have `&quot;`.
                0x08, 0x48, 0x09, 0x49 => {
                    const char = token & 0x0F == 0x08;
                    const word: u32 = if (char)
                        try p.readU16(&pos)
                    else
                        try c.nameWord(p, &pos) orelse return false;
                    if (!(try c.placeContent(pending, attribute, &attribute_signed, open) orelse
                        return false)) continue;
                    const marker = if (char) fragment.char_ref else fragment.entity_ref;
                    try c.signature.appendSlice(c.gpa, &.{ marker, word });
                },
                0x0C => {
                    if (pending) return false;
                    try c.signature.append(c.gpa, fragment.instance);
                    if (!try c.scanInstance(p, &pos)) return false;
                },
                else => return false,
            }
            if (pos > chunk.len) return false;
        }
        if (pending or open > 0) return false;
        try c.signature.append(c.gpa, fragment.end_fragment);
        return true;
    }

    /// A raw fragment's text value (type 0x01) at `pos`, read inline as `scanInstance` reads
    /// a substitution's (PERF.md H168; the Rust engine's `fragment_value`, its H132): its
    /// declared units, which the writers stop at the first NUL, without `decodeUnsized`'s
    /// call and scan for it; null where `decodeUnsized` fails (past the chunk's end). Most of
    /// a fragment's values are texts.
    inline fn fragmentText(chunk: []const u8, pos: u32) ?values_decode.Decoded {
        if (pos > chunk.len or chunk.len - pos < 2) return null;
        const n: u32 = std.mem.readInt(u16, chunk[pos..][0..2], .little);
        if (chunk.len - pos - 2 < 2 * n) return null;
        const value: Value = .{ .vtype = T.string, .start = pos + 2, .len = 2 * n };
        return .{ .value = value, .end = pos + 2 + 2 * n };
    }

    /// Where the parser's `content` puts a raw fragment's value or reference (`scanFragment`):
    /// dropped before a start tag's first attribute (false), refused outside every element
    /// (null), else kept (true), the pending attribute's name signed before its first item.
    inline fn placeContent(
        c: *Programs,
        pending: bool,
        attribute: ?u32,
        attribute_signed: *bool,
        open: u32,
    ) Allocator.Error!?bool {
        if (pending) {
            const name = attribute orelse return false;
            if (!attribute_signed.*) {
                try c.signature.appendSlice(c.gpa, &.{ fragment.attribute, name });
                attribute_signed.* = true;
            }
        } else if (open == 0) return null;
        return true;
    }

    /// Signs the name reference at `pos.*` (6.3) by its text's id (`FragmentNames`), skipping
    /// an inline entry as the parser does; null past `FragmentNames`' bounds. Inline in
    /// `scanFragment` up to the `recent` slot, which answers ~87 % of calls on corpus-30mb
    /// (PERF.md H184): a call with its frame cost more than that lookup.
    inline fn nameWord(c: *Programs, p: *Parser, pos: *u32) tokens.Error!?u32 {
        const offset = try p.readU32(pos);
        if (offset == pos.*) {
            var q = offset + 6;
            const count = try p.readU16(&q);
            pos.* += 10 + 2 * @as(u32, count);
        }
        const names = &c.names;
        if (names.chunk != p.chunks) names.startChunk(p.chunks);
        const at = FragmentNames.recentName(offset);
        if (names.recent[at].offset == offset) return names.recent[at].id;
        return c.nameWordMiss(p, offset, at);
    }

    /// `nameWord` past its `recent` slot `at`: the id by the entry's text, kept in the slot.
    noinline fn nameWordMiss(c: *Programs, p: *Parser, offset: u32, at: usize) tokens.Error!?u32 {
        assert(at == FragmentNames.recentName(offset));
        assert(c.names.chunk == p.chunks and c.names.recent[at].offset != offset);
        const id = try c.nameId(p, offset, false) orelse return null;
        c.names.recent[at] = .{ .offset = offset, .id = id };
        return id;
    }

    /// The id of the name entry at chunk offset `offset`: the parser's id by the entry's raw
    /// UTF-16 text when the run has seen that text (PERF.md H104, H123), else by
    /// `tree.Names.resolve` (which checks it and reports what is wrong), then `fragmentId`;
    /// `simple` (tests) decodes the entry and interns its UTF-8 text every time.
    fn nameId(c: *Programs, p: *Parser, offset: u32, simple: bool) tokens.Error!?u32 {
        if (simple) {
            const name = try p.names.resolveSimple(p.gpa, p.chunk, offset);
            return c.names.intern(c.gpa, p.nameText(name), c.shared);
        }
        // The entry's one bounds check (the review of H128; PERF.md H148).
        const entry = tree.entryBytes(p.chunk, offset);
        const stored = if (entry) |e| FragmentNames.rawBytes(e) else null;
        // The entry's slot, found once: read on a hit, written after a miss.
        const raw_slot = if (stored) |bytes| c.names.rawSlot(bytes) else null;
        if (raw_slot) |slot| {
            const bytes = stored.?;
            if (slot.len == bytes.len and slot.generation == p.names.generation and
                std.mem.eql(u8, slot.bytes[0..slot.len], bytes))
            {
                c.names.raw_hits += 1;
                return c.fragmentId(p, slot.id);
            }
        }
        // A bad entry is left to `resolve`, which reports it.
        const units = if (entry) |e| tree.entryUnits(e) else null;
        const known = if (units) |raw| p.names.unitsId(raw) else null;
        const id = known orelse try p.names.resolve(p.gpa, p.chunk, offset);
        if (raw_slot) |slot| {
            // Equal stored bytes cut to equal units: the same id while the generation holds.
            const bytes = stored.?;
            slot.len = @intCast(bytes.len);
            @memcpy(slot.bytes[0..bytes.len], bytes);
            slot.id = id;
            slot.generation = p.names.generation;
        }
        return c.fragmentId(p, id);
    }

    /// The signature word of the parser's name id `name` (`FragmentNames`), or null past its
    /// bounds. `c` serves one parser (a renderer's).
    fn fragmentId(c: *Programs, p: *const Parser, name: u32) Allocator.Error!?u32 {
        const n = &c.names;
        if (n.generation != p.names.generation) {
            n.of_name.clearRetainingCapacity();
            n.generation = p.names.generation;
        }
        if (name < n.of_name.items.len) {
            const id = n.of_name.items[name];
            if (id != FragmentNames.no_id) return id;
        }
        const id = try n.intern(c.gpa, p.nameText(name), c.shared) orelse return null;
        assert(id != FragmentNames.no_id);
        if (n.of_name.items.len <= name) {
            const missing = name + 1 - n.of_name.items.len;
            try n.of_name.appendNTimes(c.gpa, FragmentNames.no_id, missing);
        }
        n.of_name.items[name] = id;
        return id;
    }

    /// Signs one template instance (after its 0x0C byte) and numbers its values, nested
    /// instances where their BinXml value is. Null, strings, SIDs, BinXml and the fixed-width
    /// scalars are signed here with `decodeSized`'s checks; the rest go through `scanOther`.
    /// Inline by hand, so the dump's cost does not hang on LLVM inlining `decodeSized`
    /// (PERF.md H24, H27; the Rust engine's H26).
    fn scanInstance(c: *Programs, p: *Parser, pos: *u32) tokens.Error!bool {
        const head = try template.readInstanceHead(p, pos, .fingerprint);
        if (head.count > limits.program_values_max) return false;
        try c.signHead(head.fingerprint, head.count);
        const chunk = p.chunk;
        var a = c.appender();
        var i: u32 = 0;
        while (i < head.count) : (i += 1) {
            // Invariant: room for one word and one slot per value left (`signHead`,
            // `reserveValues`).
            assert(c.signature.capacity - a.words >= head.count - i);
            assert(c.slots.capacity - a.slots >= head.count - i);
            const start = pos.*;
            if (start > chunk.len) return false;
            const room: u32 = @intCast(chunk.len - start);
            const size: u32 = head.size(chunk, i);
            const t = head.vtype(chunk, i);
            const w = values_decode.fixedWidth(t);
            if (t == T.string) {
                if (size % 2 != 0 or size > room) return false;
                const empty = size == 0 or (chunk[start] | chunk[start + 1]) == 0;
                const value: Value = .{ .vtype = T.string, .start = start, .len = size };
                if (!a.sign(T.string | @as(u32, @intFromBool(empty)) << 8, value)) return false;
                pos.* = start + size;
            } else if (w != 0 and t != T.boolean) {
                if (w > room) return false;
                if (!a.sign(t, .{ .vtype = t, .start = start, .len = w })) return false;
                pos.* = start + @max(w, size);
            } else if (t == T.null_type) {
                if (size > room) return false;
                const value: Value = .{ .vtype = T.null_type, .start = start, .len = size };
                if (!a.sign(T.null_type | 1 << 8, value)) return false;
                pos.* = start + size;
            } else if (t == T.sid) {
                // `decodeSized`'s SID: the length comes from the sub-authority count.
                if (room < 8) return false;
                const len = 8 + 4 * @as(u32, chunk[start + 1]);
                if (len > room) return false;
                const value: Value = .{ .vtype = T.sid, .start = start, .len = len };
                if (!a.sign(T.sid, value)) return false;
                pos.* = start + @max(len, size);
            } else if (t == T.binxml and size > 0) {
                if (size > room) return false;
                // Every type checked before the nested scan's side effects (definitions
                // parsed and cached), as `readInstanceHead` does for the parser (H64).
                try head.checkTypes(chunk, i + 1);
                a.word_ptr[a.words] = T.binxml | (1 << 8);
                a.words += 1;
                c.publish(a);
                if (!try c.scanStream(p, start, start + size)) return false;
                try c.reserveValues(head.count - i - 1);
                a = c.appender();
                pos.* = start + size;
            } else {
                c.publish(a);
                pos.* = try c.scanOther(p, start, @intCast(size), t) orelse return false;
                try c.reserveValues(head.count - i - 1);
                a = c.appender();
            }
        }
        c.publish(a);
        return true;
    }

    /// The ends of `signature` and `slots` held in locals across `scanInstance`'s loop, so
    /// that an append is two stores and no reload of the lists' fields (PERF.md H65).
    /// Appends only into reserved room; `publish` before anything else reads the lists.
    const Appender = struct {
        word_ptr: [*]u32,
        slot_ptr: [*]Value,
        words: usize,
        slots: usize,

        /// Appends a value's signature word and numbers it as the next slot, in the room
        /// reserved; false when the program would have too many values.
        inline fn sign(a: *Appender, word: u32, value: Value) bool {
            if (a.slots >= limits.program_values_max) return false;
            a.word_ptr[a.words] = word;
            a.words += 1;
            a.slot_ptr[a.slots] = value;
            a.slots += 1;
            return true;
        }
    };

    inline fn appender(c: *const Programs) Appender {
        return .{
            .word_ptr = c.signature.items.ptr,
            .slot_ptr = c.slots.items.ptr,
            .words = c.signature.items.len,
            .slots = c.slots.items.len,
        };
    }

    inline fn publish(c: *Programs, a: Appender) void {
        assert(a.words <= c.signature.capacity and a.slots <= c.slots.capacity);
        c.signature.items.len = a.words;
        c.slots.items.len = a.slots;
    }

    /// Signs a value of a type `scanInstance` leaves to `decodeSized` (ANSI, Binary, Bool,
    /// SizeT, an empty BinXml, arrays) and returns where the next value starts, or null to
    /// give up. Out of line: rare in logs.
    noinline fn scanOther(
        c: *Programs,
        p: *Parser,
        start: u32,
        size: u16,
        t: u8,
    ) tokens.Error!?u32 {
        // The only branch an unknown type reaches: `readInstanceHead` leaves the check to
        // the scan (PERF.md H64), and giving up lets the parser report it.
        if (!values_decode.isKnownType(t)) return null;
        const d = try values_decode.decodeSized(p.chunk, start, size, t, .declared);
        assert(d.value.vtype != T.binxml);
        if (template.isAnsi(d.value.vtype)) try values_format.checkAnsi(p.ansi, p.chunk, d.value);
        if (!try c.signValue(p.chunk, d.value)) return null;
        return @max(d.end, start + size);
    }

    /// Room for one word and one slot for each of `count` more values of an instance.
    fn reserveValues(c: *Programs, count: u32) Allocator.Error!void {
        try ensureRoom(u32, &c.signature, c.gpa, count);
        try ensureRoom(Value, &c.slots, c.gpa, count);
    }

    fn hash(c: *const Programs) u64 {
        return std.hash.Wyhash.hash(0, std.mem.sliceAsBytes(c.signature.items));
    }

    /// The program for the current signature, if compiled: the one last found with the
    /// same head and length if its signature is equal (most records repeat a recent shape),
    /// else by the signature's hash (PERF.md H142).
    pub fn find(c: *Programs) ?*const Program {
        const slot = c.recentSlot();
        for (c.recent[slot]) |recent| {
            if (recent == no_program) break;
            const prog = &c.programs.items[recent];
            if (c.signatureIs(prog)) return prog;
        }
        const index = c.by_hash.get(c.hash()) orelse return null;
        const prog = &c.programs.items[index];
        if (!c.signatureIs(prog)) return null;
        c.remember(slot, index);
        return prog;
    }

    /// `index` as the latest of `recent[slot]`, the others one way down, the oldest out.
    fn remember(c: *Programs, slot: usize, index: u32) void {
        assert(index != no_program);
        const ways = &c.recent[slot];
        std.mem.copyBackwards(u32, ways[1..], ways[0 .. recent_ways - 1]);
        ways[0] = index;
    }

    /// Whether `prog` was stored under the current signature.
    fn signatureIs(c: *const Programs, prog: *const Program) bool {
        const words = c.signature.items;
        if (prog.signature_len != words.len) return false;
        const stored = c.signatures.items[prog.signature_start..][0..words.len];
        // The last word first: one template's shapes of one length mostly part there (H145),
        // and a way that does costs no pass over the words before it (PERF.md H170).
        if (words.len > 0 and stored[words.len - 1] != words[words.len - 1]) return false;
        return std.mem.eql(u32, stored, words);
    }

    /// `recent`'s slot for the current signature: its first word (an instance's head, a
    /// content hash's low half), its length and its last word (which often tells one
    /// template's shapes of one length apart, PERF.md H145).
    fn recentSlot(c: *const Programs) usize {
        const words = c.signature.items;
        const head: u32 = if (words.len > 0) words[0] else 0;
        const last: u32 = if (words.len > 0) words[words.len - 1] else 0;
        const len: u32 = @truncate(words.len);
        const mixed = head +% len *% 31 +% ((last *% 0x9E37_79B1) >> 24);
        return mixed % recent_slots;
    }

    /// Writes a record with program `prog`; `false` (output unfinished) when the output passes
    /// `limit`. Checked before each value, so a long value substituted many times stops the
    /// record at `limit` plus one value and one literal, not at their product.
    /// The current record's substitution values (valid after a `.hit`).
    pub fn slotValues(c: *const Programs) []const Value {
        return c.slots.items;
    }

    /// The filter plan of `prog` (`store`).
    pub fn plan(c: *const Programs, prog: *const Program) *const filter.Plan {
        return &c.bodies.items[prog.body].plan;
    }

    /// A bound on the bytes `replay` writes for `prog` over the current slots: its literal
    /// bytes and, for each step, 64 bytes and 96 for each of its value's length units (UTF-16
    /// units for strings, bytes for the rest: no value type's text is longer, a UTF-16 unit
    /// escaping to 6 bytes, an `f64` to about 330 digits). The Rust engine's
    /// `Programs::replay_bound`.
    pub fn replayBound(c: *const Programs, prog: *const Program) usize {
        const b = &c.bodies.items[prog.body];
        var values: usize = 0;
        for (b.ops) |op| {
            if (op.slot >= c.slots.items.len) continue;
            const v = c.slots.items[op.slot];
            values += if (v.vtype == T.string) v.len / 2 else v.len;
        }
        return b.literals.len - escape.pad_bytes + 64 * b.ops.len + 96 * values;
    }

    pub fn replay(
        c: *const Programs,
        prog: *const Program,
        out: *Out,
        f: values_format.Format,
        limit: usize,
    ) values_decode.Error!bool {
        const b = &c.bodies.items[prog.body];
        // A body keeps `pad_bytes` written bytes past its last literal (`Body`).
        assert(b.literals.len >= b.tail_start + b.tail_len + escape.pad_bytes);
        for (b.ops) |op| {
            try out.writePadded(b.literals[op.literal_start..][0..op.literal_len]);
            if (out.len() > limit) return false;
            // The slot in place, not a copy (PERF.md H56); an array item is made here.
            var item: Value = undefined;
            const v: *const Value = if (op.item == whole_value) &c.slots.items[op.slot] else v: {
                item = arrayItem(f.chunk, c.slots.items[op.slot], op.item);
                break :v &item;
            };
            switch (op.mode) {
                .json => try values_format.writeSlot(out, f, v, .json),
                .xml_text => try values_format.writeSlot(out, f, v, .xml_text),
                .xml_attr => try values_format.writeSlot(out, f, v, .xml_attr),
            }
        }
        try out.writePadded(b.literals[b.tail_start..][0..b.tail_len]);
        return out.len() <= limit;
    }

    fn arrayItem(chunk: []const u8, v: values_decode.Value, index: u16) values_decode.Value {
        var it = values_decode.Items.init(chunk, v);
        var k: u16 = 0;
        while (it.next()) |item| : (k += 1) {
            if (k == index) return item;
        }
        // The signature fixed the item count, so the item exists.
        return .{ .vtype = T.null_type, .start = v.start, .len = 0 };
    }

    /// Starts capturing a slow-path rendering that begins at output offset `start`.
    pub fn beginRecorder(c: *Programs, start: usize) *Recorder {
        c.recorder.start = start;
        c.recorder.ops.clearRetainingCapacity();
        c.recorder.poisoned = false;
        return &c.recorder;
    }

    /// Stores the captured rendering `out[recorder.start..]` as the current signature's
    /// program.
    /// `learnt` (the program's filter plan, or none) is the program's from here on, stored or
    /// not.
    pub fn store(c: *Programs, out: *const Out, learnt: ?filter.Plan) Allocator.Error!void {
        const cap = &c.recorder;
        // Until the body holds it.
        var held = learnt;
        defer if (held) |p| p.deinit(c.gpa);
        if (cap.poisoned or c.full()) return;
        try c.reserveProgram();
        var body = try c.made(out.list.items[cap.start..]);
        if (held) |p| body.plan = p;
        held = null;
        if (c.shared) |sh| {
            const key = c.gpa.dupe(u8, std.mem.sliceAsBytes(c.signature.items)) catch |err| {
                body.free(c.gpa);
                return err;
            };
            body = try sh.put(key, body);
        }
        _ = c.add(body);
        c.stores += 1;
    }

    /// The body of the captured rendering `text`: the bytes between the recorder's value
    /// texts as literals, then `pad_bytes` zero bytes.
    fn made(c: *const Programs, text: []const u8) Allocator.Error!Body {
        const cap = &c.recorder;
        var literal_bytes: usize = text.len;
        for (cap.ops.items) |w| literal_bytes -= w.end - w.begin;
        const ops = try c.gpa.alloc(Op, cap.ops.items.len);
        errdefer c.gpa.free(ops);
        const literals = try c.gpa.alloc(u8, literal_bytes + escape.pad_bytes);
        var at: u32 = 0;
        var to: u32 = 0;
        for (cap.ops.items, ops) |w, *op| {
            assert(w.begin >= at);
            const run = text[at..w.begin];
            @memcpy(literals[to..][0..run.len], run);
            op.* = .{
                .literal_start = to,
                .literal_len = @intCast(run.len),
                .slot = w.slot,
                .item = w.item,
                .mode = w.mode,
            };
            to += @intCast(run.len);
            at = w.end;
        }
        const tail = text[at..];
        @memcpy(literals[to..][0..tail.len], tail);
        assert(to + tail.len == literal_bytes);
        @memset(literals[literal_bytes..], 0);
        return .{
            .ops = ops,
            .literals = literals,
            .tail_start = to,
            .tail_len = @intCast(tail.len),
        };
    }
};

/// Writes value node `n` for a renderer, recording it when it is a numbered substitution.
pub fn emit(
    out: *Out,
    f: values_format.Format,
    n: *const tree.Node,
    comptime mode: escape.Mode,
    recorder: ?*Recorder,
) values_decode.Error!void {
    if (recorder) |cap| {
        if (n.flags & tree.flag_slot != 0) {
            const begin = out.len() - cap.start;
            try values_format.writeValue(out, f, n.value(), mode);
            const m: Mode = switch (mode) {
                .json => .json,
                .xml_text => .xml_text,
                .xml_attr => .xml_attr,
                .raw => @compileError("raw text is never a substitution value"),
            };
            const item: u16 = if (n.kids.len > 0) @intCast(n.kids.len - 1) else whole_value;
            try cap.ops.append(
                out.gpa,
                .{
                    .begin = @intCast(begin),
                    .end = @intCast(out.len() - cap.start),
                    .slot = n.dep,
                    .item = item,
                    .mode = m,
                },
            );
            return;
        }
    }
    try values_format.writeValue(out, f, n.value(), mode);
}

// ---------------------------------------------------------------------------------------
// Tests: compiled programs must reproduce the reference's bytes (shared fixtures whose
// records reuse templates with other values), and a program found is one compiled from the
// same signature.
const testing = @import("testing.zig");
const dump = @import("dump.zig");
const options = @import("options.zig");

/// Test helper: renders every chunk of `file` in order into `text`, each record expected to
/// render (no failures); returns the number of records.
fn renderEvery(
    gpa: std.mem.Allocator,
    renderer: *dump.Renderer,
    file: *const dump.EvtxFile,
    text: *std.ArrayList(u8),
) !usize {
    var records: usize = 0;
    var slots = file.order.iterator();
    while (slots.next()) |slot| {
        var result = dump.ChunkResult.init(gpa);
        defer result.deinit();
        try renderer.renderChunk(&file.input, slot, &result);
        for (result.entries.items) |*e| {
            try std.testing.expect(e.outcome == .rendered);
            records += 1;
            try text.appendSlice(gpa, result.text(e));
        }
    }
    return records;
}

/// Renders `fixture` in jsonl, jsonl with separate attributes and xml, checks each output
/// against the reference's `expected/<stem>.*` and its record count, and returns how many
/// programs each mode stored.
fn expectReplays(gpa: Allocator, fixture: []const u8, stem: []const u8, records: usize) ![3]usize {
    const bytes = try testing.readFixture(gpa, fixture);
    defer gpa.free(bytes);
    const cases = [3]struct { settings: options.Options, suffix: []const u8 }{
        .{
            .settings = .{ .format = .jsonl, .indent = false, .show_record_number = false },
            .suffix = ".jsonl",
        },
        .{
            .settings = .{
                .format = .jsonl,
                .indent = false,
                .show_record_number = false,
                .separate_json_attributes = true,
            },
            .suffix = ".sep.jsonl",
        },
        .{ .settings = .{}, .suffix = ".xml" },
    };
    var programs: [3]usize = undefined;
    for (&cases, &programs) |*case, *count| {
        var name_buffer: [128]u8 = undefined;
        const name = try std.fmt.bufPrint(&name_buffer, "expected/{s}{s}", .{ stem, case.suffix });
        const expected = try testing.readFixture(gpa, name);
        defer gpa.free(expected);
        const file = try dump.EvtxFile.open(gpa, dump.Input.fromBytes(bytes), &case.settings);
        var renderer: dump.Renderer = undefined;
        renderer.init(gpa, &case.settings);
        defer renderer.deinit();
        var text: std.ArrayList(u8) = .empty;
        defer text.deinit(gpa);
        const rendered = try renderEvery(gpa, &renderer, &file, &text);
        try std.testing.expectEqualStrings(expected, text.items);
        try std.testing.expectEqual(records, rendered);
        count.* = renderer.programs.programs.items.len;
    }
    return programs;
}

test "the shared table keeps the first program under a signature and hands others back" {
    // PERF.md H122: a renderer makes its body before it locks the table, so two may offer
    // one signature; the table keeps the first and hands it back to the second, freeing the
    // second's (H137: `put` owns what it is given). A body past the bounds is kept for its
    // maker only. The testing allocator catches a leak or a double free.
    const gpa = std.testing.allocator;
    var shared = Shared.init(gpa);
    defer shared.deinit();
    const texts = [_][]const u8{ "first", "second", "third" };
    var kept: [texts.len]Body = undefined;
    for (texts, &kept, 0..) |text, *got, k| {
        const body: Body = .{
            .ops = try gpa.alloc(Op, 1),
            .literals = try gpa.alloc(u8, text.len + escape.pad_bytes),
            .tail_start = 0,
            .tail_len = @intCast(text.len),
        };
        body.ops[0] = .{
            .literal_start = 0,
            .literal_len = 0,
            .slot = 0,
            .item = 0,
            .mode = .json,
        };
        @memcpy(body.literals[0..text.len], text);
        if (k == 2) shared.program_bytes = limits.program_bytes_max;
        got.* = try shared.put(try gpa.dupe(u8, &.{ 1, 0, 0, @intCast(k / 2) }), body);
    }
    try std.testing.expectEqualStrings("first", kept[0].literals[0..5]);
    try std.testing.expectEqual(kept[0].literals.ptr, kept[1].literals.ptr);
    try std.testing.expectEqualStrings("third", kept[2].literals[0..5]);
    try std.testing.expectEqual(kept[0].literals.ptr, shared.find(&.{ 1, 0, 0, 0 }).?.literals.ptr);
    try std.testing.expect(shared.find(&.{ 1, 0, 0, 1 }) == null);
    try std.testing.expectEqual(@as(usize, 1), shared.unlisted.items.len);
}

test "replayed programs give the reference's bytes in every mode; the cache is used" {
    // wrapped.evtx: 90 records of a few templates over 4 chunks (programs live across chunks).
    const gpa = std.testing.allocator;
    const programs = try expectReplays(gpa, "damaged/wrapped.evtx", "wrapped", 90);
    for (programs) |count| {
        // Far fewer programs than records: most records were replayed, not rendered anew.
        try std.testing.expect(count >= 1 and count * 4 <= 90);
    }
}

test "raw element fragments in BinXml values replay the reference's bytes (H69)" {
    // raw-fragments.evtx: 8 records whose BinXml value is a raw element fragment, one shape
    // repeated with other inline values; expected outputs are the reference's.
    const gpa = std.testing.allocator;
    const programs = try expectReplays(gpa, "synthetic/raw-fragments.evtx", "raw-fragments", 8);
    for (programs) |count| {
        // One program for each shape (records 1-4, 5-6, 7-8): the others replayed it. A
        // scan that gave up would store none, a signature the scan does not find again one
        // per record.
        try std.testing.expectEqual(@as(usize, 3), count);
    }
}

/// For the H146 test: one record (id `id`) whose template `<E>` holds a BinXml value, a raw
/// fragment `<Headers><Header>a&E;b&E;</Header><Via proxy="a&amp;&#C;">&#C;b</Via>
/// <Only>&lt;&nbsp;</Only></Headers>` with entity `E` and code `C`. The template is defined
/// in the first record, `def.*` its offset after.
fn referenceRecord(
    b: *testing.Builder,
    id: u64,
    def: *?u32,
    entity: []const u8,
    code: u16,
    a: []const u8,
    text_b: []const u8,
) void {
    const at = b.beginRecord();
    b.fragment();
    b.singleInstance(def, "E", T.binxml);
    b.u32le(1);
    const size_at = b.pos;
    b.u16le(0);
    b.raw(&.{ T.binxml, 0 });
    const value_start = b.pos;
    b.fragment();
    b.open("Headers", null, false);
    b.closeStart();
    b.open("Header", null, false);
    b.closeStart();
    b.text(a);
    b.byte(0x09);
    b.name(entity);
    b.text(text_b);
    b.byte(0x49);
    b.name(entity);
    b.end();
    b.open("Via", null, true);
    b.attribute("proxy");
    b.text(a);
    b.byte(0x09);
    b.name("amp");
    b.byte(0x48);
    b.u16le(code);
    b.closeStart();
    b.byte(0x08);
    b.u16le(code);
    b.text(text_b);
    b.end();
    b.open("Only", null, false);
    b.closeStart();
    b.byte(0x09);
    b.name("lt");
    b.byte(0x09);
    b.name("nbsp");
    b.end();
    b.end();
    b.byte(0x00);
    std.mem.writeInt(u16, b.chunk[size_at..][0..2], @intCast(b.pos - value_start), .little);
    b.endRecord(at, id);
}

test "raw fragments' entity and character references replay as rendered (H146)" {
    // Seven records whose raw fragments differ in their values only, or also in a
    // reference's name or code (which must not share a program), rendered through one
    // renderer with programs (the later records of a shape replay) and without (every record
    // the slow way), in every output mode.
    const gpa = std.testing.allocator;
    const Row = struct { entity: []const u8, code: u16, a: []const u8, b: []const u8 };
    const rows = [_]Row{
        .{ .entity = "quot", .code = 0x41, .a = "GET /a", .b = "x" },
        .{ .entity = "quot", .code = 0x41, .a = "GET /longer/path", .b = "y & z" },
        .{ .entity = "apos", .code = 0x41, .a = "GET /a", .b = "x" },
        .{ .entity = "quot", .code = 0x263a, .a = "GET /a", .b = "<x>" },
        .{ .entity = "quot", .code = 0x41, .a = "", .b = "" },
        .{ .entity = "gt", .code = 0x41, .a = "c", .b = "d" },
        .{ .entity = "quot", .code = 0x41, .a = "\"q\"", .b = "tail" },
    };
    var b = try testing.Builder.init(gpa);
    defer b.deinit(gpa);
    var def: ?u32 = null;
    var at: [rows.len]u32 = undefined;
    for (rows, &at, 1..) |row, *record, id| {
        record.* = b.pos;
        referenceRecord(&b, id, &def, row.entity, row.code, row.a, row.b);
    }
    const bytes = try testing.fileWithRecords(gpa, &b, rows.len, at[rows.len - 1]);
    defer gpa.free(bytes);
    const cases = [_]options.Options{
        .{ .show_record_number = false },
        .{ .indent = false },
        .{ .format = .jsonl, .indent = false, .show_record_number = false },
        .{ .format = .json },
        .{ .format = .jsonl, .indent = false, .separate_json_attributes = true },
    };
    for (&cases) |*settings| {
        const slow = try testing.dumpBytes(gpa, bytes, settings, false);
        defer gpa.free(slow);
        const file = try dump.EvtxFile.open(gpa, dump.Input.fromBytes(bytes), settings);
        var renderer: dump.Renderer = undefined;
        renderer.init(gpa, settings);
        defer renderer.deinit();
        var text: std.ArrayList(u8) = .empty;
        defer text.deinit(gpa);
        try std.testing.expectEqual(rows.len, try renderEvery(gpa, &renderer, &file, &text));
        try std.testing.expectEqualStrings(slow, text.items);
        try std.testing.expect(std.mem.indexOf(u8, slow, "nbsp") != null);
        // Rows 0, 1 and 6 share a shape; empty texts make row 4's, a reference's name rows
        // 2 and 5, its code row 3. Signing that gave up on references would store none; one
        // that left the name or the code out, fewer, and replay the wrong text.
        try std.testing.expectEqual(@as(usize, 5), renderer.programs.programs.items.len);
        // The byte scan signs each record as the tree walk did: it finds the program of the
        // record's row (first sights numbered in order), not a slow path's signTree.
        const p = &renderer.parser;
        const program_of_row = [rows.len]u32{ 0, 0, 1, 2, 3, 4, 0 };
        for (at, program_of_row) |record, want| {
            const size = std.mem.readInt(u32, b.chunk[record + 4 ..][0..4], .little);
            const found = try renderer.programs.sign(p, record + 24, record + size - 4);
            try std.testing.expect(found == .hit);
            try std.testing.expectEqual(want, found.hit.body);
        }
    }
}

/// For the tests: stores `text` as the literal-only program of signature `words`, new.
fn storeLiteral(cache: *Programs, out: *Out, words: []const u32, text: []const u8) !void {
    cache.signature.clearRetainingCapacity();
    try cache.signature.appendSlice(cache.gpa, words);
    try std.testing.expect(cache.find() == null);
    out.truncate(0);
    try out.write(text);
    _ = cache.beginRecorder(0);
    try cache.store(out, null);
}

test "a signature finds only its own program; clear forgets them all" {
    const gpa = std.testing.allocator;
    var cache = Programs.init(gpa);
    defer cache.deinit();
    var out = Out.init(gpa);
    defer out.deinit();
    // Two signatures compiled by hand: a literal-only program each.
    for ([_]u32{ 7, 8 }) |word| {
        try storeLiteral(&cache, &out, &.{word}, if (word == 7) "<seven/>" else "<eight/>");
    }
    for ([_]u32{ 7, 8 }) |word| {
        cache.signature.clearRetainingCapacity();
        try cache.signature.append(gpa, word);
        const prog = cache.find() orelse return error.TestExpectedProgram;
        var replayed = Out.init(gpa);
        defer replayed.deinit();
        const f: values_format.Format = .{ .chunk = &.{}, .ansi = values_format.default_codec };
        try std.testing.expect(try cache.replay(prog, &replayed, f, "<seven/>".len));
        try std.testing.expectEqualStrings(
            if (word == 7) "<seven/>" else "<eight/>",
            replayed.list.items,
        );
        // One byte past `limit` leaves the record unfinished (dump: `OutputTooLarge`).
        replayed.truncate(0);
        try std.testing.expect(!try cache.replay(prog, &replayed, f, "<seven/>".len - 1));
    }
    cache.signature.clearRetainingCapacity();
    try cache.signature.appendSlice(gpa, &.{ 7, 8 });
    try std.testing.expect(cache.find() == null);
    // A poisoned recorder (a substitution shaped more than its own text) is not stored.
    cache.signature.clearRetainingCapacity();
    try cache.signature.append(gpa, 9);
    const recorder = cache.beginRecorder(0);
    recorder.poisoned = true;
    try cache.store(&out, null);
    try std.testing.expect(cache.find() == null);
    cache.clear();
    cache.signature.clearRetainingCapacity();
    try cache.signature.append(gpa, 7);
    try std.testing.expect(cache.find() == null);
}

test "find: signatures sharing a recent slot each find their own program (H142, H144, H145)" {
    const gpa = std.testing.allocator;
    var cache = Programs.init(gpa);
    defer cache.deinit();
    var out = Out.init(gpa);
    defer out.deinit();
    // Same head, length and last word, so one `recent` slot: each added in turn takes its
    // first way; more programs than ways, so some are found by the hash.
    const texts = [_][]const u8{ "<a/>", "<b/>", "<c/>", "<d/>", "<e/>", "<f/>" };
    comptime assert(texts.len > Programs.recent_ways);
    for (texts, 0..) |text, k| try storeLiteral(&cache, &out, &.{ 7, @intCast(k), 1 }, text);
    // Shapes of one head and length that differ in their last word spread over slots (H145).
    var spread = std.StaticBitSet(Programs.recent_slots).initEmpty();
    for (0..16) |k| {
        cache.signature.clearRetainingCapacity();
        try cache.signature.appendSlice(gpa, &.{ 7, 1, @intCast(k) });
        spread.set(cache.recentSlot());
    }
    try std.testing.expect(spread.count() > 8);
    cache.signature.clearRetainingCapacity();
    try cache.signature.appendSlice(gpa, &.{ 7, 0, 1 });
    const slot = cache.recentSlot();
    // The last `recent_ways` added, the latest first.
    try std.testing.expectEqual([Programs.recent_ways]u32{ 5, 4, 3, 2 }, cache.recent[slot]);
    var prng = std.Random.DefaultPrng.init(0x4831_3432);
    const random = prng.random();
    for (0..200) |_| {
        const k = random.uintLessThan(u32, texts.len + 1);
        cache.signature.clearRetainingCapacity();
        try cache.signature.appendSlice(gpa, &.{ 7, k, 1 });
        try std.testing.expectEqual(slot, cache.recentSlot());
        const prog = cache.find() orelse {
            try std.testing.expectEqual(texts.len, k); // Never stored.
            continue;
        };
        try std.testing.expect(k < texts.len);
        // Found, it is one of the slot's programs now: the next `find` of it needs no hash.
        try std.testing.expect(std.mem.indexOfScalar(u32, &cache.recent[slot], k) != null);
        var replayed = Out.init(gpa);
        defer replayed.deinit();
        const f: values_format.Format = .{ .chunk = &.{}, .ansi = values_format.default_codec };
        try std.testing.expect(try cache.replay(prog, &replayed, f, std.math.maxInt(usize)));
        try std.testing.expectEqualStrings(texts[k], replayed.list.items);
    }
}

test "a full cache refuses new programs and keeps the ones it has (limits.zig)" {
    const gpa = std.testing.allocator;
    var cache = Programs.init(gpa);
    defer cache.deinit();
    var out = Out.init(gpa);
    defer out.deinit();
    try out.write("<e/>");
    var word: u32 = 0;
    while (word <= limits.programs_max) : (word += 1) {
        cache.signature.clearRetainingCapacity();
        try cache.signature.append(gpa, word);
        _ = cache.beginRecorder(0);
        try cache.store(&out, null);
    }
    try std.testing.expectEqual(@as(usize, limits.programs_max), cache.programs.items.len);
    cache.signature.clearRetainingCapacity();
    try cache.signature.append(gpa, 0);
    try std.testing.expect(cache.find() != null);
    cache.signature.clearRetainingCapacity();
    try cache.signature.append(gpa, limits.programs_max);
    try std.testing.expect(cache.find() == null);
}

test "the scan's inline signing replays every value type as the reference writes it" {
    // Each file twice through one renderer: the second pass finds a program for every shape
    // the first compiled, so its records replay from `scanInstance`'s slots (Null, strings,
    // SIDs, fixed-width scalars and BinXml inline; ANSI, Bool, arrays via `scanOther`).
    const gpa = std.testing.allocator;
    const files = [_][2][]const u8{
        .{ "synthetic/values-scalar.evtx", "expected/values-scalar" },
        .{ "synthetic/empty-null.evtx", "expected/empty-null" },
        .{ "synthetic/values-arrays.evtx", "expected/values-arrays" },
    };
    for (files) |names| {
        const bytes = try testing.readFixture(gpa, names[0]);
        defer gpa.free(bytes);
        for ([_]options.Format{ .jsonl, .xml }) |format| {
            const jsonl: options.Options = .{
                .format = .jsonl,
                .indent = false,
                .show_record_number = false,
            };
            const settings: options.Options = if (format == .xml) .{} else jsonl;
            const ext = if (format == .xml) ".xml" else ".jsonl";
            const path = try std.mem.concat(gpa, u8, &.{ names[1], ext });
            defer gpa.free(path);
            const expected = try testing.readFixture(gpa, path);
            defer gpa.free(expected);
            const file = try dump.EvtxFile.open(gpa, dump.Input.fromBytes(bytes), &settings);
            var renderer: dump.Renderer = undefined;
            renderer.init(gpa, &settings);
            defer renderer.deinit();
            for (0..2) |_| {
                var text: std.ArrayList(u8) = .empty;
                defer text.deinit(gpa);
                _ = try renderEvery(gpa, &renderer, &file, &text);
                try std.testing.expectEqualStrings(expected, text.items);
            }
            try std.testing.expect(renderer.programs.programs.items.len > 0);
        }
    }
}

test "an instance's first signature word never reads as a fragment marker" {
    try std.testing.expectEqual(@as(u32, 0x71a6_0000), Programs.headWord(0x1234_5678_f1a6_0000));
    try std.testing.expectEqual(@as(u32, 0x71a6_0007), Programs.headWord(0xf1a6_0007));
    try std.testing.expectEqual(@as(u32, 0xf1a5_ffff), Programs.headWord(0xf1a5_ffff));
    try std.testing.expectEqual(@as(u32, 0xf1a7_0000), Programs.headWord(0xf1a7_0000));
}

test "nameId by raw UTF-16 text equals resolving the name every time (H104, H123)" {
    const gpa = std.testing.allocator;
    // Name entries (6.3: next, hash, count, units, NUL) at spread offsets: the same text
    // twice, texts one unit apart, a NUL inside the count, non-ASCII, a lone surrogate, and
    // one the chunk's end cuts short.
    const texts = [_][]const u16{
        &.{ 'D', 'a', 't', 'a' },           &.{ 'D', 'a', 't', 'e' },
        &.{ 'D', 'a', 't', 'a' },           &.{ 'D', 'a', 0, 'x' },
        &.{ 'D', 'a' },                     &.{ 'D', 0xE9, 't', 'a' },
        &.{ 'D', 0xD800, 't', 'a' },        &.{ 'S', 'y', 's', 't', 'e', 'm' },
        &.{ 'S', 'y', 's', 't', 'e', 'n' },
    };
    var chunk = [_]u8{0} ** 4096;
    var offsets: [texts.len + 1]u32 = undefined;
    for (texts, 0..) |units, k| {
        const at: u32 = @intCast(512 + 96 * k);
        offsets[k] = at;
        std.mem.writeInt(u16, chunk[at + 6 ..][0..2], @intCast(units.len), .little);
        for (units, 0..) |u, j| std.mem.writeInt(u16, chunk[at + 8 + 2 * j ..][0..2], u, .little);
    }
    offsets[texts.len] = chunk.len - 6;
    var fast = Programs.init(gpa);
    defer fast.deinit();
    var simple = Programs.init(gpa);
    defer simple.deinit();
    var p = Parser.init(gpa);
    defer p.deinit();
    var q = Parser.init(gpa);
    defer q.deinit();
    // Three chunks of the same bytes: the second and third find their texts by raw units.
    for (0..3) |_| {
        try p.resetChunk(&chunk);
        try q.resetChunk(&chunk);
        for (offsets) |offset| {
            const want = simple.nameId(&q, offset, true);
            const got = fast.nameId(&p, offset, false);
            if (want) |id| try std.testing.expectEqual(id, try got) else |err| {
                try std.testing.expectError(err, got);
            }
        }
    }
    try std.testing.expect(fast.names.of_name.items.len > 0);
    try std.testing.expect(fast.names.raw_hits > 0);
}
