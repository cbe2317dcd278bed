//! JSON rendering of a record tree (contract section 10): compact, members in document
//! order, `#attributes` / `#text`, `_N` key suffixes, EventData/UserData containers and the
//! `--separate-json-attributes` layout.
const std = @import("std");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const tree = @import("tree.zig");
const program = @import("program.zig");
const Parser = tokens.Parser;
const Node = tree.Node;
const Out = escape.Out;
const Error = tokens.Error;

const Stamp = struct { stamp: u32 = 0, count: u32 = 0 };
/// A Data-name key rendered into `JsonRenderer.keybuf`.
const KeyRef = struct { start: u32, len: u32 };

/// Per-thread JSON renderer state, reused across records.
pub const JsonRenderer = struct {
    p: *Parser,
    out: *Out,
    ansi: values_format.Codec,
    separate: bool,
    /// Output length past which the record fails (`limits.recordOutputLimit`), checked where
    /// the Rust engine's renderer checks it: before each element, member, attribute and text
    /// node, so one element's many long values stop there too.
    limit: usize = 0,
    /// Name id -> (object stamp, occurrences) for `_N` key numbering.
    name_counts: std.ArrayList(Stamp) = .empty,
    stamp: u32 = 0,
    /// Scratch: key suffixes of the element children of objects being written.
    suffixes: std.ArrayList(u32) = .empty,
    /// Per-record arena for container scratch.
    arena: std.heap.ArenaAllocator,
    /// Rendered Data-name keys of the containers being written (stack discipline).
    keybuf: Out,
    /// Set while a compiled program is being captured.
    recorder: ?*program.Recorder = null,

    pub fn init(p: *Parser, out: *Out, ansi: values_format.Codec, separate: bool) JsonRenderer {
        return .{
            .p = p,
            .out = out,
            .ansi = ansi,
            .separate = separate,
            .arena = std.heap.ArenaAllocator.init(p.gpa),
            .keybuf = Out.init(p.gpa),
        };
    }

    pub fn deinit(j: *JsonRenderer) void {
        j.keybuf.deinit();
        j.name_counts.deinit(j.p.gpa);
        j.suffixes.deinit(j.p.gpa);
        j.arena.deinit();
    }

    fn fmt(j: *const JsonRenderer) values_format.Format {
        return .{ .chunk = j.p.chunk, .ansi = j.ansi };
    }

    fn emit(j: *JsonRenderer, v: *const Node) Error!void {
        return program.emit(j.out, j.fmt(), v, .json, j.recorder);
    }

    /// Writes the record whose root element is `root` (10.1), without a trailing newline;
    /// `error.OutputTooLarge` once the output passes `limit`.
    pub fn writeRecord(j: *JsonRenderer, root: u32, limit: usize) Error!void {
        _ = j.arena.reset(.retain_capacity);
        assert(j.out.len() <= limit);
        j.limit = limit;
        const n = j.p.node(root).*;
        assert(n.kind == .element);
        const name = j.p.nameText(n.ref.name);
        try j.out.write("{\"");
        if (j.separate) {
            if (attrText(j, &n)) {
                try j.out.write(name);
                try j.out.write("_attributes\":");
                try j.writeAttributes(&n);
                try j.out.write(",\"");
            }
            try j.out.write(name);
            try j.out.write("\":");
            try j.writeValueIgnoringAttributes(&n, false, 1);
        } else {
            try j.out.write(name);
            try j.out.write("\":");
            try j.writeValue(&n, false, 1);
        }
        try j.out.byte('}');
    }

    fn hasContent(j: *const JsonRenderer, n: *const Node) bool {
        return switch (n.kind) {
            .value => !tree.isFragment(n) and !values_decode.isEmpty(j.p.chunk, n.value()),
            .cdata => n.size.len > 0,
            .char_ref, .entity_ref => true,
            else => false,
        };
    }

    const Shape = struct { element_kids: u32, has_text: bool };

    fn shape(j: *const JsonRenderer, n: *const Node) Shape {
        var s: Shape = .{ .element_kids = 0, .has_text = false };
        for (j.p.edges(n.kids)) |k| {
            const kid = j.p.node(k);
            if (kid.kind == .element) s.element_kids += 1 else if (!s.has_text and j.hasContent(
                kid,
            )) s.has_text = true;
        }
        return s;
    }

    fn attrHasContent(j: *const JsonRenderer, a: *const Node) bool {
        for (j.p.edges(a.kids)) |item| {
            if (j.hasContent(j.p.node(item))) return true;
        }
        return false;
    }

    fn attrText(j: *const JsonRenderer, n: *const Node) bool {
        for (j.p.edges(n.attrs)) |a| {
            if (j.attrHasContent(j.p.node(a))) return true;
        }
        return false;
    }

    /// Whether the output passed the record's limit (the Rust engine's `over`).
    fn over(j: *const JsonRenderer) bool {
        return j.out.len() > j.limit;
    }

    fn checkLimits(j: *const JsonRenderer, depth: u32) Error!void {
        if (depth > limits.render_depth_max) return error.NestingTooDeep;
        if (j.over()) return error.OutputTooLarge;
    }

    /// Leaf shortcut (10.2 step 1); returns false when it does not apply.
    fn writeLeaf(j: *JsonRenderer, n: *const Node) Error!bool {
        if (n.kids.len != 1) return false;
        const kid = j.p.node(j.p.edges(n.kids)[0]);
        if (kid.kind != .value or tree.isFragment(kid)) return false;
        try j.writeScalar(kid, "null");
        return true;
    }

    /// A single value: `empty` if empty, bare if numeric/bool, else a string.
    fn writeScalar(j: *JsonRenderer, v: *const Node, empty: []const u8) Error!void {
        if (values_decode.isEmpty(j.p.chunk, v.value())) return j.out.write(empty);
        if (values_decode.isBare(v.vtype)) return j.emit(v);
        try j.out.byte('"');
        try j.emit(v);
        try j.out.byte('"');
    }

    /// The value of an element (10.2).
    fn writeValue(j: *JsonRenderer, n: *const Node, container: bool, depth: u32) Error!void {
        try j.checkLimits(depth);
        const s = j.shape(n);
        if (n.attrs.len == 0 and s.element_kids == 0 and try j.writeLeaf(n)) return;
        const attr_text = j.attrText(n);
        if (s.element_kids == 0 and !s.has_text and !attr_text) return j.out.write("null");
        if (s.element_kids == 0 and !attr_text) return j.writeContent(n.kids, false);
        try j.writeObject(n, !j.separate and attr_text, s.has_text, container, depth);
    }

    /// The value of an element ignoring its attributes (10.6).
    fn writeValueIgnoringAttributes(
        j: *JsonRenderer,
        n: *const Node,
        container: bool,
        depth: u32,
    ) Error!void {
        try j.checkLimits(depth);
        const s = j.shape(n);
        if (s.element_kids == 0 and try j.writeLeaf(n)) return;
        if (!s.has_text and s.element_kids == 0) return j.out.write("null");
        if (s.element_kids == 0) return j.writeContent(n.kids, false);
        try j.writeObject(n, false, s.has_text, container, depth);
    }

    fn writeAttributes(j: *JsonRenderer, n: *const Node) Error!void {
        try j.out.byte('{');
        var first = true;
        for (j.p.edges(n.attrs)) |ai| {
            const a = j.p.node(ai);
            if (!j.attrHasContent(a)) continue;
            if (j.over()) return error.OutputTooLarge;
            if (!first) try j.out.byte(',');
            first = false;
            try j.out.byte('"');
            try j.out.write(j.p.nameText(a.ref.name));
            try j.out.write("\":");
            try j.writeContent(a.kids, false);
        }
        try j.out.byte('}');
    }

    /// The object of an element (10.3).
    fn writeObject(
        j: *JsonRenderer,
        n: *const Node,
        with_attrs: bool,
        has_text: bool,
        container: bool,
        depth: u32,
    ) Error!void {
        try j.out.byte('{');
        var first = true;
        if (with_attrs) {
            try j.out.write("\"#attributes\":");
            try j.writeAttributes(n);
            first = false;
        }
        if (has_text) {
            if (!first) try j.out.byte(',');
            try j.out.write("\"#text\":");
            try j.writeContent(n.kids, true);
            first = false;
        }
        try j.writeMembers(n, first, container, depth);
        try j.out.byte('}');
    }

    /// Computes `_N` suffixes for the element children of `n`, pushed on `suffixes`.
    fn numberKids(j: *JsonRenderer, n: *const Node) Error!void {
        const names = j.p.names.texts.items.len;
        if (j.name_counts.items.len < names) try j.name_counts.appendNTimes(
            j.p.gpa,
            .{},
            names - j.name_counts.items.len,
        );
        j.stamp +%= 1;
        if (j.stamp == 0) {
            @memset(j.name_counts.items, .{});
            j.stamp = 1;
        }
        for (j.p.edges(n.kids)) |k| {
            const kid = j.p.node(k);
            if (kid.kind != .element) continue;
            const c = &j.name_counts.items[kid.ref.name];
            if (c.stamp != j.stamp) c.* = .{ .stamp = j.stamp, .count = 0 };
            try j.suffixes.append(j.p.gpa, c.count);
            c.count += 1;
        }
    }

    fn writeKey(j: *JsonRenderer, name: []const u8, suffix: u32, tail: []const u8) Error!void {
        try j.out.byte('"');
        try j.out.write(name);
        if (suffix > 0) {
            try j.out.byte('_');
            try values_format.writeInt(j.out, suffix);
        }
        try j.out.write(tail);
    }

    fn writeMembers(
        j: *JsonRenderer,
        n: *const Node,
        first_in: bool,
        container: bool,
        depth: u32,
    ) Error!void {
        const base = j.suffixes.items.len;
        defer j.suffixes.shrinkRetainingCapacity(base);
        try j.numberKids(n);
        var first = first_in;
        if (container) return j.writeContainerMembers(n, first, base, depth);
        var e: usize = 0;
        for (0..n.kids.len) |i| {
            if (j.over()) return error.OutputTooLarge;
            const kid = j.p.node(j.p.edges(n.kids)[i]).*;
            if (kid.kind != .element) continue;
            const suffix = j.suffixes.items[base + e];
            e += 1;
            try j.writeMember(&kid, suffix, &first, depth);
        }
    }

    fn isContainerName(name: []const u8) bool {
        return std.mem.eql(u8, name, "EventData") or std.mem.eql(u8, name, "UserData");
    }

    /// One ordinary child member (10.3, 10.6).
    fn writeMember(
        j: *JsonRenderer,
        kid: *const Node,
        suffix: u32,
        first: *bool,
        depth: u32,
    ) Error!void {
        const name = j.p.nameText(kid.ref.name);
        const container = isContainerName(name);
        if (!first.*) try j.out.byte(',');
        first.* = false;
        if (!j.separate) {
            try j.writeKey(name, suffix, "\":");
            return j.writeValue(kid, container, depth + 1);
        }
        if (j.attrText(kid)) {
            try j.writeKey(name, suffix, "_attributes\":");
            try j.writeAttributes(kid);
            const s = j.shape(kid);
            if (!s.has_text and s.element_kids == 0) return;
            try j.out.byte(',');
        }
        try j.writeKey(name, suffix, "\":");
        try j.writeValueIgnoringAttributes(kid, container, depth + 1);
    }

    fn isData(j: *const JsonRenderer, n: *const Node) bool {
        return n.kind == .element and std.mem.eql(u8, j.p.nameText(n.ref.name), "Data");
    }

    /// Renders the JSON text of the `Name` attribute of a Data element into `keybuf`;
    /// false when there is no usable Name. Its container's keys, from `keys_start` on, may
    /// hold `limits.record_output_bytes_max` bytes, as the Rust engine's `data_name`.
    fn dataName(j: *JsonRenderer, n: *const Node, keys_start: usize) Error!?KeyRef {
        for (j.p.edges(n.attrs)) |ai| {
            const a = j.p.node(ai);
            if (!std.mem.eql(u8, j.p.nameText(a.ref.name), "Name")) continue;
            if (!j.attrHasContent(a)) return null;
            const saved = j.out;
            const saved_capture = j.recorder;
            defer j.out = saved;
            defer j.recorder = saved_capture;
            if (j.recorder) |cap| {
                for (j.p.edges(a.kids)) |item| {
                    if (j.p.node(item).flags & tree.flag_slot != 0) cap.poisoned = true;
                }
            }
            j.out = &j.keybuf;
            j.recorder = null;
            const start = j.keybuf.len();
            for (j.p.edges(a.kids)) |item| {
                try j.writeNodeText(j.p.node(item));
                if (j.keybuf.len() - keys_start > limits.record_output_bytes_max)
                    return error.OutputTooLarge;
            }
            return .{ .start = @intCast(start), .len = @intCast(j.keybuf.len() - start) };
        }
        return null;
    }

    fn keyText(j: *const JsonRenderer, k: KeyRef) []const u8 {
        return j.keybuf.list.items[k.start..][0..k.len];
    }

    /// Index of the last kid of the run of same-named Data elements starting at `i`.
    fn runEnd(j: *const JsonRenderer, n: *const Node, keys: []const ?KeyRef, i: usize) usize {
        const key = j.keyText(keys[i].?);
        var last = i;
        var r = i + 1;
        while (r < keys.len) : (r += 1) {
            if (j.p.node(j.p.edges(n.kids)[r]).kind != .element) continue;
            const k2 = keys[r] orelse break;
            if (!std.mem.eql(u8, j.keyText(k2), key)) break;
            last = r;
        }
        return last;
    }

    /// Suffix of each run start of a named container (the data-name counter of 10.5).
    fn numberRuns(
        j: *JsonRenderer,
        n: *const Node,
        keys: []const ?KeyRef,
        suffixes: []u32,
    ) Error!void {
        // Few distinct names (the normal case): a linear list; many: a hash map.
        var distinct: std.ArrayList(struct { key: []const u8, count: u32 }) = .empty;
        var map: std.StringHashMapUnmanaged(u32) = .empty;
        var use_map = false;
        const arena = j.arena.allocator();
        var i: usize = 0;
        while (i < keys.len) : (i += 1) {
            const k = keys[i] orelse continue;
            const key = j.keyText(k);
            var count: u32 = 0;
            if (!use_map) {
                for (distinct.items) |*d| {
                    if (std.mem.eql(u8, d.key, key)) {
                        count = d.count;
                        d.count += 1;
                        break;
                    }
                } else {
                    try distinct.append(arena, .{ .key = key, .count = 1 });
                    if (distinct.items.len >= 32) {
                        use_map = true;
                        for (distinct.items) |d| try map.put(arena, d.key, d.count);
                    }
                }
            } else {
                const gop = try map.getOrPut(arena, key);
                count = if (gop.found_existing) gop.value_ptr.* else 0;
                gop.value_ptr.* = count + 1;
            }
            suffixes[i] = count;
            i = j.runEnd(n, keys, i);
        }
    }

    fn writeContainerMembers(
        j: *JsonRenderer,
        n: *const Node,
        first_in: bool,
        base: usize,
        depth: u32,
    ) Error!void {
        var first = first_in;
        const kids_len = n.kids.len;
        const keybuf_mark = j.keybuf.len();
        defer j.keybuf.truncate(keybuf_mark);
        const arena = j.arena.allocator();
        const keys = try arena.alloc(?KeyRef, kids_len);
        const named = try j.containerKeys(n, keys, keybuf_mark);
        const run_suffix = try arena.alloc(u32, kids_len);
        if (named) try j.numberRuns(n, keys, run_suffix);
        var e: usize = 0;
        var data_done = false;
        var i: usize = 0;
        while (i < kids_len) : (i += 1) {
            const kid = j.p.node(j.p.edges(n.kids)[i]).*;
            if (kid.kind != .element) continue;
            if (j.over()) return error.OutputTooLarge;
            const suffix = j.suffixes.items[base + e];
            e += 1;
            if (!j.isData(&kid)) {
                try j.writeMember(&kid, suffix, &first, depth);
                continue;
            }
            if (!named) {
                if (data_done) continue;
                data_done = true;
                if (!first) try j.out.byte(',');
                first = false;
                try j.writePositional(n, depth);
                continue;
            }
            if (keys[i] == null) continue;
            const last = j.runEnd(n, keys, i);
            try j.writeDataRun(n, keys, run_suffix, i, last, &first, depth);
            // Skip the run, keeping the element-name suffix index in step.
            var r = i + 1;
            while (r <= last) : (r += 1) {
                if (j.p.node(j.p.edges(n.kids)[r]).kind == .element) e += 1;
            }
            i = last;
        }
    }

    /// The key of each `Data` child with a usable `Name`, found before any member is written
    /// because one such child turns the whole container into the named form.
    fn containerKeys(
        j: *JsonRenderer,
        n: *const Node,
        keys: []?KeyRef,
        keys_start: usize,
    ) Error!bool {
        assert(keys.len == n.kids.len);
        var named = false;
        for (keys, 0..) |*key, i| {
            const kid = j.p.node(j.p.edges(n.kids)[i]).*;
            key.* = if (j.isData(&kid)) try j.dataName(&kid, keys_start) else null;
            if (key.* != null) named = true;
        }
        return named;
    }

    /// Named form: the run `[i, last]` of adjacent `Data` children sharing one key, as one
    /// member (an array when the run has more than one).
    fn writeDataRun(
        j: *JsonRenderer,
        n: *const Node,
        keys: []const ?KeyRef,
        run_suffix: []const u32,
        i: usize,
        last: usize,
        first: *bool,
        depth: u32,
    ) Error!void {
        assert(i <= last);
        if (!first.*) try j.out.byte(',');
        first.* = false;
        try j.out.byte('"');
        try j.out.write(j.keyText(keys[i].?));
        if (run_suffix[i] > 0) {
            try j.out.byte('_');
            try values_format.writeInt(j.out, run_suffix[i]);
        }
        try j.out.write("\":");
        if (last == i) {
            const kid = j.p.node(j.p.edges(n.kids)[i]).*;
            try j.writeDataValue(&kid, depth + 1);
            return;
        }
        try j.out.byte('[');
        var r = i;
        var r_first = true;
        while (r <= last) : (r += 1) {
            const d = j.p.node(j.p.edges(n.kids)[r]).*;
            if (d.kind != .element) continue;
            if (!r_first) try j.out.byte(',');
            r_first = false;
            try j.writeDataValue(&d, depth + 1);
        }
        try j.out.byte(']');
    }

    /// Positional form: `"Data":{"#text":V}`.
    fn writePositional(j: *JsonRenderer, n: *const Node, depth: u32) Error!void {
        var count: usize = 0;
        for (j.p.edges(n.kids)) |k| {
            if (j.isData(j.p.node(k))) count += 1;
        }
        try j.out.write("\"Data\":{\"#text\":");
        if (count > 1) try j.out.byte('[');
        var first = true;
        for (0..n.kids.len) |i| {
            const d = j.p.node(j.p.edges(n.kids)[i]).*;
            if (!j.isData(&d)) continue;
            if (!first) try j.out.byte(',');
            first = false;
            try j.writeDataValue(&d, depth + 1);
        }
        if (count > 1) try j.out.byte(']');
        try j.out.byte('}');
    }

    /// The Data value of a container's Data element (10.5).
    fn writeDataValue(j: *JsonRenderer, d: *const Node, depth: u32) Error!void {
        try j.checkLimits(depth);
        if (d.kids.len == 1) {
            const kid = j.p.node(j.p.edges(d.kids)[0]);
            if (kid.kind == .value and !tree.isFragment(kid)) return j.writeScalar(kid, "\"\"");
        }
        const s = j.shape(d);
        if (!s.has_text and s.element_kids == 0) return j.out.write("\"\"");
        if (s.element_kids > 0) return j.writeObject(d, false, s.has_text, false, depth);
        try j.writeContent(d.kids, false);
    }

    /// Content value of a node list (10.4).
    fn writeContent(j: *JsonRenderer, list: tree.Span, skipping: bool) Error!void {
        const kids = j.p.edges(list);
        if (!skipping) {
            if (kids.len == 1) {
                const only = j.p.node(kids[0]);
                if (only.kind == .value and values_decode.isBare(only.vtype)) {
                    return j.emit(only);
                }
            }
        } else {
            var remaining: usize = 0;
            var bare: ?*const Node = null;
            for (kids) |k| {
                const kid = j.p.node(k);
                switch (kid.kind) {
                    .element, .pi_target, .pi_data, .attribute, .placeholder => continue,
                    else => if (!j.hasContent(kid)) continue,
                }
                remaining += 1;
                bare = if (kid.kind == .value and values_decode.isBare(kid.vtype)) kid else null;
            }
            if (remaining == 1 and bare != null) return j.emit(bare.?);
        }
        try j.out.byte('"');
        for (kids) |k| {
            if (j.over()) return error.OutputTooLarge;
            try j.writeNodeText(j.p.node(k));
        }
        try j.out.byte('"');
    }

    /// JSON text of one node for concatenation (10.4 table).
    fn writeNodeText(j: *JsonRenderer, n: *const Node) Error!void {
        switch (n.kind) {
            .value => try j.emit(n),
            .cdata => try escape.writeUtf16(j.out, j.p.chunk[n.ref.offset..][0..n.size.len], .json),
            .char_ref => {
                if (n.ref.code_unit >= 0xD800 and n.ref.code_unit < 0xE000) {
                    try j.out.write("&#");
                    try values_format.writeInt(j.out, n.ref.code_unit);
                    try j.out.byte(';');
                } else try escape.writeCodepoint(j.out, @intCast(n.ref.code_unit), .json);
            },
            .entity_ref => {
                const name = j.p.nameText(n.ref.name);
                const map = [_][2][]const u8{ .{
                    "quot",
                    "\\\"",
                }, .{ "apos", "'" }, .{ "amp", "&" }, .{ "lt", "<" }, .{ "gt", ">" } };
                for (map) |m| {
                    if (std.mem.eql(u8, name, m[0])) return j.out.write(m[1]);
                }
                try j.out.byte('&');
                try j.out.write(name);
                try j.out.byte(';');
            },
            else => {},
        }
    }
};

