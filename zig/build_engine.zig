//! The Zig engine's modules and artifacts: library module, CLI, C exports, tests.
//! Called from the top-level build.zig, which declares every step and owns the cargo side.
const std = @import("std");

/// Every step of the build, declared once in build.zig.
pub const Steps = struct {
    test_all: *std.Build.Step,
    zig_only: *std.Build.Step,
    bench: *std.Build.Step,
    rust: *std.Build.Step,
    test_abi: *std.Build.Step,
    test_abi_smoke: *std.Build.Step,
    test_abi_valgrind: *std.Build.Step,
    test_abi_asan: *std.Build.Step,
    test_abi_conformance: *std.Build.Step,
    header: *std.Build.Step,
    header_check: *std.Build.Step,
    fuzz_zig: *std.Build.Step,
    cross: *std.Build.Step,
};

pub const RustArtifacts = struct {
    cargo: *std.Build.Step,
    lib_rs_static: std.Build.LazyPath,
    lib_ref_static: std.Build.LazyPath,
};

/// How one copy of the engine is compiled.
pub const Flavor = struct {
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
    /// The C ABI lives inside C processes: libc for pthreads and malloc.
    link_libc: bool = false,
    /// Valgrind client requests on (the copies the memcheck runs use).
    valgrind: bool = false,
    /// libFuzzer's inline 8-bit counters (compare/build_fuzz.zig): position-independent, no
    /// stack probes (they would need compiler-rt, which an object file does not carry).
    fuzz: bool = false,

    fn eql(a: Flavor, b: Flavor) bool {
        return a.target.query.eql(b.target.query) and a.optimize == b.optimize and
            a.link_libc == b.link_libc and a.valgrind == b.valgrind and a.fuzz == b.fuzz;
    }
};

/// The engine's three root modules of one flavor: the library (`zig/src/evtx.zig`), the C ABI
/// (`zig/capi/capi.zig`) and the CLI (`zig/cli/cli.zig`), each importing the library.
pub const Modules = struct {
    evtx: *std.Build.Module,
    capi: *std.Build.Module,
    cli: *std.Build.Module,
};

/// Creates each flavor's modules once; every artifact of that flavor imports the same ones.
pub const Engine = struct {
    b: *std.Build,
    /// The shared fixtures and the reference `evtx_dump` (built by `make setup`), for the
    /// `test` blocks that compare with the reference's output.
    unit_test_options: *std.Build.Module,
    /// `include/info_columns.txt`, `info`'s column titles: the Rust engine reads the same file
    /// (`include_str!`), the Zig engine embeds it (`@embedFile("info_columns")`).
    info_columns: *std.Build.Module,
    /// `include/help_extensions.txt`, the page of `help extensions`: evtx-rs reads the same
    /// file (`include_str!`), evtx-zig embeds it (`@embedFile("help_extensions")`).
    help_extensions: *std.Build.Module,
    /// `include/help_triage.txt`, the page of `triage --help`, shared the same way.
    help_triage: *std.Build.Module,
    flavors: std.ArrayList(struct { Flavor, Modules }) = .empty,

    pub fn init(b: *std.Build) Engine {
        const options = b.addOptions();
        options.addOptionPath("fixtures", b.path("shared-fixtures"));
        options.addOptionPath("reference", b.path("target/reference/bin/evtx_dump"));
        return .{
            .b = b,
            .unit_test_options = options.createModule(),
            .info_columns = b.createModule(.{
                .root_source_file = b.path("include/info_columns.txt"),
            }),
            .help_extensions = b.createModule(.{
                .root_source_file = b.path("include/help_extensions.txt"),
            }),
            .help_triage = b.createModule(.{
                .root_source_file = b.path("include/help_triage.txt"),
            }),
        };
    }

    pub fn modules(self: *Engine, flavor: Flavor) Modules {
        for (self.flavors.items) |entry| {
            if (entry[0].eql(flavor)) return entry[1];
        }
        const made: Modules = .{
            .evtx = self.module("zig/src/evtx.zig", flavor),
            .capi = self.module("zig/capi/capi.zig", flavor),
            .cli = self.module("zig/cli/cli.zig", flavor),
        };
        for ([_]*std.Build.Module{ made.capi, made.cli }) |root| root.addImport("evtx", made.evtx);
        self.flavors.append(self.b.allocator, .{ flavor, made }) catch @panic("OOM");
        return made;
    }

    fn module(self: *Engine, root: []const u8, flavor: Flavor) *std.Build.Module {
        const made = self.b.createModule(.{
            .root_source_file = self.b.path(root),
            .target = flavor.target,
            .optimize = flavor.optimize,
            .link_libc = flavor.link_libc or flavor.fuzz,
            .valgrind = if (flavor.valgrind) true else null,
            .fuzz = if (flavor.fuzz) true else null,
            .pic = if (flavor.fuzz) true else null,
            .stack_check = if (flavor.fuzz) false else null,
        });
        // Only `test` blocks import it; a module nobody imports costs nothing.
        made.addImport("unit_test_options", self.unit_test_options);
        made.addImport("info_columns", self.info_columns);
        made.addImport("help_extensions", self.help_extensions);
        made.addImport("help_triage", self.help_triage);
        return made;
    }
};

