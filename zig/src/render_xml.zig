//! XML rendering of a record tree (contract section 9): declaration, two-space
//! indentation (or none with `--no-indent`), `/>` only for elements closed empty,
//! inline vs one-child-per-line layout, CDATA, references and processing instructions.
const std = @import("std");
const assert = std.debug.assert;
const values = @import("values.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const program = @import("program.zig");
const render_json = @import("render_json.zig");
const Parser = tokens.Parser;
const Node = tokens.Node;
const Out = escape.Out;
const Error = tokens.Error;

pub const declaration = "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n";

pub const Xml = struct {
    p: *Parser,
    out: *Out,
    ansi: values.Codec,
    indent: bool,
    record_start: usize = 0,
    /// Set while a compiled program is being captured.
    capture: ?*program.Capture = null,

    fn fmt(x: *const Xml) values.Format {
        return .{ .chunk = x.p.chunk, .ansi = x.ansi };
    }

    /// Writes the declaration and the root element (9.1).
    pub fn writeRecord(x: *Xml, root: u32) Error!void {
        x.record_start = x.out.len();
        try x.out.write(declaration);
        try x.writeElement(x.p.node(root), 0, 0);
    }

    fn hasContent(x: *const Xml, n: *const Node) bool {
        return switch (n.kind) {
            .value => !tokens.isFragment(n) and !values.isEmpty(x.p.chunk, n.value()),
            .cdata => n.b > 0,
            .char_ref, .entity_ref => true,
            else => false,
        };
    }

    fn newline(x: *Xml) Error!void {
        if (x.indent) try x.out.byte('\n');
    }

    fn writeElement(x: *Xml, n: *const Node, level: usize, depth: u32) Error!void {
        if (depth > render_json.render_depth_max) return error.NestingTooDeep;
        if (x.out.len() - x.record_start > render_json.record_bytes_max) return error.OutputTooLarge;
        assert(n.kind == .element);
        const name = x.p.nameText(n.a);
        if (x.indent) try x.out.spaces(level);
        try x.out.byte('<');
        try x.out.write(name);
        for (x.p.edges(n.attrs)) |ai| try x.writeAttribute(x.p.node(ai));
        const kids = x.p.edges(n.kids);
        if (kids.len == 0) {
            if (n.flags & tokens.flag_self_closing != 0) {
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
            if (kid.kind == .element or tokens.isFragment(kid)) has_element = true;
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
                if (tokens.isFragment(kid)) continue;
                if (x.indent) try x.out.spaces(level + 2);
                if (kid.kind != .pi_target and kid.kind != .pi_data) try x.writeText(kid, .xml_text);
                try x.newline();
            }
            if (x.indent) try x.out.spaces(level);
        }
        try x.out.write("</");
        try x.out.write(name);
        try x.out.byte('>');
        try x.newline();
    }

    fn writeAttribute(x: *Xml, a: *const Node) Error!void {
        const items = x.p.edges(a.kids);
        var content = false;
        for (items) |i| {
            const item = x.p.node(i);
            if (tokens.isFragment(item)) return error.ElementInAttribute;
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
        try x.out.write(x.p.nameText(a.a));
        try x.out.write("=\"");
        for (items) |i| try x.writeText(x.p.node(i), .xml_attr);
        try x.out.byte('"');
    }

    /// Children of an element without element children, one after another (9.2).
    fn writeInline(x: *Xml, kids: []const u32) Error!void {
        var i: usize = 0;
        while (i < kids.len) : (i += 1) {
            const kid = x.p.node(kids[i]);
            switch (kid.kind) {
                .pi_target => {
                    try x.out.write("<?");
                    try x.out.write(x.p.nameText(kid.a));
                    if (i + 1 < kids.len and x.p.node(kids[i + 1]).kind == .pi_data) {
                        i += 1;
                        const data = x.p.node(kids[i]);
                        try x.out.byte(' ');
                        try escape.writeUtf16(x.out, x.p.chunk[data.a..][0..data.b], .raw);
                    }
                    try x.out.write("?>");
                },
                .pi_data => return error.PiDataWithoutTarget,
                else => try x.writeText(kid, .xml_text),
            }
        }
    }

    /// Text-mode / attribute-mode rendering of a non-element node (9.3).
    fn writeText(x: *Xml, n: *const Node, comptime mode: escape.Mode) Error!void {
        switch (n.kind) {
            .value => try program.emit(x.out, x.fmt(), n, mode, x.capture),
            .char_ref => {
                try x.out.write("&#");
                try values.writeUnsigned(x.out, n.a);
                try x.out.byte(';');
            },
            .entity_ref => {
                try x.out.byte('&');
                try x.out.write(x.p.nameText(n.a));
                try x.out.byte(';');
            },
            .cdata => {
                const text = x.p.chunk[n.a..][0..n.b];
                if (mode == .xml_attr) return escape.writeUtf16(x.out, text, .xml_attr);
                try x.writeCdata(text);
            },
            else => {},
        }
    }

    /// `<![CDATA[...]]>`, splitting every `]]>` inside as `]]]]><![CDATA[>`.
    fn writeCdata(x: *Xml, text: []const u8) Error!void {
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
