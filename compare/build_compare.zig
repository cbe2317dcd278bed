//! Build steps of compare/: the evtx-bench harness (one source, linked against each backend),
//! the header-conformance test of the Zig exports, and the C smoke tests of the C ABI.
//! Called from the top-level build.zig, which declares the steps; this file gives these their
//! work:
//!   header                 regenerate include/evtx.h with cbindgen (the only step that writes it)
//!   header-check           diff include/evtx.h against a fresh cbindgen run in the cache; fails
//!                          on a stale header, never writes it, whatever the environment
//!   test-abi               everything below plus `header-check`: what `make test` runs
//!   test-abi-smoke         compare/capi-tests/smoke.c linked against each library, and
//!                          smoke.py (ctypes) against each shared library
//!   test-abi-valgrind      the same under valgrind --leak-check=full (zero errors, zero leaks)
//!   test-abi-asan          smoke.c built by gcc with AddressSanitizer and UBSan
//!   test-abi-conformance   compile-time check of the Zig exports against include/evtx.h
//!   bench                  evtx-bench over every library on the benchmark inputs
//! Options: -Dbench-input=FILE (repeatable), -Dbench-runs=N, -Dbench-format=F,
//! -Dbench-threads=N, -Dbench-api=push|pull, -Dsmoke-input=FILE (repeatable),
//! -Dheader-check-file=FILE (what header-check diffs; compare/gates/run.sh plants a stale one).
const std = @import("std");
const engine = @import("../zig/build_engine.zig");

pub const Options = struct {
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
    steps: engine.Steps,
    engine: *engine.Engine,
    rust: engine.RustArtifacts,
    zig: engine.Artifacts,
};

/// A library implementing include/evtx.h.
const Library = struct {
    /// Suffix of the binaries built against it: evtx-bench-<short>, evtx-smoke-<short>.
    short: []const u8,
    /// Link the static library into `module`.
    static: union(enum) {
        /// A Rust staticlib produced by cargo.
        rust: std.Build.LazyPath,
        zig: *std.Build.Step.Compile,
    },
    /// The shared library, for evtx-bench's --lib.
    shared: std.Build.LazyPath,
    /// What must run before either exists.
    dependency: ?*std.Build.Step,
    /// The static library for the valgrind binaries, when it differs from `static`.
    static_valgrind: ?*std.Build.Step.Compile = null,
};

