"""The fleet runner on a LocalCluster of two worker processes: the samples plus a broken file
into Parquet; rows and `json` values are the CLI's, the broken file is named and fails the run."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.dataset as ds
import pytest

from conftest import FIXTURES, Cli, samples
from evtx_twin.fleet import folder_name


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    inputs = samples() or sorted((FIXTURES / "synthetic").glob("*.evtx"))
    work = tmp_path_factory.mktemp("fleet")
    broken = work / "broken.evtx"
    broken.write_bytes(b"ElfFile\0" + os.urandom(3000))  # shorter than a file header
    out = work / "out"
    # --split-mb 0.2: every log over three chunk slots is converted in ranges of three slots.
    done = subprocess.run(
        [sys.executable, "-m", "evtx_twin.fleet", *map(str, inputs), str(broken), "--out", str(out),
         "--workers", "2", "--engine", "zig", "--split-mb", "0.2"],
        capture_output=True, text=True, timeout=600)
    return inputs, broken, out, done


def test_the_run_fails_and_names_the_broken_file(converted):
    inputs, broken, out, done = converted
    assert done.returncode == 1, done.stderr[-2000:]
    assert f"FAILED {broken}:" in done.stderr
    summary = json.loads((out / "_summary.json").read_text())
    assert summary["files"] == len(inputs) + 1 and summary["files_failed"] == 1
    assert "not an evtx file" in summary["per_file"][str(broken)]["failed"]


def test_parquet_rows_are_the_cli_records(converted):
    inputs, broken, out, done = converted
    table = ds.dataset(out, format="parquet").to_table()
    summary = json.loads((out / "_summary.json").read_text())
    expected_rows = 0
    split = 0
    for path in inputs:
        lines = Cli.jsonl("zig", path)
        errors = Cli.errors("zig", path)
        expected_rows += len(lines)
        rows = table.filter(ds.field("source_file") == str(path))
        got = rows.column("json").to_pylist()
        file_summary = summary["per_file"][str(path)]
        split += file_summary["parts"] > 1
        if file_summary["parts"] == 1:
            assert got == lines, path.name
            assert file_summary["errors"] == errors[:50], path.name
        else:
            # Ranges are read on their own, so a wrapped log's rows come range by range.
            assert Counter(got) == Counter(lines), path.name
            assert Counter(file_summary["errors"]) == Counter(errors[:50]) or len(errors) > 50, path.name
        assert file_summary["records"] == len(lines) and file_summary["failed_records"] == len(errors), path.name
    assert table.num_rows == expected_rows == summary["records"]
    assert split > 0, "no log was split into chunk ranges"
    assert str(broken) not in set(table.column("source_file").to_pylist())


def test_jsonl_output_is_the_cli_lines(tmp_path):
    inputs = (samples() or sorted((FIXTURES / "synthetic").glob("*.evtx")))[:3]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "evtx_twin.fleet", *map(str, inputs), "--out", str(out), "--format", "jsonl",
         "--workers", "1", "--engine", "rust"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for path in inputs:
        parts = list((out / folder_name(os.path.abspath(path))).glob("part-*.jsonl"))
        assert len(parts) == 1, path.name
        assert parts[0].read_text().splitlines() == Cli.jsonl("rust", path), path.name
