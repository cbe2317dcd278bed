"""The house rules no formatter checks.

* Lines: at most 100 columns (characters, not bytes) in the tracked Rust, Zig and Python sources
  and the Makefile, as rustfmt's `max_width` and the Zig style the engines follow; rustfmt does
  not break long strings or comments, zig fmt breaks nothing. `.ci/long-lines.txt` lists files
  written before this check with how many longer lines each still has: a file may not gain one
  (a ratchet; lower the count as lines are fixed, and a file that reaches 0 leaves the list).
* Functions: at most 70 lines (TigerBeetle's limit), counted from the line of `fn` to the line
  of the body's closing brace, in every `.rs` and `.zig` file, tests included (Rust `#[test]`
  functions and Zig `test` blocks alike). `.ci/long-functions.txt` lists the functions longer
  than that when the check came in, with their length: a listed function may not grow, one not
  listed may not pass 70, and a listed one that got shorter must have its count lowered (and
  leave the list at 70 or less), so the list only shrinks. A name used by several functions of
  one file is written `name#2`, `name#3` for the second, third, in file order.
* Names: every `.rs` and `.zig` file name is snake_case; an engine module's Zig file has its
  Rust twin's name (ARCHITECTURE.md's table, rows naming one file on each side), except the
  library roots (`lib.rs` and `evtx.zig`: each language's convention).
* Standard streams in Zig: no positional writer (`File.writer`, which writes with `pwrite` at
  its own offset and so clobbers a log file that other commands share) on `File.stdout()` or
  `File.stderr()` anywhere; in the Zig CLI these two appear only in `zig/cli/stdio.zig`, whose
  writers all stream, and the engine (`zig/src`) and the C ABI (`zig/capi`) never name them.

Prints one line per offence and exits 1 when there is any. `--lower` first rewrites both lists
with each count lowered to what the code has now (never raised).
"""

import re
import subprocess
import sys
from pathlib import Path

MAX_COLUMNS = 100
MAX_FUNCTION_LINES = 70
LINE_CHECKED = ["*.rs", "*.zig", "*.py", "Makefile"]
SNAKE = re.compile(r"^[a-z][a-z0-9_]*\.(rs|zig)$")
ENGINE_ROW = re.compile(
    r"^\|[^|]*\|\s*`rust/evtx-core/src/(?P<rust>[a-z0-9_]+)\.rs`\s*\|"
    r"\s*`zig/src/(?P<zig>[a-z0-9_]+)\.zig`\s*\|\s*$"
)
# Where each language's convention names the same thing differently.
TWIN_EXCEPTIONS = {("lib", "evtx")}


def tracked(root: Path, patterns: list[str]) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", *patterns], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    return [line for line in out.splitlines() if line]


def read_list(path: Path) -> dict[str, int]:
    """`COUNT KEY` lines (KEY may hold spaces), comments and blank lines skipped."""
    allowed = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            count, key = line.split(maxsplit=1)
            allowed[key] = int(count)
    return allowed


def write_list(path: Path, counts: dict[str, int], limit: int) -> None:
    """Rewrites the list keeping its comments, each count lowered to `counts` (never raised);
    entries at or under `limit` leave it."""
    old = path.read_text(encoding="utf-8").splitlines()
    kept = [line for line in old if line.startswith("#")]
    for key, allowance in sorted(read_list(path).items()):
        now = min(counts.get(key, 0), allowance)
        if now > limit:
            kept.append(f"{now} {key}")
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Lines


def long_line_counts(root: Path, files: list[str]) -> dict[str, list[tuple[int, int]]]:
    counts = {}
    for name in files:
        text = (root / name).read_text(encoding="utf-8")
        counts[name] = [(number, len(line)) for number, line in enumerate(text.splitlines(), 1)
                        if len(line) > MAX_COLUMNS]
    return counts


def long_lines(root: Path, files: list[str]) -> tuple[list[str], list[str]]:
    """The offences, and notes on allowances that can be lowered."""
    allowed = read_list(root / ".ci/long-lines.txt")
    offences, notes = [], []
    for name, long in long_line_counts(root, files).items():
        allowance = allowed.pop(name, 0)
        if len(long) > allowance:
            offences.extend(f"{name}:{number}: {width} columns (at most {MAX_COLUMNS}; "
                            f"{len(long)} such lines, {allowance} allowed)"
                            for number, width in long)
        elif len(long) < allowance:
            notes.append(f"{name}: {len(long)} lines over {MAX_COLUMNS} columns; lower its "
                         f"count in .ci/long-lines.txt from {allowance}")
    offences.extend(f".ci/long-lines.txt: {name} is not a checked source" for name in allowed)
    return offences, notes


