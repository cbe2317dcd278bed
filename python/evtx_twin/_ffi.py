"""ctypes declarations of include/evtx.h and the loading of the three libraries.

Why ctypes and not cffi: the wheel then needs no C compiler and no runtime dependency at all,
the three libraries (same symbols) are loaded side by side by path, and the one cost of ctypes,
its per-call overhead, is paid once per batch of thousands of records
(`evtx_parser_next_batch`), not once per record. cffi's ABI mode would parse the header but
not its `#if` blocks, so the declarations would be copied by hand either way.

The declarations below mirror include/evtx.h field for field (a changed layout there means a
bumped `EVTX_ABI_VERSION`, which is checked at load); the tests read every field of `evtx_batch`
against the CLIs' output.
"""

from __future__ import annotations

import ctypes
import os
import threading
from pathlib import Path

EVTX_ABI_VERSION = 3
RECORD_ID_UNKNOWN = 2**64 - 1

STATUS_OK = 0
STATUS_END = 1
STATUS_INCOMPLETE_CHUNK = 16  # the first per-chunk/per-record error KIND

FORMAT_XML = 0
FORMAT_JSON = 1
FORMAT_JSONL = 2

#: Engine name -> library file name.
LIBRARIES = {"rust": "libevtx_rs.so", "zig": "libevtx_zig.so", "reference": "libevtx_ref.so"}


class EventRange(ctypes.Structure):
    _fields_ = [("first", ctypes.c_uint64), ("last", ctypes.c_uint64)]


class ValueRange(ctypes.Structure):
    """`evtx_value_range`: an inclusive range of event ids or levels."""

    _fields_ = [("first", ctypes.c_uint32), ("last", ctypes.c_uint32)]


#: `evtx_options.version` of the whole struct below (the filters included).
OPTIONS_VERSION_1 = 1


class Options(ctypes.Structure):
    """`evtx_options` version 1 (`evtx_options_init_v1` fills it)."""

    _fields_ = [
        ("format", ctypes.c_uint32),
        ("threads", ctypes.c_uint32),
        ("indent", ctypes.c_uint8),
        ("separate_json_attributes", ctypes.c_uint8),
        ("show_record_number", ctypes.c_uint8),
        ("validate_checksums", ctypes.c_uint8),
        ("recover_records", ctypes.c_uint8),
        ("stop_after_error", ctypes.c_uint8),
        ("version", ctypes.c_uint8),
        ("reserved", ctypes.c_uint8),
        ("ansi_codec", ctypes.c_char_p),
        ("event_ranges", ctypes.POINTER(EventRange)),
        ("event_ranges_count", ctypes.c_size_t),
        ("mta_path", ctypes.c_char_p),
        ("wevt_cache_path", ctypes.c_char_p),
        ("event_ids", ctypes.POINTER(ValueRange)),
        ("event_ids_count", ctypes.c_size_t),
        ("levels", ctypes.POINTER(ValueRange)),
        ("levels_count", ctypes.c_size_t),
        ("providers", ctypes.POINTER(ctypes.c_char_p)),
        ("providers_count", ctypes.c_size_t),
        ("channels", ctypes.POINTER(ctypes.c_char_p)),
        ("channels_count", ctypes.c_size_t),
        ("since", ctypes.c_uint64),
        ("until", ctypes.c_uint64),
        ("since_set", ctypes.c_uint8),
        ("until_set", ctypes.c_uint8),
        ("reserved_v1", ctypes.c_uint8 * 6),
    ]


class Record(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("data_len", ctypes.c_size_t),
        ("record_id", ctypes.c_uint64),
        ("filetime", ctypes.c_uint64),
        ("file_offset", ctypes.c_uint64),
        ("chunk_index", ctypes.c_uint32),
        ("status", ctypes.c_uint32),
        ("message", ctypes.c_char_p),
        ("recovered", ctypes.c_uint8),
        ("checksum", ctypes.c_uint8),
    ]


