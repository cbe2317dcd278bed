//! Compile-time conformance of the Zig library (`zig/capi/capi.zig`, imported as `evtx_capi`)
//! against include/evtx.h (imported through `b.addTranslateC` as `evtx_h`, so a changed header
//! is a changed input of this test).
//!
//! The convention the Zig side follows: every name of the header is a `pub` declaration of the
//! same name in the library's root module —
//!   * each function `evtx_*` (an `export fn`, or a `pub fn` given to `@export`), with the same
//!     parameter and result types (same size, signedness, constness, struct layouts);
//!   * each struct type (`evtx_options`, `evtx_record`, ...) as an `extern struct` with the same
//!     field names, offsets, types and size;
//!   * each enum type (`evtx_status`, `evtx_format`) as an `enum(u32)` whose field names are the
//!     constants' suffixes in lower case (`EVTX_STATUS_BAD_CHUNK_MAGIC` → `.bad_chunk_magic`)
//!     with the same values, or as a `u32` with the constants declared one by one;
//!   * every other constant (`EVTX_ABI_VERSION`, `EVTX_RECORD_ID_UNKNOWN`) with the same value.
//! `evtx_status_name` returns, for every status and for a value that is none, the string of
//! the one Rust table (`evtx_status::name` in rust/evtx-abi/src/abi.rs, read here as text): the
//! header cannot carry strings (cbindgen writes no string constants), so this test holds the
//! Zig library to their source instead.
//! Whether the symbols are really exported is proven by the C smoke test, which links the
//! static library and calls every function.
const std = @import("std");
const h = @import("evtx_h");
const capi = @import("evtx_capi");

/// The header's enums: constants named `<PREFIX>_<NAME>`.
const header_enums = [_][]const u8{ "evtx_status", "evtx_format" };

test "every evtx_* function of the header is in the Zig library with the same signature" {
    comptime {
        @setEvalBranchQuota(1_000_000);
        var count: usize = 0;
        for (std.meta.declarations(h)) |decl| {
            if (!std.mem.startsWith(u8, decl.name, "evtx_")) continue;
            const Header = @TypeOf(@field(h, decl.name));
            if (@typeInfo(Header) != .@"fn") continue;
            if (!@hasDecl(capi, decl.name)) {
                @compileError("libevtx_zig lacks " ++ decl.name ++ ", declared by include/evtx.h");
            }
            expectSameType(Header, @TypeOf(@field(capi, decl.name)), decl.name);
            count += 1;
        }
        if (count < 11) @compileError("fewer functions in the header than expected");
    }
}

test "every evtx_* function of the Zig library is in the header" {
    comptime {
        @setEvalBranchQuota(1_000_000);
        for (std.meta.declarations(capi)) |decl| {
            if (!std.mem.startsWith(u8, decl.name, "evtx_")) continue;
            if (@typeInfo(@TypeOf(@field(capi, decl.name))) != .@"fn") continue;
            if (!@hasDecl(h, decl.name)) {
                @compileError("libevtx_zig has " ++ decl.name ++ ", which include/evtx.h lacks");
            }
        }
    }
}

test "struct types have the header's layout" {
    comptime {
        @setEvalBranchQuota(1_000_000);
        for (std.meta.declarations(h)) |decl| {
            if (!std.mem.startsWith(u8, decl.name, "evtx_")) continue;
            if (@TypeOf(@field(h, decl.name)) != type) continue;
            const Header = @field(h, decl.name);
            if (@typeInfo(Header) != .@"struct") continue;
            if (!@hasDecl(capi, decl.name)) {
                @compileError("libevtx_zig lacks the type " ++ decl.name);
            }
            expectSameType(Header, @field(capi, decl.name), decl.name);
        }
    }
}

