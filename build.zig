//! One build for both engines. `zig build` installs into zig-out/:
//!   bin/evtx-rs, bin/evtx-zig, bin/evtx-bench, lib/libevtx_{rs,zig,ref}.{so,a}, include/evtx.h
//! The Rust artifacts come from cargo (driven from here so `zig build` works on its own);
//! the Zig engine's own steps live in zig/build_engine.zig.
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
        .bench = b.step("bench", "Build evtx-bench and run it over every backend"),
        .rust = b.step("rust", "Build the Rust artifacts with cargo and install them"),
    };

    const rust = addRust(b, steps.rust);
    b.getInstallStep().dependOn(steps.rust);
    const zig_artifacts = engine.addEngine(b, .{
        .target = target,
        .optimize = optimize,
        .steps = steps,
        .rust = rust,
    });
    compare.addCompare(b, .{
        .target = target,
        .optimize = optimize,
        .steps = steps,
        .rust = rust,
        .zig = zig_artifacts,
    });
    fuzz.addFuzz(b, target);
}

/// The Rust artifacts, built by cargo in release mode. Cargo does its own up-to-date checks,
/// so the command always runs and is cheap when nothing changed.
pub const RustArtifacts = engine.RustArtifacts;

fn addRust(b: *std.Build, step: *std.Build.Step) RustArtifacts {
    const cargo = b.addSystemCommand(&.{ "cargo", "build", "--locked", "--release" });
    for (rust_packages) |package| cargo.addArgs(&.{ "-p", package });
    cargo.has_side_effects = true;
    step.dependOn(&cargo.step);

    for (rust_bins) |name| {
        const install = b.addInstallFileWithDir(b.path(b.fmt("target/release/{s}", .{name})), .bin, name);
        install.step.dependOn(&cargo.step);
        step.dependOn(&install.step);
    }
    for (rust_libs) |name| {
        for ([_][]const u8{ "so", "a" }) |ext| {
            const file = b.fmt("lib{s}.{s}", .{ name, ext });
            const install = b.addInstallFileWithDir(b.path(b.fmt("target/release/{s}", .{file})), .lib, file);
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

const rust_packages = [_][]const u8{ "evtx-rs", "evtx-capi", "evtx-ref" };
const rust_bins = [_][]const u8{"evtx-rs"};
const rust_libs = [_][]const u8{ "evtx_rs", "evtx_ref" };
