//! XML rendering of a record tree (contract section 9): declaration, two-space
//! indentation (or none with `--no-indent`), `/>` only for elements closed empty,
//! inline vs one-child-per-line layout, CDATA, references and processing instructions.
const std = @import("std");
const limits = @import("limits.zig");
const assert = std.debug.assert;
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const tree = @import("tree.zig");
const program = @import("program.zig");
const render_json = @import("render_json.zig");
const Parser = tokens.Parser;
const Node = tree.Node;
const Out = escape.Out;
const Error = tokens.Error;

pub const declaration = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";

pub const XmlRenderer = struct {
    p: *Parser,
    out: *Out,
    ansi: values_format.Codec,
    indent: bool,
    /// Output length past which the record fails (`limits.recordOutputLimit`), checked where
    /// the Rust engine's renderer checks it: before each element, after each attribute item
    /// and text node, so one element's many long values stop there too.
    limit: usize = 0,
    /// Set while a compiled program is being captured.
    recorder: ?*program.Recorder = null,

    fn fmt(x: *const XmlRenderer) values_format.Format {
        return .{ .chunk = x.p.chunk, .ansi = x.ansi };
    }

    /// Writes the declaration and the root element (9.1); `error.OutputTooLarge` once the
    /// output passes `limit`.
    pub fn writeRecord(x: *XmlRenderer, root: u32, limit: usize) Error!void {
        assert(x.out.len() <= limit);
        x.limit = limit;
        try x.out.write(declaration);
        try x.writeElement(x.p.node(root), 0, 1); // The root is depth 1, as in JSON.
    }

    fn hasContent(x: *const XmlRenderer, n: *const Node) bool {
        return switch (n.kind) {
            .value => !tree.isFragment(n) and !values_decode.isEmpty(x.p.chunk, n.value()),
            .cdata => n.size.len > 0,
            .char_ref, .entity_ref => true,
            else => false,
        };
    }

    /// Whether the output passed the record's limit (the Rust engine's `out.len() > cx.limit`).
    fn over(x: *const XmlRenderer) bool {
        return x.out.len() > x.limit;
    }

    fn newline(x: *XmlRenderer) Error!void {
        if (x.indent) try x.out.byte('\n');
    }

    fn writeElement(x: *XmlRenderer, n: *const Node, level: usize, depth: u32) Error!void {
        if (depth > limits.render_depth_max) return error.NestingTooDeep;
        if (x.over()) return error.OutputTooLarge;
        assert(n.kind == .element);
        const name = x.p.nameText(n.ref.name);
        if (x.indent) try x.out.spaces(level);
        try x.out.byte('<');
        try x.out.write(name);
        for (x.p.edges(n.attrs)) |ai| try x.writeAttribute(x.p.node(ai));
        const kids = x.p.edges(n.kids);
        if (kids.len == 0) {
            if (n.flags & tree.flag_self_closing != 0) {
                try x.out.write("/>");
            } else {
                try x.out.write("></");
                try x.out.write(name);
                try x.out.byte('>');
            }
            return x.newline();
        }
        var has_element = false;
        for (kids) |k| {
            const kid = x.p.node(k);
            if (kid.kind == .element or tree.isFragment(kid)) has_element = true;
        }
        try x.out.byte('>');
        if (!has_element) {
            try x.writeInline(kids);
        } else {
            try x.newline();
            for (kids) |k| {
                const kid = x.p.node(k);
                if (kid.kind == .element) {
                    try x.writeElement(kid, level + 2, depth + 1);
                    continue;
                }
                if (tree.isFragment(kid)) continue;
                if (x.indent) try x.out.spaces(level + 2);
                if (kid.kind != .pi_target and kid.kind != .pi_data) try x.writeText(
                    kid,
                    .xml_text,
                );
                try x.newline();
                if (x.over()) return error.OutputTooLarge;
            }
            if (x.indent) try x.out.spaces(level);
        }
        try x.out.write("</");
        try x.out.write(name);
        try x.out.byte('>');
        try x.newline();
    }

    fn writeAttribute(x: *XmlRenderer, a: *const Node) Error!void {
        const items = x.p.edges(a.kids);
        var content = false;
        for (items) |i| {
            const item = x.p.node(i);
            if (tree.isFragment(item)) return error.ElementInAttribute;
            switch (item.kind) {
                .element => return error.ElementInAttribute,
                .pi_target, .pi_data => return error.PiInAttribute,
                else => if (x.hasContent(item)) {
                    content = true;
                },
            }
        }
        if (!content) return;
        try x.out.byte(' ');
        try x.out.write(x.p.nameText(a.ref.name));
        try x.out.write("=\"");
        for (items) |i| {
            try x.writeText(x.p.node(i), .xml_attr);
            if (x.over()) return error.OutputTooLarge;
        }
        try x.out.byte('"');
    }

    /// Children of an element without element children, one after another (9.2).
    fn writeInline(x: *XmlRenderer, kids: []const u32) Error!void {
        var i: usize = 0;
        while (i < kids.len) : (i += 1) {
            const kid = x.p.node(kids[i]);
            switch (kid.kind) {
                .pi_target => {
                    try x.out.write("<?");
                    try x.out.write(x.p.nameText(kid.ref.name));
                    if (i + 1 < kids.len and x.p.node(kids[i + 1]).kind == .pi_data) {
                        i += 1;
                        const data = x.p.node(kids[i]);
                        try x.out.byte(' ');
                        const pi_data = x.p.chunk[data.ref.offset..][0..data.size.len];
                        try escape.writeUtf16(x.out, pi_data, .raw);
                    }
                    try x.out.write("?>");
                },
                .pi_data => return error.PiDataWithoutTarget,
                else => try x.writeText(kid, .xml_text),
            }
            if (x.over()) return error.OutputTooLarge;
        }
    }

    /// Text-mode / attribute-mode rendering of a non-element node (9.3).
    fn writeText(x: *XmlRenderer, n: *const Node, comptime mode: escape.Mode) Error!void {
        switch (n.kind) {
            .value => try program.emit(x.out, x.fmt(), n, mode, x.recorder),
            .char_ref => {
                try x.out.write("&#");
                try values_format.writeInt(x.out, n.ref.code_unit);
                try x.out.byte(';');
            },
            .entity_ref => {
                try x.out.byte('&');
                try x.out.write(x.p.nameText(n.ref.name));
                try x.out.byte(';');
            },
            .cdata => {
                const text = x.p.chunk[n.ref.offset..][0..n.size.len];
                if (mode == .xml_attr) return escape.writeUtf16(x.out, text, .xml_attr);
                try x.writeCdata(text);
            },
            else => {},
        }
    }

    /// `<![CDATA[...]]>`, splitting every `]]>` inside as `]]]]><![CDATA[>`.
    fn writeCdata(x: *XmlRenderer, text: []const u8) Error!void {
        try x.out.write("<![CDATA[");
        const start = x.out.len();
        try escape.writeUtf16(x.out, text, .raw);
        const raw_len = x.out.len() - start;
        const count = std.mem.count(u8, x.out.list.items[start..], "]]>");
        if (count > 0) {
            try x.out.ensure(count * 12);
            const items = x.out.list.items.ptr;
            // Rewrite in place from the end: each "]]>" becomes "]]]]><![CDATA[>".
            var src = start + raw_len;
            var dst = src + count * 12;
            x.out.list.items.len = dst;
            while (src > start) {
                if (src - start >= 3 and std.mem.eql(u8, items[src - 3 .. src], "]]>")) {
                    dst -= 15;
                    @memcpy(items[dst..][0..15], "]]]]><![CDATA[>");
                    src -= 3;
                } else {
                    dst -= 1;
                    src -= 1;
                    items[dst] = items[src];
                }
            }
            assert(dst == src);
        }
        try x.out.write("]]>");
    }
};