pub fn addCompare(b: *std.Build, options: Options) void {
    const steps = options.steps;
    steps.test_abi.dependOn(steps.header_check);
    steps.test_abi.dependOn(steps.test_abi_smoke);
    steps.test_abi.dependOn(steps.test_abi_valgrind);
    steps.test_abi.dependOn(steps.test_abi_asan);
    steps.test_abi.dependOn(steps.test_abi_conformance);

    addHeader(b, steps.header, steps.header_check);

    const evtx_h = b.addTranslateC(.{
        .root_source_file = b.path("include/evtx.h"),
        .target = options.target,
        .optimize = options.optimize,
    }).createModule();

    var libraries: std.ArrayList(Library) = .empty;
    libraries.append(b.allocator, .{
        .short = "ref",
        .static = .{ .rust = options.rust.lib_ref_static },
        .shared = b.path("target/release/libevtx_ref.so"),
        .dependency = options.rust.cargo,
    }) catch @panic("OOM");
    libraries.append(b.allocator, .{
        .short = "rs",
        .static = .{ .rust = options.rust.lib_rs_static },
        .shared = b.path("target/release/libevtx_rs.so"),
        .dependency = options.rust.cargo,
    }) catch @panic("OOM");
    // Valgrind 3.19 cannot decode AVX-512, which `native` may use on these machines: its
    // binaries, and a copy of the Zig library, are built for the baseline CPU (the Rust
    // libraries are baseline already).
    const valgrind_target = b.resolveTargetQuery(.{
        .cpu_arch = options.target.result.cpu.arch,
        .os_tag = options.target.result.os.tag,
        .abi = options.target.result.abi,
        .cpu_model = .baseline,
    });

    const valgrind = options.engine.modules(.{
        .target = valgrind_target,
        .optimize = options.optimize,
        .link_libc = true,
        .valgrind = true,
    });
    const lib_valgrind = b.addLibrary(.{
        .name = "evtx_zig_valgrind",
        .linkage = .static,
        .root_module = valgrind.capi,
    });
    lib_valgrind.bundle_compiler_rt = options.zig.lib_static.bundle_compiler_rt;
    libraries.append(b.allocator, .{
        .short = "zig",
        .static = .{ .zig = options.zig.lib_static },
        .shared = options.zig.lib_shared.getEmittedBin(),
        .dependency = null,
        .static_valgrind = lib_valgrind,
    }) catch @panic("OOM");
    const given = b.option([]const []const u8, "smoke-input", "EVTX files for the C smoke tests");
    const smoke_inputs = given orelse smokeInputs(b, true);
    // The reference crate's SIMD string escaper (sonic_rs write_string_fast) reads 16 bytes
    // past a buffer on some samples (LiveId): valgrind reports it, so under valgrind the
    // reference gets the fixtures only. Our engines get the whole corpus.
    const fixture_inputs = given orelse smokeInputs(b, false);
    const python = b.findProgram(&.{"python3"}, &.{}) catch null;

    for (libraries.items) |library| {
        // The harness, linked with this library.
        const bench_exe = b.addExecutable(.{
            .name = b.fmt("evtx-bench-{s}", .{library.short}),
            .root_module = harnessModule(b, options, evtx_h, library.short),
        });
        linkLibrary(bench_exe, library);
        const install_bench = b.addInstallArtifact(bench_exe, .{});
        b.getInstallStep().dependOn(&install_bench.step);
        options.steps.bench.dependOn(&install_bench.step);

        // The C smoke test, natively and under valgrind.
        const smoke = smokeExecutable(b, library, options.target, options.optimize, "");
        const run_smoke = b.addRunArtifact(smoke);
        run_smoke.addArgs(smoke_inputs);
        run_smoke.has_side_effects = true;
        run_smoke.expectExitCode(0);
        options.steps.test_abi_smoke.dependOn(&run_smoke.step);

        // The same from Python ctypes, against the shared library.
        if (python) |python_path| {
            const run_python = b.addSystemCommand(&.{python_path});
            run_python.addFileArg(b.path("compare/capi-tests/smoke.py"));
            run_python.addFileArg(library.shared);
            run_python.addArgs(smoke_inputs);
            run_python.has_side_effects = true;
            run_python.expectExitCode(0);
            if (library.dependency) |dependency| run_python.step.dependOn(dependency);
            options.steps.test_abi_smoke.dependOn(&run_python.step);
        }

        var library_valgrind = library;
        if (library.static_valgrind) |lib| library_valgrind.static = .{ .zig = lib };
        const smoke_valgrind =
            smokeExecutable(b, library_valgrind, valgrind_target, options.optimize, "-valgrind");
        const run_valgrind = b.addSystemCommand(&.{
            "valgrind",
            "--quiet",
            "--leak-check=full",
            "--show-leak-kinds=definite,indirect,possible",
            "--errors-for-leak-kinds=definite,indirect,possible",
            "--error-exitcode=1",
        });
        const suppressions = b.path("compare/capi-tests/valgrind.supp");
        run_valgrind.addPrefixedFileArg("--suppressions=", suppressions);
        run_valgrind.addArtifactArg(smoke_valgrind);
        const is_ref = std.mem.eql(u8, library.short, "ref");
        run_valgrind.addArgs(if (is_ref) fixture_inputs else smoke_inputs);
        run_valgrind.has_side_effects = true;
        run_valgrind.expectExitCode(0);
        options.steps.test_abi_valgrind.dependOn(&run_valgrind.step);

        options.steps.test_abi_asan.dependOn(smokeAsan(b, library, smoke_inputs));
    }

    // evtx-bench: the same harness, loading libraries at run time.
    const bench_dynamic = b.addExecutable(.{
        .name = "evtx-bench",
        .root_module = harnessModule(b, options, evtx_h, "dynamic"),
    });
    const install_dynamic = b.addInstallArtifact(bench_dynamic, .{});
    b.getInstallStep().dependOn(&install_dynamic.step);
    options.steps.bench.dependOn(&install_dynamic.step);
    addBenchRun(b, options, bench_dynamic, libraries.items);

    addConformance(b, options, evtx_h, options.steps.test_abi_conformance);

    // The harness's own unit tests (its paired ratio), in `zig build test`.
    const harness_tests = b.addTest(.{
        .name = "evtx-bench-tests",
        .root_module = harnessModule(b, options, evtx_h, "dynamic"),
    });
    options.steps.test_all.dependOn(&b.addRunArtifact(harness_tests).step);
}

