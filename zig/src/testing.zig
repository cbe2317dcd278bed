//! Test helpers: a BinXML builder that writes hand-made chunks (names and template
//! definitions inline, as Windows writes them) and renders them with both renderers.
//! Used only by `test` blocks; expected strings in those tests come from the contract.
const std = @import("std");
const limits = @import("limits.zig");
const values_decode = @import("values_decode.zig");
const values_format = @import("values_format.zig");
const escape = @import("escape.zig");
const tokens = @import("tokens.zig");
const render_json = @import("render_json.zig");
const render_xml = @import("render_xml.zig");
const dump = @import("dump.zig");
const options = @import("options.zig");
const pipeline = @import("pipeline.zig");

pub const Builder = struct {
    chunk: []u8,
    /// Where the stream starts (and `render` starts parsing).
    start: u32 = 512,
    pos: u32 = 512,

    pub fn init(gpa: std.mem.Allocator) !Builder {
        const chunk = try gpa.alloc(u8, 65536);
        @memset(chunk, 0);
        return .{ .chunk = chunk };
    }

    pub fn deinit(b: *Builder, gpa: std.mem.Allocator) void {
        gpa.free(b.chunk);
    }

    pub fn byte(b: *Builder, v: u8) void {
        b.chunk[b.pos] = v;
        b.pos += 1;
    }

    pub fn u16le(b: *Builder, v: u16) void {
        std.mem.writeInt(u16, b.chunk[b.pos..][0..2], v, .little);
        b.pos += 2;
    }

    pub fn u32le(b: *Builder, v: u32) void {
        std.mem.writeInt(u32, b.chunk[b.pos..][0..4], v, .little);
        b.pos += 4;
    }

    pub fn raw(b: *Builder, s: []const u8) void {
        @memcpy(b.chunk[b.pos..][0..s.len], s);
        b.pos += @intCast(s.len);
    }

    pub fn units(b: *Builder, s: []const u8) void {
        for (s) |c| b.u16le(c);
    }

    /// An inline name reference.
    pub fn name(b: *Builder, label: []const u8) void {
        b.u32le(b.pos + 4);
        b.u32le(0);
        b.u16le(0);
        b.u16le(@intCast(label.len));
        b.units(label);
        b.u16le(0);
    }

    pub fn fragment(b: *Builder) void {
        b.raw(&.{ 0x0F, 0x01, 0x01, 0x00 });
    }

    /// Open start element; `dep` only inside template definitions.
    pub fn open(b: *Builder, label: []const u8, dep: ?u16, has_attributes: bool) void {
        b.byte(if (has_attributes) 0x41 else 0x01);
        if (dep) |d| b.u16le(d);
        b.u32le(0);
        b.name(label);
        if (has_attributes) b.u32le(0);
    }

    pub fn attribute(b: *Builder, label: []const u8) void {
        b.byte(0x06);
        b.name(label);
    }

    pub fn closeStart(b: *Builder) void {
        b.byte(0x02);
    }

    pub fn closeEmpty(b: *Builder) void {
        b.byte(0x03);
    }

    pub fn end(b: *Builder) void {
        b.byte(0x04);
    }

    pub fn text(b: *Builder, s: []const u8) void {
        b.byte(0x05);
        b.byte(values_decode.T.string);
        b.u16le(@intCast(s.len));
        b.units(s);
    }

    pub fn sub(b: *Builder, index: u16, optional: bool, vtype: u8) void {
        b.byte(if (optional) 0x0E else 0x0D);
        b.u16le(index);
        b.byte(vtype);
    }

    /// Starts an inline template definition after the 0x0C header; returns the offset to
    /// patch with `endDefinition`.
    pub fn beginInstance(b: *Builder) u32 {
        b.byte(0x0C);
        b.byte(0x01);
        b.u32le(0);
        b.u32le(b.pos + 4); // Definition right here (inline).
        b.u32le(0); // Next definition.
        b.raw(&([_]u8{0} ** 16)); // GUID.
        const size_at = b.pos;
        b.u32le(0);
        return size_at;
    }

    /// A template instance of the definition at `def_offset` written earlier in the chunk
    /// (`beginInstance` returned `def_offset + 20`); its value list follows.
    pub fn instanceOf(b: *Builder, def_offset: u32) void {
        b.byte(0x0C);
        b.byte(0x01);
        b.u32le(0);
        b.u32le(def_offset);
    }

    /// A template instance of `<label>%0</label>` (substitution 0 of type `vtype`): defined
    /// inline the first time (`def.*` null, set to its offset), by reference after; its value
    /// list follows.
    pub fn singleInstance(b: *Builder, def: *?u32, label: []const u8, vtype: u8) void {
        if (def.*) |d| return b.instanceOf(d);
        const size_at = b.beginInstance();
        def.* = size_at - 20;
        b.fragment();
        b.open(label, 0xFFFF, false);
        b.closeStart();
        b.sub(0, false, vtype);
        b.end();
        b.byte(0x00);
        b.endDefinition(size_at);
    }

    pub fn endDefinition(b: *Builder, size_at: u32) void {
        std.mem.writeInt(u32, b.chunk[size_at..][0..4], b.pos - size_at - 4, .little);
    }

    /// Writes a record header at `pos` (size and id patched by `endRecord`); the record's
    /// stream follows.
    pub fn beginRecord(b: *Builder) u32 {
        const at = b.pos;
        b.raw("\x2a\x2a\x00\x00");
        b.raw(&([_]u8{0} ** 20)); // Size, id, FILETIME.
        return at;
    }

    /// Ends the record whose header is at `at`: size at both ends, and its id.
    pub fn endRecord(b: *Builder, at: u32, id: u64) void {
        const size = b.pos + 4 - at;
        std.mem.writeInt(u32, b.chunk[at + 4 ..][0..4], size, .little);
        std.mem.writeInt(u64, b.chunk[at + 8 ..][0..8], id, .little);
        b.u32le(size);
    }

    pub const Value = struct { vtype: u8, bytes: []const u8 };

    pub fn valueList(b: *Builder, list: []const Value) void {
        b.u32le(@intCast(list.len));
        for (list) |v| {
            b.u16le(@intCast(v.bytes.len));
            b.byte(v.vtype);
            b.byte(0);
        }
        for (list) |v| b.raw(v.bytes);
    }

    /// Same as `valueList`, with explicit declared sizes.
    pub fn valueListSized(b: *Builder, list: []const Value, sizes: []const u16) void {
        b.u32le(@intCast(list.len));
        for (list, sizes) |v, s| {
            b.u16le(s);
            b.byte(v.vtype);
            b.byte(0);
        }
        for (list) |v| b.raw(v.bytes);
    }
};

