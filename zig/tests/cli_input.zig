//! The evtx-zig CLI and its input (PERF.md H10b), run as a user would: a file cut while the
//! CLI reads it, `-f` naming the input, standard input; and every argument case of
//! `shared-fixtures/cli-cases.txt` against the reference. Run by `zig build test`, with the
//! CLI's path and the shared fixtures given by the build (`cli_input_options`).
const std = @import("std");
const options = @import("cli_input_options");

const gpa = std.testing.allocator;
const block_size = 4096;
const chunk_size = 65536;
const output_max = 64 << 20;

/// A log of `slots` copies of the one chunk of `shared-fixtures/synthetic/<name>`, written
/// to `dir/<as>`; returns its bytes (caller frees).
fn writeLog(dir: std.fs.Dir, name: []const u8, slots: usize, as: []const u8) ![]u8 {
    var fixtures = try std.fs.cwd().openDir(options.fixtures, .{});
    defer fixtures.close();
    var path_buf: [256]u8 = undefined;
    const path = try std.fmt.bufPrint(&path_buf, "synthetic/{s}", .{name});
    const one = try fixtures.readFileAlloc(gpa, path, 1 << 20);
    defer gpa.free(one);
    std.debug.assert(one.len == block_size + chunk_size);
    const log = try gpa.alloc(u8, block_size + slots * chunk_size);
    @memcpy(log[0..block_size], one[0..block_size]);
    for (0..slots) |i| {
        const at = block_size + i * chunk_size;
        @memcpy(log[at..][0..chunk_size], one[block_size..]);
    }
    try dir.writeFile(.{ .sub_path = as, .data = log });
    return log;
}

var cli_path_buf: [std.fs.max_path_bytes]u8 = undefined;
var cli_path: ?[]const u8 = null;

/// The CLI's absolute path (the build gives one relative to the build root, and the CLI
/// runs in a scratch directory).
fn cli() []const u8 {
    if (cli_path == null) {
        cli_path = std.fs.cwd().realpath(options.cli, &cli_path_buf) catch
            @panic("the CLI is not built");
    }
    return cli_path.?;
}

const Run = struct {
    term: std.process.Child.Term,
    stdout: []u8,
    stderr: []u8,

    fn deinit(r: *Run) void {
        gpa.free(r.stdout);
        gpa.free(r.stderr);
    }

    fn expectExit(r: *const Run, code: u8) !void {
        switch (r.term) {
            .Exited => |c| if (c == code) return else std.debug.print(
                "exit {d}, expected {d}; stderr:\n{s}\n",
                .{ c, code, r.stderr },
            ),
            else => std.debug.print("terminated by {any}; stderr:\n{s}\n", .{ r.term, r.stderr }),
        }
        return error.TestUnexpectedResult;
    }
};

/// Runs the CLI in `dir` with `args`; `stdin` (when not null) is written to its standard
/// input, which is otherwise closed.
fn runCli(
    dir: std.fs.Dir,
    args: []const []const u8,
    stdin: ?[]const u8,
    env: ?*const std.process.EnvMap,
) !Run {
    var child = std.process.Child.init(args, gpa);
    child.cwd_dir = dir;
    child.env_map = env;
    child.stdin_behavior = if (stdin == null) .Ignore else .Pipe;
    child.stdout_behavior = .Pipe;
    child.stderr_behavior = .Pipe;
    try child.spawn();
    if (stdin) |bytes| {
        // The CLI spools all of standard input before it writes a byte, so this cannot
        // deadlock with its output.
        try child.stdin.?.writeAll(bytes);
        child.stdin.?.close();
        child.stdin = null;
    }
    var stdout: std.ArrayList(u8) = .empty;
    var stderr: std.ArrayList(u8) = .empty;
    errdefer stdout.deinit(gpa);
    errdefer stderr.deinit(gpa);
    try child.collectOutput(gpa, &stdout, &stderr, output_max);
    const term = try child.wait();
    return .{
        .term = term,
        .stdout = try stdout.toOwnedSlice(gpa),
        .stderr = try stderr.toOwnedSlice(gpa),
    };
}

/// `<build root>/<rel>`, or the environment's `env_name` when set; null (the test skips)
/// when the file is missing, an error when `EVTX_REQUIRE_REFERENCE=1` (as in `make test`).
fn tool(buf: []u8, env_name: []const u8, rel: []const u8) !?[]const u8 {
    const path = std.posix.getenv(env_name) orelse
        try std.fmt.bufPrint(buf, "{s}/{s}", .{ options.root, rel });
    std.fs.cwd().access(path, .{}) catch {
        const required = std.mem.eql(u8, std.posix.getenv("EVTX_REQUIRE_REFERENCE") orelse "", "1");
        std.debug.print("{s}: {s} is missing\n", .{ if (required) "error" else "skipping", path });
        if (required) return error.ToolMissing;
        return null;
    };
    return try std.fs.cwd().realpath(path, buf);
}