fn harnessModule(
    b: *std.Build,
    options: Options,
    evtx_h: *std.Build.Module,
    backend: []const u8,
) *std.Build.Module {
    const build_options = b.addOptions();
    build_options.addOption([]const u8, "backend", backend);
    const module = b.createModule(.{
        .root_source_file = b.path("compare/harness/main.zig"),
        .target = options.target,
        .optimize = options.optimize,
        .link_libc = true,
    });
    module.addImport("evtx_h", evtx_h);
    module.addOptions("harness_options", build_options);
    return module;
}

/// Links the static library; a Rust staticlib also needs an unwinder (Zig's libunwind stands in
/// for libgcc_s) besides libc.
fn linkLibrary(exe: *std.Build.Step.Compile, library: Library) void {
    switch (library.static) {
        .rust => |archive| {
            exe.root_module.addObjectFile(archive);
            exe.root_module.linkSystemLibrary("unwind", .{});
        },
        .zig => |lib| exe.root_module.linkLibrary(lib),
    }
    if (library.dependency) |dependency| exe.step.dependOn(dependency);
}

/// The smoke test compiled by gcc with AddressSanitizer and UBSan and linked with the static
/// library (zig cc ships no sanitizer runtimes). It catches an embedder-side overrun of a
/// record buffer whose length the library got wrong, and use after free across the ABI.
fn smokeAsan(b: *std.Build, library: Library, inputs: []const []const u8) *std.Build.Step {
    const gcc = b.addSystemCommand(&.{
        "gcc",
        "-std=c99",
        "-g",
        "-O1",
        "-fno-omit-frame-pointer",
        "-fsanitize=address,undefined",
        "-fno-sanitize-recover=all",
    });
    gcc.addPrefixedDirectoryArg("-I", b.path("include"));
    gcc.addFileArg(b.path("compare/capi-tests/smoke.c"));
    switch (library.static) {
        .rust => |archive| gcc.addFileArg(archive),
        .zig => |lib| gcc.addArtifactArg(lib),
    }
    gcc.addArgs(&.{ "-lpthread", "-ldl", "-lm", "-o" });
    const binary = gcc.addOutputFileArg(b.fmt("evtx-smoke-{s}-asan", .{library.short}));
    if (library.dependency) |dependency| gcc.step.dependOn(dependency);
    const run = std.Build.Step.Run.create(b, b.fmt("run evtx-smoke-{s}-asan", .{library.short}));
    run.addFileArg(binary);
    run.addArgs(inputs);
    run.setEnvironmentVariable("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1");
    run.has_side_effects = true;
    run.expectExitCode(0);
    return &run.step;
}

fn smokeExecutable(
    b: *std.Build,
    library: Library,
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
    suffix: []const u8,
) *std.Build.Step.Compile {
    const module = b.createModule(.{
        .target = target,
        .optimize = optimize,
        .link_libc = true,
    });
    module.addCSourceFile(.{
        .file = b.path("compare/capi-tests/smoke.c"),
        .flags = &.{ "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic" },
    });
    module.addIncludePath(b.path("include"));
    const exe = b.addExecutable(.{
        .name = b.fmt("evtx-smoke-{s}{s}", .{ library.short, suffix }),
        .root_module = module,
    });
    linkLibrary(exe, library);
    return exe;
}

