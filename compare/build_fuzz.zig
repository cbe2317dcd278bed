//! The Zig engine's libFuzzer drivers: `zig build fuzz-zig` builds zig-out/fuzz/fuzz-zig-api,
//! fuzz-zig-abi, fuzz-cross (both engines through the C ABI, libevtx_rs.so loaded from
//! zig-out/lib/) and fuzz-zig-readers (`.MTA`, `.wevtcache`, PE) from
//! compare/fuzz/zig_driver.zig: one object (the engine compiled once), linked four times; the
//! binary's name picks the target. The engine is compiled with `-ffuzz`
//! (inline 8-bit counters) in ReleaseSafe, so safety checks stay on and a bug is a crash; the
//! object is linked by g++ against LLVM's libFuzzer runtime (Debian's libclang-rt-14-dev, path
//! in `-Dlibfuzzer=`). Zig 0.15.2's own `zig build --fuzz` crashes in the build runner, hence
//! libFuzzer.
const std = @import("std");
const engine = @import("../zig/build_engine.zig");

const default_libfuzzer = "/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a";

pub fn addFuzz(b: *std.Build, options: engine.Options) void {
    const libfuzzer = b.option([]const u8, "libfuzzer", "libFuzzer runtime archive") orelse
        default_libfuzzer;
    const modules = options.engine.modules(.{
        .target = options.target,
        .optimize = .ReleaseSafe,
        .fuzz = true,
    });
    const root = b.createModule(.{
        .root_source_file = b.path("compare/fuzz/zig_driver.zig"),
        .target = options.target,
        .optimize = .ReleaseSafe,
        .fuzz = true,
        .link_libc = true,
        .pic = true,
        .stack_check = false,
    });
    root.addImport("evtx", modules.evtx);
    root.addImport("capi", modules.capi);
    const object = b.addObject(.{ .name = "fuzz-zig", .root_module = root });
    const names = [_][]const u8{ "fuzz-zig-api", "fuzz-zig-abi", "fuzz-cross", "fuzz-zig-readers" };
    for (names) |name| {
        const link = b.addSystemCommand(&.{ "g++", "-o" });
        const binary = link.addOutputFileArg(name);
        link.addArtifactArg(object);
        link.addArgs(&.{ libfuzzer, "-lpthread", "-ldl", "-lm" });
        const install = b.addInstallFileWithDir(binary, .{ .custom = "fuzz" }, name);
        options.steps.fuzz_zig.dependOn(&install.step);
    }
}