// ---------------------------------------------------------------------------------------
// Tests: hand-built records with the contract's stated results (8.2, 10.x), and the shared
// fixtures against the reference's stdout (`shared-fixtures/expected/`).
const testing = @import("testing.zig");
const dump = @import("dump.zig");

test "JSON escaping of text (8.2): quote, backslash, the short escapes, other C0 uppercase" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("T", null, false);
    b.closeStart();
    b.text("a\"b\\c\n\r\t\x08\x0c\x01\x1f/<&>'");
    b.end();
    try testing.expectRender(
        &b,
        .json,
        "{\"T\":\"a\\\"b\\\\c\\n\\r\\t\\b\\f\\u0001\\u001F/<&>'\"}",
    );
}

test "key numbering (10.3): later same-named children get _1, _2 whether adjacent or not" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("R", null, false);
    b.closeStart();
    for ([_][]const u8{ "H", "X", "H", "H" }, 0..) |label, i| {
        b.open(label, null, false);
        if (i == 1) {
            b.closeEmpty();
            continue;
        }
        b.closeStart();
        b.text(&.{@as(u8, '0' + @as(u8, @intCast(i)))});
        b.end();
    }
    b.end();
    try testing.expectRender(
        &b,
        .json,
        "{\"R\":{\"H\":\"0\",\"X\":null,\"H_1\":\"2\",\"H_2\":\"3\"}}",
    );
}

