/*
 * evtx.h - the C ABI of evtx-twin, shared by three libraries:
 *   libevtx_rs (Rust engine), libevtx_zig (Zig engine), libevtx_ref (evtx 0.15.1, reference).
 *
 * Handles are opaque; every function accepts NULL pointers (returning EVTX_STATUS_NULL_ARGUMENT
 * or doing nothing); every handle has a free function that accepts NULL. The rendered bytes of a
 * record are exactly what the CLI prints for it on stdout, so the concatenated output of
 * evtx_parser_dump equals the CLI's stdout for the same options.
 *
 * Pull:  evtx_options_init(&o); evtx_parser_open_path(path, &o, &p);
 *        while ((s = evtx_parser_next(p, &r)) != EVTX_STATUS_END) { if (s == EVTX_STATUS_OK) ...
 *          else if (s < EVTX_STATUS_INCOMPLETE_CHUNK) break; }  evtx_parser_free(p);
 * Push:  evtx_parser_dump(p, write_cb, error_cb_or_NULL, user_data, &stats);
 */

#ifndef EVTX_H
#define EVTX_H

/* Generated with cbindgen:0.29.4 */

/* Generated from rust/capi and rust/evtx-abi by cbindgen; do not edit. Regenerate: zig/zigw build header */

#include <stddef.h>
#include <stdint.h>

// The version of this ABI. It changes whenever a function, type, field or constant changes
// incompatibly; `evtx_abi_version()` returns the value the library was built with.
#define EVTX_ABI_VERSION 3

// `evtx_record.record_id` of a chunk error: no record identifier is known.
#define EVTX_RECORD_ID_UNKNOWN UINT64_MAX

// `evtx_record.checksum`: the chunk's CRC32s were not checked (no `validate_checksums`, a
// chunk that keeps none, the cut last chunk, an error entry, or a library that cannot tell).
#define EVTX_CHECKSUM_UNCHECKED 0

// `evtx_record.checksum`: the chunk's header and records CRC32s match.
#define EVTX_CHECKSUM_OK 1

// `evtx_record.checksum`: one of the chunk's CRC32s does not match.
#define EVTX_CHECKSUM_BAD 2

// `evtx_options.version` of the struct that ends at `wevt_cache_path`, the layout before the
// filters (what `evtx_options_init` writes, and what a caller built against that header has).
#define EVTX_OPTIONS_VERSION_0 0

// `evtx_options.version` of the whole struct, the filters included (what
// `evtx_options_init_v1` writes). The newest version this library reads.
#define EVTX_OPTIONS_VERSION_1 1

// `evtx_batch_system.present` bit: the entry has a provider name.
#define EVTX_SYSTEM_PROVIDER 1

// `evtx_batch_system.present` bit: the entry has an event identifier.
#define EVTX_SYSTEM_EVENT_ID 2

// `evtx_batch_system.present` bit: the entry has a level.
#define EVTX_SYSTEM_LEVEL 4

// `evtx_batch_system.present` bit: the entry has a channel.
#define EVTX_SYSTEM_CHANNEL 8

// `evtx_batch_system.present` bit: the entry has a computer name.
#define EVTX_SYSTEM_COMPUTER 16

// Worker threads at most: each holds a 64 KiB window and a renderer, and more than this
// cannot be kept busy by one ordered consumer.
#define EVTX_LIMIT_THREADS 256

// Rendered bytes of one record past which it fails (contract 12): real records render to a
// few KiB; a crafted one can repeat a value at every level and grow exponentially.
#define EVTX_LIMIT_RECORD_OUTPUT_BYTES (16 << 20)

// Rendered bytes of one chunk past which its records fail (contract 12): a chunk's output is
// held until its last record, and its records share templates that each render near the
// record limit.
#define EVTX_LIMIT_CHUNK_OUTPUT_BYTES (64 << 20)

// Tree nodes one record may build (contract 12): instances copy their templates, so a small
// record can build a tree far larger than itself.
#define EVTX_LIMIT_RECORD_NODES (1 << 18)

