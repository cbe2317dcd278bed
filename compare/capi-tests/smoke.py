"""The C ABI from Python ctypes, as an embedder without a C compiler would use it.

    python3 smoke.py LIBRARY.so [FILE.evtx ...]

Mirrors the structs of include/evtx.h with ctypes (fixed-width fields, so no guessing), checks
their sizes against the header's layout rules, opens each file from a Python buffer without a
copy, pulls every record, dumps the same input through a Python write callback, and checks that
both give the same bytes. Ends with "smoke.py: N passed, N failed".
"""

import ctypes as C
import sys

EVTX_STATUS_OK, EVTX_STATUS_END, EVTX_STATUS_NOT_EVTX = 0, 1, 6
EVTX_STATUS_INCOMPLETE_CHUNK = 16
EVTX_FORMAT_JSONL = 2


class Options(C.Structure):
    """`evtx_options` version 0, as the header declared it before the filters (56 bytes): a
    client built then, held to keep working (`evtx_options_init` writes only these bytes)."""

    _fields_ = [
        ("format", C.c_uint32),
        ("threads", C.c_uint32),
        ("indent", C.c_uint8),
        ("separate_json_attributes", C.c_uint8),
        ("show_record_number", C.c_uint8),
        ("validate_checksums", C.c_uint8),
        ("recover_records", C.c_uint8),
        ("stop_after_error", C.c_uint8),
        ("reserved", C.c_uint8 * 2),
        ("ansi_codec", C.c_char_p),
        ("event_ranges", C.c_void_p),
        ("event_ranges_count", C.c_size_t),
        ("mta_path", C.c_char_p),
        ("wevt_cache_path", C.c_char_p),
    ]


class Record(C.Structure):
    _fields_ = [
        ("data", C.POINTER(C.c_uint8)),
        ("data_len", C.c_size_t),
        ("record_id", C.c_uint64),
        ("filetime", C.c_uint64),
        ("file_offset", C.c_uint64),
        ("chunk_index", C.c_uint32),
        ("status", C.c_uint32),
        ("message", C.c_char_p),
        ("recovered", C.c_uint8),
    ]


class Stats(C.Structure):
    _fields_ = [
        ("records_ok", C.c_uint64),
        ("records_failed", C.c_uint64),
        ("bytes_written", C.c_uint64),
    ]


WRITE_FN = C.CFUNCTYPE(C.c_int32, C.c_void_p, C.POINTER(C.c_uint8), C.c_size_t)
ERROR_FN = C.CFUNCTYPE(C.c_int32, C.c_void_p, C.POINTER(Record))

passed = failed = 0


def check(condition, what):
    global passed, failed
    if condition:
        passed += 1
    else:
        failed += 1
        print(f"smoke.py: FAIL {what}", file=sys.stderr)


def load(path):
    lib = C.CDLL(path)
    lib.evtx_backend_name.restype = C.c_char_p
    lib.evtx_backend_version.restype = C.c_char_p
    lib.evtx_status_name.restype = C.c_char_p
    lib.evtx_status_name.argtypes = [C.c_uint32]
    lib.evtx_last_error.restype = C.c_char_p
    lib.evtx_options_init.argtypes = [C.POINTER(Options)]
    lib.evtx_parser_open_buffer.argtypes = [
        C.c_void_p, C.c_size_t, C.POINTER(Options), C.POINTER(C.c_void_p)]
    lib.evtx_parser_open_buffer.restype = C.c_uint32
    lib.evtx_parser_next.argtypes = [C.c_void_p, C.POINTER(Record)]
    lib.evtx_parser_next.restype = C.c_uint32
    lib.evtx_parser_dump.argtypes = [
        C.c_void_p, WRITE_FN, ERROR_FN, C.c_void_p, C.POINTER(Stats)]
    lib.evtx_parser_dump.restype = C.c_uint32
    lib.evtx_parser_free.argtypes = [C.c_void_p]
    lib.evtx_parser_free.restype = None
    return lib