# ---------------------------------------------------------------------------------------------
# Functions

CHAR_LITERAL = re.compile(r"b?'(?:\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'")
RAW_STRING = re.compile(r'b?r(#*)"')
FN_NAME = re.compile(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)")
ZIG_TEST = re.compile(r'^[ \t]*test\b[ \t]*("(?:[^"\\\n]|\\.)*"|[A-Za-z_]\w*)?[ \t]*\{', re.M)
# A `{` right after these opens a type in a signature (a Zig error set, an anonymous struct
# returned), not the body.
TYPE_OPENER = re.compile(r"\b(error|struct|union|enum|opaque)\s*(\([^()]*\))?\s*$")


def blank(chars: list[str], start: int, end: int) -> None:
    for k in range(start, min(end, len(chars))):
        if chars[k] != "\n":
            chars[k] = " "


def skip_literal(text: str, i: int, zig: bool) -> int:
    """The end of the comment, string or character literal at `i`, or `i` if none starts
    there (a Rust lifetime's `'` is not a literal)."""
    ident_before = i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")
    if text.startswith("//", i) or (zig and text.startswith("\\\\", i)):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if not zig and text.startswith("/*", i):
        depth, j = 1, i + 2
        while j < len(text) and depth:
            step = text[j:j + 2]
            depth += (step == "/*") - (step == "*/")
            j += 2 if step in ("/*", "*/") else 1
        return j
    raw = None if zig or ident_before else RAW_STRING.match(text, i)
    if raw:
        end = text.find('"' + raw.group(1), raw.end())
        return len(text) if end < 0 else end + 1 + len(raw.group(1))
    if text[i] == '"' or (not zig and not ident_before and text.startswith('b"', i)):
        j = text.index('"', i) + 1
        while j < len(text) and text[j] != '"':
            j += 2 if text[j] == "\\" else 1
        return j + 1
    char = None if ident_before and text[i] == "b" else CHAR_LITERAL.match(text, i)
    return char.end() if char else i


def code_only(text: str, zig: bool) -> str:
    """`text` with its comments, strings and character literals blanked, newlines kept, so
    that every brace left is code."""
    chars, i = list(text), 0
    while i < len(text):
        end = skip_literal(text, i, zig) if text[i] in "/\\\"'br" else i
        if end > i:
            blank(chars, i, end)
            i = end
        else:
            i += 1
    return "".join(chars)


def closing(code: str, start: int) -> int:
    """The index of the bracket closing the one at `start`."""
    opener = code[start]
    closer = {"(": ")", "[": "]", "{": "}"}[opener]
    depth = 0
    for k in range(start, len(code)):
        depth += (code[k] == opener) - (code[k] == closer)
        if depth == 0:
            return k
    return len(code) - 1


def body_start(code: str, after_name: int) -> int | None:
    """The `{` opening the body of the function whose name ends at `after_name`, or None for a
    declaration (`;` first)."""
    k = code.find("(", after_name)
    if k < 0:
        return None
    k = closing(code, k) + 1
    while k < len(code):
        ch = code[k]
        if ch == ";":
            return None
        if ch in "([":
            k = closing(code, k) + 1
        elif ch == "{" and TYPE_OPENER.search(code[max(0, k - 60):k]):
            k = closing(code, k) + 1
        elif ch == "{":
            return k
        else:
            k += 1
    return None