// Open elements in one BinXML stream (contract 6.6), as the reference: deeper fails the record.
#define EVTX_LIMIT_ELEMENT_DEPTH 512

// Nested BinXML streams (values and instances inside values, contract 6.6), as the reference.
#define EVTX_LIMIT_STREAM_NESTING 64

// Elements the renderers nest, recursing once per level, across nested streams: the
// reference's tree walkers' cap (its `MAX_RENDER_DEPTH`, equal to the element depth), so the
// stack stays bounded whatever a crafted record nests.
#define EVTX_LIMIT_RENDER_DEPTH 512

// Compiled record programs one renderer keeps across chunks. When full, new shapes are
// refused (rendered the slow way) and the programs kept stay: the reference's cross-chunk
// program store also refuses when full, and the first shapes of a log are its common ones.
#define EVTX_LIMIT_PROGRAMS 8192

// Bytes of those programs (literal bytes plus 8 per operation), refused past it as above.
#define EVTX_LIMIT_PROGRAM_BYTES (32 << 20)

// Substitution values a template instance may declare: the reference's preflight limit, so
// an instance declaring more fails its record as the reference fails it.
#define EVTX_LIMIT_INSTANCE_VALUES 4096

// Substitution values one compiled program reads: one instance's cap
// (`EVTX_LIMIT_INSTANCE_VALUES`). A record with more (nested instances) renders the slow way,
// to the same bytes.
#define EVTX_LIMIT_PROGRAM_VALUES 4096

// Array items one program's signature describes one by one (the Zig engine keeps their
// emptiness in a 64-bit mask). A longer array renders the slow way, to the same bytes.
#define EVTX_LIMIT_PROGRAM_ARRAY_ITEMS 64

// Nested BinXML values whose failure is deferred until the template uses them (the
// reference's compiled path reads only the values a template uses), as deep as that path
// follows them.
#define EVTX_LIMIT_DEFER_DEPTH 8

// Result of every `evtx_*` function that can fail, and the status of a pulled record.
//
// `EVTX_STATUS_OK` and `EVTX_STATUS_END` are not errors. The values from
// `EVTX_STATUS_INCOMPLETE_CHUNK` on are per-chunk or per-record errors (the KINDs of
// `shared-fixtures/README.md`; `evtx_status_name` returns the KIND string): the input goes on
// after them. The values in between are failures of the call itself.
enum evtx_status
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // Success: a record was rendered, or the call did what it says.
  EVTX_STATUS_OK = 0,
  // `evtx_parser_next`: there are no more records.
  EVTX_STATUS_END = 1,
  // A required pointer argument was NULL.
  EVTX_STATUS_NULL_ARGUMENT = 2,
  // An option is out of range: unknown format, unknown or non-ASCII-compatible ANSI code
  // page label, `event_ranges` NULL with a non-zero count, non-zero `reserved` bytes, a
  // `version` newer than the library's, a bad filter (a list NULL with a non-zero count, a
  // range whose `first` is greater than its `last`, a NULL, empty or non-UTF-8 name,
  // `since` not before `until`), a damaged `mta_path` or `wevt_cache_path` file.
  EVTX_STATUS_INVALID_OPTIONS = 3,
  // An option the backend does not implement (for example `recover_records`).
  EVTX_STATUS_UNSUPPORTED = 4,
  // The path (or `mta_path`, `wevt_cache_path`) could not be opened or read. The message
  // names the OS error.
  EVTX_STATUS_IO = 5,
  // Not an EVTX file: shorter than the 4096-byte file header, or its magic is not
  // `ElfFile\0`. Fatal, as for the CLI (exit status 1).
  EVTX_STATUS_NOT_EVTX = 6,
  // `evtx_parser_dump`: a callback returned non-zero, so the dump stopped.
  EVTX_STATUS_CALLBACK_ABORTED = 7,
  // The parser is in a state that does not allow the call (a dump after a failed dump, a
  // pull after the parser failed fatally).
  EVTX_STATUS_BAD_STATE = 8,
  // The backend panicked or failed internally; the handle must only be freed.
  EVTX_STATUS_INTERNAL = 9,
  // The backend does not implement this function yet.
  EVTX_STATUS_NOT_IMPLEMENTED = 10,
  // A chunk slot inside the file shorter than 65536 bytes.
  EVTX_STATUS_INCOMPLETE_CHUNK = 16,
  // Chunk magic is not `ElfChnk\0`.
  EVTX_STATUS_BAD_CHUNK_MAGIC = 17,
  // `validate_checksums`: the chunk header CRC does not match.
  EVTX_STATUS_BAD_CHUNK_HEADER_CHECKSUM = 18,
  // `validate_checksums`: the free space offset is outside 512..=65536.
  EVTX_STATUS_BAD_CHUNK_FREE_SPACE_OFFSET = 19,
  // `validate_checksums`: the records CRC does not match.
  EVTX_STATUS_BAD_CHUNK_RECORDS_CHECKSUM = 20,
  // The chunk's string table cannot be read.
  EVTX_STATUS_BAD_STRING_TABLE = 21,
  // Record magic is not `**\0\0`.
  EVTX_STATUS_BAD_RECORD_MAGIC = 22,
  // Fewer than 24 bytes left in the chunk for a record header.
  EVTX_STATUS_TRUNCATED_RECORD_HEADER = 23,
  // The record's FILETIME is beyond year 9999.
  EVTX_STATUS_BAD_RECORD_TIMESTAMP = 24,
  // Record size < 28, or the record would pass the chunk end.
  EVTX_STATUS_BAD_RECORD_SIZE = 25,
  // Any BinXML parse or render error of the record.
  EVTX_STATUS_BAD_BINXML = 26,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum evtx_status evtx_status;
