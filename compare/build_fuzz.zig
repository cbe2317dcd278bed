//! The Zig engine's libFuzzer drivers: `zig build fuzz-zig` builds zig-out/fuzz/fuzz-zig-api,
//! fuzz-zig-abi and fuzz-cross (both engines through the C ABI, libevtx_rs.so loaded from
//! zig-out/lib/) from compare/fuzz/zig_driver.zig. The engine is compiled with `-ffuzz` (inline
//! 8-bit counters) in ReleaseSafe, so safety checks stay on and a bug is a crash; the driver
//! objects are linked by g++ against LLVM's libFuzzer runtime (Debian's libclang-rt-14-dev,
//! path in `-Dlibfuzzer=`). Zig 0.15.2's own `zig build --fuzz` crashes in the build runner,
//! hence libFuzzer.
const std = @import("std");

const default_libfuzzer = "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a";

pub fn addFuzz(b: *std.Build, target: std.Build.ResolvedTarget) void {
    const libfuzzer = b.option([]const u8, "libfuzzer", "libFuzzer runtime archive") orelse default_libfuzzer;
    const step = b.step("fuzz-zig", "Build the Zig engine's libFuzzer drivers into zig-out/fuzz/");
    for ([_][]const u8{ "api", "abi", "cross" }) |name| {
        const flags: std.Build.Module.CreateOptions = .{
            .target = target,
            .optimize = .ReleaseSafe,
            .fuzz = true,
            .link_libc = true,
            .pic = true,
            // Stack probes would need compiler-rt, which an object file does not carry.
            .stack_check = false,
        };
        var evtx_flags = flags;
        evtx_flags.root_source_file = b.path("zig/src/evtx.zig");
        const evtx = b.createModule(evtx_flags);
        var capi_flags = flags;
        capi_flags.root_source_file = b.path("zig/src/capi.zig");
        const capi = b.createModule(capi_flags);
        capi.addImport("evtx", evtx);
        const options = b.addOptions();
        options.addOption([]const u8, "target", name);
        var root_flags = flags;
        root_flags.root_source_file = b.path("compare/fuzz/zig_driver.zig");
        const root = b.createModule(root_flags);
        root.addImport("evtx", evtx);
        root.addImport("capi", capi);
        root.addImport("fuzz_options", options.createModule());
        const binary_name = if (std.mem.eql(u8, name, "cross")) "fuzz-cross" else b.fmt("fuzz-zig-{s}", .{name});
        const object = b.addObject(.{ .name = binary_name, .root_module = root });

        const link = b.addSystemCommand(&.{ "g++", "-o" });
        const binary = link.addOutputFileArg(binary_name);
        link.addArtifactArg(object);
        link.addArgs(&.{ libfuzzer, "-lpthread", "-ldl", "-lm" });
        const install = b.addInstallFileWithDir(binary, .{ .custom = "fuzz" }, binary_name);
        step.dependOn(&install.step);
    }
}
