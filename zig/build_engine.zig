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
    _ = b;
    _ = options;
    return .{};
}