/// The committed synthetic and damaged fixtures, plus a few public samples when they are beside
/// the repo; -Dsmoke-input replaces them all.
fn smokeInputs(b: *std.Build, with_corpus: bool) []const []const u8 {
    var inputs: std.ArrayList([]const u8) = .empty;
    appendEvtxFiles(b, &inputs, "shared-fixtures/synthetic");
    appendEvtxFiles(b, &inputs, "shared-fixtures/damaged");
    appendEvtxFiles(b, &inputs, "shared-fixtures/regressions");
    // The whole public corpus when present (EVTX_SAMPLES may point elsewhere).
    if (!with_corpus) return inputs.items;
    const samples = b.graph.env_map.get("EVTX_SAMPLES") orelse
        b.pathFromRoot("../shared/evtx-samples");
    appendEvtxFiles(b, &inputs, samples);
    return inputs.items;
}

/// Every `*.evtx` directly in `dir` (relative to the build root), sorted.
fn appendEvtxFiles(b: *std.Build, list: *std.ArrayList([]const u8), dir_path: []const u8) void {
    const root = b.pathFromRoot(dir_path);
    var dir = std.fs.cwd().openDir(root, .{ .iterate = true }) catch return;
    defer dir.close();
    const start = list.items.len;
    var it = dir.iterate();
    while (it.next() catch null) |entry| {
        if (entry.kind != .file or !std.mem.endsWith(u8, entry.name, ".evtx")) continue;
        list.append(b.allocator, b.pathJoin(&.{ root, entry.name })) catch @panic("OOM");
    }
    std.mem.sort([]const u8, list.items[start..], {}, struct {
        fn lessThan(_: void, lhs: []const u8, rhs: []const u8) bool {
            return std.mem.lessThan(u8, lhs, rhs);
        }
    }.lessThan);
}

/// `zig build bench`: evtx-bench with every library on -Dbench-input, else the benchmark logs
/// in target/fixtures, else two public samples.
fn addBenchRun(
    b: *std.Build,
    options: Options,
    bench_exe: *std.Build.Step.Compile,
    libraries: []const Library,
) void {
    var inputs: std.ArrayList([]const u8) = .empty;
    if (b.option([]const []const u8, "bench-input", "EVTX files for `zig build bench`")) |given| {
        inputs.appendSlice(b.allocator, given) catch @panic("OOM");
    } else {
        appendEvtxFiles(b, &inputs, "target/fixtures");
        if (inputs.items.len == 0) {
            for ([_][]const u8{ "security.evtx", "system.evtx" }) |name| {
                const path = b.pathFromRoot(b.fmt("../shared/evtx-samples/{s}", .{name}));
                if (std.fs.cwd().access(path, .{})) |_| {
                    inputs.append(b.allocator, path) catch @panic("OOM");
                } else |_| {}
            }
        }
    }
    const runs = b.option(u32, "bench-runs", "Timed runs per input and backend (default 5)") orelse
        5;
    const format = b.option([]const u8, "bench-format", "xml, json or jsonl (default jsonl)") orelse
        "jsonl";
    const threads = b.option(u32, "bench-threads", "Threads given the libraries (default 1)") orelse
        1;
    const api = b.option([]const u8, "bench-api", "push or pull (default push)") orelse "push";

    if (inputs.items.len == 0) {
        const fail = b.addFail("bench: no inputs: pass -Dbench-input=FILE, run `make fixtures` " ++
            "(target/fixtures/*.evtx), or put the samples in ../shared/evtx-samples");
        options.steps.bench.dependOn(&fail.step);
        return;
    }
    const run = b.addRunArtifact(bench_exe);
    run.addArgs(&.{ "--runs", b.fmt("{d}", .{runs}), "--format", format });
    run.addArgs(&.{ "--threads", b.fmt("{d}", .{threads}), "--api", api });
    run.addArgs(&.{ "--json", b.getInstallPath(.prefix, "bench/evtx-bench.json") });
    for (libraries) |library| {
        run.addArg("--lib");
        run.addFileArg(library.shared);
        if (library.dependency) |dependency| run.step.dependOn(dependency);
    }
    run.addArgs(inputs.items);
    run.has_side_effects = true;
    run.stdio = .inherit;
    options.steps.bench.dependOn(&run.step);
}

