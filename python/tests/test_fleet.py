"""The fleet runner on a LocalCluster of two worker processes: the samples plus a broken file
into Parquet; rows and `json` values are the CLI's, the broken file is named and fails the run."""

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import re
import shlex
import time

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from conftest import FIXTURES, ROOT, Cli, samples
from evtx_twin.fleet import NO_VALUE, folder_name, main, partition_value


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    # Without the samples: the synthetic fixtures, and a wrapped log of four chunk slots (split).
    inputs = samples() or [*sorted((FIXTURES / "synthetic").glob("*.evtx")),
                           FIXTURES / "damaged" / "wrapped.evtx"]
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
            # Rows are read back folder by folder (host=...): each host's rows keep the CLI's
            # order, and together they are the CLI's lines.
            assert Counter(got) == Counter(lines), path.name
            hosts = rows.column("computer").to_pylist()
            for host in set(hosts):
                mine = [g for g, h in zip(got, hosts) if h == host]
                assert is_subsequence(mine, lines), (path.name, host)
            assert file_summary["errors"] == errors[:50], path.name
        else:
            # Ranges are read on their own, so a wrapped log's rows come range by range.
            assert Counter(got) == Counter(lines), path.name
            assert (Counter(file_summary["errors"]) == Counter(errors[:50])
                    or len(errors) > 50), path.name
        assert file_summary["records"] == len(lines), path.name
        assert file_summary["failed_records"] == len(errors), path.name
    assert table.num_rows == expected_rows == summary["records"]
    assert split > 0, "no log was split into chunk ranges"
    assert str(broken) not in set(table.column("source_file").to_pylist())


def is_subsequence(items, sequence):
    """Whether `items` occur in `sequence` in this order (not necessarily next to each other)."""
    rest = iter(sequence)
    return all(any(item == other for other in rest) for item in items)


def test_is_subsequence():
    assert is_subsequence(["a", "c"], ["a", "b", "c"])
    assert not is_subsequence(["c", "a"], ["a", "b", "c"])
    assert not is_subsequence(["a", "a"], ["a", "b"])


def test_parquet_is_partitioned_by_host(converted):
    """Every row sits in the folder of its own `computer`, and every host has a folder."""
    inputs, broken, out, done = converted
    hive = ds.partitioning(pa.schema([("host", pa.string())]), flavor="hive")
    dataset = ds.dataset(out, format="parquet", partitioning=hive)
    table = dataset.to_table(columns=["computer", "host"])
    folders = table.column("host").to_pylist()
    computers = table.column("computer").to_pylist()
    # pyarrow reads the Hive default partition back as null.
    assert [f or NO_VALUE for f in folders] == [partition_value(c) for c in computers]
    names = {p.name for p in out.iterdir() if p.is_dir()}
    assert names == {f"host={partition_value(c)}" for c in set(computers)}
    assert len(names) > 1, "the samples come from one host only?"


def test_partition_values_are_safe_folder_names():
    assert partition_value("DC01.corp.local") == "DC01.corp.local"
    assert partition_value("a/b=c d") == "a_b_c_d"
    assert partition_value(None) == partition_value("") == partition_value("..") == NO_VALUE


def readme_block():
    """The README's three fleet lines (pip install, the conversion, the query)."""
    text = (ROOT / "README.md").read_text()
    lines = re.search(r"```sh\n(python3 -m venv venv[^\n]*\n[^\n]*evtx_twin\.fleet[^\n]*\n"
                      r"[^\n]*duckdb[^\n]*)\n```", text)
    assert lines, "the README's fleet block is gone"
    return lines.group(1).split("\n")


def test_readme_fleet_line_parses(monkeypatch):
    """The README's conversion line names options the command has (and nothing else)."""
    _, fleet, _ = readme_block()
    argv = fleet.split("-m evtx_twin.fleet", 1)[1].split()
    seen = {}
    monkeypatch.setattr("evtx_twin.fleet.run", lambda paths, out, *a, **k: seen.update(out=out) or
                        {"files_failed": 0, "per_file": {}, "files": 0, "records": 0,
                         "failed_records": 0, "bytes": 0, "seconds": 0, "mb_per_second": None})
    monkeypatch.setattr("evtx_twin.fleet.expand", lambda inputs: inputs)
    assert main(argv) == 0 and seen["out"] == "/cases/parquet"