// The oldest chunk lies past 4 GiB, among 65,552 slots.
test "a sparse log over 4 GiB: the reference's bytes at -t 1 and -t 2" {
    var ref_buf: [std.fs.max_path_bytes]u8 = undefined;
    var gen_buf: [std.fs.max_path_bytes]u8 = undefined;
    const ref_bin = try tool(&ref_buf, "EVTX_REFERENCE", "target/reference/bin/evtx_dump") orelse
        return error.SkipZigTest;
    const gen_path = "target/release/evtx-fixture-gen";
    const generator = try tool(&gen_buf, "EVTX_FIXTURE_GEN", gen_path) orelse
        return error.SkipZigTest;
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const gen_argv = [_][]const u8{ generator, "sparse", "--out", "sparse.evtx" };
    var gen = try runCli(tmp.dir, &gen_argv, null, null);
    defer gen.deinit();
    try gen.expectExit(0);
    const stat = try tmp.dir.statFile("sparse.evtx");
    try std.testing.expect(stat.size > 1 << 32);
    const expected_argv = [_][]const u8{ ref_bin, "-t", "2", "-o", "jsonl", "sparse.evtx" };
    var expected = try runCli(tmp.dir, &expected_argv, null, null);
    defer expected.deinit();
    try expected.expectExit(0);
    try std.testing.expect(expected.stdout.len > 100_000);
    for ([_][]const u8{ "1", "2" }) |threads| {
        const run_argv = [_][]const u8{ cli(), "-t", threads, "-o", "jsonl", "sparse.evtx" };
        var run = try runCli(tmp.dir, &run_argv, null, null);
        defer run.deinit();
        try run.expectExit(0);
        try std.testing.expect(std.mem.eql(u8, expected.stdout, run.stdout));
        try std.testing.expectEqualStrings("", run.stderr);
    }

    // `info` reads slot by slot through `Input` in bounded memory (it read the whole file
    // before: 4 GiB of RSS).
    const expected_info_argv = [_][]const u8{ ref_bin, "info", "-i", "sparse.evtx" };
    var expected_info = try runCli(tmp.dir, &expected_info_argv, null, null);
    defer expected_info.deinit();
    try expected_info.expectExit(0);
    try std.testing.expect(std.mem.indexOf(u8, expected_info.stdout, "65552 chunks: ") != null);
    var child = std.process.Child.init(&[_][]const u8{ cli(), "info", "-i", "sparse.evtx" }, gpa);
    child.cwd_dir = tmp.dir;
    child.stdin_behavior = .Ignore;
    child.stdout_behavior = .Pipe;
    child.stderr_behavior = .Pipe;
    child.request_resource_usage_statistics = true;
    try child.spawn();
    var stdout: std.ArrayList(u8) = .empty;
    defer stdout.deinit(gpa);
    var stderr: std.ArrayList(u8) = .empty;
    defer stderr.deinit(gpa);
    try child.collectOutput(gpa, &stdout, &stderr, output_max);
    const info_run: Run = .{ .term = try child.wait(), .stdout = &.{}, .stderr = stderr.items };
    try info_run.expectExit(0);
    try std.testing.expect(std.mem.eql(u8, expected_info.stdout, stdout.items));
    try std.testing.expectEqualStrings("", stderr.items);
    const peak = child.resource_usage_statistics.getMaxRss() orelse return error.NoRssMeasurement;
    if (peak >= 16 << 20) {
        std.debug.print("info peaked at {d} bytes on a 4 GiB log\n", .{peak});
        return error.TestUnexpectedResult;
    }
}

// One incomplete-chunk line per lost slot, no signal, exit 0.
test "a log cut while the CLI reads it" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const slots = 40;
    const kept = 16;
    for ([_][]const u8{ "1", "2" }) |threads| {
        const log = try writeLog(tmp.dir, "strings-large.evtx", slots, "s.evtx");
        defer gpa.free(log);
        // What the run must print: the records of the slots left whole.
        const kept_bytes = log[0 .. block_size + kept * chunk_size];
        try tmp.dir.writeFile(.{ .sub_path = "kept.evtx", .data = kept_bytes });
        const expected_argv = [_][]const u8{ cli(), "-o", "xml", "-t", "1", "kept.evtx" };
        var expected = try runCli(tmp.dir, &expected_argv, null, null);
        defer expected.deinit();
        try expected.expectExit(0);
        try std.testing.expect(expected.stdout.len > 4 * chunk_size);

        const argv = [_][]const u8{ cli(), "-o", "xml", "-t", threads, "s.evtx" };
        var child = std.process.Child.init(&argv, gpa);
        child.cwd_dir = tmp.dir;
        child.stdin_behavior = .Ignore;
        child.stdout_behavior = .Pipe;
        child.stderr_behavior = .Pipe;
        try child.spawn();
        // The first output byte means the order scan is done; the CLI then blocks on the
        // full pipe a few chunks in (at most 2 x threads rendered ahead), far before slot 16.
        var first: [1]u8 = undefined;
        try std.testing.expectEqual(@as(usize, 1), try child.stdout.?.read(&first));
        {
            const w = try tmp.dir.openFile("s.evtx", .{ .mode = .write_only });
            defer w.close();
            try w.setEndPos(block_size + kept * chunk_size + 1000);
        }
        var stdout: std.ArrayList(u8) = .empty;
        defer stdout.deinit(gpa);
        var stderr: std.ArrayList(u8) = .empty;
        defer stderr.deinit(gpa);
        try stdout.append(gpa, first[0]);
        try child.collectOutput(gpa, &stdout, &stderr, output_max);
        var run: Run = .{ .term = try child.wait(), .stdout = &.{}, .stderr = stderr.items };
        try run.expectExit(0);
        try std.testing.expectEqualStrings(expected.stdout, stdout.items);
        var lines = std.mem.splitScalar(u8, stderr.items, '\n');
        for (kept..slots) |slot| {
            var prefix_buf: [128]u8 = undefined;
            const prefix = try std.fmt.bufPrint(
                &prefix_buf,
                "error: s.evtx: chunk {d}, record -, offset 0x{x}: incomplete chunk",
                .{ slot, block_size + slot * chunk_size },
            );
            const line = lines.next() orelse return error.TestExpectedMoreErrorLines;
            if (!std.mem.startsWith(u8, line, prefix)) {
                std.debug.print("expected a line starting `{s}`, got `{s}`\n", .{ prefix, line });
                return error.TestUnexpectedResult;
            }
        }
        try std.testing.expectEqualStrings("", lines.rest());
    }
}