/// Wraps the builder's chunk (whose stream starts at 536) into a file: a file header, a
/// chunk header and one record (id 1) around the stream. Caller frees the file.
pub fn fileWithOneRecord(gpa: std.mem.Allocator, b: *Builder) ![]u8 {
    std.debug.assert(b.start == 512 + 24);
    @memcpy(b.chunk[512..516], "\x2a\x2a\x00\x00");
    b.endRecord(512, 1);
    return fileWithRecords(gpa, b, 1, 512);
}

/// `buildSample`'s one-record file with a renderer and a result to render its chunk into
/// (the `renderChunk` tests). The renderer reads `settings` for its life: the caller keeps
/// them. Free with `deinit`.
pub const SampleChunk = struct {
    gpa: std.mem.Allocator,
    builder: Builder,
    file: []u8,
    renderer: *dump.Renderer,
    result: dump.ChunkResult,

    pub fn init(gpa: std.mem.Allocator, settings: *const options.Options) !SampleChunk {
        var b = try Builder.init(gpa);
        errdefer b.deinit(gpa);
        buildSample(&b);
        const file = try fileWithOneRecord(gpa, &b);
        errdefer gpa.free(file);
        const renderer = try gpa.create(dump.Renderer);
        renderer.init(gpa, settings);
        return .{
            .gpa = gpa,
            .builder = b,
            .file = file,
            .renderer = renderer,
            .result = dump.ChunkResult.init(gpa),
        };
    }

    pub fn deinit(s: *SampleChunk) void {
        s.result.deinit();
        s.renderer.deinit();
        s.gpa.destroy(s.renderer);
        s.gpa.free(s.file);
        s.builder.deinit(s.gpa);
    }
};