def test_readme_duckdb_query_runs_on_the_fleet_output(converted):
    """The README's query, on the fleet's Parquet folder, counts what the CLI prints."""
    import duckdb  # from the package's test extras
    inputs, broken, out, done = converted
    _, _, query_line = readme_block()
    # The line as the shell runs it (the folder swapped for the test's), then its SQL alone.
    program, flag, code = shlex.split(query_line.replace("/cases/parquet", str(out)))
    assert program == "venv/bin/python" and flag == "-c"
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
    assert shown.returncode == 0, shown.stderr[-2000:]
    sql = re.search(r'duckdb\.sql\("(.*)"\)', code).group(1)
    rows = duckdb.sql(sql).fetchall()
    assert str(rows[0][2]) in shown.stdout
    expected = Counter()
    for path in inputs:
        for line in Cli.jsonl("zig", path):
            event = json.loads(line).get("Event")
            system = event.get("System") if isinstance(event, dict) else None
            system = system if isinstance(system, dict) else {}
            event_id = system.get("EventID")
            if isinstance(event_id, dict):
                event_id = event_id.get("#text")
            expected[(system.get("Computer"), event_number(event_id))] += 1
    assert rows and [r[2] for r in rows] == sorted((r[2] for r in rows), reverse=True)
    assert len(rows) == min(10, len(expected))
    for computer, event_id, count in rows:
        assert expected[(computer, event_id)] == count, (computer, event_id)
    assert rows[0][2] == max(expected.values())


def event_number(value):
    """EventID as the fleet's integer column holds it: a number, or null when absent or not
    one (the fixtures have both). A text counts only as ASCII digits (shared-fixtures/README.md,
    "Filters"): Python's int() would also take " 4624", "+4" and "4_624"."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        return int(value)
    return None


def test_jsonl_output_is_the_cli_lines(tmp_path):
    inputs = (samples() or sorted((FIXTURES / "synthetic").glob("*.evtx")))[:3]
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "evtx_twin.fleet", *map(str, inputs), "--out", str(out),
         "--format", "jsonl", "--workers", "1", "--engine", "rust"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for path in inputs:
        parts = list((out / folder_name(os.path.abspath(path))).glob("part-*.jsonl"))
        assert len(parts) == 1, path.name
        assert parts[0].read_text().splitlines() == Cli.jsonl("rust", path), path.name


def test_fleet_on_a_separate_scheduler(tmp_path):
    """--scheduler: a `dask scheduler` and a `dask worker` started as processes of their own."""
    inputs = (samples() or sorted((FIXTURES / "synthetic").glob("*.evtx")))[:4]
    bin_dir = Path(sys.executable).parent
    info = tmp_path / "scheduler.json"
    common = {"cwd": tmp_path, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    scheduler = subprocess.Popen([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1",
                                  "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
                                 **common)
    worker = None
    try:
        deadline = time.monotonic() + 120
        while not info.exists() or not info.read_text().strip():
            started = scheduler.poll() is None and time.monotonic() < deadline
            assert started, "the scheduler did not start"
            time.sleep(0.2)
        address = json.loads(info.read_text())["address"]
        worker = subprocess.Popen([str(bin_dir / "dask"), "worker", address, "--nworkers", "1",
                                   "--nthreads", "1", "--no-dashboard",
                                   "--name", "evtx-test-worker"], **common)
        out = tmp_path / "out"
        done = subprocess.run(
            [sys.executable, "-m", "evtx_twin.fleet", *map(str, inputs), "--out", str(out),
             "--scheduler", address, "--partition", "file"],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        hive = ds.partitioning(pa.schema([("file", pa.string())]), flavor="hive")
        table = ds.dataset(out, format="parquet", partitioning=hive).to_table()
        for path in inputs:
            rows = table.filter(ds.field("source_file") == str(path))
            assert rows.column("json").to_pylist() == Cli.jsonl("rust", path), path.name
            assert set(rows.column("file").to_pylist()) <= {folder_name(str(path))}
        folders = {p.name for p in out.iterdir() if p.is_dir()}
        assert folders == {f"file={folder_name(str(p))}" for p in inputs}
        # The work ran on that worker, not on a cluster of the runner's own.
        summary = json.loads((out / "_summary.json").read_text())
        assert summary["files"] == len(inputs) and summary["files_failed"] == 0
        workers = {w for f in summary["per_file"].values() for w in f["workers"]}
        assert workers == {"evtx-test-worker"}
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.terminate()
        for process in (worker, scheduler):
            if process is not None:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