test "-f naming the input (same path, symlink, hard link) is refused before anything is written" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    const log = try writeLog(tmp.dir, "basic.evtx", 1, "s.evtx");
    defer gpa.free(log);
    try tmp.dir.symLink("s.evtx", "l.evtx", .{});
    try std.posix.linkat(tmp.dir.fd, "s.evtx", tmp.dir.fd, "h.evtx", 0);
    try tmp.dir.makeDir("d");
    try tmp.dir.symLink("../s.evtx", "d/up.evtx", .{});
    const Case = struct { out: []const u8, confirm: bool };
    const cases = [_]Case{
        .{ .out = "s.evtx", .confirm = false },
        .{ .out = "s.evtx", .confirm = true },
        .{ .out = "l.evtx", .confirm = false },
        .{ .out = "h.evtx", .confirm = false },
        .{ .out = "d/up.evtx", .confirm = true },
    };
    for (cases) |c| {
        // Without --no-confirm-overwrite the CLI would ask first (and fail: no terminal).
        const args = [_][]const u8{
            cli(), "-o", "jsonl", "-f", c.out, "s.evtx", "--no-confirm-overwrite",
        };
        var run = try runCli(tmp.dir, if (c.confirm) args[0..6] else &args, null, null);
        defer run.deinit();
        try run.expectExit(1);
        var expected_buf: [256]u8 = undefined;
        const expected = try std.fmt.bufPrint(
            &expected_buf,
            "Error: refusing to write the output to `{s}`: it is the input file `s.evtx`\n",
            .{c.out},
        );
        try std.testing.expectEqualStrings(expected, run.stderr);
        try std.testing.expectEqualStrings("", run.stdout);
        const after = try tmp.dir.readFileAlloc(gpa, "s.evtx", 1 << 20);
        defer gpa.free(after);
        try std.testing.expectEqualSlices(u8, log, after);
    }
    // Another file is written as usual, and a copy of the input is not the input.
    try tmp.dir.copyFile("s.evtx", tmp.dir, "copy.evtx", .{});
    for ([_][]const u8{ "out.jsonl", "copy.evtx" }) |out| {
        const run_argv = [_][]const u8{
            cli(), "-o", "jsonl", "-f", out, "--no-confirm-overwrite", "s.evtx",
        };
        var run = try runCli(tmp.dir, &run_argv, null, null);
        defer run.deinit();
        try run.expectExit(0);
        const written = try tmp.dir.readFileAlloc(gpa, out, 1 << 20);
        defer gpa.free(written);
        try std.testing.expect(std.mem.startsWith(u8, written, "{\"Event\":"));
    }
}

test "standard input: the same output as the path, through a spool that leaves nothing behind" {
    var tmp = std.testing.tmpDir(.{ .iterate = true });
    defer tmp.cleanup();
    const log = try writeLog(tmp.dir, "strings-large.evtx", 6, "s.evtx");
    defer gpa.free(log);
    try tmp.dir.makeDir("spool");
    const spool_dir = try tmp.dir.realpathAlloc(gpa, "spool");
    defer gpa.free(spool_dir);
    var env = try std.process.getEnvMap(gpa);
    defer env.deinit();
    try env.put("TMPDIR", spool_dir);

    for ([_][]const u8{ "jsonl", "xml" }) |format| {
        const path_args = [_][]const u8{ cli(), "-o", format, "-t", "2", "s.evtx" };
        var from_path = try runCli(tmp.dir, &path_args, null, null);
        defer from_path.deinit();
        try from_path.expectExit(0);
        const stdin_args = [_][]const u8{ cli(), "-o", format, "-t", "2", "-" };
        var from_stdin = try runCli(tmp.dir, &stdin_args, log, &env);
        defer from_stdin.deinit();
        try from_stdin.expectExit(0);
        try std.testing.expectEqualStrings(from_path.stdout, from_stdin.stdout);
        try std.testing.expectEqualStrings(from_path.stderr, from_stdin.stderr);
    }
    var spool = try tmp.dir.openDir("spool", .{ .iterate = true });
    defer spool.close();
    var it = spool.iterate();
    try std.testing.expect(try it.next() == null);

    // Empty standard input stays a fatal error.
    var empty = try runCli(tmp.dir, &[_][]const u8{ cli(), "-o", "jsonl", "-" }, "", &env);
    defer empty.deinit();
    try empty.expectExit(1);
    try std.testing.expect(std.mem.startsWith(u8, empty.stderr, "Error: "));
    try std.testing.expectEqualStrings("", empty.stdout);
}

var reference_path_buf: [std.fs.max_path_bytes]u8 = undefined;

/// The reference's absolute path; a missing reference fails the test (no silent skip).
fn reference() ![]const u8 {
    return std.fs.cwd().realpath(options.reference, &reference_path_buf) catch |e| {
        const missing = "the reference evtx_dump is not built at {s} (make setup)\n";
        std.debug.print(missing, .{options.reference});
        return e;
    };
}

/// The first line of a run's stderr.
fn firstLine(text: []const u8) []const u8 {
    return text[0 .. std.mem.indexOfScalar(u8, text, '\n') orelse text.len];
}

/// What a case's stdout is (`shared-fixtures/cli-cases.txt`: `no stdout`, `stdout`, `help`,
/// `version`).
const StdoutKind = enum { empty, written, help, version };

/// What of a case's stderr is compared with the reference's (`stderr`, `first line`).
const StderrCompared = enum { not_compared, whole, first_line };

/// One argument case of `shared-fixtures/cli-cases.txt`, whose header says the format (the
/// Rust reader, `evtx_fixture_gen::cli_cases`, is this one's twin).
const CliCase = struct {
    name: []const u8,
    arguments: []const u8,
    status: u8,
    stdout: StdoutKind,
    stderr: StderrCompared,
    /// `ours`: an extension, which the reference refuses (exit 2, no stdout); the CLI is held
    /// to the file's words instead of the reference's run.
    ours: bool = false,
    /// `says TEXT`: how stderr's first line starts (the rest of the field, commas included).
    says: ?[]const u8 = null,
};