/// Wraps the builder's chunk into a file whose one chunk holds records 1..`last_id`
/// (written with `beginRecord`/`endRecord` from offset 512), the last at `last_offset`.
pub fn fileWithRecords(
    gpa: std.mem.Allocator,
    b: *const Builder,
    last_id: u64,
    last_offset: u32,
) ![]u8 {
    const file = try gpa.alloc(u8, 4096 + 65536);
    @memset(file, 0);
    @memcpy(file[0..8], "ElfFile\x00");
    std.mem.writeInt(u16, file[40..42], 4096, .little);
    const c = file[4096..];
    @memcpy(c, b.chunk);
    @memcpy(c[0..8], "ElfChnk\x00");
    std.mem.writeInt(u64, c[24..32], 1, .little); // first record id
    std.mem.writeInt(u64, c[32..40], last_id, .little);
    std.mem.writeInt(u32, c[44..48], last_offset, .little);
    std.mem.writeInt(u32, c[48..52], b.pos, .little); // free space offset
    return file;
}

pub const Format = enum { json, json_separate, xml, xml_flat };

/// Parses the record stream `512..b.pos` and renders it; caller frees the result.
pub fn render(gpa: std.mem.Allocator, b: *const Builder, format: Format) ![]u8 {
    var p = tokens.Parser.init(gpa);
    defer p.deinit();
    try p.resetChunk(b.chunk);
    p.resetRecord();
    const top = try p.parseStream(b.start, b.pos, .record);
    const root = if (top.len > 0) try p.materialize(p.edges(top)[0]) else try p.newNode(.{
        .kind = .element,
        .ref = .{ .name = p.event_name },
    });
    var out = escape.Out.init(gpa);
    errdefer out.deinit();
    switch (format) {
        .json, .json_separate => {
            var j = render_json.JsonRenderer.init(
                &p,
                &out,
                values_format.default_codec,
                format == .json_separate,
            );
            defer j.deinit();
            try j.writeRecord(root, limits.recordOutputLimit(0));
        },
        .xml, .xml_flat => {
            var x: render_xml.XmlRenderer = .{
                .p = &p,
                .out = &out,
                .ansi = values_format.default_codec,
                .indent = format == .xml,
            };
            try x.writeRecord(root, limits.recordOutputLimit(0));
        },
    }
    return out.list.toOwnedSlice(gpa);
}

pub fn expectRender(b: *const Builder, format: Format, expected: []const u8) !void {
    const gpa = std.testing.allocator;
    const got = try render(gpa, b, format);
    defer gpa.free(got);
    try std.testing.expectEqualStrings(expected, got);
}

pub fn expectError(b: *const Builder, format: Format, expected: anyerror) !void {
    const gpa = std.testing.allocator;
    const got = render(gpa, b, format);
    if (got) |text| {
        defer gpa.free(text);
        std.debug.print("expected {s}, rendered: {s}\n", .{ @errorName(expected), text });
        return error.TestExpectedError;
    } else |e| try std.testing.expectEqual(expected, e);
}