class Batch(ctypes.Structure):
    _fields_ = [
        ("count", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("offsets", ctypes.c_void_p),
        ("record_ids", ctypes.c_void_p),
        ("filetimes", ctypes.c_void_p),
        ("file_offsets", ctypes.c_void_p),
        ("chunk_indexes", ctypes.c_void_p),
        ("statuses", ctypes.c_void_p),
        ("recovered", ctypes.c_void_p),
    ]


class BatchSystem(ctypes.Structure):
    _fields_ = [
        ("count", ctypes.c_size_t),
        ("provider_data", ctypes.c_void_p),
        ("provider_offsets", ctypes.c_void_p),
        ("channel_data", ctypes.c_void_p),
        ("channel_offsets", ctypes.c_void_p),
        ("computer_data", ctypes.c_void_p),
        ("computer_offsets", ctypes.c_void_p),
        ("event_ids", ctypes.c_void_p),
        ("levels", ctypes.c_void_p),
        ("present", ctypes.c_void_p),
    ]


class BatchTexts(ctypes.Structure):
    """`evtx_batch_texts` (`evtx_parser_batch_timestamps`)."""

    _fields_ = [
        ("count", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
        ("offsets", ctypes.c_void_p),
    ]


#: `evtx_batch_system.present` bits.
SYSTEM_PROVIDER, SYSTEM_EVENT_ID, SYSTEM_LEVEL, SYSTEM_CHANNEL, SYSTEM_COMPUTER = 1, 2, 4, 8, 16

ParserHandle = ctypes.c_void_p


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    u32, size = ctypes.c_uint32, ctypes.c_size_t
    lib.evtx_abi_version.restype = u32
    lib.evtx_abi_version.argtypes = []
    lib.evtx_backend_name.restype = ctypes.c_char_p
    lib.evtx_backend_name.argtypes = []
    lib.evtx_backend_version.restype = ctypes.c_char_p
    lib.evtx_backend_version.argtypes = []
    lib.evtx_status_name.restype = ctypes.c_char_p
    lib.evtx_status_name.argtypes = [u32]
    lib.evtx_last_error.restype = ctypes.c_char_p
    lib.evtx_last_error.argtypes = []
    lib.evtx_options_init.restype = None
    lib.evtx_options_init.argtypes = [ctypes.POINTER(Options)]
    lib.evtx_options_init_v1.restype = None
    lib.evtx_options_init_v1.argtypes = [ctypes.POINTER(Options)]
    lib.evtx_parser_open_path.restype = u32
    lib.evtx_parser_open_path.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(Options), ctypes.POINTER(ParserHandle),
    ]
    lib.evtx_parser_open_buffer.restype = u32
    lib.evtx_parser_open_buffer.argtypes = [
        ctypes.c_void_p, size, ctypes.POINTER(Options), ctypes.POINTER(ParserHandle),
    ]
    lib.evtx_parser_next.restype = u32
    lib.evtx_parser_next.argtypes = [ParserHandle, ctypes.POINTER(Record)]
    lib.evtx_parser_next_batch.restype = u32
    lib.evtx_parser_next_batch.argtypes = [ParserHandle, size, size, ctypes.POINTER(Batch)]
    lib.evtx_parser_batch_system.restype = u32
    lib.evtx_parser_batch_system.argtypes = [ParserHandle, ctypes.POINTER(BatchSystem)]
    lib.evtx_parser_batch_timestamps.restype = u32
    lib.evtx_parser_batch_timestamps.argtypes = [ParserHandle, ctypes.POINTER(BatchTexts)]
    lib.evtx_parser_free.restype = None
    lib.evtx_parser_free.argtypes = [ParserHandle]
    # Newer than some builds of a library: declared where the library has it.
    if hasattr(lib, "evtx_triage_path"):
        lib.evtx_triage_path.restype = u32
        lib.evtx_triage_path.argtypes = [
            ctypes.c_char_p, ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p,
        ]
    return lib


def library_dir() -> Path:
    """Where the libraries are: `EVTX_TWIN_LIB_DIR` when set (a build tree's zig-out/lib),
    else the `_lib` folder of the installed package."""
    override = os.environ.get("EVTX_TWIN_LIB_DIR")
    return Path(override) if override else Path(__file__).resolve().parent / "_lib"


_loaded: dict[str, ctypes.CDLL] = {}
_lock = threading.Lock()


def load(engine: str) -> ctypes.CDLL:
    """The library of `engine` ("rust", "zig" or "reference"), loaded once per process."""
    if engine not in LIBRARIES:
        raise ValueError(f"engine must be one of {sorted(LIBRARIES)}, not {engine!r}")
    with _lock:
        lib = _loaded.get(engine)
        if lib is None:
            path = library_dir() / LIBRARIES[engine]
            if not path.is_file():
                raise FileNotFoundError(f"evtx_twin: {path} is missing (was the package built?)")
            lib = _declare(ctypes.CDLL(str(path)))
            version = lib.evtx_abi_version()
            if version != EVTX_ABI_VERSION:
                raise ImportError(
                    f"{path}: C ABI version {version}, evtx_twin expects {EVTX_ABI_VERSION}"
                )
            _loaded[engine] = lib
        return lib


#: The helper that builds the dicts of `records()` / `records_json()` in C (`_records.c`).
RECORDS_LIBRARY = "libevtx_twin_records.so"


def record_dicts():
    """`evtx_twin_record_dicts` of the bundled `RECORDS_LIBRARY` (always the package's own
    `_lib`: it goes with this Python code, not with an engine), or None where it cannot be used:
    not CPython (it calls CPython's stable C API through `ctypes.PyDLL`), or not built. The
    callers then take the Python path, which gives the same dicts (PERF.md P17)."""
    import sys

    if sys.implementation.name != "cpython":
        return None
    path = Path(__file__).resolve().parent / "_lib" / RECORDS_LIBRARY
    try:
        function = ctypes.PyDLL(str(path)).evtx_twin_record_dicts
    except (OSError, AttributeError):
        return None
    obj, ssize = ctypes.py_object, ctypes.c_ssize_t
    # data: a bytes object (its buffer is passed, not copied) or the library's buffer address.
    function.argtypes = (
        [obj, obj, ssize, ssize, ssize, ctypes.c_void_p, ssize] + [obj] * 7 + [ssize]
    )
    function.restype = obj
    return function
