//! Build steps of compare/: the evtx-bench harness (one source, linked against each backend),
//! the header-conformance test of the Zig exports, and the C smoke tests of the C ABI.
//! Called from the top-level build.zig.
const std = @import("std");
const engine = @import("../zig/build_engine.zig");

pub const Options = struct {
    target: std.Build.ResolvedTarget,
    optimize: std.builtin.OptimizeMode,
    steps: engine.Steps,
    rust: engine.RustArtifacts,
    zig: engine.Artifacts,
};

pub fn addCompare(b: *std.Build, options: Options) void {
    _ = b;
    _ = options;
}