#else
typedef uint32_t evtx_status;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// Output format, as `-o` of the CLI.
enum evtx_format
#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L
  : uint32_t
#endif // defined(__cplusplus) || __STDC_VERSION__ >= 202311L
 {
  // `-o xml`: `Record N` banner, indented XML, blank line between records.
  EVTX_FORMAT_XML = 0,
  // `-o json`: `Record N` banner, compact JSON, one record per line.
  EVTX_FORMAT_JSON = 1,
  // `-o jsonl`: JSON without banner; `indent` and `show_record_number` are ignored.
  EVTX_FORMAT_JSONL = 2,
};
#ifndef __cplusplus
#if __STDC_VERSION__ >= 202311L
typedef enum evtx_format evtx_format;
#else
typedef uint32_t evtx_format;
#endif // __STDC_VERSION__ >= 202311L
#endif // __cplusplus

// A parser over one EVTX input, with its options. Opaque: made by `evtx_parser_open_path` or
// `evtx_parser_open_buffer`, released by `evtx_parser_free`. One thread at a time may use it;
// different parsers are independent.
typedef struct evtx_parser evtx_parser;

// One inclusive range of record header identifiers (`--events=first-last`).
typedef struct evtx_event_range {
  uint64_t first;
  uint64_t last;
} evtx_event_range;

// One inclusive range of `System/EventID` or `System/Level` values (`--event-id`, `--level`
// `first-last`; a single value is `first == last`).
typedef struct evtx_value_range {
  uint32_t first;
  uint32_t last;
} evtx_value_range;

