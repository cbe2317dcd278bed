//! One build for both engines. `zig build` installs into zig-out/:
//!   bin/evtx-rs, bin/evtx-zig, bin/evtx-bench, lib/libevtx_{rs,zig,ref}.{so,a}, include/evtx.h
//! The Rust artifacts come from cargo (driven from here so `zig build` works on its own). Every
//! step is declared below; zig/build_engine.zig builds the Zig engine (each module once per
//! flavor), compare/build_compare.zig the harness and the C ABI checks, compare/build_fuzz.zig
//! the fuzz drivers.
const std = @import("std");
const builtin = @import("builtin");
const engine = @import("zig/build_engine.zig");
const compare = @import("compare/build_compare.zig");
const fuzz = @import("compare/build_fuzz.zig");

comptime {
    const want: std.SemanticVersion = .{ .major = 0, .minor = 15, .patch = 2 };
    if (builtin.zig_version.order(want) != .eq) {
        @compileError("evtx-twin builds with Zig 0.15.2 exactly; run it through zig/zigw");
    }
}

pub fn build(b: *std.Build) void {
    const target = b.standardTargetOptions(.{});
    const optimize = b.standardOptimizeOption(.{});

    const steps: engine.Steps = .{
        .test_all = b.step("test", "Run the Zig engine's tests"),
        .zig_only = b.step("zig", "Build and install only the Zig engine (CLI and libraries)"),
        .bench = b.step("bench", "Build evtx-bench and run it over every backend"),
        .rust = b.step("rust", "Build the Rust artifacts with cargo and install them"),
        .test_abi = b.step("test-abi", "C ABI checks: header, conformance, smoke, valgrind, ASan"),
        .test_abi_smoke = b.step("test-abi-smoke", "The C smoke test against each library"),
        .test_abi_valgrind = b.step("test-abi-valgrind", "The C smoke test under valgrind"),
        .test_abi_asan = b.step("test-abi-asan", "The C smoke test built by gcc with ASan"),
        .test_abi_conformance = b.step(
            "test-abi-conformance",
            "Compile-time check of the Zig exports against include/evtx.h",
        ),
        .header = b.step("header", "Regenerate include/evtx.h with cbindgen"),
        .header_check = b.step("header-check", "Fail if include/evtx.h is stale (never writes it)"),
        .fuzz_zig = b.step("fuzz-zig", "Build the Zig libFuzzer drivers into zig-out/fuzz/"),
        .cross = b.step("cross", "Build the Zig CLI and C library for Windows into zig-out/cross/"),
    };

    const rust = addRust(b, steps.rust);
    b.getInstallStep().dependOn(steps.rust);
    var modules = engine.Engine.init(b);
    const options: engine.Options = .{
        .target = target,
        .optimize = optimize,
        .steps = steps,
        .engine = &modules,
    };
    const zig_artifacts = engine.addEngine(b, options);
    compare.addCompare(b, .{
        .target = target,
        .optimize = optimize,
        .steps = steps,
        .engine = &modules,
        .rust = rust,
        .zig = zig_artifacts,
    });
    fuzz.addFuzz(b, options);
}

/// The Rust artifacts, built by cargo in release mode. Cargo does its own up-to-date checks,
/// so the command always runs and is cheap when nothing changed.
fn addRust(b: *std.Build, step: *std.Build.Step) engine.RustArtifacts {
    const cargo = b.addSystemCommand(&.{ "cargo", "build", "--locked", "--release" });
    for (rust_packages) |package| cargo.addArgs(&.{ "-p", package });
    cargo.has_side_effects = true;
    step.dependOn(&cargo.step);

    // The CLI links glibc statically, as evtx-zig's CLI is static: no dynamic loader, no
    // libgcc_s, 1-3 % of a 30 MB run (PERF.md H167). `cargo rustc` gives the flag to this one
    // binary; a workspace-wide RUSTFLAGS would reach the proc macros and the C libraries too.
    const cli = b.addSystemCommand(&.{ "cargo", "rustc", "--locked", "--release" });
    cli.addArgs(&.{ "-p", "evtx-rs", "--bin", "evtx-rs" });
    cli.addArgs(&.{ "--", "-C", "target-feature=+crt-static" });
    cli.has_side_effects = true;
    // One cargo at a time: both would wait on the target directory's lock anyway.
    cli.step.dependOn(&cargo.step);
    step.dependOn(&cli.step);

    for (rust_bins) |name| {
        const from = b.path(b.fmt("target/release/{s}", .{name}));
        const install = b.addInstallFileWithDir(from, .bin, name);
        install.step.dependOn(&cli.step);
        step.dependOn(&install.step);
    }
    for (rust_libs) |name| {
        for ([_][]const u8{ "so", "a" }) |ext| {
            const file = b.fmt("lib{s}.{s}", .{ name, ext });
            const from = b.path(b.fmt("target/release/{s}", .{file}));
            const install = b.addInstallFileWithDir(from, .lib, file);
            install.step.dependOn(&cargo.step);
            step.dependOn(&install.step);
        }
    }
    const header = b.addInstallFileWithDir(b.path("include/evtx.h"), .header, "evtx.h");
    step.dependOn(&header.step);
    return .{
        .cargo = &cargo.step,
        .lib_rs_static = b.path("target/release/libevtx_rs.a"),
        .lib_ref_static = b.path("target/release/libevtx_ref.a"),
    };
}

const rust_packages = [_][]const u8{ "evtx-capi", "evtx-ref" };
const rust_bins = [_][]const u8{"evtx-rs"};
const rust_libs = [_][]const u8{ "evtx_rs", "evtx_ref" };