/// A Security-like record: a template with dependency ids, optional substitutions, an
/// attribute, an array and a nested BinXml instance.
pub fn buildSample(b: *Builder) void {
    const T = values_decode.T;
    b.start = 536;
    b.pos = 536;
    b.fragment();
    const size_at = b.beginInstance();
    b.fragment();
    b.open("Event", 0xFFFF, true);
    b.attribute("xmlns");
    b.text("urn:x");
    b.closeStart();
    b.open("System", 0xFFFF, false);
    b.closeStart();
    b.open("EventID", 0, true);
    b.attribute("Qualifiers");
    b.sub(1, true, T.uint16);
    b.closeStart();
    b.sub(0, true, T.uint16);
    b.end();
    b.open("Keywords", 0xFFFF, false);
    b.closeStart();
    b.sub(2, true, T.hex64);
    b.end();
    b.end();
    b.open("Data", 3, false);
    b.closeStart();
    b.sub(3, false, T.array | T.string);
    b.end();
    b.sub(4, true, T.binxml);
    b.end();
    b.byte(0x00);
    b.endDefinition(size_at);
    // Values; value 4 is a nested instance `<EventData><Data Name="N">%0</Data></EventData>`
    // built in place, its declared size patched afterwards.
    const list = [_]Builder.Value{
        .{ .vtype = T.uint16, .bytes = &.{ 0x00, 0x12 } },
        .{ .vtype = T.null_type, .bytes = &.{} },
        .{ .vtype = T.hex64, .bytes = &.{ 0, 0, 0, 0, 0, 0, 0x20, 0x80 } },
        .{ .vtype = T.array | T.string, .bytes = &.{ 'a', 0, 0, 0, 'b', 0, 0, 0 } },
    };
    b.u32le(list.len + 1);
    for (list) |v| {
        b.u16le(@intCast(v.bytes.len));
        b.byte(v.vtype);
        b.byte(0);
    }
    const nested_descriptor = b.pos;
    b.u16le(0);
    b.byte(T.binxml);
    b.byte(0);
    for (list) |v| b.raw(v.bytes);
    const nested_start = b.pos;
    b.fragment();
    const nested_size_at = b.beginInstance();
    b.fragment();
    b.open("EventData", 0xFFFF, false);
    b.closeStart();
    b.open("Data", 0xFFFF, true);
    b.attribute("Name");
    b.text("N");
    b.closeStart();
    b.sub(0, false, T.uint32);
    b.end();
    b.end();
    b.byte(0x00);
    b.endDefinition(nested_size_at);
    b.valueList(&.{.{ .vtype = T.uint32, .bytes = &.{ 5, 0, 0, 0 } }});
    b.byte(0x00);
    std.mem.writeInt(
        u16,
        b.chunk[nested_descriptor..][0..2],
        @intCast(b.pos - nested_start),
        .little,
    );
    b.byte(0x00);
}

/// Record `id` of the scan test: an instance of `E` (defined inline when `e_def` is null)
/// with values `A` (u32), `B` (ASCII `b_text` as UTF-16, declared size `b_size`) and `N`, a
/// BinXml value holding one instance of `U` per entry of `u_texts`. `trailer` follows the
/// instance.
pub fn scanTestRecord(
    b: *Builder,
    id: u64,
    e_def: *?u32,
    u_def: *?u32,
    a: u8,
    b_text: []const u8,
    b_size: u16,
    u_texts: []const []const u8,
    trailer: []const u8,
) u32 {
    const T = values_decode.T;
    const at = b.beginRecord();
    b.fragment();
    if (e_def.*) |d| b.instanceOf(d) else {
        const size_at = b.beginInstance();
        e_def.* = size_at - 20;
        b.fragment();
        b.open("E", 0xFFFF, false);
        b.closeStart();
        inline for (.{ "A", "B", "N" }, 0..) |label, i| {
            b.open(label, 0xFFFF, false);
            b.closeStart();
            b.sub(i, false, if (i == 0) T.uint32 else if (i == 1) T.string else T.binxml);
            b.end();
        }
        b.end();
        b.byte(0x00);
        b.endDefinition(size_at);
    }
    b.u32le(3);
    b.u16le(4);
    b.raw(&.{ T.uint32, 0 });
    b.u16le(b_size);
    b.raw(&.{ T.string, 0 });
    const n_size_at = b.pos;
    b.u16le(0);
    b.raw(&.{ T.binxml, 0 });
    b.raw(&.{ a, 0, 0, 0 });
    b.units(b_text);
    for (2 * b_text.len..@max(b_size, 2 * b_text.len)) |_| b.byte(0);
    const n_start = b.pos;
    for (u_texts) |u| {
        b.fragment();
        b.singleInstance(u_def, "U", T.string);
        b.u32le(1);
        b.u16le(@intCast(2 * u.len));
        b.raw(&.{ T.string, 0 });
        b.units(u);
    }
    b.byte(0x00);
    std.mem.writeInt(u16, b.chunk[n_size_at..][0..2], @intCast(b.pos - n_start), .little);
    b.raw(trailer);
    b.endRecord(at, id);
    return at;
}

/// A shared fixture's bytes (`shared-fixtures/<path>`, its path given by the build); caller
/// frees.
pub fn readFixture(gpa: std.mem.Allocator, path: []const u8) ![]u8 {
    const unit_test_options = @import("unit_test_options");
    var dir = try std.fs.cwd().openDir(unit_test_options.fixtures, .{});
    defer dir.close();
    return dir.readFileAlloc(gpa, path, 1 << 20);
}