def open_buffer(lib, buffer, options):
    parser = C.c_void_p()
    address = C.addressof(buffer)
    status = lib.evtx_parser_open_buffer(address, len(buffer), C.byref(options), C.byref(parser))
    return status, parser


def check_file(lib, path):
    with open(path, "rb") as file:
        data = file.read()
    buffer = (C.c_uint8 * len(data)).from_buffer_copy(data)  # kept alive until the frees
    options = Options()
    lib.evtx_options_init(C.byref(options))
    options.format = EVTX_FORMAT_JSONL
    options.threads = 1

    status, parser = open_buffer(lib, buffer, options)
    if status == EVTX_STATUS_NOT_EVTX:
        check(not parser.value, f"{path}: no handle on failure")
        return
    check(status == EVTX_STATUS_OK, f"{path}: open: {lib.evtx_last_error()!r}")
    pulled, records, errors = bytearray(), 0, 0
    record = Record()
    while True:
        status = lib.evtx_parser_next(parser, C.byref(record))
        if status == EVTX_STATUS_OK:
            records += 1
            pulled += C.string_at(record.data, record.data_len)
        elif status == EVTX_STATUS_END:
            break
        elif status >= EVTX_STATUS_INCOMPLETE_CHUNK:
            errors += 1
            check(record.message is not None, f"{path}: error record without a message")
        else:
            check(False, f"{path}: next: {lib.evtx_status_name(status)!r}")
            break
    lib.evtx_parser_free(parser)

    pushed = bytearray()
    failures = []

    def write(_user, data, length):
        pushed.extend(C.string_at(data, length))
        return 0

    def on_error(_user, failed_record):
        failures.append(failed_record.contents.status)
        return 0

    status, parser = open_buffer(lib, buffer, options)
    stats = Stats()
    status = lib.evtx_parser_dump(parser, WRITE_FN(write), ERROR_FN(on_error), None, C.byref(stats))
    lib.evtx_parser_free(parser)
    check(status == EVTX_STATUS_OK, f"{path}: dump: {lib.evtx_status_name(status)!r}")
    check(bytes(pushed) == bytes(pulled), f"{path}: pushed bytes differ from pulled bytes")
    check((stats.records_ok, stats.records_failed) == (records, errors), f"{path}: counts")
    check(len(failures) == errors, f"{path}: error callback count")
    check(stats.bytes_written == len(pushed), f"{path}: bytes_written")
    print(f"smoke.py: {path}: {records} records, {errors} errors, {len(pushed)} bytes")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    lib = load(sys.argv[1])
    # The layout rules of the header: 64-bit targets, fixed-width fields.
    check(C.sizeof(Options) == 56, "sizeof(evtx_options)")
    check(C.sizeof(Record) == 64, "sizeof(evtx_record)")
    check(C.sizeof(Stats) == 24, "sizeof(evtx_stats)")
    check(lib.evtx_abi_version() == 3, "evtx_abi_version")
    name = lib.evtx_backend_name().decode()
    check(name in ("rust", "zig", "reference"), "backend name")
    check(lib.evtx_status_name(17) == b"bad chunk magic", "status name")
    options = Options()
    lib.evtx_options_init(C.byref(options))
    check((options.format, options.indent, options.show_record_number) == (0, 1, 1), "defaults")
    empty = (C.c_uint8 * 1)()
    parser = C.c_void_p()
    status = lib.evtx_parser_open_buffer(C.addressof(empty), 0, None, C.byref(parser))
    check(status == EVTX_STATUS_NOT_EVTX, "empty buffer")
    lib.evtx_parser_free(None)
    print(f"smoke.py: backend {name} {lib.evtx_backend_version().decode()}")
    for path in sys.argv[2:]:
        check_file(lib, path)
    print(f"smoke.py: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