pub const Options = struct {
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
    steps: Steps,
    engine: *Engine,
};

/// What the engine hands to the compare/ build (harness, ABI checks, fuzz drivers).
pub const Artifacts = struct {
    /// Static library exporting the include/evtx.h symbols (libevtx_zig.a).
    lib_static: *std.Build.Step.Compile,
    /// Shared library exporting the same symbols (libevtx_zig.so).
    lib_shared: *std.Build.Step.Compile,
    /// The evtx-zig CLI.
    cli: *std.Build.Step.Compile,
};

pub fn addEngine(b: *std.Build, options: Options) Artifacts {
    const engine = options.engine;
    const native = engine.modules(.{ .target = options.target, .optimize = options.optimize });
    // `b.dependency(...).module("evtx")` for a package that embeds the engine.
    b.modules.put(b.dupe("evtx"), native.evtx) catch @panic("OOM");
    const cli = b.addExecutable(.{ .name = "evtx-zig", .root_module = native.cli });
    b.installArtifact(cli);
    options.steps.zig_only.dependOn(&b.addInstallArtifact(cli, .{}).step);
    addValgrindCli(b, options);
    const safe_cli = addSafeCli(b, options);

    // The C ABI (include/evtx.h): capi.zig is the root, with libc.
    const libc = engine.modules(.{
        .target = options.target,
        .optimize = options.optimize,
        .link_libc = true,
    });
    var libs: [2]*std.Build.Step.Compile = undefined;
    for ([_]std.builtin.LinkMode{ .static, .dynamic }, &libs) |linkage, *lib| {
        lib.* = b.addLibrary(.{ .name = "evtx_zig", .linkage = linkage, .root_module = libc.capi });
        if (linkage == .static) lib.*.bundle_compiler_rt = true;
        b.installArtifact(lib.*);
        options.steps.zig_only.dependOn(&b.addInstallArtifact(lib.*, .{}).step);
    }

    addTests(b, options, safe_cli);
    addCross(b, options);
    return .{ .cli = cli, .lib_static = libs[0], .lib_shared = libs[1] };
}

/// Unit tests: every `test` block of the three roots. The library's; the CLI's argument
/// parser; the C ABI's, with libc as the libraries are built (its allocator is
/// `std.testing.allocator` there, so a leak fails the test). Then the CLI run as a user would
/// (zig/tests/cli_input.zig).
fn addTests(b: *std.Build, options: Options, safe_cli: *std.Build.Step.Compile) void {
    const native = options.engine.modules(.{
        .target = options.target,
        .optimize = options.optimize,
    });
    const libc = options.engine.modules(.{
        .target = options.target,
        .optimize = options.optimize,
        .link_libc = true,
    });
    const roots = [_]struct { []const u8, *std.Build.Module }{
        .{ "evtx-zig-tests", native.evtx },
        .{ "evtx-zig-cli-tests", native.cli },
        .{ "evtx-zig-capi-tests", libc.capi },
    };
    for (roots) |root| {
        const tests = b.addTest(.{ .name = root[0], .root_module = root[1] });
        const run = b.addRunArtifact(tests);
        run.has_side_effects = true;
        options.steps.test_all.dependOn(&run.step);
    }

    // The CLI run as a user would: a file cut under it, `-f` naming the input, standard input.
    // It runs evtx-zig-safe, the CLI `make build` installs for the mutation test, so a bounds
    // bug traps and the CLI is compiled once for both.
    const cli_input_options = b.addOptions();
    cli_input_options.addOptionPath("cli", safe_cli.getEmittedBin());
    cli_input_options.addOptionPath("fixtures", b.path("shared-fixtures"));
    // The sparse > 4 GiB log comes from `evtx-fixture-gen` and its expected output from the
    // reference, both found under the build root (`make build`, `make setup`).
    cli_input_options.addOption([]const u8, "root", b.pathFromRoot("."));
    // The reference `evtx_dump` (built by `make setup`): the error lines' words are its own.
    cli_input_options.addOptionPath("reference", b.path("target/reference/bin/evtx_dump"));
    const cli_tests = b.addTest(.{
        .name = "evtx-zig-cli-input-tests",
        .root_module = b.createModule(.{
            .root_source_file = b.path("zig/tests/cli_input.zig"),
            .target = options.target,
            .optimize = options.optimize,
            .imports = &.{.{
                .name = "cli_input_options",
                .module = cli_input_options.createModule(),
            }},
        }),
    });
    const run_cli_tests = b.addRunArtifact(cli_tests);
    run_cli_tests.has_side_effects = true;
    options.steps.test_all.dependOn(&run_cli_tests.step);
}