/// What the CLI prints on stdout for the EVTX file `bytes` with `settings`: every printed
/// record's text in output order, through one renderer, with the compiled-program lane on or
/// off. Caller frees.
pub fn dumpBytes(
    gpa: std.mem.Allocator,
    bytes: []const u8,
    settings: *const options.Options,
    compiled: bool,
) ![]u8 {
    const file = try dump.EvtxFile.open(gpa, dump.Input.fromBytes(bytes), settings);
    var renderer: dump.Renderer = undefined;
    renderer.init(gpa, settings);
    defer renderer.deinit();
    renderer.compiled = compiled;
    var text: std.ArrayList(u8) = .empty;
    errdefer text.deinit(gpa);
    var slots = file.order.iterator();
    while (slots.next()) |slot| {
        var result = dump.ChunkResult.init(gpa);
        defer result.deinit();
        try renderer.renderChunk(&file.input, slot, &result);
        for (result.entries.items) |*e| {
            if (e.outcome == .rendered) try text.appendSlice(gpa, result.text(e));
        }
    }
    return text.toOwnedSlice(gpa);
}

/// The synthetic fixtures: every value type, token and Data shape of the contract, with the
/// reference's stdout in `shared-fixtures/expected/<name>.{xml,jsonl,sep.jsonl}`.
pub const synthetic_fixtures = [_][]const u8{
    "basic",   "values-scalar", "values-floats", "values-arrays", "empty-null",      "tokens",
    "unicode", "strings-large", "nested",        "data-shapes",   "ansi-code-pages",
};

/// Renders `synthetic/<name>.evtx` with `settings` and compares it with
/// `expected/<name><suffix>` (the reference's stdout), both lanes (compiled programs on, off).
pub fn expectFixture(name: []const u8, settings: *const options.Options, suffix: []const u8) !void {
    const gpa = std.testing.allocator;
    var path_buffer: [128]u8 = undefined;
    const bytes = try readFixture(
        gpa,
        try std.fmt.bufPrint(&path_buffer, "synthetic/{s}.evtx", .{name}),
    );
    defer gpa.free(bytes);
    const expected = try readFixture(
        gpa,
        try std.fmt.bufPrint(&path_buffer, "expected/{s}{s}", .{ name, suffix }),
    );
    defer gpa.free(expected);
    for ([_]bool{ true, false }) |compiled| {
        const got = try dumpBytes(gpa, bytes, settings, compiled);
        defer gpa.free(got);
        std.testing.expectEqualStrings(expected, got) catch |e| {
            std.debug.print("fixture {s}{s}, compiled programs {}\n", .{ name, suffix, compiled });
            return e;
        };
    }
}

/// Test consumer: every entry's text, and `<slot>:<kind>` for errors, in output order.
pub const Collect = struct {
    gpa: std.mem.Allocator,
    text: std.ArrayList(u8) = .empty,

    pub fn consume(context: *anyopaque, result: *const dump.ChunkResult) anyerror!void {
        const c: *Collect = @ptrCast(@alignCast(context));
        for (result.entries.items) |*e| {
            if (e.kind()) |k| {
                try c.text.print(c.gpa, "{d}:{s}@{x}\n", .{ e.slot, k.text(), e.file_offset });
            } else try c.text.appendSlice(c.gpa, result.text(e));
        }
    }

    pub fn runOver(
        gpa: std.mem.Allocator,
        in: *const dump.Input,
        settings: *const options.Options,
        threads: usize,
    ) ![]u8 {
        const f = try dump.EvtxFile.open(gpa, in.*, settings);
        var c: Collect = .{ .gpa = gpa };
        errdefer c.text.deinit(gpa);
        const consumer: pipeline.Consumer = .{ .context = &c, .consume = consume };
        try pipeline.run(gpa, &f.input, f.order, settings, threads, consumer);
        return c.text.toOwnedSlice(gpa);
    }
};