def functions(text: str, zig: bool) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of every function with a body, and of every Zig `test`
    block (named `test "..."`), in file order."""
    code = code_only(text, zig)
    starts = [(m.start(), m.group(1), body_start(code, m.end())) for m in FN_NAME.finditer(code)]
    if zig:
        lines = text.split("\n")
        for m in ZIG_TEST.finditer(code):
            number = code.count("\n", 0, m.start())
            named = ZIG_TEST.match(lines[number])
            title = named.group(1) if named and named.group(1) else ""
            starts.append((m.start(), f"test {title}".rstrip(), m.end() - 1))
    found = []
    for start, name, body in sorted(starts):
        if body is not None:
            first = code.count("\n", 0, start) + 1
            found.append((name, first, code.count("\n", 0, closing(code, body)) + 1))
    return found


def function_lengths(root: Path, files: list[str]) -> dict[str, tuple[int, int]]:
    """`PATH NAME` → (lines, first line) of every function of the files."""
    lengths = {}
    for path in files:
        seen: dict[str, int] = {}
        text = (root / path).read_text(encoding="utf-8")
        for name, first, last in functions(text, path.endswith(".zig")):
            seen[name] = seen.get(name, 0) + 1
            key = f"{path} {name}" + (f"#{seen[name]}" if seen[name] > 1 else "")
            lengths[key] = (last - first + 1, first)
    return lengths


def long_functions(root: Path, files: list[str]) -> list[str]:
    allowed = read_list(root / ".ci/long-functions.txt")
    offences = []
    for key, (length, first) in function_lengths(root, files).items():
        path, name = key.split(" ", 1)
        where = f"{path}:{first}: {name}: {length} lines"
        allowance = allowed.pop(key, None)
        if allowance is None and length > MAX_FUNCTION_LINES:
            offences.append(f"{where} (at most {MAX_FUNCTION_LINES})")
        elif allowance is not None and length > allowance:
            offences.append(f"{where}, longer than the {allowance} .ci/long-functions.txt allows")
        elif allowance is not None and length < allowance:
            offences.append(f"{where}, shorter than .ci/long-functions.txt says ({allowance}): "
                            "lower it (`.ci/tidy.py --lower`)")
    offences.extend(f".ci/long-functions.txt: no function {key}" for key in allowed)
    return offences


# ---------------------------------------------------------------------------------------------
# Names


def bad_names(root: Path, files: list[str]) -> list[str]:
    offences = [f"{name}: file name is not snake_case" for name in files
                if not SNAKE.match(Path(name).name)]
    table = (root / "ARCHITECTURE.md").read_text(encoding="utf-8")
    rows = 0
    for line in table.splitlines():
        match = ENGINE_ROW.match(line)
        if not match:
            continue
        rows += 1
        rust, zig = match["rust"], match["zig"]
        if rust != zig and (rust, zig) not in TWIN_EXCEPTIONS:
            offences.append(f"ARCHITECTURE.md: zig/src/{zig}.zig is the twin of "
                            f"rust/evtx-core/src/{rust}.rs: name it {rust}.zig")
    if rows == 0:
        offences.append("ARCHITECTURE.md: no engine rows (| concept | rust file | zig file |)")
    return offences


POSITIONAL_STDIO = re.compile(r"File\.std(out|err)\(\)\s*\.\s*writer\(")
STDIO = re.compile(r"File\.std(out|err)\(\)")
STDIO_HOME = "zig/cli/stdio.zig"
# The Zig products: only the CLI's stdio.zig names a standard stream.
STDIO_FREE = ("zig/src/", "zig/cli/", "zig/capi/")


def stdio_writers(root: Path, files: list[str]) -> list[str]:
    offences = []
    for name in (f for f in files if f.endswith(".zig")):
        for number, line in enumerate((root / name).read_text(encoding="utf-8").splitlines(), 1):
            if POSITIONAL_STDIO.search(line):
                offences.append(f"{name}:{number}: a positional writer on a standard stream "
                                f"(use writerStreaming)")
            elif name.startswith(STDIO_FREE) and name != STDIO_HOME and STDIO.search(line):
                offences.append(f"{name}:{number}: a standard stream outside {STDIO_HOME} "
                                f"(use its streaming writers)")
    return offences


def lower(root: Path, line_files: list[str], sources: list[str]) -> None:
    lines = {name: len(long) for name, long in long_line_counts(root, line_files).items()}
    write_list(root / ".ci/long-lines.txt", lines, 0)
    lengths = {key: length for key, (length, _) in function_lengths(root, sources).items()}
    write_list(root / ".ci/long-functions.txt", lengths, MAX_FUNCTION_LINES)


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    sources = tracked(root, ["*.rs", "*.zig"])
    line_files = tracked(root, LINE_CHECKED)
    if sys.argv[1:] == ["--lower"]:
        lower(root, line_files, sources)
    offences, notes = long_lines(root, line_files)
    offences += long_functions(root, sources)
    offences += bad_names(root, sources)
    offences += stdio_writers(root, sources)
    for line in notes + offences:
        print(f"tidy: {line}")
    print(f"tidy: {len(line_files)} files checked for line length, {len(sources)} Rust and Zig "
          f"files for function length and names, {len(offences)} offences")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