// ---------------------------------------------------------------------------------------
// Tests: hand-built records with the contract's stated results (8.1, 9.x), and the shared
// fixtures against the reference's stdout (`shared-fixtures/expected/`).
const testing = @import("testing.zig");

test "XML escaping (8.1): <>& always, quotes only in attributes, C0 controls but TAB/LF/CR as _" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("T", null, true);
    b.attribute("a");
    b.text("q\"'<&>\t");
    b.closeStart();
    b.text("q\"'<&>\t\n\r\x01\x1f\x7f/");
    b.end();
    try testing.expectRender(
        &b,
        .xml_flat,
        declaration ++ "<T a=\"q&quot;&apos;&lt;&amp;&gt;\t\">q\"'&lt;&amp;&gt;\t\n\r__\x7f/</T>",
    );
}

test "layout (9.2): two-space indentation, /> only when closed empty, inline text, --no-indent" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    b.open("Event", null, false);
    b.closeStart();
    b.open("System", null, false);
    b.closeStart();
    b.open("Provider", null, true);
    b.attribute("Name");
    b.text("P");
    b.closeEmpty();
    b.open("Empty", null, true);
    b.attribute("gone");
    b.text("");
    b.closeStart();
    b.end();
    b.open("EventID", null, false);
    b.closeStart();
    b.text("7");
    b.end();
    b.end();
    b.end();
    try testing.expectRender(&b, .xml, declaration ++
        "<Event>\n  <System>\n    <Provider Name=\"P\"/>\n    <Empty></Empty>\n    " ++
        "<EventID>7</EventID>\n  </System>\n</Event>\n");
    try testing.expectRender(&b, .xml_flat, declaration ++
        "<Event><System><Provider " ++
        "Name=\"P\"/><Empty></Empty><EventID>7</EventID></System></Event>");
}

