"""Fleets of EVTX logs into Parquet (or JSONL) on Dask.

    python -m evtx_twin.fleet INPUT... --out DIR [--format parquet|jsonl]
        [--scheduler ADDRESS] [--engine rust|zig] [--workers N] [--split-mb MB]
        [--partition host|file] [--event-id LIST] [--level LIST] [--provider NAME]...
        [--channel NAME]... [--since TIME] [--until TIME]
    python -m evtx_twin.fleet --triage INPUT... --out FILE [--silence SECONDS]
        [--scheduler ADDRESS] [--engine rust|zig] [--workers N]

INPUT are files, folders (searched for *.evtx) or globs. Without --scheduler a
`dask.distributed.LocalCluster` of N worker processes is started; with one the run goes to that
cluster (its workers must see the same paths). One task per file; a log larger than --split-mb
is split into ranges of 64 KiB chunk slots, each read on its own (the file header followed by the
range's slots, given to the library as a buffer), so one huge log does not serialize the run.

Parquet output is Hive-partitioned, by host (`--partition host`, the default: the records'
`computer`) or by input file (`--partition file`):
DIR/host=<computer>/<file-stem>-<hash>-NNNNN.parquet or
DIR/file=<file-stem>-<hash>/part-NNNNN.parquet (one part per task and partition; every row has
`source_file`), readable as one dataset: DuckDB ``read_parquet('DIR/**/*.parquet')`` (which adds
the `host` or `file` column), Polars ``pl.scan_parquet('DIR/**/*.parquet')``, pyarrow
``pyarrow.dataset.dataset(DIR, partitioning="hive")``. JSONL output is
DIR/<file-stem>-<hash>/part-NNNNN.jsonl. DIR/_summary.json holds the summary printed at the end:
files, records, failed records, per-file errors, throughput. Exit status 1 when any file failed
(could not be read or is not EVTX), else 0; chunk and record errors are counted, named, and the
rest of the file is converted.

--event-id, --level, --provider, --channel, --since and --until keep only the records they
accept, with the CLIs' words and rules (README, "Filters"): the engine decides before rendering,
so a selective filter converts a fleet for a fraction of the cost of converting it whole.

--triage reports instead of converting: one task per log (found as the CLIs find them), each the
engine's `evtx_triage_path`, and FILE (``-``: standard output) receives the document
`evtx-rs triage --json` prints for the same INPUTs (shared-fixtures/README.md, "Triage"): one
line of compact JSON. Exit status 1 when a log could not be read, else 0.
"""

from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import sys
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

CHUNK = 65536
HEADER = 4096
#: Errors named per file in the summary (the counts are always complete).
ERRORS_KEPT = 50


@dataclass
class Task:
    path: str
    part: int
    #: Chunk slot range [first, last) to read, or None for the whole file.
    first: int | None = None
    last: int | None = None


@dataclass
class Result:
    path: str
    part: int
    records: int = 0
    failed_records: int = 0
    bytes: int = 0
    seconds: float = 0.0
    errors: list = field(default_factory=list)
    fatal: str | None = None
    outputs: list = field(default_factory=list)
    #: The Dask worker's name (None outside a worker).
    worker: str | None = None


def expand(inputs: list[str]) -> list[str]:
    """Files, folders (recursively, *.evtx in any case) and globs, as sorted unique paths. An
    input that matches nothing is kept, so it is reported as a failed file."""
    found: list[str] = []
    for item in inputs:
        if os.path.isdir(item):
            for root, _, names in os.walk(item):
                found += [os.path.join(root, n) for n in names if n.lower().endswith(".evtx")]
        elif any(c in item for c in "*?["):
            found += [p for p in glob.glob(item, recursive=True) if os.path.isfile(p)]
        else:
            found.append(item)
    return sorted(dict.fromkeys(os.path.abspath(p) for p in found))


