//! The Zig engine's build steps: library module, CLI, C exports, tests, harness.
//! Called from the top-level build.zig, which owns the cargo side.
const std = @import("std");

pub const Steps = struct {
    test_all: *std.Build.Step,
    bench: *std.Build.Step,
    rust: *std.Build.Step,
};

pub const RustArtifacts = struct {
    cargo: *std.Build.Step,
    lib_rs_static: std.Build.LazyPath,
    lib_ref_static: std.Build.LazyPath,
};

pub const Options = struct {
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
    steps: Steps,
    rust: RustArtifacts,
};

/// What the engine hands to the compare/ build (harness, ABI checks). Null until built.
pub const Artifacts = struct {
    /// Static library exporting the include/evtx.h symbols (libevtx_zig.a).
    lib_static: ?*std.Build.Step.Compile = null,
    /// Shared library exporting the same symbols (libevtx_zig.so).
    lib_shared: ?*std.Build.Step.Compile = null,
    /// The evtx-zig CLI.
    cli: ?*std.Build.Step.Compile = null,
};

pub fn addEngine(b: *std.Build, options: Options) Artifacts {
    const evtx = b.addModule("evtx", .{
        .root_source_file = b.path("zig/src/evtx.zig"),
        .target = options.target,
        .optimize = options.optimize,
    });

    const cli_module = b.createModule(.{
        .root_source_file = b.path("zig/src/cli.zig"),
        .target = options.target,
        .optimize = options.optimize,
        .imports = &.{.{ .name = "evtx", .module = evtx }},
    });
    const cli = b.addExecutable(.{ .name = "evtx-zig", .root_module = cli_module });
    b.installArtifact(cli);
    // The same CLI for a baseline x86-64-v3 CPU, for callgrind: valgrind 3.19 cannot decode
    // the AVX-512 a native build may use on these machines (`make compare` profiles with it).
    if (options.target.result.cpu.arch == .x86_64) {
        const v3 = b.resolveTargetQuery(.{
            .cpu_arch = .x86_64,
            .os_tag = options.target.result.os.tag,
            .cpu_model = .{ .explicit = &std.Target.x86.cpu.x86_64_v3 },
        });
        const evtx_v3 = b.createModule(.{
            .root_source_file = b.path("zig/src/evtx.zig"),
            .target = v3,
            .optimize = options.optimize,
        });
        const cli_v3 = b.addExecutable(.{
            .name = "evtx-zig-valgrind",
            .root_module = b.createModule(.{
                .root_source_file = b.path("zig/src/cli.zig"),
                .target = v3,
                .optimize = options.optimize,
                .imports = &.{.{ .name = "evtx", .module = evtx_v3 }},
            }),
        });
        b.installArtifact(cli_v3);
    }
    // `zig build zig`: only the Zig engine (no cargo), for quick iteration.
    const zig_only = b.step("zig", "Build and install only the Zig engine");
    zig_only.dependOn(&b.addInstallArtifact(cli, .{}).step);

    // Unit tests: every `test` block reachable from the library root. Some compare with the
    // reference's output of the shared fixtures (`unit_test_options.fixtures`).
    const unit_options = b.addOptions();
    unit_options.addOptionPath("fixtures", b.path("shared-fixtures"));
    const unit_options_module = unit_options.createModule();
    const test_module = b.createModule(.{
        .root_source_file = b.path("zig/src/evtx.zig"),
        .target = options.target,
        .optimize = options.optimize,
        .imports = &.{.{ .name = "unit_test_options", .module = unit_options_module }},
    });
    const unit_tests = b.addTest(.{ .name = "evtx-zig-tests", .root_module = test_module });
    const run_tests = b.addRunArtifact(unit_tests);
    run_tests.has_side_effects = true;
    options.steps.test_all.dependOn(&run_tests.step);

    // The `test` blocks of the two roots that sit outside the library module: the CLI's
    // argument parser, and the C ABI (with libc, as the libraries are built; its allocator is
    // `std.testing.allocator` there, so a leak fails the test).
    for ([_][]const u8{ "cli", "capi" }) |name| {
        const link_libc = std.mem.eql(u8, name, "capi");
        const library = if (link_libc) b.createModule(.{
            .root_source_file = b.path("zig/src/evtx.zig"),
            .target = options.target,
            .optimize = options.optimize,
            .link_libc = true,
        }) else evtx;
        // (evtx-zig-cli-tests is also the name of zig/tests/cli_input.zig's binary below.)
        const root_tests = b.addTest(.{
            .name = b.fmt("evtx-zig-{s}-tests", .{name}),
            .root_module = b.createModule(.{
                .root_source_file = b.path(b.fmt("zig/src/{s}.zig", .{name})),
                .target = options.target,
                .optimize = options.optimize,
                .link_libc = link_libc,
                .imports = &.{
                    .{ .name = "evtx", .module = library },
                    .{ .name = "unit_test_options", .module = unit_options_module },
                },
            }),
        });
        const run_root_tests = b.addRunArtifact(root_tests);
        run_root_tests.has_side_effects = true;
        options.steps.test_all.dependOn(&run_root_tests.step);
    }

    // The CLI run as a user would (zig/tests/cli_input.zig): a file cut under it, `-f`
    // naming the input, standard input.
    const cli_input_options = b.addOptions();
    cli_input_options.addOptionPath("cli", cli.getEmittedBin());
    cli_input_options.addOptionPath("fixtures", b.path("shared-fixtures"));
    // The sparse > 4 GiB log comes from `evtx-fixture-gen` and its expected output from the
    // reference, both found under the build root (`make build`, `make setup`).
    cli_input_options.addOption([]const u8, "root", b.pathFromRoot("."));
    // The reference `evtx_dump` (built by `make setup`): the error lines' words are its own.
    cli_input_options.addOptionPath("reference", b.path("target/reference/bin/evtx_dump"));
    const cli_tests = b.addTest(.{
        .name = "evtx-zig-cli-tests",
        .root_module = b.createModule(.{
            .root_source_file = b.path("zig/tests/cli_input.zig"),
            .target = options.target,
            .optimize = options.optimize,
            .imports = &.{.{ .name = "cli_input_options", .module = cli_input_options.createModule() }},
        }),
    });
    const run_cli_tests = b.addRunArtifact(cli_tests);
    run_cli_tests.has_side_effects = true;
    options.steps.test_all.dependOn(&run_cli_tests.step);

    // The C ABI (include/evtx.h): capi.zig is the root; libc for pthreads and malloc, since
    // the libraries live inside C processes.
    const evtx_libc = b.createModule(.{
        .root_source_file = b.path("zig/src/evtx.zig"),
        .target = options.target,
        .optimize = options.optimize,
        .link_libc = true,
    });
    var libs: [2]*std.Build.Step.Compile = undefined;
    for ([_]std.builtin.LinkMode{ .static, .dynamic }, 0..) |linkage, i| {
        const capi_module = b.createModule(.{
            .root_source_file = b.path("zig/src/capi.zig"),
            .target = options.target,
            .optimize = options.optimize,
            .link_libc = true,
            .imports = &.{.{ .name = "evtx", .module = evtx_libc }},
        });
        const lib = b.addLibrary(.{ .name = "evtx_zig", .linkage = linkage, .root_module = capi_module });
        if (linkage == .static) lib.bundle_compiler_rt = true;
        b.installArtifact(lib);
        zig_only.dependOn(&b.addInstallArtifact(lib, .{}).step);
        libs[i] = lib;
    }

    return .{ .cli = cli, .lib_static = libs[0], .lib_shared = libs[1] };
}