/// `<R k="v"><P n="x"/><Q a="" b="1">t</Q><S/></R>`: attributes with and without content,
/// an element with attributes only, one with attributes and text.
fn buildAttributes(b: *testing.Builder) void {
    b.open("R", null, true);
    b.attribute("k");
    b.text("v");
    b.closeStart();
    b.open("P", null, true);
    b.attribute("n");
    b.text("x");
    b.closeEmpty();
    b.open("Q", null, true);
    b.attribute("a");
    b.text("");
    b.attribute("b");
    b.text("1");
    b.closeStart();
    b.text("t");
    b.end();
    b.open("S", null, false);
    b.closeEmpty();
    b.end();
}

test "attributes (10.2, 10.3): #attributes holds those with content, first in the object" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    buildAttributes(&b);
    try testing.expectRender(&b, .json, "{\"R\":{\"#attributes\":{\"k\":\"v\"},\"P\":{" ++
        "\"#attributes\":{\"n\":\"x\"}}," ++
        "\"Q\":{\"#attributes\":{\"b\":\"1\"},\"#text\":\"t\"},\"S\":null}}");
}

test "--separate-json-attributes (10.1, 10.6): K_attributes beside K, K left out when it is empty" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    buildAttributes(&b);
    try testing.expectRender(&b, .json_separate, "{\"R_attributes\":{\"k\":\"v\"},\"R\":{" ++
        "\"P_attributes\":{\"n\":\"x\"}," ++
        "\"Q_attributes\":{\"b\":\"1\"},\"Q\":\"t\",\"S\":null}}");
}