// How to render, mirroring the CLI's options. Always start from `evtx_options_init_v1` (or
// `evtx_options_init`, see `version`), then change fields: a zeroed struct is not the
// default (indent and banner would be off).
//
// The flags are `uint8_t` 0/1 and the enums are `uint32_t`, so the layout is the same in C,
// Zig, ctypes and cgo. A flag other than 0 counts as set.
//
// Versions: the struct only grows at its end, and `version` says how much of it the caller
// has. Version 0 ends at `wevt_cache_path` (the layout before the filters): a library never
// reads or writes past it, so a program built against that header keeps working unchanged.
// Version 1 adds the record filters (`event_ids` to `until_set`). A version newer than the
// library's is `EVTX_STATUS_INVALID_OPTIONS`.
typedef struct evtx_options {
  // An `evtx_format` value. Default `EVTX_FORMAT_XML`.
  uint32_t format;
  // Worker threads; 0 = one per CPU (default). The output does not depend on it.
  uint32_t threads;
  // XML indentation (off = `--no-indent`). Default 1. No effect on JSON.
  uint8_t indent;
  // `--separate-json-attributes`. Default 0. No effect on XML.
  uint8_t separate_json_attributes;
  // Print the `Record N` banner (off = `--dont-show-record-number`). Default 1.
  uint8_t show_record_number;
  // `--validate-checksums`: chunks failing a CRC check are errors. Default 0.
  uint8_t validate_checksums;
  // `--recover-records`: also render records carved from unallocated chunk space (cleared
  // chunks, chunk slack); they come with `evtx_record.recovered` set. Default 0.
  uint8_t recover_records;
  // `--stop-after-one-error`: `evtx_parser_dump` stops at the first chunk or record error
  // and returns its status. Default 0. No effect on `evtx_parser_next`.
  uint8_t stop_after_error;
  // `EVTX_OPTIONS_VERSION_0` or `EVTX_OPTIONS_VERSION_1`: which fields follow
  // `wevt_cache_path` (none in version 0). Set by the init function, left as it is. It was
  // the first of two reserved zero bytes, so callers from before it say version 0.
  uint8_t version;
  // Must be zero.
  uint8_t reserved;
  // `--ansi-codec`: a NUL-terminated WHATWG encoding label for AnsiString values; it must
  // be ASCII-compatible. NULL = `windows-1252` (default). Copied at open.
  const char *ansi_codec;
  // `--events`: render only records whose header identifier is in one of these inclusive
  // ranges; errors are still reported for the others. NULL with count 0 = every record
  // (default). Copied at open.
  const struct evtx_event_range *event_ranges;
  // Number of entries in `event_ranges`.
  size_t event_ranges_count;
  // `--mta`: the NUL-terminated path of an `.MTA` file (`LocaleMetaData\<log>_<LCID>.MTA`);
  // records whose publisher it lists get a `RenderingInfo` element. NULL = none (default).
  // Read at open, after the input's file header: an unreadable file fails the open with
  // `EVTX_STATUS_IO`, a damaged one with `EVTX_STATUS_INVALID_OPTIONS`, the message being
  // the CLI's error text.
  const char *mta_path;
  // `--wevt-cache`: the NUL-terminated path of a `.wevtcache` (`extract-wevt-templates`);
  // records whose embedded template is missing or broken are rendered from it. NULL = none
  // (default). Read at open, before `mta_path`, failing as it does.
  const char *wevt_cache_path;
  // Version 1. `--event-id`: render only records whose `System/EventID` is in one of these
  // ranges (the rules of `shared-fixtures/README.md`, "Filters", as for the CLIs; every
  // filter is decided by the engine before rendering, AND between filters and with
  // `event_ranges`, OR inside one). NULL with count 0 = no constraint (default). Errors
  // are still reported for the records a filter drops. Copied at open.
  const struct evtx_value_range *event_ids;
  // Number of entries in `event_ids`.
  size_t event_ids_count;
  // Version 1. `--level`: `System/Level` in one of these ranges, as `event_ids`.
  const struct evtx_value_range *levels;
  // Number of entries in `levels`.
  size_t levels_count;
  // Version 1. `--provider`: `System/Provider/@Name` equal to one of these NUL-terminated
  // UTF-8 names, whole, ASCII letters case-insensitive. NULL with count 0 = no constraint
  // (default). Copied at open.
  const char *const *providers;
  // Number of entries in `providers`.
  size_t providers_count;
  // Version 1. `--channel`: `System/Channel`, as `providers`.
  const char *const *channels;
  // Number of entries in `channels`.
  size_t channels_count;
  // Version 1. `--since`: `System/TimeCreated/@SystemTime` at or after this FILETIME
  // (100 ns ticks since 1601-01-01 UTC), when `since_set`.
  uint64_t since;
  // Version 1. `--until`: `System/TimeCreated/@SystemTime` before this FILETIME, when
  // `until_set`. With both set, `since` must be less than `until`.
  uint64_t until;
  // Version 1. Whether `since` constrains. Default 0.
  uint8_t since_set;
  // Version 1. Whether `until` constrains. Default 0.
  uint8_t until_set;
  // Version 1. Must be zero.
  uint8_t reserved_v1[6];
} evtx_options;