/// The three fields of a line of `cli-cases.txt`, split on `|` and trimmed.
fn cliFields(line: []const u8) ![3][]const u8 {
    var fields: [3][]const u8 = undefined;
    var it = std.mem.splitScalar(u8, line, '|');
    for (&fields) |*field| {
        field.* = std.mem.trim(u8, it.next() orelse return error.BadCliCase, " ");
    }
    if (it.next() != null) return error.BadCliCase;
    return fields;
}

/// A case line: `name | arguments | expected`, the expected words separated by `, `.
fn parseCliCase(line: []const u8) !CliCase {
    const fields = try cliFields(line);
    var status: ?u8 = null;
    var stdout: ?StdoutKind = null;
    var stderr: StderrCompared = .not_compared;
    var ours = false;
    var expected = fields[2];
    var says: ?[]const u8 = null;
    if (std.mem.startsWith(u8, expected, "says ")) {
        says = expected["says ".len..];
        expected = "";
    } else if (std.mem.indexOf(u8, expected, ", says ")) |at| {
        says = expected[at + ", says ".len ..];
        expected = expected[0..at];
    }
    var words = std.mem.splitSequence(u8, expected, ", ");
    while (words.next()) |word| {
        if (std.mem.eql(u8, word, "ours")) {
            ours = true;
        } else if (std.mem.startsWith(u8, word, "exit ")) {
            status = try std.fmt.parseInt(u8, word["exit ".len..], 10);
        } else if (std.mem.eql(u8, word, "stderr")) {
            stderr = .whole;
        } else if (std.mem.eql(u8, word, "first line")) {
            stderr = .first_line;
        } else {
            const kinds = [_]struct { []const u8, StdoutKind }{
                .{ "no stdout", .empty }, .{ "stdout", .written },
                .{ "help", .help },       .{ "version", .version },
            };
            for (kinds) |kind| {
                if (std.mem.eql(u8, word, kind[0])) {
                    stdout = kind[1];
                    break;
                }
            } else return error.BadCliCase;
        }
    }
    if (says != null and !ours) return error.BadCliCase;
    return .{
        .name = fields[0],
        .arguments = fields[1],
        .status = status orelse return error.BadCliCase,
        .stdout = stdout orelse return error.BadCliCase,
        .stderr = stderr,
        .ours = ours,
        .says = says,
    };
}

/// `@U`'s file: a copy of `@F` under a name that is not UTF-8, in the scratch directory.
const not_utf8_name = "not-utf8-\xff.evtx";

/// `cli-cases.txt`'s placeholders and what each stands for in this test's runs, which start in
/// the scratch directory: a file below the fixtures, `@O` a path in a directory emptied before
/// each run, `@U` `not_utf8_name`.
const Placeholders = struct {
    names: [placeholders_max][]const u8 = undefined,
    values: [placeholders_max][]const u8 = undefined,
    len: usize = 0,

    const placeholders_max = 16;

    /// A placeholder line, `@X | path below the fixtures | what` (no path for `@O`, `@U`).
    fn add(
        p: *Placeholders,
        arena: std.mem.Allocator,
        line: []const u8,
        fixtures: []const u8,
    ) !void {
        const fields = try cliFields(line);
        if (fields[0].len != 2 or p.len == placeholders_max) return error.BadCliCase;
        p.names[p.len] = fields[0];
        p.values[p.len] = if (std.mem.eql(u8, fields[0], "@O"))
            "o/out"
        else if (std.mem.eql(u8, fields[0], "@U"))
            not_utf8_name
        else if (fields[1].len > 0)
            try std.fmt.allocPrint(arena, "{s}/{s}", .{ fixtures, fields[1] })
        else
            return error.BadCliCase;
        p.len += 1;
    }

    fn value(p: *const Placeholders, name: []const u8) ![]const u8 {
        for (p.names[0..p.len], p.values[0..p.len]) |n, v| {
            if (std.mem.eql(u8, n, name)) return v;
        }
        std.debug.print("no placeholder {s} in cli-cases.txt\n", .{name});
        return error.BadCliCase;
    }

    /// `program` and the words of `arguments` (split on spaces, `''` empty), each placeholder
    /// replaced.
    fn argv(
        p: *const Placeholders,
        arena: std.mem.Allocator,
        program: []const u8,
        arguments: []const u8,
    ) ![]const []const u8 {
        var list: std.ArrayList([]const u8) = .empty;
        try list.append(arena, program);
        var words = std.mem.splitScalar(u8, arguments, ' ');
        while (words.next()) |word| {
            if (word.len == 0) continue;
            var arg: std.ArrayList(u8) = .empty;
            var i: usize = 0;
            while (i < word.len) {
                if (word[i] == '@' and i + 2 <= word.len) {
                    try arg.appendSlice(arena, try p.value(word[i .. i + 2]));
                    i += 2;
                } else {
                    try arg.append(arena, word[i]);
                    i += 1;
                }
            }
            const empty = std.mem.eql(u8, arg.items, "''");
            try list.append(arena, if (empty) "" else arg.items);
        }
        return list.items;
    }
};

/// What `stdout` is, as `cli-cases.txt` words it: a help text has clap's `Usage:` line, the
/// reference's version line clap's command name.
fn stdoutKind(stdout: []const u8) StdoutKind {
    if (std.mem.indexOf(u8, stdout, "\nUsage: ") != null) return .help;
    if (std.mem.startsWith(u8, stdout, "EVTX Parser ")) return .version;
    return if (stdout.len == 0) .empty else .written;
}