/// Record `id` of the recovery tests: an instance of `<E><A>%0</A></E>` (defined inline
/// when `def` is null) with value `id` as UInt32.
pub fn carveTestRecord(b: *Builder, id: u32, def: *?u32) u32 {
    const at = b.beginRecord();
    b.fragment();
    if (def.*) |d| b.instanceOf(d) else {
        const size_at = b.beginInstance();
        def.* = size_at - 20;
        b.fragment();
        b.open("E", 0xFFFF, false);
        b.closeStart();
        b.open("A", 0xFFFF, false);
        b.closeStart();
        b.sub(0, false, values_decode.T.uint32);
        b.end();
        b.end();
        b.byte(0x00);
        b.endDefinition(size_at);
    }
    var value: [4]u8 = undefined;
    std.mem.writeInt(u32, &value, id, .little);
    b.valueList(&.{.{ .vtype = values_decode.T.uint32, .bytes = &value }});
    b.byte(0x00);
    b.endRecord(at, id);
    return at;
}

/// Renders chunk slot `slot` of the EVTX file `file` into `res` with a fresh renderer.
pub fn renderSlot(
    gpa: std.mem.Allocator,
    file: []const u8,
    slot: u32,
    settings: *const options.Options,
    res: *dump.ChunkResult,
) !void {
    const renderer = try gpa.create(dump.Renderer);
    defer gpa.destroy(renderer);
    renderer.init(gpa, settings);
    defer renderer.deinit();
    try renderer.renderChunk(&dump.Input.fromBytes(file), slot, res);
}

/// An allocator over `child` that refuses any allocation or growth that would take its live
/// bytes past `limit` (`error.OutOfMemory`), and keeps the highest live count seen: a test's
/// bound on the memory a renderer may take, whatever the input asks for.
pub const BoundedAllocator = struct {
    child: std.mem.Allocator,
    limit: usize,
    live: usize = 0,
    peak: usize = 0,

    pub fn init(child: std.mem.Allocator, limit: usize) BoundedAllocator {
        return .{ .child = child, .limit = limit };
    }

    pub fn allocator(self: *BoundedAllocator) std.mem.Allocator {
        return .{ .ptr = self, .vtable = &.{
            .alloc = alloc,
            .resize = resize,
            .remap = remap,
            .free = free,
        } };
    }

    /// Whether `more` bytes fit under the limit; counts them when they do.
    fn take(self: *BoundedAllocator, more: usize) bool {
        if (more > self.limit - self.live) return false;
        self.live += more;
        self.peak = @max(self.peak, self.live);
        return true;
    }

    fn alloc(ctx: *anyopaque, len: usize, a: std.mem.Alignment, ret: usize) ?[*]u8 {
        const self: *BoundedAllocator = @ptrCast(@alignCast(ctx));
        if (!self.take(len)) return null;
        const p = self.child.rawAlloc(len, a, ret) orelse {
            self.live -= len;
            return null;
        };
        return p;
    }

    fn resize(ctx: *anyopaque, m: []u8, a: std.mem.Alignment, new_len: usize, ret: usize) bool {
        const self: *BoundedAllocator = @ptrCast(@alignCast(ctx));
        if (new_len > m.len and !self.take(new_len - m.len)) return false;
        if (!self.child.rawResize(m, a, new_len, ret)) {
            if (new_len > m.len) self.live -= new_len - m.len;
            return false;
        }
        if (new_len < m.len) self.live -= m.len - new_len;
        return true;
    }

    fn remap(ctx: *anyopaque, m: []u8, a: std.mem.Alignment, new_len: usize, ret: usize) ?[*]u8 {
        const self: *BoundedAllocator = @ptrCast(@alignCast(ctx));
        if (new_len > m.len and !self.take(new_len - m.len)) return null;
        const p = self.child.rawRemap(m, a, new_len, ret) orelse {
            if (new_len > m.len) self.live -= new_len - m.len;
            return null;
        };
        if (new_len < m.len) self.live -= m.len - new_len;
        return p;
    }

    fn free(ctx: *anyopaque, m: []u8, a: std.mem.Alignment, ret: usize) void {
        const self: *BoundedAllocator = @ptrCast(@alignCast(ctx));
        std.debug.assert(self.live >= m.len);
        self.live -= m.len;
        self.child.rawFree(m, a, ret);
    }
};
