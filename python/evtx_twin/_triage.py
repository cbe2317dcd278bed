"""`triage`: what is in a log and whether anyone touched it, without rendering its records.

    doc = evtx_twin.triage(["Security.evtx", "logs/"], silence=3600)
    doc["files"][0]["gaps"], doc["totals"]["log_events"]

The document is the one `evtx-rs triage --json` prints (shared-fixtures/README.md, "Triage"),
as Python objects: each file's object comes from the engine's `evtx_triage_path` (one call per
log, through the C ABI), the inputs are found and the totals summed here, as the CLIs do.
"""

from __future__ import annotations

import ctypes
import json
import os

from . import _ffi

SCHEMA = "evtx-twin triage 1"
#: `--silence`'s range, in seconds.
SILENCE_MAX = 315_360_000
#: Statuses of an input that cannot be read (the CLIs report these and go on).
STATUS_IO, STATUS_NOT_EVTX = 5, 6
#: Directories nested deeper than this are not entered (the CLIs' bound).
DEPTH_MAX = 64

WriteFn = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


def find_logs(inputs) -> list[tuple[str, str | None]]:
    """The logs of `inputs` as the CLIs find them (`rust/cli/src/inputs.rs`): each argument as
    named, a directory searched recursively for names ending in ``.evtx`` in any case (entered
    directories only, not links to them), its logs in the byte order of their paths, each the
    directory joined to the path below it with ``/``. Each item is ``(path, error)``: `error`
    is the text of a directory that could not be read, else None."""
    items: list[tuple[str, str | None]] = []
    for arg in inputs:
        arg = os.fspath(arg)
        if os.path.isdir(arg):
            found: list[tuple[str, str | None]] = []
            _search(arg, found, 0)
            found.sort(key=lambda item: os.fsencode(item[0]))
            items += found
        else:
            items.append((arg, None))
    return items


def _search(directory: str, found: list, depth: int) -> None:
    if depth == DEPTH_MAX:
        return
    try:
        entries = list(os.scandir(directory))
    except OSError:
        found.append((directory, f"Failed to read directory at: {directory}"))
        return
    for entry in entries:
        name = entry.name
        try:
            raw = name.encode("utf-8")
        except UnicodeEncodeError:  # not UTF-8: the CLIs skip it
            continue
        path = directory + name if directory.endswith("/") else f"{directory}/{name}"
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        if is_dir:
            _search(path, found, depth + 1)
        elif len(raw) > 5 and raw[-5:].lower() == b".evtx":
            found.append((path, None))


def triage_file(path: str, silence: int = 3600, engine: str = "rust") -> dict:
    """The report of one log (one object of the document's ``files``). A log that cannot be
    read gives ``{"path": ..., "error": ...}`` with the CLIs' first line for it."""
    lib = _ffi.load(engine)
    if not hasattr(lib, "evtx_triage_path"):
        raise NotImplementedError(f"the {engine} library has no evtx_triage_path")
    parts: list[bytes] = []

    def write(_user, data, length):
        parts.append(ctypes.string_at(data, length))
        return 0

    callback = WriteFn(write)
    status = lib.evtx_triage_path(os.fsencode(path), silence, callback, None)
    if status in (STATUS_IO, STATUS_NOT_EVTX):
        return {"path": path, "error": f"Failed to open evtx file at: {path}"}
    if status != _ffi.STATUS_OK:
        from ._parser import EvtxError

        name = lib.evtx_status_name(status).decode()
        raise EvtxError(path, name, lib.evtx_last_error().decode(errors="replace"),
                        status=status)
    return json.loads(b"".join(parts))


def totals(files: list[dict]) -> dict:
    """The document's ``totals`` of its ``files``."""
    read = [f for f in files if f.get("error") is None]
    return {
        "files": len(files),
        "unreadable": len(files) - len(read),
        "records": sum(f["records"] for f in read),
        "recovered": sum(f["recovered"] for f in read),
        "errors": sum(e["count"] for f in read for e in f["errors"]),
        "gaps": sum(len(f["gaps"]) for f in read),
        "log_events": sum(len(f["log_events"]) for f in read),
    }


def triage(paths, silence: int = 3600, engine: str = "rust") -> dict:
    """The triage document of the logs in `paths` (a path, or a list of files and directories),
    as `evtx-rs triage --json` prints it: ``{"schema", "files", "totals"}``. `silence`: seconds
    between two neighbouring records' times that make a silence (1 to 315360000). `engine`:
    "rust" or "zig"."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    if isinstance(silence, bool) or not isinstance(silence, int) \
            or not 1 <= silence <= SILENCE_MAX:
        raise ValueError(f"silence must be a whole number of seconds from 1 to {SILENCE_MAX}")
    files = []
    for path, error in find_logs(paths):
        if error is not None:
            files.append({"path": path, "error": error})
        else:
            files.append(triage_file(path, silence, engine))
    return {"schema": SCHEMA, "files": files, "totals": totals(files)}