/// Where evtx-zig's run (`ours`) differs from the reference's under its name (`theirs`) in
/// what `case` compares, or the reference from what the file says of it; null where neither.
fn cliCaseDifference(case: CliCase, theirs: *const Run, ours: *const Run) ?[]const u8 {
    const exited: ?u8 = switch (theirs.term) {
        .Exited => |code| code,
        else => null,
    };
    if (case.ours) return ourCaseDifference(case, exited, theirs, ours);
    if (exited != case.status or stdoutKind(theirs.stdout) != case.stdout) {
        return "the reference is not what cli-cases.txt says";
    }
    if (!std.meta.eql(theirs.term, ours.term)) return "exit status";
    if ((theirs.stdout.len == 0) != (ours.stdout.len == 0)) return "stdout or not";
    if (case.stdout == .help and !std.mem.eql(u8, theirs.stdout, ours.stdout)) return "help text";
    switch (case.stderr) {
        .not_compared => {},
        .whole => if (!std.mem.eql(u8, theirs.stderr, ours.stderr)) return "stderr",
        .first_line => if (!std.mem.eql(u8, firstLine(theirs.stderr), firstLine(ours.stderr))) {
            return "stderr's first line";
        },
    }
    return null;
}

/// An `ours` case: the reference refuses the line; evtx-zig does what the file says.
fn ourCaseDifference(case: CliCase, exited: ?u8, theirs: *const Run, ours: *const Run) ?[]const u8 {
    if (exited != 2 or theirs.stdout.len != 0) return "the reference does not refuse the line";
    const ours_exited: ?u8 = switch (ours.term) {
        .Exited => |code| code,
        else => null,
    };
    if (ours_exited != case.status) return "exit status";
    if ((ours.stdout.len == 0) != (case.stdout == .empty)) return "stdout or not";
    const says = case.says orelse return null;
    if (!std.mem.startsWith(u8, firstLine(ours.stderr), says)) return "stderr";
    return null;
}

test "a case compares the status, stdout or not, the help text and stderr as it says" {
    const help = try parseCliCase("h | -h | exit 0, help, stderr");
    const fatal = try parseCliCase("f | @M | exit 1, no stdout, first line");
    const run = struct {
        fn of(code: u8, stdout: []const u8, stderr: []const u8) Run {
            const term: std.process.Child.Term = .{ .Exited = code };
            return .{ .term = term, .stdout = @constCast(stdout), .stderr = @constCast(stderr) };
        }
    }.of;
    const usage = run(0, "a\nUsage: x\n", "");
    try std.testing.expectEqual(null, cliCaseDifference(help, &usage, &usage));
    const cases = [_]struct { CliCase, Run, Run, ?[]const u8 }{
        .{ help, run(2, "", ""), usage, "the reference is not what cli-cases.txt says" },
        .{ help, usage, run(2, "a\nUsage: x\n", ""), "exit status" },
        .{ help, usage, run(0, "", ""), "stdout or not" },
        .{ help, usage, run(0, "a\nUsage: y\n", ""), "help text" },
        .{ help, usage, run(0, "a\nUsage: x\n", "!"), "stderr" },
        .{ fatal, run(1, "", "Error: a\nb\n"), run(1, "", "Error: a\nc\n"), null },
        .{ fatal, run(1, "", "Error: a\nb\n"), run(1, "", "Error: c\nb\n"), "stderr's first line" },
    };
    for (cases) |c| try std.testing.expectEqualDeep(c[3], cliCaseDifference(c[0], &c[1], &c[2]));
    try std.testing.expectError(error.BadCliCase, parseCliCase("x | -h | exit 0"));
    try std.testing.expectError(error.BadCliCase, parseCliCase("x | -h | exit 0, help, loud"));
    try std.testing.expectError(error.BadCliCase, parseCliCase("x | -h"));
    const bad_says = "x | -h | exit 2, no stdout, says a";
    try std.testing.expectError(error.BadCliCase, parseCliCase(bad_says));
    const ours = try parseCliCase("x | --x | ours, exit 2, no stdout, says error: a, b");
    try std.testing.expectEqualStrings("error: a, b", ours.says.?);
    const refused = run(2, "", "error: other\n");
    const said = run(2, "", "error: a, b, c\n");
    try std.testing.expectEqual(null, cliCaseDifference(ours, &refused, &said));
    try std.testing.expectEqualDeep(@as(?[]const u8, "stderr"), cliCaseDifference(
        ours,
        &refused,
        &run(2, "", "error: a\n"),
    ));
    try std.testing.expectEqualDeep(
        @as(?[]const u8, "the reference does not refuse the line"),
        cliCaseDifference(ours, &run(0, "x", ""), &run(2, "", "error: a, b\n")),
    );
}

/// The reference under evtx-zig's name in `dir` (clap's `Usage:` line names the program as
/// invoked; the CLI under test may be `evtx-zig` or `evtx-zig-safe`): its absolute path.
fn referenceAlias(dir: std.fs.Dir, buf: []u8) ![]const u8 {
    try dir.makeDir("alias");
    var link_buf: [std.fs.max_path_bytes]u8 = undefined;
    const link = try std.fmt.bufPrint(&link_buf, "alias/{s}", .{std.fs.path.basename(cli())});
    try dir.symLink(try reference(), link, .{});
    var dir_buf: [std.fs.max_path_bytes]u8 = undefined;
    return std.fmt.bufPrint(buf, "{s}/{s}", .{ try dir.realpath(".", &dir_buf), link });
}

/// Runs `case` in the reference under evtx-zig's name (`alias`) and in evtx-zig, both in
/// `dir` with `@O`'s directory emptied first; whether they differ (`cliCaseDifference`, said
/// on stderr).
fn runCliCase(
    dir: std.fs.Dir,
    arena: std.mem.Allocator,
    placeholders: *const Placeholders,
    alias: []const u8,
    env: *const std.process.EnvMap,
    case: CliCase,
) !bool {
    var runs: [2]Run = undefined;
    var ran: usize = 0;
    defer for (runs[0..ran]) |*r| r.deinit();
    for ([_][]const u8{ alias, cli() }) |program| {
        try dir.deleteTree("o");
        try dir.makeDir("o");
        const argv = try placeholders.argv(arena, program, case.arguments);
        runs[ran] = try runCli(dir, argv, null, env);
        ran += 1;
    }
    const difference = cliCaseDifference(case, &runs[0], &runs[1]) orelse return false;
    const what = "{s} ({s}): {s}: {any}, stdout \"{s}\", stderr \"{s}\"; the reference's " ++
        "{any}, \"{s}\", \"{s}\"\n";
    const ours = runs[1];
    const theirs = runs[0];
    std.debug.print(what, .{
        case.name,   case.arguments, difference,    ours.term,     ours.stdout,
        ours.stderr, theirs.term,    theirs.stdout, theirs.stderr,
    });
    return true;
}

