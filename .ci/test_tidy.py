"""The function finder of tidy.py on the shapes that could fool it (`.ci/tidy` runs these)."""

import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tidy  # noqa: E402

RUST = r'''
fn braces_in_literals<'a>(x: &'a str) -> char {
    let s = "}}}";
    let r = r#"}" }"#;
    let b = b'}';
    /* } /* nested } */ } */
    // }
    '{'
}

trait T {
    fn declared(&self);
}

mod one {
    fn same() {}
}
mod two {
    fn same() {
    }
}
'''

ZIG = r'''
fn parse(x: u8) error{ Short, Bad }!struct { a: u8 } {
    const text =
        \\ } {
    ;
    _ = text;
    if (x == '}') return error.Bad;
    return .{ .a = x };
}

extern fn declared(x: u8) void;

test "a \"quoted\" {name}" {
    try parse(1);
}
'''


class FunctionFinder(unittest.TestCase):
    def test_rust_literals_comments_and_declarations(self):
        found = tidy.functions(RUST, zig=False)
        self.assertEqual(found, [("braces_in_literals", 2, 9), ("same", 16, 16), ("same", 19, 20)])

    def test_zig_error_sets_multiline_strings_and_tests(self):
        found = tidy.functions(ZIG, zig=True)
        self.assertEqual(found, [("parse", 2, 9), (r'test "a \"quoted\" {name}"', 13, 15)])

    def test_a_repeated_name_is_numbered_in_file_order(self):
        with tempfile.TemporaryDirectory() as folder:
            (Path(folder) / "same.rs").write_text(RUST, encoding="utf-8")
            lengths = tidy.function_lengths(Path(folder), ["same.rs"])
        self.assertEqual(lengths["same.rs same"], (1, 16))
        self.assertEqual(lengths["same.rs same#2"], (2, 19))


class StandardStreams(unittest.TestCase):
    def test_only_the_cli_stdio_names_a_standard_stream(self):
        files = {
            "zig/cli/stdio.zig": "const f = std.fs.File.stdout();",
            "zig/cli/cli.zig": "const f = std.fs.File.stderr();",
            "zig/capi/capi.zig": "const f = std.fs.File.stdout();",
            "zig/src/dump.zig": "const f = std.fs.File.stderr();",
            "compare/harness/main.zig": "var w = std.fs.File.stdout().writerStreaming(&b);",
            "zig/tests/x.zig": "var w = std.fs.File.stdout().writer(&b);",
        }
        with tempfile.TemporaryDirectory() as folder:
            for name, text in files.items():
                (Path(folder) / name).parent.mkdir(parents=True, exist_ok=True)
                (Path(folder) / name).write_text(text, encoding="utf-8")
            offences = tidy.stdio_writers(Path(folder), sorted(files))
        self.assertEqual([o.split(":")[0] for o in offences],
                         ["zig/capi/capi.zig", "zig/cli/cli.zig", "zig/src/dump.zig",
                          "zig/tests/x.zig"])


if __name__ == "__main__":
    unittest.main()