test "enum values and constants equal the header's" {
    comptime {
        @setEvalBranchQuota(1_000_000);
        for (header_enums) |enum_name| {
            if (!@hasDecl(capi, enum_name)) @compileError("libevtx_zig lacks " ++ enum_name);
            const Zig = @field(capi, enum_name);
            if (@sizeOf(Zig) != 4) @compileError(enum_name ++ " must be 32 bits wide");
            if (@typeInfo(Zig) != .@"enum") continue; // u32 + constants: checked below.
            const prefix = upper(enum_name) ++ "_";
            for (@typeInfo(Zig).@"enum".fields) |field| {
                const constant = prefix ++ upper(field.name);
                if (!@hasDecl(h, constant)) {
                    @compileError(
                        enum_name ++ "." ++ field.name ++ ": include/evtx.h lacks " ++ constant,
                    );
                }
                if (@field(h, constant) != field.value) {
                    @compileError(constant ++ ": different value in libevtx_zig");
                }
            }
        }
        for (std.meta.declarations(h)) |decl| {
            if (!std.mem.startsWith(u8, decl.name, "EVTX_")) continue;
            if (std.mem.eql(u8, decl.name, "EVTX_H")) continue; // The include guard.
            const value = @field(h, decl.name);
            if (enumOf(decl.name)) |enum_name| {
                const Zig = @field(capi, enum_name);
                if (@typeInfo(Zig) == .@"enum") {
                    const field_name = lower(decl.name[enum_name.len + 1 ..]);
                    if (!@hasField(Zig, field_name)) {
                        @compileError(decl.name ++ ": libevtx_zig's " ++ enum_name ++
                            " has no field " ++ field_name);
                    }
                    continue;
                }
            }
            if (!@hasDecl(capi, decl.name)) @compileError("libevtx_zig lacks " ++ decl.name);
            if (@field(capi, decl.name) != value) {
                @compileError(decl.name ++ ": different value in libevtx_zig");
            }
        }
    }
}

test "status names equal the Rust table's" {
    comptime {
        @setEvalBranchQuota(10_000_000);
        const table = @embedFile("evtx_abi_rs");
        for (@typeInfo(capi.evtx_status).@"enum".fields) |field| {
            const rust = rustStatusName(table, "evtx_status::" ++ camel(field.name) ++ " => c\"");
            const zig = std.mem.span(capi.evtx_status_name(field.value));
            if (!std.mem.eql(u8, rust, zig)) {
                @compileError("evtx_status_name(" ++ field.name ++ "): Zig \"" ++ zig ++
                    "\", rust/evtx-abi \"" ++ rust ++ "\"");
            }
        }
        const unknown = rustStatusName(table, "UNKNOWN_STATUS_NAME: &CStr = c\"");
        if (!std.mem.eql(u8, unknown, std.mem.span(capi.evtx_status_name(1000)))) {
            @compileError("evtx_status_name of an unknown value differs from rust/evtx-abi's");
        }
    }
}

/// The string literal that follows `needle` in the Rust source `table`.
fn rustStatusName(comptime table: []const u8, comptime needle: []const u8) []const u8 {
    const start = (std.mem.indexOf(u8, table, needle) orelse
        @compileError("rust/evtx-abi/src/abi.rs lacks `" ++ needle ++ "`")) + needle.len;
    const end = std.mem.indexOfScalarPos(u8, table, start, '"') orelse
        @compileError("unterminated string after `" ++ needle ++ "`");
    return table[start..end];
}

/// `bad_chunk_magic` → `BadChunkMagic`: the Rust variant of a Zig enum field.
fn camel(comptime name: []const u8) []const u8 {
    comptime var result: []const u8 = "";
    comptime var up = true;
    inline for (name) |char| {
        if (char == '_') {
            up = true;
        } else {
            result = result ++ .{if (up) std.ascii.toUpper(char) else char};
            up = false;
        }
    }
    return result;
}

/// The header enum a constant belongs to, by its prefix.
fn enumOf(comptime constant: []const u8) ?[]const u8 {
    for (header_enums) |enum_name| {
        if (std.mem.startsWith(u8, constant, upper(enum_name) ++ "_")) return enum_name;
    }
    return null;
}

fn upper(comptime text: []const u8) *const [text.len]u8 {
    comptime var result: [text.len]u8 = undefined;
    for (text, 0..) |char, i| result[i] = std.ascii.toUpper(char);
    const final = result;
    return &final;
}

fn lower(comptime text: []const u8) *const [text.len]u8 {
    comptime var result: [text.len]u8 = undefined;
    for (text, 0..) |char, i| result[i] = std.ascii.toLower(char);
    const final = result;
    return &final;
}

