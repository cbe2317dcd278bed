"""evtx_twin: Windows EVTX logs through the evtx-twin C ABI (Rust, Zig or the reference engine).

    import evtx_twin
    for record in evtx_twin.Parser("Security.evtx").records_json(parsed=True):
        ...
    table = evtx_twin.Parser("Security.evtx", engine="zig").to_arrow()

`python -m evtx_twin.fleet INPUT... --out DIR` converts many logs to Parquet on Dask;
`evtx_twin.triage(paths)` (and `fleet --triage`) reports what logs hold and whether anyone
touched them.
"""

from ._parser import EvtxError, EvtxWarning, Parser, RawBatch, RawSystem, timestamp_text
from ._triage import triage

__all__ = [
    "Parser", "EvtxError", "EvtxWarning", "RawBatch", "RawSystem", "timestamp_text",
    "backend_version", "triage",
]
__version__ = "0.1.0"


def backend_version(engine: str = "rust") -> str:
    """The version string of an engine's library (the reference's: the evtx crate's)."""
    from . import _ffi

    return _ffi.load(engine).evtx_backend_version().decode()
