"""The house rules no formatter checks, over the tracked Rust and Zig sources.

* Lines: at most 100 columns (characters, not bytes), as rustfmt's `max_width` and the Zig
  style the engines follow; rustfmt does not break long strings or comments, zig fmt breaks
  nothing. `.ci/long-lines.txt` lists the files written before this check with how many
  longer lines each still has: a file may not gain one (a ratchet; lower the count as lines
  are fixed, and a file that reaches 0 leaves the list).
* Names: every `.rs` and `.zig` file name is snake_case; an engine module's Zig file has its
  Rust twin's name (ARCHITECTURE.md's table, rows naming one file on each side), except the
  library roots (`lib.rs` and `evtx.zig`: each language's convention).
* Standard streams in Zig: no positional writer (`File.writer`, which writes with `pwrite` at
  its own offset and so clobbers a log file that other commands share) on `File.stdout()` or
  `File.stderr()` anywhere, and in `zig/src` these two appear only in `zig/src/stdio.zig`,
  whose writers all stream.

Prints one line per offence and exits 1 when there is any. `--lower` rewrites
`.ci/long-lines.txt` with each count lowered to what the file has now (never raised).
"""

import re
import subprocess
import sys
from pathlib import Path

MAX_COLUMNS = 100
SNAKE = re.compile(r"^[a-z][a-z0-9_]*\.(rs|zig)$")
ENGINE_ROW = re.compile(
    r"^\|[^|]*\|\s*`rust/evtx-core/src/(?P<rust>[a-z0-9_]+)\.rs`\s*\|"
    r"\s*`zig/src/(?P<zig>[a-z0-9_]+)\.zig`\s*\|\s*$"
)
# Where each language's convention names the same thing differently.
TWIN_EXCEPTIONS = {("lib", "evtx")}


def tracked_sources(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "*.rs", "*.zig"], cwd=root, check=True, capture_output=True, text=True
    ).stdout
    return [line for line in out.splitlines() if line]


def allowances(root: Path) -> dict[str, int]:
    allowed = {}
    for line in (root / ".ci/long-lines.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            count, name = line.split(maxsplit=1)
            allowed[name] = int(count)
    return allowed


def long_lines(root: Path, files: list[str]) -> tuple[list[str], list[str]]:
    """The offences, and notes on allowances that can be lowered."""
    allowed = allowances(root)
    offences, notes = [], []
    for name in files:
        text = (root / name).read_text(encoding="utf-8")
        long = [(number, len(line)) for number, line in enumerate(text.splitlines(), 1)
                if len(line) > MAX_COLUMNS]
        allowance = allowed.pop(name, 0)
        if len(long) > allowance:
            offences.extend(f"{name}:{number}: {width} columns (at most {MAX_COLUMNS}; "
                            f"{len(long)} such lines, {allowance} allowed)"
                            for number, width in long)
        elif len(long) < allowance:
            notes.append(f"{name}: {len(long)} lines over {MAX_COLUMNS} columns; lower its "
                         f"count in .ci/long-lines.txt from {allowance}")
    offences.extend(f".ci/long-lines.txt: {name} is not a tracked source" for name in allowed)
    return offences, notes


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
STDIO_HOME = "zig/src/stdio.zig"


def stdio_writers(root: Path, files: list[str]) -> list[str]:
    offences = []
    for name in (f for f in files if f.endswith(".zig")):
        for number, line in enumerate((root / name).read_text(encoding="utf-8").splitlines(), 1):
            if POSITIONAL_STDIO.search(line):
                offences.append(f"{name}:{number}: a positional writer on a standard stream "
                                f"(use writerStreaming)")
            elif name.startswith("zig/src/") and name != STDIO_HOME and STDIO.search(line):
                offences.append(f"{name}:{number}: a standard stream outside {STDIO_HOME} "
                                f"(use its streaming writers)")
    return offences


def lower(root: Path) -> None:
    path = root / ".ci/long-lines.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.startswith("#")]
    for name, allowance in sorted(allowances(root).items()):
        text = (root / name).read_text(encoding="utf-8") if (root / name).is_file() else ""
        now = sum(1 for line in text.splitlines() if len(line) > MAX_COLUMNS)
        if min(now, allowance):
            kept.append(f"{min(now, allowance)} {name}")
    path.write_text("\n".join(kept) + "\n", encoding="utf-8")


def main() -> int:
    root = Path(__file__).resolve().parent.parent
    if sys.argv[1:] == ["--lower"]:
        lower(root)
    files = tracked_sources(root)
    offences, notes = long_lines(root, files)
    offences += bad_names(root, files)
    offences += stdio_writers(root, files)
    for line in notes + offences:
        print(f"tidy: {line}")
    print(f"tidy: {len(files)} Rust and Zig files, {len(offences)} offences")
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
