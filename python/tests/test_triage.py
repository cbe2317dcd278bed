"""`evtx_twin.triage` and `fleet --triage` against the CLI's `triage --json` (the document of
shared-fixtures/README.md, "Triage"): the per-file objects come from the engine's
`evtx_triage_path`, the inputs and totals from Python, so every part of the document is
compared with what the CLI computes on its own."""

import json
import subprocess
import sys

import pytest

import evtx_twin
from conftest import CLIS, FIXTURES
from evtx_twin import _ffi

INPUTS = [
    FIXTURES / "synthetic",
    FIXTURES / "damaged" / "wrapped.evtx",
    FIXTURES / "carving",
    FIXTURES / "damaged" / "bad-records.evtx",
    FIXTURES / "damaged" / "bad-file-magic.evtx",
    FIXTURES / "no-such-file.evtx",
]


def cli_document(*args):
    done = subprocess.run([str(CLIS["rust"]), "triage", "--json", *map(str, args)],
                          capture_output=True, timeout=300)
    return done.stdout, done.returncode


def engines():
    found = []
    for engine in ("rust", "zig"):
        try:
            if hasattr(_ffi.load(engine), "evtx_triage_path"):
                found.append(engine)
        except (FileNotFoundError, ImportError):
            pass
    return found


@pytest.mark.parametrize("engine", ["rust", "zig"])
def test_the_document_is_the_clis(engine):
    if engine not in engines():
        pytest.skip(f"the {engine} library has no evtx_triage_path")
    stdout, status = cli_document(*INPUTS)
    assert status == 1, "two inputs cannot be read"
    want = json.loads(stdout)
    got = evtx_twin.triage(INPUTS, engine=engine)
    assert [f["path"] for f in got["files"]] == [f["path"] for f in want["files"]]
    for mine, theirs in zip(got["files"], want["files"]):
        assert mine == theirs, mine["path"]
    assert got == want
    # The fixtures hold what the document is about.
    assert got["totals"]["unreadable"] == 2
    assert got["totals"]["recovered"] > 0 and got["totals"]["errors"] > 0
    assert got["totals"]["gaps"] > 0


def test_silence_reaches_the_engine():
    path = FIXTURES / "synthetic" / "filters.evtx"
    stdout, _ = cli_document("--silence", "1", path)
    got = evtx_twin.triage(path, silence=1)
    assert got == json.loads(stdout)
    assert got["files"][0]["silences"] != evtx_twin.triage(path)["files"][0]["silences"]
    with pytest.raises(ValueError):
        evtx_twin.triage(path, silence=0)


def test_the_reference_library_has_no_triage():
    lib = _ffi.load("reference")
    assert lib.evtx_triage_path(str(FIXTURES / "synthetic" / "basic.evtx").encode(), 3600,
                                _ffi_write(), None) == 10  # EVTX_STATUS_NOT_IMPLEMENTED


def _ffi_write():
    from evtx_twin._triage import WriteFn

    return WriteFn(lambda _user, _data, _length: 0)


def test_fleet_writes_the_clis_bytes(tmp_path):
    stdout, status = cli_document(*INPUTS)
    out = tmp_path / "triage.json"
    done = subprocess.run(
        [sys.executable, "-m", "evtx_twin.fleet", "--triage", *map(str, INPUTS), "--out",
         str(out), "--workers", "2"], capture_output=True, text=True, timeout=600)
    assert done.returncode == status == 1, done.stderr[-2000:]
    assert out.read_bytes() == stdout
