"""Docs that stay true: three checks over the tracked files, run by `.ci/tidy`.

* Paths: every repository path written in backticks in a tracked `.md` (outside fenced code
  blocks) is a tracked file or folder, relative to the repository's root, to the `.md`'s folder
  or to one of that folder's parents (`shared-fixtures/known-gaps/README.md` may name
  `damaged/wrapped.evtx`); its extension may be left out (a fixture's stem). A span is a path
  when it has no space and ends in a source extension (`.rs`, `.zig`, `.py`, `.md`, ...), or
  holds a `/` and ends in an extension, ends in `/` (a folder) or starts with a folder of one of
  those places; a bare file name (no `/`) must be the name of some tracked file. Skipped by
  rule: build outputs (`target/`, `zig-out/`, `.zig-cache/`, the wheel's `_lib/`), what is
  outside the repository (`../`, `/`, `~`, `$VAR`, URLs, the reference crate's
  `evtx-0.15.1/...`, and the files of other projects a profile quotes: `EXTERNAL`),
  placeholders and patterns (`DIR/`, `<NAME>`, `{a,b}`, `*`, `...`, `@`), Rust paths (`a::b`)
  and options (`-o`, `a=b`); a trailing `:LINE` is dropped.
* Thesis codes: every `H<n>` and `P<n>` (with an optional letter) written in a tracked text
  file is a heading of the performance archive (`perf/*.md`); the committed fixtures'
  expected outputs and quoted names (`"H32"`, `<H32>`: value types) are not citations.
* Tracker numbers: no tracked file cites an issue or a work session by number; say why instead
  (the rule, the thesis code, the commit).

Prints one line per offence and exits 1 when there is any.
"""

import re
import subprocess
import sys
from pathlib import Path

SOURCE_EXTENSIONS = {".rs", ".zig", ".py", ".md", ".toml", ".c", ".h", ".sh", ".txt", ".zon"}
OUTSIDE = ("target/", "zig-out/", ".zig-cache/", "_lib/", "../", "/", "~", "$", "http://",
           "https://", "evtx-0.15.1/")
# Files of other projects that profiles and notes quote: Rust's and Zig's standard libraries,
# glibc, the reference crate, cargo's configuration.
EXTERNAL = {"alloc/src/vec/mod.rs", "vec/mod.rs", "raw_vec/mod.rs", "ptr/mod.rs", "bit_set.zig",
            "_itoa.h", "evtx_parser.rs", "evtx_chunk.rs", ".cargo/config"}
PLACEHOLDER = re.compile(r"[<>{}*|=()\[\],;'\"…@]|\.\.\.|::|^-|^[A-Z]+/")
LINE_SUFFIX = re.compile(r":\d+(-\d+)?$")
CODE = re.compile(r"(?<![\w\"</'])([HP])(\d+)([a-z]?)\b")
HEADING = re.compile(r"^#{3,4} (H|P|HZ)(\d+)([a-z]?)\b", re.M)
# Written so that this file does not match itself.
TRACKER = re.compile(r"\b[Ii]ssues? #?\d|\b[Ss]essions?[ -]\d|\(#\d+\)")
NOT_CITING = ("shared-fixtures/expected/",)


def tracked(root: Path) -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=root, check=True, capture_output=True,
                         text=True).stdout
    return [line for line in out.splitlines() if line]


def text_of(root: Path, name: str) -> str | None:
    data = (root / name).read_bytes()
    if b"\0" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def spans(text: str) -> list[tuple[int, str]]:
    """(line, text) of each inline code span outside fenced blocks."""
    found, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            found.extend((number, s) for s in re.findall(r"`([^`\n]+)`", line))
    return found


def as_path(span: str) -> str | None:
    """The repository path a span may name, or None when it names none by the rules above."""
    span = LINE_SUFFIX.sub("", span.strip())
    if " " in span or span.startswith(OUTSIDE) or PLACEHOLDER.search(span) or span in EXTERNAL:
        return None
    if "/" not in span and Path(span).suffix not in SOURCE_EXTENSIONS:
        return None
    return span or None


def resolves(path: str, bases: list[str], known: set[str], names: set[str]) -> bool:
    """Whether `path` is a tracked file or folder from one of `bases` (its extension may be
    left out), or for a bare name, the name of a tracked file."""
    if "/" not in path:
        return path in names
    folder = path.endswith("/")
    path = path.rstrip("/")
    for base in bases:
        full = f"{base}/{path}" if base else path
        if full in known or (not folder and any(k.startswith(full + ".") for k in known)):
            return True
    return False


def names_a_path(path: str, bases: list[str], known: set[str]) -> bool:
    """A span with a `/` is taken for a path when it ends in an extension or a `/`, or when its
    first part is a folder of one of `bases` (`first/last` in prose is no path)."""
    if "/" not in path or path.endswith("/") or Path(path).suffix:
        return True
    head = path.split("/", 1)[0]
    return any((f"{base}/{head}" if base else head) in known for base in bases)


def bad_paths(root: Path, files: list[str]) -> list[str]:
    known = set(files) | {p.as_posix() for f in files for p in Path(f).parents if str(p) != "."}
    names = {Path(f).name for f in files}
    offences = []
    for md in (f for f in files if f.endswith(".md")):
        folder = Path(md).parent
        bases = [p.as_posix() for p in [folder, *folder.parents]]
        bases = [("" if b == "." else b) for b in bases]
        for number, span in spans((root / md).read_text(encoding="utf-8")):
            path = as_path(span)
            if path is None or not names_a_path(path, bases, known):
                continue
            if not resolves(path, bases, known, names):
                offences.append(f"{md}:{number}: `{span}` is not a tracked file or folder")
    return offences


def theses(root: Path, files: list[str]) -> set[str]:
    defined = set()
    for name in files:
        if name.startswith("perf/") and name.endswith(".md"):
            text = (root / name).read_text(encoding="utf-8")
            defined.update("".join(m.groups()) for m in HEADING.finditer(text))
    return defined


def unresolved_codes(root: Path, files: list[str], texts: dict[str, str]) -> list[str]:
    defined = theses(root, files)
    if not defined:
        return ["perf/: no thesis headings (### H<n> ...)"]
    offences = []
    for name, text in texts.items():
        if name.startswith(NOT_CITING):
            continue
        for number, line in enumerate(text.splitlines(), 1):
            for m in CODE.finditer(line):
                if "".join(m.groups()) not in defined:
                    offences.append(f"{name}:{number}: {m.group(0)} is no thesis in perf/")
    return offences


def tracker_numbers(texts: dict[str, str]) -> list[str]:
    return [f"{name}:{number}: a tracker or session number: {m.group(0)!r}; say why instead"
            for name, text in texts.items()
            for number, line in enumerate(text.splitlines(), 1)
            for m in TRACKER.finditer(line)]


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    files = tracked(root)
    texts = {name: text for name in files if (text := text_of(root, name)) is not None}
    offences = bad_paths(root, files)
    offences += unresolved_codes(root, files, texts)
    offences += tracker_numbers(texts)
    for line in offences:
        print(f"docs: {line}")
    markdown = sum(1 for f in files if f.endswith(".md"))
    print(f"docs: {markdown} Markdown files' paths, {len(texts)} text files' thesis codes and "
          f"tracker numbers, {len(offences)} offences")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