// One pulled record, filled by `evtx_parser_next`. Every pointer in it stays valid until the
// next call on the same parser (or its free).
typedef struct evtx_record {
  // The rendered bytes: exactly what the CLI prints on stdout for this record (banner when
  // shown, the text, its trailing newline(s)). NULL when `status` is not OK.
  const uint8_t *data;
  // Number of bytes at `data`; 0 when `status` is not OK.
  size_t data_len;
  // The record header's identifier, or `EVTX_RECORD_ID_UNKNOWN` for chunk errors and
  // records whose header could not be read.
  uint64_t record_id;
  // The record header's FILETIME (100 ns since 1601-01-01 UTC); 0 when unknown.
  uint64_t filetime;
  // File offset of the record's first byte, or of the chunk for chunk errors.
  uint64_t file_offset;
  // The chunk's slot number in the file, 0-based.
  uint32_t chunk_index;
  // An `evtx_status`: `EVTX_STATUS_OK` for a rendered record, else the error KIND.
  uint32_t status;
  // NUL-terminated error detail (backend-specific); "" when OK. Never NULL after a call
  // that returned OK or an error KIND.
  const char *message;
  // 1 when the record was carved from unallocated chunk space (`recover_records`), else 0
  // (always 0 when `status` is not OK).
  uint8_t recovered;
  // An `EVTX_CHECKSUM_*` value: the CRC32 status of the record's chunk, checked with
  // `validate_checksums` (`EVTX_CHECKSUM_UNCHECKED` otherwise, and when `status` is not
  // OK). Added in the struct's padding after `recovered`: its size and every other field's
  // offset are those of the ABI before it, so callers built before it are unaffected.
  uint8_t checksum;
} evtx_record;

// Many pulled entries at once, filled by `evtx_parser_next_batch`, as columns (struct of
// arrays), so a binding (Python, Arrow) takes whole columns without one call per record.
// Every pointer in it stays valid until the next call on the same parser (or its free).
typedef struct evtx_batch {
  // Number of entries: rendered records and chunk/record errors, in output order.
  size_t count;
  // The bytes of every entry back to back: a record's rendered bytes (as
  // `evtx_record.data`), an error's message (as `evtx_record.message`, without its NUL).
  const uint8_t *data;
  // `count + 1` offsets into `data`, starting at 0: entry `i` is
  // `data[offsets[i]..offsets[i + 1]]`.
  const uint64_t *offsets;
  // `count` record identifiers, as `evtx_record.record_id`.
  const uint64_t *record_ids;
  // `count` FILETIMEs, as `evtx_record.filetime`.
  const uint64_t *filetimes;
  // `count` file offsets, as `evtx_record.file_offset`.
  const uint64_t *file_offsets;
  // `count` chunk slot numbers, as `evtx_record.chunk_index`.
  const uint32_t *chunk_indexes;
  // `count` statuses, as `evtx_record.status`.
  const uint32_t *statuses;
  // `count` carved flags, as `evtx_record.recovered`.
  const uint8_t *recovered;
} evtx_batch;