/// `<Event><EventData>` + `data` + `</EventData></Event>`: the container as a member.
fn buildContainer(b: *testing.Builder, data: []const [2]?[]const u8) void {
    b.open("Event", null, false);
    b.closeStart();
    b.open("EventData", null, false);
    b.closeStart();
    for (data) |d| {
        const label = if (d[0] == null) "Binary" else "Data";
        const named = d[0] != null and d[0].?.len > 0;
        b.open(label, null, named);
        if (named) {
            b.attribute("Name");
            b.text(d[0].?);
        }
        b.closeStart();
        if (d[1]) |t| b.text(t);
        b.end();
    }
    b.end();
    b.end();
}

test "EventData, named form (10.5): runs become arrays, repeats get _N, unnamed Data dropped" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    buildContainer(
        &b,
        &.{
            .{ "A", "1" },
            .{ "A", "2" },
            .{ "B", null },
            .{ "", "lost" },
            .{ null, "0102" },
            .{ "A", "4" },
        },
    );
    try testing.expectRender(
        &b,
        .json,
        "{\"Event\":{\"EventData\":{\"A\":[\"1\",\"2\"],\"B\":\"\",\"Binary\":\"0102\"," ++
            "\"A_1\":\"4\"}}}",
    );
}

test "EventData, positional form (10.5): one Data member at the first, every Data in it" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    buildContainer(&b, &.{ .{ "", "x" }, .{ null, "0102" }, .{ "", null } });
    try testing.expectRender(
        &b,
        .json,
        "{\"Event\":{\"EventData\":{\"Data\":{\"#text\":[\"x\",\"\"]},\"Binary\":\"0102\"}}}",
    );
    b.pos = b.start;
    buildContainer(&b, &.{.{ "", "only" }});
    try testing.expectRender(
        &b,
        .json,
        "{\"Event\":{\"EventData\":{\"Data\":{\"#text\":\"only\"}}}}",
    );
    b.pos = b.start;
    buildContainer(&b, &.{});
    try testing.expectRender(&b, .json, "{\"Event\":{\"EventData\":null}}");
}

