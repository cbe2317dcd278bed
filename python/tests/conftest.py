"""Shared fixtures: the repository's CLIs are the oracle (they are held byte-identical to the
reference evtx_dump 0.15.1 by the parity gates), the samples are ../shared/evtx-samples."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CLIS = {"rust": ROOT / "zig-out" / "bin" / "evtx-rs", "zig": ROOT / "zig-out" / "bin" / "evtx-zig"}
FIXTURES = ROOT / "shared-fixtures"
SAMPLES = Path(os.environ.get("EVTX_SAMPLES", ROOT.parent / "shared" / "evtx-samples"))


def samples():
    found = sorted(SAMPLES.glob("*.evtx")) if SAMPLES.is_dir() else []
    if not found and os.environ.get("EVTX_REQUIRE_SAMPLES") == "1":
        raise RuntimeError(f"EVTX_REQUIRE_SAMPLES=1 but no samples at {SAMPLES}")
    return found


class Cli:
    """What a CLI prints for a file: stdout bytes, stderr lines, exit status (cached)."""

    _cache: dict = {}

    @classmethod
    def run(cls, engine, path, *args):
        key = (engine, str(path), args)
        if key not in cls._cache:
            cli = CLIS[engine]
            if not cli.is_file():
                pytest.fail(f"{cli} is missing: run `make build` first")
            done = subprocess.run([str(cli), *args, str(path)], capture_output=True, timeout=120)
            cls._cache[key] = (done.stdout, done.stderr.decode().splitlines(), done.returncode)
        return cls._cache[key]

    @classmethod
    def jsonl(cls, engine, path, *args):
        # Lines end at "\n" only: str.splitlines() would also cut at U+0085 and U+2028, which
        # a record's text may hold (synthetic/unicode.evtx).
        text = cls.run(engine, path, "-o", "jsonl", *args)[0].decode()
        return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n") if text else []

    @classmethod
    def errors(cls, engine, path, *args):
        """The CLI's per-chunk/per-record error lines, without their `error: ` prefix."""
        return [line[len("error: "):] for line in cls.run(engine, path, "-o", "jsonl", *args)[1]
                if line.startswith("error: ")]


@pytest.fixture(scope="session")
def cli():
    return Cli