/// `Zig` is what the header's `Header` means for the C ABI: the same integer widths and
/// signedness, pointers where it has pointers (with the same constness), the same struct
/// layouts field by field, the same function signatures. `where` names the place for errors.
fn expectSameType(comptime Header: type, comptime Zig: type, comptime where: []const u8) void {
    if (Header == Zig) return;
    const fail = struct {
        fn fail(comptime why: []const u8) noreturn {
            @compileError(where ++ ": header " ++ @typeName(Header) ++ ", Zig " ++ @typeName(Zig) ++
                ": " ++ why);
        }
    }.fail;
    switch (@typeInfo(Header)) {
        .void => if (Zig != void) fail("expected void"),
        .int => |header_int| {
            const zig_int = switch (@typeInfo(Zig)) {
                .int => |int| int,
                .@"enum" => |info| @typeInfo(info.tag_type).int,
                else => fail("expected an integer (or an enum with an integer tag)"),
            };
            if (header_int.bits != zig_int.bits) fail("integer widths differ");
            if (header_int.signedness != zig_int.signedness) fail("signedness differs");
        },
        .pointer => |header_pointer| {
            const zig_pointer = pointerInfo(Zig) orelse fail("expected a pointer");
            expectSamePointer(header_pointer, zig_pointer, where);
        },
        .optional => |header_optional| {
            const zig_pointer = pointerInfo(Zig) orelse fail("expected a pointer");
            const header_pointer = pointerInfo(header_optional.child) orelse
                fail("an optional non-pointer in the header");
            expectSamePointer(header_pointer, zig_pointer, where);
        },
        .@"fn" => |header_fn| {
            if (@typeInfo(Zig) != .@"fn") fail("expected a function");
            const zig_fn = @typeInfo(Zig).@"fn";
            if (!zig_fn.calling_convention.eql(std.builtin.CallingConvention.c)) {
                fail("not callconv(.c)");
            }
            if (header_fn.is_var_args != zig_fn.is_var_args) fail("variadic differs");
            if (header_fn.params.len != zig_fn.params.len) fail("parameter counts differ");
            for (header_fn.params, zig_fn.params, 0..) |header_param, zig_param, i| {
                expectSameType(
                    header_param.type.?,
                    zig_param.type orelse fail("generic parameter"),
                    where ++ std.fmt.comptimePrint(" parameter {d}", .{i}),
                );
            }
            expectSameType(
                header_fn.return_type.?,
                zig_fn.return_type orelse fail("generic result"),
                where ++ " result",
            );
        },
        .@"struct" => |header_struct| {
            if (@typeInfo(Zig) != .@"struct") fail("expected a struct");
            const zig_struct = @typeInfo(Zig).@"struct";
            if (zig_struct.layout != .@"extern") fail("expected an extern struct");
            if (@sizeOf(Header) != @sizeOf(Zig)) fail("sizes differ");
            if (@alignOf(Header) != @alignOf(Zig)) fail("alignments differ");
            if (header_struct.fields.len != zig_struct.fields.len) fail("field counts differ");
            for (header_struct.fields, zig_struct.fields) |header_field, zig_field| {
                if (!std.mem.eql(u8, header_field.name, zig_field.name)) {
                    fail("field " ++ header_field.name ++ " is called " ++ zig_field.name);
                }
                if (@offsetOf(Header, header_field.name) != @offsetOf(Zig, zig_field.name)) {
                    fail("offset of " ++ header_field.name ++ " differs");
                }
                expectSameType(
                    header_field.type,
                    zig_field.type,
                    where ++ "." ++ header_field.name,
                );
            }
        },
        .array => |header_array| {
            if (@typeInfo(Zig) != .array) fail("expected an array");
            if (header_array.len != @typeInfo(Zig).array.len) fail("array lengths differ");
            expectSameType(header_array.child, @typeInfo(Zig).array.child, where ++ "[]");
        },
        .@"opaque" => if (@typeInfo(Zig) != .@"opaque") fail("expected an opaque type"),
        else => fail("unexpected type in the header"),
    }
}

/// The pointer behind `T`: `T` itself, or the child of an optional pointer.
fn pointerInfo(comptime T: type) ?std.builtin.Type.Pointer {
    return switch (@typeInfo(T)) {
        .pointer => |pointer| pointer,
        .optional => |optional| switch (@typeInfo(optional.child)) {
            .pointer => |pointer| pointer,
            else => null,
        },
        else => null,
    };
}

fn expectSamePointer(
    comptime header: std.builtin.Type.Pointer,
    comptime zig: std.builtin.Type.Pointer,
    comptime where: []const u8,
) void {
    if (header.is_const != zig.is_const) {
        @compileError(where ++ ": constness of the pointee differs");
    }
    if (header.size == .slice or zig.size == .slice) {
        @compileError(where ++ ": slices are not C pointers");
    }
    // A handle may be any type behind the pointer on the Zig side; `void *` likewise.
    switch (@typeInfo(header.child)) {
        .@"opaque" => return,
        else => expectSameType(header.child, zig.child, where ++ ".*"),
    }
}