test "a typed record (template, substitutions, nested instance): bare numbers, hex, arrays" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    testing.buildSample(&b);
    // Contract 10.2 (bare UInt16, HexInt64 as a string, a NULL attribute left out), 10.5
    // (the nested EventData's named Data), 6.8 (a two-item string array expands to two
    // elements, numbered by 10.3).
    try testing.expectRender(&b, .json, "{\"Event\":{\"#attributes\":{\"xmlns\":\"urn:x\"},\"" ++
        "System\":{\"EventID\":4608," ++
        "\"Keywords\":\"0x8020000000000000\"},\"Data\":\"a\",\"Data_1\":\"b\",\"EventData\":" ++
        "{\"N\":5}}}");
}

test "every value type and Data shape: the reference's jsonl, both lanes" {
    for (testing.synthetic_fixtures) |name| {
        try testing.expectFixture(
            name,
            &.{ .format = .jsonl, .indent = false, .show_record_number = false },
            ".jsonl",
        );
    }
}

test "--separate-json-attributes: the reference's jsonl, both lanes" {
    for (testing.synthetic_fixtures) |name| {
        try testing.expectFixture(
            name,
            &.{
                .format = .jsonl,
                .indent = false,
                .show_record_number = false,
                .separate_json_attributes = true,
            },
            ".sep.jsonl",
        );
    }
}

test "the record banner of -o json (11.2): `Record N` before each of the reference's jsonl lines" {
    const gpa = std.testing.allocator;
    const bytes = try testing.readFixture(gpa, "synthetic/basic.evtx");
    defer gpa.free(bytes);
    const jsonl = try testing.readFixture(gpa, "expected/basic.jsonl");
    defer gpa.free(jsonl);
    var expected: std.ArrayList(u8) = .empty;
    defer expected.deinit(gpa);
    var lines = std.mem.splitScalar(u8, jsonl[0 .. jsonl.len - 1], '\n');
    var id: usize = 1; // basic.evtx holds records 1..5 in order
    while (lines.next()) |line| : (id += 1) {
        try expected.print(gpa, "Record {d}\n{s}\n", .{ id, line });
    }
    try std.testing.expectEqual(@as(usize, 6), id);
    const got = try testing.dumpBytes(gpa, bytes, &.{ .format = .json }, true);
    defer gpa.free(got);
    try std.testing.expectEqualStrings(expected.items, got);
}