// Every argument case of `shared-fixtures/cli-cases.txt` (`evtx-compare exit-table` runs the
// same in the three CLIs), the reference run with its backtrace off (`RUST_BACKTRACE`).
test "every argument case of cli-cases.txt: the reference's status, stdout and stderr" {
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var arena_state = std.heap.ArenaAllocator.init(gpa);
    defer arena_state.deinit();
    const arena = arena_state.allocator();
    var fixtures_buf: [std.fs.max_path_bytes]u8 = undefined;
    const fixtures = try std.fs.cwd().realpath(options.fixtures, &fixtures_buf);
    var alias_buf: [std.fs.max_path_bytes]u8 = undefined;
    const alias = try referenceAlias(tmp.dir, &alias_buf);
    const path = try std.fmt.allocPrint(arena, "{s}/cli-cases.txt", .{fixtures});
    const text = try std.fs.cwd().readFileAlloc(arena, path, 1 << 20);
    var env = try std.process.getEnvMap(gpa);
    defer env.deinit();
    env.remove("RUST_BACKTRACE");
    env.remove("RUST_LIB_BACKTRACE");
    var placeholders: Placeholders = .{};
    var lines = std.mem.splitScalar(u8, text, '\n');
    while (lines.next()) |line| {
        if (std.mem.startsWith(u8, line, "@")) try placeholders.add(arena, line, fixtures);
    }
    try std.fs.cwd().copyFile(try placeholders.value("@F"), tmp.dir, not_utf8_name, .{});
    var cases: usize = 0;
    var failed: usize = 0;
    lines.reset();
    while (lines.next()) |line| {
        if (line.len == 0 or line[0] == '#' or line[0] == '@') continue;
        const case = try parseCliCase(line);
        cases += 1;
        failed += @intFromBool(try runCliCase(tmp.dir, arena, &placeholders, alias, &env, case));
    }
    try std.testing.expect(cases >= 150);
    try std.testing.expectEqual(@as(usize, 0), failed);
}

/// One expected output of `shared-fixtures/manifest.json`, read as the Rust tests read it
/// (`evtx_fixture_gen::manifest`): the output's arguments from `outputs`, its file from the
/// fixture's `ours` (our rule, where it differs from the reference) or `expected`.
fn expectedFile(file: std.json.Value, key: []const u8) ![]const u8 {
    if (file.object.get("ours")) |ours| {
        const ours_key = if (std.mem.eql(u8, key, "xml")) "xml_file" else key;
        if (ours.object.get(ours_key)) |name| return name.string;
    }
    const expected = file.object.get("expected") orelse return error.NoExpected;
    const name = expected.object.get(key) orelse return error.NoExpected;
    return name.string;
}

test "every expected output of the manifest, byte for byte" {
    var fixtures = try std.fs.cwd().openDir(options.fixtures, .{});
    defer fixtures.close();
    const text = try fixtures.readFileAlloc(gpa, "manifest.json", 1 << 20);
    defer gpa.free(text);
    const manifest = try std.json.parseFromSlice(std.json.Value, gpa, text, .{});
    defer manifest.deinit();
    const outputs = manifest.value.object.get("outputs").?.object;
    const files = manifest.value.object.get("files").?.array.items;
    try std.testing.expect(outputs.count() == 3 and files.len > 0);
    var compared: usize = 0;
    var failed: usize = 0;
    for (files) |file| {
        const fixture = file.object.get("path").?.string;
        var it = outputs.iterator();
        while (it.next()) |output| {
            var argv: std.ArrayList([]const u8) = .empty;
            defer argv.deinit(gpa);
            try argv.appendSlice(gpa, &.{ cli(), "-t", "1" });
            for (output.value_ptr.array.items) |arg| try argv.append(gpa, arg.string);
            try argv.append(gpa, fixture);
            const name = try expectedFile(file, output.key_ptr.*);
            const expected = try fixtures.readFileAlloc(gpa, name, output_max);
            defer gpa.free(expected);
            var run = try runCli(fixtures, argv.items, null, null);
            defer run.deinit();
            compared += 1;
            if (!std.mem.eql(u8, run.stdout, expected)) {
                const what = "{s} {s}: stdout differs from {s}\n";
                std.debug.print(what, .{ fixture, output.key_ptr.*, name });
                failed += 1;
            }
        }
    }
    try std.testing.expectEqual(@as(usize, 0), failed);
    try std.testing.expectEqual(files.len * outputs.count(), compared);
}

/// The offset of `line`, `error: <path>: offset 0x<O>: <what>`, after checking its form.
fn sideLineOffset(line: []const u8, path: []const u8) !u64 {
    var prefix_buf: [std.fs.max_path_bytes + 32]u8 = undefined;
    const prefix = try std.fmt.bufPrint(&prefix_buf, "error: {s}: offset 0x", .{path});
    if (!std.mem.startsWith(u8, line, prefix)) {
        std.debug.print("not a side-file line for {s}: {s}\n", .{ path, line });
        return error.TestUnexpectedResult;
    }
    const rest = line[prefix.len..];
    const colon = std.mem.indexOf(u8, rest, ": ") orelse return error.TestUnexpectedResult;
    const what = rest[colon + 2 ..];
    try std.testing.expect(what.len > 0 and std.mem.indexOf(u8, what, path) == null);
    return std.fmt.parseInt(u64, rest[0..colon], 16);
}