/// The other operating systems `zig build cross` builds for, each into zig-out/cross/TRIPLE/:
/// the CLI and the C library (a DLL with its import library `evtx_zig.lib`, and a static
/// library `evtx_zig_static.lib`).
pub const cross_targets = [_][]const u8{"x86_64-windows"};

fn addCross(b: *std.Build, options: Options) void {
    for (cross_targets) |triple| {
        const query = std.Target.Query.parse(.{ .arch_os_abi = triple }) catch @panic("triple");
        const target = b.resolveTargetQuery(query);
        const modules = options.engine.modules(.{ .target = target, .optimize = options.optimize });
        const libc = options.engine.modules(.{
            .target = target,
            .optimize = options.optimize,
            .link_libc = true,
        });
        const dir: std.Build.InstallDir = .{ .custom = b.fmt("cross/{s}", .{triple}) };
        const artifacts = [_]*std.Build.Step.Compile{
            b.addExecutable(.{ .name = "evtx-zig", .root_module = modules.cli }),
            b.addLibrary(.{ .name = "evtx_zig", .linkage = .dynamic, .root_module = libc.capi }),
            // Windows names a static library and a DLL's import library alike (`NAME.lib`).
            b.addLibrary(.{
                .name = "evtx_zig_static",
                .linkage = .static,
                .root_module = libc.capi,
            }),
        };
        artifacts[2].bundle_compiler_rt = true;
        for (artifacts) |artifact| {
            const dll = artifact.kind == .lib and artifact.linkage == .dynamic;
            const install = b.addInstallArtifact(artifact, .{
                .dest_dir = .{ .override = dir },
                .implib_dir = if (dll) .{ .override = dir } else .disabled,
                .pdb_dir = .disabled,
                .h_dir = .disabled,
            });
            options.steps.cross.dependOn(&install.step);
        }
    }
}

/// zig-out/bin/evtx-zig-valgrind: the CLI for a baseline x86-64-v3 CPU, for callgrind:
/// valgrind 3.19 cannot decode the AVX-512 a native build may use on these machines (`make
/// compare` profiles with it).
fn addValgrindCli(b: *std.Build, options: Options) void {
    if (options.target.result.cpu.arch != .x86_64) return;
    const v3 = b.resolveTargetQuery(.{
        .cpu_arch = .x86_64,
        .os_tag = options.target.result.os.tag,
        .cpu_model = .{ .explicit = &std.Target.x86.cpu.x86_64_v3 },
    });
    const modules = options.engine.modules(.{ .target = v3, .optimize = options.optimize });
    const cli = b.addExecutable(.{ .name = "evtx-zig-valgrind", .root_module = modules.cli });
    b.installArtifact(cli);
    options.steps.zig_only.dependOn(&b.addInstallArtifact(cli, .{}).step);
}

/// zig-out/bin/evtx-zig-safe: the CLI built ReleaseSafe whatever -Doptimize says, for the
/// mutation test (`evtx-compare mutate`) and zig/tests/cli_input.zig, so a bounds or overflow
/// bug on damaged input traps there instead of passing silently as in the ReleaseFast CLI.
fn addSafeCli(b: *std.Build, options: Options) *std.Build.Step.Compile {
    const modules = options.engine.modules(.{ .target = options.target, .optimize = .ReleaseSafe });
    const cli = b.addExecutable(.{ .name = "evtx-zig-safe", .root_module = modules.cli });
    b.installArtifact(cli);
    return cli;
}