test "a typed record: values in text and attribute mode, the array expanded, the nested instance" {
    var b = try testing.Builder.init(std.testing.allocator);
    defer b.deinit(std.testing.allocator);
    testing.buildSample(&b);
    // 9.2: the NULL Qualifiers attribute is left out; 6.8: the two-item array gives two Data.
    try testing.expectRender(&b, .xml, declaration ++
        "<Event xmlns=\"urn:x\">\n  <System>\n    <EventID>4608</EventID>\n    " ++
        "<Keywords>0x8020000000000000</Keywords>\n" ++
        "  </System>\n  <Data>a</Data>\n  <Data>b</Data>\n  <EventData>\n    <Data " ++
        "Name=\"N\">5</Data>\n  </EventData>\n</Event>\n");
}

test "every value type and token: the reference's -o xml (banner, blank line), both lanes" {
    for (testing.synthetic_fixtures) |name| {
        try testing.expectFixture(name, &.{}, ".xml");
    }
}

test "-o xml --dont-show-record-number (11.2): the reference's xml without its banner lines" {
    const gpa = std.testing.allocator;
    const bytes = try testing.readFixture(gpa, "synthetic/nested.evtx");
    defer gpa.free(bytes);
    const with_banner = try testing.readFixture(gpa, "expected/nested.xml");
    defer gpa.free(with_banner);
    var expected: std.ArrayList(u8) = .empty;
    defer expected.deinit(gpa);
    var lines = std.mem.splitScalar(u8, with_banner, '\n');
    var banners: usize = 0;
    while (lines.next()) |line| {
        if (std.mem.startsWith(u8, line, "Record ")) {
            banners += 1;
            continue;
        }
        try expected.appendSlice(gpa, line);
        try expected.append(gpa, '\n');
    }
    expected.items.len -= 1; // split gave one line more than the text has newlines
    try std.testing.expectEqual(@as(usize, 7), banners); // manifest: 7 records
    const got = try testing.dumpBytes(gpa, bytes, &.{ .show_record_number = false }, true);
    defer gpa.free(got);
    try std.testing.expectEqualStrings(expected.items, got);
}
