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

pub fn addEngine(b: *std.Build, options: Options) void {
    _ = b;
    _ = options;
}