/// `zig build header`: cbindgen into the cache, then copied to include/evtx.h.
/// `zig build header-check`: the same cbindgen run, diffed against the committed header; a
/// stale header fails and is left as it is, so a test run never changes a tracked file.
fn addHeader(b: *std.Build, header: *std.Build.Step, check: *std.Build.Step) void {
    const cbindgen_path = b.graph.env_map.get("CBINDGEN") orelse
        b.pathFromRoot("target/tools/bin/cbindgen");
    std.fs.cwd().access(cbindgen_path, .{}) catch {
        const fail = b.addFail(b.fmt("header: no cbindgen at {s}; install it with: " ++
            "cargo install " ++
            "--locked cbindgen --version 0.29.4 --root target/tools", .{cbindgen_path}));
        header.dependOn(&fail.step);
        check.dependOn(&fail.step);
        return;
    };
    const cbindgen = b.addSystemCommand(&.{ cbindgen_path, "--quiet", "--config" });
    cbindgen.addFileArg(b.path("rust/capi/cbindgen.toml"));
    cbindgen.addArg("--output");
    const fresh = cbindgen.addOutputFileArg("evtx.h");
    cbindgen.addDirectoryArg(b.path("rust/capi"));
    // The Rust sources are not declared inputs, so cbindgen always runs.
    cbindgen.has_side_effects = true;

    const script =
        \\diff -u "$0" "$1" && echo "header-check: include/evtx.h is fresh" ||
        \\{ echo "header-check: include/evtx.h is stale; regenerate it with: zig/zigw build header";
        \\  exit 1; }
    ;
    const checked: std.Build.LazyPath = if (b.option(
        []const u8,
        "header-check-file",
        "The header header-check diffs (default include/evtx.h)",
    )) |path| .{ .cwd_relative = path } else b.path("include/evtx.h");
    const diff = b.addSystemCommand(&.{ "sh", "-c", script });
    diff.addFileArg(checked);
    diff.addFileArg(fresh);
    diff.has_side_effects = true;
    // Shows the diff; a non-zero exit fails the step.
    diff.stdio = .inherit;
    check.dependOn(&diff.step);

    const update = b.addUpdateSourceFiles();
    update.addCopyFileToSource(fresh, "include/evtx.h");
    header.dependOn(&update.step);
}

/// The compile-time conformance test of the Zig library's exports against the header. The
/// check is all at compile time, so it builds in Debug (the quick self-hosted backend).
fn addConformance(
    b: *std.Build,
    options: Options,
    evtx_h: *std.Build.Module,
    step: *std.Build.Step,
) void {
    const debug = options.engine.modules(.{
        .target = options.target,
        .optimize = .Debug,
        .link_libc = true,
    });
    const module = b.createModule(.{
        .root_source_file = b.path("compare/harness/abi_conformance.zig"),
        .target = options.target,
        .optimize = .Debug,
        .link_libc = true,
    });
    module.addImport("evtx_h", evtx_h);
    module.addImport("evtx_capi", debug.capi);
    // The Rust table of status names, read as text (`@embedFile`): the one source of the strings.
    module.addAnonymousImport("evtx_abi_rs", .{
        .root_source_file = b.path("rust/evtx-abi/src/abi.rs"),
    });
    const conformance = b.addTest(.{ .name = "evtx-abi-conformance", .root_module = module });
    const run = b.addRunArtifact(conformance);
    step.dependOn(&run.step);
}