// The System fields of the entries of the last `evtx_batch`, as columns, filled by
// `evtx_parser_batch_system`: what `Event.System` of each record's JSON holds, read from the
// rendered text (`Provider.#attributes.Name` or `Provider_attributes.Name`, `EventID` or
// `EventID.#text`, `Level`, `Channel`, `Computer`). Strings are UTF-8, JSON-unescaped. A
// field that is missing, not of its type or out of range (event id past `UINT32_MAX`, level
// past 255) is absent: its `present` bit is 0, its string empty, its number 0. Error entries
// have every field absent. Every pointer stays valid until the next call on the same parser.
typedef struct evtx_batch_system {
  // Number of entries, `count` of the batch.
  size_t count;
  // Provider names back to back; entry `i` is
  // `provider_data[provider_offsets[i]..provider_offsets[i + 1]]`.
  const uint8_t *provider_data;
  // `count + 1` offsets into `provider_data`, starting at 0.
  const uint64_t *provider_offsets;
  // Channels, as `provider_data`.
  const uint8_t *channel_data;
  // `count + 1` offsets into `channel_data`, starting at 0.
  const uint64_t *channel_offsets;
  // Computer names, as `provider_data`.
  const uint8_t *computer_data;
  // `count + 1` offsets into `computer_data`, starting at 0.
  const uint64_t *computer_offsets;
  // `count` event identifiers.
  const uint32_t *event_ids;
  // `count` levels.
  const uint8_t *levels;
  // `count` sets of `EVTX_SYSTEM_*` bits: which fields the entry has.
  const uint8_t *present;
} evtx_batch_system;

// One text per entry of the last `evtx_batch`, filled by `evtx_parser_batch_timestamps`:
// each record's FILETIME as pyevtx-rs 0.14 gives `timestamp`, RFC 3339 in UTC with the 100 ns
// ticks, trailing zeros trimmed (no `.` when they are 0), then `Z UTC`
// (`2025-01-06T07:58:14.6210546Z UTC`). The text is empty for an error entry, a FILETIME of 0
// or a year past 9999. Every pointer stays valid until the next call on the same parser.
typedef struct evtx_batch_texts {
  // Number of entries, `count` of the batch.
  size_t count;
  // The texts back to back (ASCII); entry `i` is `data[offsets[i]..offsets[i + 1]]`.
  const uint8_t *data;
  // `count + 1` offsets into `data`, starting at 0.
  const uint64_t *offsets;
} evtx_batch_texts;

// Receives rendered bytes, in output order. `data` is valid only during the call. Return 0 to
// go on, anything else to stop the dump (`EVTX_STATUS_CALLBACK_ABORTED`). The bytes of one
// record are never split across calls, but one call may carry many records.
typedef int32_t (*evtx_write_fn)(void *user_data, const uint8_t *data, size_t len);

// Receives each chunk or record error in output order (`record.data` is NULL). `record` is
// valid only during the call. Return 0 to go on, anything else to stop the dump.
typedef int32_t (*evtx_error_fn)(void *user_data, const struct evtx_record *record);

// Totals of one `evtx_parser_dump`.
typedef struct evtx_stats {
  // Records rendered and written (after the event-range filter).
  uint64_t records_ok;
  // Chunk and record errors (each reported once, as the CLI prints one error each).
  uint64_t records_failed;
  // Bytes passed to the write callback.
  uint64_t bytes_written;
} evtx_stats;