/// Paths below the fixtures' root, for one damaged file's run.
const SidePaths = struct {
    file_buf: [std.fs.max_path_bytes]u8 = undefined,
    log_buf: [std.fs.max_path_bytes]u8 = undefined,
    good_buf: [std.fs.max_path_bytes]u8 = undefined,
    file: []const u8 = "",

    /// The CLI's argv for the damaged `name` of `dir`: the dump with it (`--mta` or
    /// `--wevt-cache`), or `extract-wevt-templates` on it then on a good PE.
    fn argv(p: *SidePaths, root: []const u8, dir: []const u8, name: []const u8) !Argv {
        p.file = try std.fmt.bufPrint(&p.file_buf, "{s}/{s}/{s}", .{ root, dir, name });
        if (std.mem.endsWith(u8, name, ".dll")) {
            const good = try std.fmt.bufPrint(&p.good_buf, "{s}/wevt/providers64.dll", .{root});
            const extract = "extract-wevt-templates";
            const out = "out.wevtcache";
            const words = .{ cli(), extract, "-i", p.file, "-i", good, "-o", out, "--overwrite" };
            return .{ .words = words };
        }
        const mta = std.mem.eql(u8, dir, "mta");
        const log = if (mta) "mta/events.evtx" else "wevt/carved.evtx";
        const path = try std.fmt.bufPrint(&p.log_buf, "{s}/{s}", .{ root, log });
        const option = if (mta) "--mta" else "--wevt-cache";
        const words = .{ cli(), "-t", "1", "-o", "jsonl", option, p.file, path, "" };
        return .{ .words = words, .len = 8 };
    }

    const Argv = struct {
        words: [9][]const u8,
        len: usize = 9,
    };
};

// Damaged side files (rust/cli/tests/side_files.rs is the Rust CLI's twin):
// each `damaged-*` fixture gives one line naming the file and the offset the generator
// damaged (`damage.json`, from the generator's own layout), exit 1; a `.MTA` or `.wevtcache`
// stops the dump before any record, a PE is reported and the next file is done.
test "damaged side files: one line with the generator's offset, the reference's stop or go on" {
    var root_buf: [std.fs.max_path_bytes]u8 = undefined;
    const root = try std.fs.cwd().realpath(options.fixtures, &root_buf);
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var checked: usize = 0;
    for ([_][]const u8{ "mta", "wevt" }) |dir| {
        var table_buf: [std.fs.max_path_bytes]u8 = undefined;
        const table_path = try std.fmt.bufPrint(&table_buf, "{s}/{s}/damage.json", .{ root, dir });
        const text = try std.fs.cwd().readFileAlloc(gpa, table_path, 1 << 20);
        defer gpa.free(text);
        const table = try std.json.parseFromSlice(std.json.Value, gpa, text, .{});
        defer table.deinit();
        var it = table.value.object.iterator();
        while (it.next()) |entry| {
            const name = entry.key_ptr.*;
            var paths: SidePaths = .{};
            const argv = try paths.argv(root, dir, name);
            const pe = std.mem.endsWith(u8, name, ".dll");
            var run = try runCli(tmp.dir, argv.words[0..argv.len], null, null);
            defer run.deinit();
            try run.expectExit(1);
            const stderr = std.mem.trimRight(u8, run.stderr, "\n");
            var lines = std.mem.splitScalar(u8, stderr, '\n');
            const got = try sideLineOffset(lines.first(), paths.file);
            if (pe) try expectNextFileDone(tmp.dir, lines.next()) else {
                try std.testing.expectEqualStrings("", run.stdout);
            }
            try std.testing.expect(lines.next() == null);
            switch (entry.value_ptr.*) {
                .integer => |at| try std.testing.expectEqual(@as(u64, @intCast(at)), got),
                // A count met further on: past the three descriptors, inside the file.
                .null => {
                    const size = (try std.fs.cwd().statFile(paths.file)).size;
                    try std.testing.expect(got >= 102 and got < size);
                },
                else => return error.TestUnexpectedResult,
            }
            checked += 1;
        }
    }
    try std.testing.expectEqual(@as(usize, 13 + 10 + 5), checked);
}

// `apply-wevt-cache --cache` (rust/cli/tests/side_files.rs is the twin): a damaged cache stops
// it with the dump's `--wevt-cache` line for the same file (the generator's offset), exit 1,
// nothing on stdout.
test "a damaged cache stops apply-wevt-cache with the dump's line" {
    var root_buf: [std.fs.max_path_bytes]u8 = undefined;
    const root = try std.fs.cwd().realpath(options.fixtures, &root_buf);
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var table_buf: [std.fs.max_path_bytes]u8 = undefined;
    const table_path = try std.fmt.bufPrint(&table_buf, "{s}/wevt/damage.json", .{root});
    const text = try std.fs.cwd().readFileAlloc(gpa, table_path, 1 << 20);
    defer gpa.free(text);
    const table = try std.json.parseFromSlice(std.json.Value, gpa, text, .{});
    defer table.deinit();
    var log_buf: [std.fs.max_path_bytes]u8 = undefined;
    const log = try std.fmt.bufPrint(&log_buf, "{s}/wevt/carved.evtx", .{root});
    var checked: usize = 0;
    var it = table.value.object.iterator();
    while (it.next()) |entry| {
        const name = entry.key_ptr.*;
        if (!std.mem.endsWith(u8, name, ".wevtcache")) continue;
        var file_buf: [std.fs.max_path_bytes]u8 = undefined;
        const file = try std.fmt.bufPrint(&file_buf, "{s}/wevt/{s}", .{ root, name });
        const apply = [_][]const u8{
            cli(),             "apply-wevt-cache", "--cache",         file,
            "--template-guid", "1",                "--substitutions", "[]",
        };
        var run = try runCli(tmp.dir, &apply, null, null);
        defer run.deinit();
        try run.expectExit(1);
        try std.testing.expectEqualStrings("", run.stdout);
        const line = std.mem.trimRight(u8, run.stderr, "\n");
        try std.testing.expect(std.mem.indexOfScalar(u8, line, '\n') == null);
        const want: u64 = @intCast(entry.value_ptr.*.integer);
        try std.testing.expectEqual(want, try sideLineOffset(line, file));
        const dump_argv = [_][]const u8{ cli(), "-t", "1", "--wevt-cache", file, log };
        var dump = try runCli(tmp.dir, &dump_argv, null, null);
        defer dump.deinit();
        try std.testing.expectEqualStrings(dump.stderr, run.stderr);
        checked += 1;
    }
    try std.testing.expectEqual(@as(usize, 10), checked);
}