def plan(paths: list[str], split_bytes: int) -> list[Task]:
    """One task per file, or per range of chunk slots for files over `split_bytes`."""
    tasks = []
    per_task = max(1, split_bytes // CHUNK)
    for path in paths:
        try:
            size = os.path.getsize(path)
        except OSError:
            size = 0
        slots = max(0, -(-(size - HEADER) // CHUNK))
        if size <= split_bytes or slots <= per_task:
            tasks.append(Task(path, 0))
            continue
        for part, first in enumerate(range(0, slots, per_task)):
            tasks.append(Task(path, part, first, min(slots, first + per_task)))
    return tasks


def folder_name(path: str) -> str:
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(path).stem)[:80]
    return f"{stem}-{hashlib.sha1(path.encode()).hexdigest()[:8]}"


#: The Hive name of a missing partition value (as Hive, Spark and pyarrow write it).
NO_VALUE = "__HIVE_DEFAULT_PARTITION__"


def partition_value(value: str | None) -> str:
    """A host name as a Hive partition folder value: letters, digits and ``-_.`` kept, anything
    else (``/``, ``=``, spaces) as ``_``; a missing or empty name is `NO_VALUE`."""
    if not value:
        return NO_VALUE
    text = "".join(c if c.isalnum() or c in "-_." else "_" for c in value)[:120]
    return NO_VALUE if text.strip(".") == "" else text


def read_range(path: str, first: int, last: int) -> bytes:
    """The file header and chunk slots [first, last): an EVTX input of its own (the reader takes
    the slot count from the size, not from the header, and orders the slots it gets itself)."""
    with open(path, "rb") as f:
        header = os.pread(f.fileno(), HEADER, 0)
        body = os.pread(f.fileno(), (last - first) * CHUNK, HEADER + first * CHUNK)
    return header + body


def convert(task: Task, out: str, fmt: str, engine: str, partition: str = "host",
            filters: dict | None = None) -> Result:
    """One task on a worker: read, convert, write one part file per partition; never raises.
    `filters`: `Parser`'s filter arguments (`event_ids`, ..., `until`)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from . import EvtxError, EvtxWarning, Parser, arrow

    result = Result(task.path, task.part)
    start = time.perf_counter()
    try:
        from distributed import get_worker

        result.worker = str(get_worker().name)
    except (ImportError, ValueError):  # not on a Dask worker
        pass
    name = folder_name(task.path)
    schema = arrow.SCHEMA.insert(0, pa.field("source_file", pa.string()))
    # Partition folder -> (part file, its temporary name, open file, ParquetWriter or None).
    sinks: dict[str, tuple] = {}

    def sink_for(folder: str, file_name: str):
        if folder not in sinks:
            final = Path(out) / folder / file_name
            final.parent.mkdir(parents=True, exist_ok=True)
            partial = final.with_suffix(".tmp")
            handle = open(partial, "wb")
            writer = None
            if fmt == "parquet":
                writer = pq.ParquetWriter(handle, schema, compression="zstd")
            sinks[folder] = (final, partial, handle, writer)
        return sinks[folder]

    def write_parquet(table):
        names = pa.array([task.path] * table.num_rows, pa.string())
        table = table.add_column(0, "source_file", names)
        if partition == "file":
            sink_for(f"file={name}", f"part-{task.part:05d}.parquet")[3].write_table(table)
            return
        hosts = table["computer"].unique().to_pylist()
        for host in hosts:
            rows = table if len(hosts) == 1 else table.filter(
                pc.is_null(table["computer"]) if host is None
                else pc.equal(table["computer"], host))
            folder = f"host={partition_value(host)}"
            sink_for(folder, f"{name}-{task.part:05d}.parquet")[3].write_table(rows)

    def close_all():
        for _, _, handle, writer in sinks.values():
            try:
                if writer is not None:
                    writer.close()
            finally:
                handle.close()

    try:
        if task.first is None:
            source = task.path
            result.bytes = os.path.getsize(task.path)
            slot_base = 0
        else:
            source = read_range(task.path, task.first, task.last)
            result.bytes = len(source) - (HEADER if task.first else 0)
            slot_base = task.first
        parser = Parser(source, engine=engine, skip_errors=True, **(filters or {}))
        parser.name = task.path
        if fmt != "parquet":
            sink_for(name, f"part-{task.part:05d}.jsonl")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", EvtxWarning)
            for table in arrow.batches(parser):
                if slot_base:
                    # Back to the whole file's slot numbers and offsets.
                    chunks = pc.add(table["chunk"], pa.scalar(slot_base, pa.uint32()))
                    table = table.set_column(
                        table.schema.get_field_index("chunk"), "chunk", chunks)
                    offsets = pc.add(table["offset"], pa.scalar(slot_base * CHUNK, pa.uint64()))
                    table = table.set_column(
                        table.schema.get_field_index("offset"), "offset", offsets)
                result.records += table.num_rows
                if not table.num_rows:
                    continue
                if fmt == "parquet":
                    write_parquet(table)
                else:
                    handle = sinks[name][2]
                    for chunk in table["json"].chunks:
                        if len(chunk):
                            texts = chunk.cast(pa.large_binary()).to_pylist()
                            handle.write(b"\n".join(texts) + b"\n")
            for w in caught:
                if isinstance(w.message, EvtxWarning):
                    result.failed_records += 1
                    error = w.message.error
                    if slot_base and error.chunk is not None:
                        error = EvtxError(error.file, error.kind, error.detail,
                                          error.chunk + slot_base, error.record,
                                          error.offset + slot_base * CHUNK, error.status)
                    if len(result.errors) < ERRORS_KEPT:
                        result.errors.append(str(error))
        # (A task without records writes no Parquet part; the summary still counts it.)
        close_all()
        for final, partial, _, _ in sinks.values():
            os.replace(partial, final)
            result.outputs.append(str(final))
    except (EvtxError, OSError, ValueError) as failure:
        result.fatal = str(failure)
    except Exception as failure:  # noqa: BLE001 - a worker reports, the run goes on
        result.fatal = f"{type(failure).__name__}: {failure}"
    finally:
        if result.fatal is not None:
            try:
                close_all()
            except (OSError, ValueError):  # a file closed by the failure
                pass
            for _, partial, _, _ in sinks.values():
                if partial.exists():
                    partial.unlink()
    result.seconds = time.perf_counter() - start
    return result


def summarize(results: list[Result], seconds: float) -> dict:
    files: dict[str, dict] = {}
    for r in sorted(results, key=lambda r: (r.path, r.part)):
        f = files.setdefault(r.path, {"records": 0, "failed_records": 0, "bytes": 0, "errors": [],
                                      "failed": None, "parts": 0, "workers": []})
        f["records"] += r.records
        f["failed_records"] += r.failed_records
        f["bytes"] += r.bytes
        f["parts"] += 1
        if r.worker is not None and r.worker not in f["workers"]:
            f["workers"].append(r.worker)
        f["errors"] += r.errors
        if r.fatal and not f["failed"]:
            f["failed"] = r.fatal
    total_bytes = sum(f["bytes"] for f in files.values())
    return {
        "files": len(files),
        "files_failed": sum(1 for f in files.values() if f["failed"]),
        "records": sum(f["records"] for f in files.values()),
        "failed_records": sum(f["failed_records"] for f in files.values()),
        "bytes": total_bytes,
        "seconds": round(seconds, 3),
        "mb_per_second": round(total_bytes / 1e6 / seconds, 2) if seconds > 0 else None,
        "per_file": files,
    }


def print_summary(summary: dict, stream) -> None:
    for path, f in summary["per_file"].items():
        if f["failed"]:
            print(f"FAILED {path}: {f['failed']}", file=stream)
        elif f["failed_records"]:
            print(f"partial {path}: {f['records']} records, {f['failed_records']} failed",
                  file=stream)
            for line in f["errors"][:5]:
                print(f"  error: {line}", file=stream)
    print(f"fleet: {summary['files']} files ({summary['files_failed']} failed), "
          f"{summary['records']} records, {summary['failed_records']} failed records, "
          f"{summary['bytes'] / 1e6:.1f} MB in {summary['seconds']:.1f} s "
          f"({summary['mb_per_second']} MB/s)", file=stream)


def connect(scheduler: str | None, workers: int):
    """A Dask client of `scheduler`, or of a new LocalCluster of `workers` processes (returned
    too, to be closed after the client)."""
    from dask.distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    return Client(cluster), cluster


def run(paths: list[str], out: str, fmt: str = "parquet", engine: str = "rust",
        scheduler: str | None = None, workers: int = 2, split_bytes: int = 256 << 20,
        progress: bool | None = None, partition: str = "host",
        filters: dict | None = None) -> dict:
    """Converts `paths` on a Dask cluster; returns the summary (also in OUT/_summary.json).
    `filters`: `Parser`'s filter arguments, for every file."""
    from dask.distributed import as_completed

    os.makedirs(out, exist_ok=True)
    tasks = plan(paths, split_bytes)
    start = time.perf_counter()
    client, cluster = connect(scheduler, workers)
    show = sys.stderr.isatty() if progress is None else progress
    results = []
    try:
        futures = [client.submit(convert, t, os.path.abspath(out), fmt, engine, partition,
                                 filters, pure=False, key=f"evtx-{i}-{folder_name(t.path)}")
                   for i, t in enumerate(tasks)]
        for done, future in enumerate(as_completed(futures), 1):
            results.append(future.result())
            if show:
                filled = int(30 * done / len(futures))
                bar = f"[{'#' * filled}{'.' * (30 - filled)}]"
                print(f"\r{bar} {done}/{len(futures)} tasks", end="", file=sys.stderr)
        if show and futures:
            print(file=sys.stderr)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    # Inputs that matched no task (none: every path is a task) still count as files.
    summary = summarize(results, time.perf_counter() - start)
    with open(os.path.join(out, "_summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return summary


def triage_task(path: str, error: str | None, silence: int, engine: str) -> dict:
    """One log's triage report on a worker; never raises (a failure is the file's error)."""
    if error is not None:
        return {"path": path, "error": error}
    from ._triage import triage_file

    try:
        return triage_file(path, silence, engine)
    except Exception as failure:  # noqa: BLE001 - a worker reports, the run goes on
        return {"path": path, "error": f"{type(failure).__name__}: {failure}"}


def run_triage(inputs: list[str], silence: int = 3600, engine: str = "rust",
               scheduler: str | None = None, workers: int = 2) -> dict:
    """The triage document of `inputs` on a Dask cluster, one task per log, in the CLIs'
    order."""
    from ._triage import SCHEMA, find_logs, totals

    items = find_logs(inputs)
    client, cluster = connect(scheduler, workers)
    try:
        futures = [client.submit(triage_task, path, error, silence, engine, pure=False,
                                 key=f"triage-{i}-{folder_name(path)}")
                   for i, (path, error) in enumerate(items)]
        files = client.gather(futures)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return {"schema": SCHEMA, "files": files, "totals": totals(files)}


def write_document(document: dict, out: str) -> None:
    """The document as `triage --json` prints it: compact, one line."""
    text = json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n"
    if out == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evtx_twin.fleet",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+", metavar="INPUT", help="EVTX files, folders or globs")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--format", choices=["parquet", "jsonl"], default="parquet")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="an existing Dask scheduler (default: a LocalCluster)")
    parser.add_argument("--engine", choices=["rust", "zig"], default="rust")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, metavar="N",
                        help="LocalCluster worker processes (default: one per CPU)")
    parser.add_argument("--split-mb", type=float, default=256, metavar="MB",
                        help="split logs larger than this into chunk ranges of this size "
                             "(default 256)")
    parser.add_argument("--partition", choices=["host", "file"], default="host",
                        help="Parquet folders per host (computer, default) or per input file")
    parser.add_argument("--event-id", action="append", metavar="LIST",
                        help="keep records whose System/EventID is in LIST (4624,4700-4799)")
    parser.add_argument("--level", action="append", metavar="LIST",
                        help="keep records whose System/Level is in LIST")
    parser.add_argument("--provider", action="append", metavar="NAME",
                        help="keep records of this provider (repeatable)")
    parser.add_argument("--channel", action="append", metavar="NAME",
                        help="keep records of this channel (repeatable)")
    parser.add_argument("--since", metavar="TIME",
                        help="keep records created at or after TIME (RFC 3339)")
    parser.add_argument("--until", metavar="TIME", help="keep records created before TIME")
    parser.add_argument("--triage", action="store_true",
                        help="write the triage document of the logs to --out (a file, or -)")
    parser.add_argument("--silence", type=int, default=3600, metavar="SECONDS",
                        help="with --triage: the silence threshold (default 3600)")
    args = parser.parse_args(argv)
    if args.triage:
        from ._triage import SILENCE_MAX

        if not 1 <= args.silence <= SILENCE_MAX:
            parser.error(f"--silence: expected a number from 1 to {SILENCE_MAX}")
        document = run_triage(args.inputs, args.silence, args.engine, args.scheduler,
                              args.workers)
        write_document(document, args.out)
        return 1 if document["totals"]["unreadable"] else 0
    filters = {"event_ids": args.event_id, "levels": args.level, "providers": args.provider,
               "channels": args.channel, "since": args.since, "until": args.until}
    try:
        from ._filters import Filters

        Filters(**filters)  # checked here, so a bad value is a usage error, not N failed files
    except (TypeError, ValueError) as problem:
        parser.error(str(problem))
    paths = expand(args.inputs)
    if not paths:
        print("fleet: no input files", file=sys.stderr)
        return 2
    summary = run(paths, args.out, args.format, args.engine, args.scheduler, args.workers,
                  int(args.split_mb * (1 << 20)), partition=args.partition, filters=filters)
    print_summary(summary, sys.stderr)
    return 1 if summary["files_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