#ifdef __cplusplus
extern "C" {
#endif // __cplusplus

// The ABI version the library implements (`EVTX_ABI_VERSION` of its header).
uint32_t evtx_abi_version(void);

// The backend's name: `"rust"`, `"zig"` or `"reference"`. A static string.
const char *evtx_backend_name(void);

// The backend's version, such as `"0.1.0"` (the reference: the evtx crate's, `"0.15.1"`).
// A static string.
const char *evtx_backend_version(void);

// A static, NUL-terminated name for `status`: for error KINDs the exact KIND string of
// `shared-fixtures/README.md` (`"bad chunk magic"`), otherwise a short phrase; `"unknown
// status"` for values that are not an `evtx_status`.
const char *evtx_status_name(uint32_t status);

// The detail of the last call on this thread that failed (open, next, dump), NUL-terminated;
// `""` before any failure. Valid until the next failing call on this thread.
const char *evtx_last_error(void);

// The CLI's defaults as `evtx_options` version 0: XML, indented, with `Record N` banners,
// one thread per CPU, windows-1252, every record, `version` 0. Writes only the fields of
// version 0 (up to `wevt_cache_path`), so a program built against the header before the
// filters keeps working; a program that sets the filters calls `evtx_options_init_v1`.
// Does nothing when `options` is NULL.
//
// # Safety
// `options` is NULL or points to writable memory for one version 0 `evtx_options` (the
// bytes up to the end of `wevt_cache_path`).
void evtx_options_init(struct evtx_options *options);

// The CLI's defaults as `evtx_options` version 1: those of `evtx_options_init`, no filter,
// `version` `EVTX_OPTIONS_VERSION_1`. Does nothing when `options` is NULL.
//
// # Safety
// `options` is NULL or points to writable memory for one whole `evtx_options`.
void evtx_options_init_v1(struct evtx_options *options);

// Opens the EVTX file at `path` (NUL-terminated, UTF-8 or the platform's bytes) with
// `options` (NULL = defaults). On success `*out` is a new parser to release with
// `evtx_parser_free`; on failure `*out` is NULL and `evtx_last_error()` tells why
// (`EVTX_STATUS_IO`, `EVTX_STATUS_NOT_EVTX`, `EVTX_STATUS_INVALID_OPTIONS`, ...).
//
// # Safety
// `path` is NULL or NUL-terminated; `options` is NULL or a valid `evtx_options` (see its
// fields); `out` is NULL or valid for one pointer write.
evtx_status evtx_parser_open_path(const char *path,
                                  const struct evtx_options *options,
                                  struct evtx_parser **out);

// Opens the EVTX file held in `data[0..len]`, without copying it: the buffer must stay
// unchanged and alive until `evtx_parser_free`. `options` and `out` as for
// `evtx_parser_open_path`. An empty buffer is `EVTX_STATUS_NOT_EVTX`.
//
// # Safety
// `data` is NULL or valid for `len` reads until the parser is freed, and not written to
// meanwhile; `options` and `out` as for `evtx_parser_open_path`.
evtx_status evtx_parser_open_buffer(const uint8_t *data,
                                    size_t len,
                                    const struct evtx_options *options,
                                    struct evtx_parser **out);

// Pulls the next record in output order into `*record` and returns its status:
// `EVTX_STATUS_OK` (rendered; `data`/`data_len` hold the CLI's bytes for it), an error KIND
// (`EVTX_STATUS_BAD_CHUNK_MAGIC` ... `EVTX_STATUS_BAD_BINXML`: a chunk or record failed,
// metadata and `message` say where; call again to go on), `EVTX_STATUS_END`, or a failure
// of the call (`EVTX_STATUS_NULL_ARGUMENT`, `EVTX_STATUS_INTERNAL`, `EVTX_STATUS_BAD_STATE`).
// Records outside the event ranges are skipped; errors are not. `*record` and what it points
// to are valid until the next call on this parser.
//
// # Safety
// `parser` is NULL or a live handle from an open function, not used by another thread during
// the call; `record` is NULL or valid for one `evtx_record` write.
evtx_status evtx_parser_next(struct evtx_parser *parser, struct evtx_record *record);

// Pulls up to `max_entries` entries (records and errors, as `evtx_parser_next` yields them one
// by one) into `*batch`, stopping early once the rendered bytes reach `max_bytes` (0 = no
// byte limit); at least one entry when any is left. Returns `EVTX_STATUS_OK` with
// `batch->count > 0`, `EVTX_STATUS_END` with `batch->count == 0` when the input is done, or a
// failure of the call (`EVTX_STATUS_NULL_ARGUMENT`, `EVTX_STATUS_INTERNAL`,
// `EVTX_STATUS_BAD_STATE`); a fatal failure met after some entries were taken is returned by
// the next call. Chunk and record errors are entries, not failures. Records outside the event
// ranges are skipped; errors are not. `max_entries` 0 counts as 1. `*batch` and what it
// points to are valid until the next call on this parser.
//
// # Safety
// `parser` as for `evtx_parser_next`; `batch` is NULL or valid for one `evtx_batch` write.
evtx_status evtx_parser_next_batch(struct evtx_parser *parser,
                                   size_t max_entries,
                                   size_t max_bytes,
                                   struct evtx_batch *batch);

// Fills `*system` with the System fields (provider, event id, level, channel, computer) of
// the entries of the last `evtx_parser_next_batch`, read from their rendered JSON (see
// `evtx_batch_system`), so a binding gets typed columns without searching the texts itself.
// Returns `EVTX_STATUS_OK` (`system->count` is the batch's `count`, 0 before any batch or
// after `EVTX_STATUS_END`), `EVTX_STATUS_UNSUPPORTED` when the format is XML, or
// `EVTX_STATUS_NULL_ARGUMENT`. `*system` and what it points to are valid until the next call
// on this parser.
//
// # Safety
// `parser` as for `evtx_parser_next`; `system` is NULL or valid for one `evtx_batch_system`
// write.
evtx_status evtx_parser_batch_system(struct evtx_parser *parser, struct evtx_batch_system *system);

// Fills `*texts` with the timestamp text of each entry of the last `evtx_parser_next_batch`
// (see `evtx_batch_texts`: pyevtx-rs's `timestamp`, empty for an error entry, a FILETIME of 0
// or a year past 9999), so a binding does not format FILETIMEs itself. Any output format.
// Returns `EVTX_STATUS_OK` (`texts->count` is the batch's `count`, 0 before any batch or after
// `EVTX_STATUS_END`) or `EVTX_STATUS_NULL_ARGUMENT`. `*texts` and what it points to are valid
// until the next call on this parser.
//
// # Safety
// `parser` as for `evtx_parser_next`; `texts` is NULL or valid for one `evtx_batch_texts`
// write.
evtx_status evtx_parser_batch_timestamps(struct evtx_parser *parser,
                                         struct evtx_batch_texts *texts);

// Renders every record not pulled yet into `write`, in output order: the concatenated bytes
// equal the CLI's stdout for the same options. Chunk and record errors go to `on_error`
// (may be NULL) and are counted; they do not fail the dump unless `stop_after_error` is set
// (then their status is returned). Returns `EVTX_STATUS_OK` when the input is done,
// `EVTX_STATUS_CALLBACK_ABORTED` when a callback returned non-zero. `*stats` (may be NULL)
// receives the totals in every case.
//
// # Safety
// `parser` as for `evtx_parser_next`; `write` and `on_error` are safe to call with
// `user_data` from this thread; `stats` is NULL or valid for one `evtx_stats` write.
evtx_status evtx_parser_dump(struct evtx_parser *parser,
                             evtx_write_fn write,
                             evtx_error_fn on_error,
                             void *user_data,
                             struct evtx_stats *stats);

// Releases a parser and everything it holds. NULL is ignored.
//
// # Safety
// `parser` is NULL or a handle from an open function that has not been freed yet.
void evtx_parser_free(struct evtx_parser *parser);

// Writes the triage report of the EVTX file at `path` through `write`, in one call: the JSON
// object of one file of `triage --json`'s `files` (compact, no newline; the contract is
// `shared-fixtures/README.md`, "Triage"). The log is read as the jsonl dump with
// `recover_records` reads it with one thread; `silence_seconds` (1 to 315360000, the CLI's
// `--silence`, 3600 by default there) is the gap between two records' times that counts as a
// silence. Returns `EVTX_STATUS_OK`; for an input that cannot be read the status
// `evtx_parser_open_path` gives (`EVTX_STATUS_IO`, `EVTX_STATUS_NOT_EVTX`, the detail in
// `evtx_last_error`) and nothing is written; `EVTX_STATUS_INVALID_OPTIONS` for
// `silence_seconds` out of range; `EVTX_STATUS_CALLBACK_ABORTED` when `write` returned
// non-zero; `EVTX_STATUS_NOT_IMPLEMENTED` from a library without triage (the reference's).
//
// # Safety
// `path` is NULL or a NUL-terminated string; `write` is safe to call with `user_data` from
// this thread.
evtx_status evtx_triage_path(const char *path,
                             uint64_t silence_seconds,
                             evtx_write_fn write,
                             void *user_data);

#ifdef __cplusplus
}  // extern "C"
#endif  // __cplusplus

#endif  /* EVTX_H */