/// Edits to the "wevt-logon" TEMP's BinXML (rust/cli/tests/side_files.rs is the twin, which
/// says where each lands), each with the words the reference's error for it holds.
const broken_templates = [_]struct { edits: []const [2]u16, words: []const u8 }{
    .{ .edits = &.{.{ 11, 0xEF }}, .words = "WEVT inline name hash mismatch" },
    .{ .edits = &.{.{ 25, 0x41 }}, .words = "WEVT inline name missing NUL terminator" },
    .{ .edits = &.{.{ 4, 0x7F }}, .words = "as binxml token" },
    .{ .edits = &.{ .{ 13, 0xFF }, .{ 14, 0x7F } }, .words = "wevt_inline_name_code_unit" },
    .{ .edits = &.{.{ 49, 0x22 }}, .words = "as binxml value variant" },
    .{ .edits = &.{.{ 49, 0x00 }}, .words = "`0x35` as binxml token" },
    .{ .edits = &.{.{ 158, 0x00 }}, .words = "unfinished element start" },
    .{ .edits = &.{.{ 159, 0x00 }}, .words = "unbalanced element stack" },
    .{ .edits = &.{.{ 4, 0x04 }}, .words = "close element - Bad parser state" },
    .{ .edits = &.{.{ 4, 0x00 }}, .words = "missing root element" },
};

// A cache whose container and manifests are intact but one template is broken:
// `apply-wevt-cache` prints the reference's error for it, stderr and exit status byte for byte.
test "a broken template in a cache: apply-wevt-cache gives the reference's error" {
    var root_buf: [std.fs.max_path_bytes]u8 = undefined;
    const root = try std.fs.cwd().realpath(options.fixtures, &root_buf);
    var tmp = std.testing.tmpDir(.{});
    defer tmp.cleanup();
    var dir_buf: [std.fs.max_path_bytes]u8 = undefined;
    const dir = try tmp.dir.realpath(".", &dir_buf);
    var cache_buf: [std.fs.max_path_bytes]u8 = undefined;
    const cache = try std.fmt.bufPrint(&cache_buf, "{s}/wevt/templates.wevtcache", .{root});
    const original = try std.fs.cwd().readFileAlloc(gpa, cache, 1 << 20);
    defer gpa.free(original);
    // The template GUID 5F2C2A43-AA86-2481-02F3-ECE817383695 as stored.
    const guid = [16]u8{
        0x43, 0x2A, 0x2C, 0x5F, 0x86, 0xAA, 0x81, 0x24,
        0x02, 0xF3, 0xEC, 0xE8, 0x17, 0x38, 0x36, 0x95,
    };
    var temp: usize = 0;
    while (!(std.mem.eql(u8, original[temp..][0..4], "TEMP") and
        std.mem.eql(u8, original[temp + 24 ..][0..16], &guid))) temp += 1;
    var env = try std.process.getEnvMap(gpa);
    defer env.deinit();
    env.remove("RUST_BACKTRACE");
    env.remove("RUST_LIB_BACKTRACE");
    const bytes = try gpa.dupe(u8, original);
    defer gpa.free(bytes);
    var path_buf: [std.fs.max_path_bytes]u8 = undefined;
    const path = try std.fmt.bufPrint(&path_buf, "{s}/broken.wevtcache", .{dir});
    for (broken_templates) |case| {
        @memcpy(bytes, original);
        for (case.edits) |edit| bytes[temp + 40 + edit[0]] = @intCast(edit[1]);
        try tmp.dir.writeFile(.{ .sub_path = "broken.wevtcache", .data = bytes });
        var runs: [2]Run = undefined;
        for ([_][]const u8{ try reference(), cli() }, 0..) |program, i| {
            const argv = [_][]const u8{
                program,           "apply-wevt-cache", "--cache",
                path,              "--template-guid",  "5F2C2A43-AA86-2481-02F3-ECE817383695",
                "--substitutions", "[1,\"x\"]",
            };
            runs[i] = try runCli(tmp.dir, &argv, null, &env);
        }
        defer for (&runs) |*r| r.deinit();
        try runs[0].expectExit(1);
        try runs[1].expectExit(1);
        try std.testing.expect(std.mem.indexOf(u8, runs[0].stderr, case.words) != null);
        try std.testing.expectEqualStrings(runs[0].stderr, runs[1].stderr);
        try std.testing.expectEqualStrings("", runs[1].stdout);
    }
}

/// After a damaged PE: the reference's summary line, and the good PE's one blob written.
fn expectNextFileDone(dir: std.fs.Dir, summary: ?[]const u8) !void {
    const want = "Error: extract-wevt-templates completed with 1 error(s)";
    try std.testing.expectEqualStrings(want, summary orelse "");
    const written = try dir.readFileAlloc(gpa, "out.wevtcache", 1 << 20);
    defer gpa.free(written);
    try std.testing.expectEqual(@as(u32, 1), std.mem.readInt(u32, written[12..16], .little));
}
