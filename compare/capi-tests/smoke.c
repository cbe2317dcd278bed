/*
 * Smoke test of include/evtx.h, written as a strict C99 embedder would use it. Linked once
 * against each library (libevtx_ref, libevtx_rs, libevtx_zig) and also run under valgrind.
 *
 *   evtx-smoke-<backend> [FILE.evtx ...]
 *
 * Without files it checks the calls that need no valid input: versions, status names, option
 * defaults, NULL arguments, empty/garbage/header-only/truncated buffers, a missing path. For
 * each FILE it also pulls every record from the path and from a buffer, dumps it through the
 * push API, checks that both give the same bytes and counts, aborts a dump from the callback,
 * and frees a parser in the middle of a pull. Ends with "smoke: N passed, N failed".
 */
#include "evtx.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned passed;
static unsigned failed;

#define CHECK(condition)                                                                     \
    do {                                                                                     \
        if (condition) {                                                                     \
            passed++;                                                                        \
        } else {                                                                             \
            failed++;                                                                        \
            fprintf(stderr, "smoke: FAIL %s:%d: %s (last error: %s)\n", __FILE__, __LINE__,  \
                    #condition, evtx_last_error());                                          \
        }                                                                                    \
    } while (0)

/* FNV-1a over everything written, plus totals. */
typedef struct sink {
    uint64_t hash;
    uint64_t bytes;
    uint64_t calls;
    uint64_t errors;
    uint64_t abort_after_calls; /* 0 = never abort */
} sink;

static void sink_init(sink *s) {
    memset(s, 0, sizeof *s);
    s->hash = 1469598103934665603ULL;
}

static void sink_feed(sink *s, const uint8_t *data, size_t len) {
    size_t i;
    for (i = 0; i < len; i++) {
        s->hash ^= data[i];
        s->hash *= 1099511628211ULL;
    }
    s->bytes += len;
}

static int32_t sink_write(void *user_data, const uint8_t *data, size_t len) {
    sink *s = (sink *)user_data;
    s->calls++;
    sink_feed(s, data, len);
    if (s->abort_after_calls != 0 && s->calls >= s->abort_after_calls) return 1;
    return 0;
}

static int32_t sink_error(void *user_data, const evtx_record *record) {
    sink *s = (sink *)user_data;
    s->errors++;
    if (record == NULL || record->data != NULL || record->message == NULL) return 1;
    return 0;
}

static int is_error_kind(evtx_status status) {
    return status >= EVTX_STATUS_INCOMPLETE_CHUNK && status <= EVTX_STATUS_BAD_BINXML;
}

/* Pulls everything; returns the last status (END on success). */
static evtx_status pull_all(evtx_parser *parser, sink *s, uint64_t *ok, uint64_t *bad) {
    evtx_record record;
    evtx_status status;
    uint64_t guard = 0;
    *ok = 0;
    *bad = 0;
    for (;;) {
        status = evtx_parser_next(parser, &record);
        if (status == EVTX_STATUS_OK) {
            (*ok)++;
            if (record.data == NULL || record.data_len == 0 || record.status != EVTX_STATUS_OK ||
                record.message == NULL || record.record_id == EVTX_RECORD_ID_UNKNOWN) {
                return EVTX_STATUS_INTERNAL;
            }
            sink_feed(s, record.data, record.data_len);
        } else if (is_error_kind(status)) {
            (*bad)++;
            if (record.data != NULL || record.data_len != 0 || record.status != status ||
                record.message == NULL) {
                return EVTX_STATUS_INTERNAL;
            }
        } else {
            return status;
        }
        if (++guard > 100000000ULL) return EVTX_STATUS_INTERNAL;
    }
}

static void check_library(void) {
    const char *name = evtx_backend_name();
    const char *version = evtx_backend_version();
    uint32_t status;
    CHECK(evtx_abi_version() == EVTX_ABI_VERSION);
    CHECK(name != NULL);
    CHECK(name != NULL && (strcmp(name, "rust") == 0 || strcmp(name, "zig") == 0 ||
                           strcmp(name, "reference") == 0));
    CHECK(version != NULL && version[0] != '\0');
    for (status = 0; status < 64; status++) CHECK(evtx_status_name(status) != NULL);
    CHECK(strcmp(evtx_status_name(EVTX_STATUS_BAD_CHUNK_MAGIC), "bad chunk magic") == 0);
    CHECK(strcmp(evtx_status_name(EVTX_STATUS_BAD_BINXML), "bad binxml") == 0);
    CHECK(strcmp(evtx_status_name(1000), "unknown status") == 0);
    CHECK(evtx_last_error() != NULL);
    printf("smoke: backend %s %s\n", name ? name : "?", version ? version : "?");
}

static void check_options(void) {
    evtx_options options;
    memset(&options, 0xAB, sizeof options);
    evtx_options_init(NULL);
    evtx_options_init(&options);
    CHECK(options.format == EVTX_FORMAT_XML);
    CHECK(options.threads == 0);
    CHECK(options.indent == 1);
    CHECK(options.separate_json_attributes == 0);
    CHECK(options.show_record_number == 1);
    CHECK(options.validate_checksums == 0);
    CHECK(options.recover_records == 0);
    CHECK(options.stop_after_error == 0);
    CHECK(options.version == EVTX_OPTIONS_VERSION_0 && options.reserved == 0);
    CHECK(options.ansi_codec == NULL);
    CHECK(options.event_ranges == NULL && options.event_ranges_count == 0);
    CHECK(options.mta_path == NULL && options.wevt_cache_path == NULL);
    /* Version 0 writes nothing past wevt_cache_path. */
    CHECK(((const uint8_t *)&options)[offsetof(evtx_options, event_ids)] == 0xAB);
    CHECK(((const uint8_t *)&options)[sizeof options - 1] == 0xAB);
    memset(&options, 0xAB, sizeof options);
    evtx_options_init_v1(NULL);
    evtx_options_init_v1(&options);
    CHECK(options.version == EVTX_OPTIONS_VERSION_1 && options.indent == 1);
    CHECK(options.event_ids == NULL && options.event_ids_count == 0);
    CHECK(options.levels == NULL && options.levels_count == 0);
    CHECK(options.providers == NULL && options.providers_count == 0);
    CHECK(options.channels == NULL && options.channels_count == 0);
    CHECK(options.since_set == 0 && options.until_set == 0);
    CHECK(options.reserved_v1[0] == 0 && options.reserved_v1[5] == 0);
}

/* evtx_options as the header declared it before the filters (EVTX_ABI_VERSION 3 as first
 * published): a program built then has exactly this much memory, and must keep working with
 * today's libraries. */
typedef struct options_before_filters {
    uint32_t format;
    uint32_t threads;
    uint8_t indent;
    uint8_t separate_json_attributes;
    uint8_t show_record_number;
    uint8_t validate_checksums;
    uint8_t recover_records;
    uint8_t stop_after_error;
    uint8_t reserved[2];
    const char *ansi_codec;
    const struct evtx_event_range *event_ranges;
    size_t event_ranges_count;
    const char *mta_path;
    const char *wevt_cache_path;
} options_before_filters;

/* The old struct is the prefix of the new one, field for field. */
typedef char old_size_is_version_0[sizeof(options_before_filters) ==
                                           offsetof(evtx_options, event_ids)
                                       ? 1
                                       : -1];
typedef char old_codec_offset[offsetof(options_before_filters, ansi_codec) ==
                                      offsetof(evtx_options, ansi_codec)
                                  ? 1
                                  : -1];
typedef char old_path_offset[offsetof(options_before_filters, wevt_cache_path) ==
                                     offsetof(evtx_options, wevt_cache_path)
                                 ? 1
                                 : -1];

/* The old struct on the heap at its own size (valgrind and ASan see any access past it),
 * initialised and used as a program built before the filters does: the same records as the
 * new struct without filters. */
static void check_old_layout(const uint8_t *data, size_t len) {
    options_before_filters *old = malloc(sizeof *old);
    evtx_options options;
    evtx_parser *parser = NULL;
    sink a, b;
    uint64_t ok_a = 0, bad_a = 0, ok_b = 0, bad_b = 0;
    CHECK(old != NULL);
    if (old == NULL) return;
    evtx_options_init((evtx_options *)old);
    CHECK(old->indent == 1 && old->show_record_number == 1 && old->reserved[0] == 0);
    old->format = EVTX_FORMAT_JSONL;
    old->threads = 1;
    CHECK(evtx_parser_open_buffer(data, len, (const evtx_options *)old, &parser) ==
          EVTX_STATUS_OK);
    sink_init(&a);
    CHECK(pull_all(parser, &a, &ok_a, &bad_a) == EVTX_STATUS_END);
    evtx_parser_free(parser);
    free(old);
    evtx_options_init_v1(&options);
    options.format = EVTX_FORMAT_JSONL;
    options.threads = 1;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
    sink_init(&b);
    CHECK(pull_all(parser, &b, &ok_b, &bad_b) == EVTX_STATUS_END);
    evtx_parser_free(parser);
    CHECK(a.hash == b.hash && a.bytes == b.bytes && ok_a == ok_b && bad_a == bad_b);
}

/* The filters of version 1: bad values are refused; a filter keeps no more records than the
 * run without it, the same through pull and push, and every error still. */
static void check_filters(const uint8_t *data, size_t len) {
    static const evtx_value_range empty = {5, 4};
    static const evtx_value_range ids[2] = {{4624, 4625}, {1, 100}};
    static const char *const names[2] = {"Security", ""};
    evtx_options options;
    evtx_parser *parser = (evtx_parser *)&parser;
    evtx_stats stats;
    sink all, pulled, pushed;
    uint64_t ok = 0, bad = 0, ok2 = 0, bad2 = 0;

    evtx_options_init_v1(&options);
    options.levels = &empty;
    options.levels_count = 1;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_INVALID_OPTIONS);
    CHECK(parser == NULL);
    evtx_options_init_v1(&options);
    options.providers = names;
    options.providers_count = 2;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_INVALID_OPTIONS);
    evtx_options_init_v1(&options);
    options.channels_count = 1;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_INVALID_OPTIONS);
    evtx_options_init_v1(&options);
    options.since = options.until = 5;
    options.since_set = options.until_set = 1;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_INVALID_OPTIONS);
    evtx_options_init_v1(&options);
    options.version = EVTX_OPTIONS_VERSION_1 + 1;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_INVALID_OPTIONS);

    evtx_options_init_v1(&options);
    options.format = EVTX_FORMAT_JSONL;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
    sink_init(&all);
    CHECK(pull_all(parser, &all, &ok, &bad) == EVTX_STATUS_END);
    evtx_parser_free(parser);

    options.event_ids = ids;
    options.event_ids_count = 2;
    options.providers = names;
    options.providers_count = 1;
    options.since = 1;
    options.since_set = 1;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
    sink_init(&pulled);
    CHECK(pull_all(parser, &pulled, &ok2, &bad2) == EVTX_STATUS_END);
    evtx_parser_free(parser);
    CHECK(ok2 <= ok && bad2 == bad);
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
    sink_init(&pushed);
    CHECK(evtx_parser_dump(parser, sink_write, NULL, &pushed, &stats) == EVTX_STATUS_OK);
    CHECK(pushed.hash == pulled.hash && pushed.bytes == pulled.bytes);
    CHECK(stats.records_ok == ok2 && stats.records_failed == bad2);
    evtx_parser_free(parser);
}

static void check_null_arguments(void) {
    evtx_parser *parser = (evtx_parser *)&parser; /* must be overwritten with NULL */
    evtx_record record;
    evtx_stats stats;
    uint8_t byte = 0;
    CHECK(evtx_parser_open_path(NULL, NULL, &parser) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(parser == NULL);
    CHECK(evtx_parser_open_path("x.evtx", NULL, NULL) == EVTX_STATUS_NULL_ARGUMENT);
    parser = (evtx_parser *)&parser;
    CHECK(evtx_parser_open_buffer(NULL, 0, NULL, &parser) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(parser == NULL);
    CHECK(evtx_parser_open_buffer(NULL, 100, NULL, &parser) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(evtx_parser_open_buffer(&byte, 1, NULL, NULL) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(evtx_parser_next(NULL, &record) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(evtx_parser_next(NULL, NULL) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(evtx_parser_dump(NULL, sink_write, NULL, NULL, &stats) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(stats.records_ok == 0 && stats.records_failed == 0 && stats.bytes_written == 0);
    CHECK(evtx_parser_dump(NULL, NULL, NULL, NULL, NULL) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(evtx_parser_next_batch(NULL, 1, 0, NULL) == EVTX_STATUS_NULL_ARGUMENT);
    CHECK(evtx_parser_batch_system(NULL, NULL) == EVTX_STATUS_NULL_ARGUMENT);
    evtx_parser_free(NULL);
}

static void check_open_fails(const uint8_t *data, size_t len, evtx_status want) {
    evtx_parser *parser = (evtx_parser *)&parser;
    evtx_status status = evtx_parser_open_buffer(data, len, NULL, &parser);
    CHECK(status == want);
    CHECK(parser == NULL);
    CHECK(evtx_last_error() != NULL && evtx_last_error()[0] != '\0');
    evtx_parser_free(parser);
}

/* A 4096-byte file header and nothing else: a valid file with no records. */
static void make_header(uint8_t *header) {
    memset(header, 0, 4096);
    memcpy(header, "ElfFile", 8);
    header[24] = 0x80; /* header_size = 128 */
    header[28] = 1;    /* minor version 1 */
    header[30] = 3;    /* major version 3 */
    header[32] = 0x00; /* header_block_size = 4096 */
    header[33] = 0x10;
}

static void check_bad_inputs(void) {
    static uint8_t garbage[8192];
    static uint8_t header[4096 + 1000];
    uint32_t state = 12345;
    size_t i;
    uint8_t empty = 0;
    evtx_parser *parser = NULL;
    evtx_options options;
    evtx_event_range range = {5, 3};
    sink s;
    uint64_t ok = 0, bad = 0;

    check_open_fails(&empty, 0, EVTX_STATUS_NOT_EVTX);
    for (i = 0; i < sizeof garbage; i++) {
        state = state * 1103515245u + 12345u;
        garbage[i] = (uint8_t)(state >> 16);
    }
    check_open_fails(garbage, sizeof garbage, EVTX_STATUS_NOT_EVTX);
    check_open_fails(garbage, 100, EVTX_STATUS_NOT_EVTX);
    make_header(header);
    check_open_fails(header, 100, EVTX_STATUS_NOT_EVTX); /* truncated header */

    CHECK(evtx_parser_open_path("/nonexistent/evtx-twin/missing.evtx", NULL, &parser) ==
          EVTX_STATUS_IO);
    CHECK(parser == NULL);
    CHECK(evtx_parser_open_path("/", NULL, &parser) == EVTX_STATUS_IO);
    CHECK(parser == NULL);
    evtx_parser_free(parser);

    evtx_options_init(&options);
    options.format = 7;
    CHECK(evtx_parser_open_buffer(header, 4096, &options, &parser) ==
          EVTX_STATUS_INVALID_OPTIONS);
    evtx_options_init(&options);
    options.reserved = 1;
    CHECK(evtx_parser_open_buffer(header, 4096, &options, &parser) ==
          EVTX_STATUS_INVALID_OPTIONS);
    evtx_options_init(&options);
    options.event_ranges_count = 3;
    CHECK(evtx_parser_open_buffer(header, 4096, &options, &parser) ==
          EVTX_STATUS_INVALID_OPTIONS);
    evtx_options_init(&options);
    options.ansi_codec = "no-such-code-page";
    CHECK(evtx_parser_open_buffer(header, 4096, &options, &parser) ==
          EVTX_STATUS_INVALID_OPTIONS);
    options.ansi_codec = "utf-16le";
    CHECK(evtx_parser_open_buffer(header, 4096, &options, &parser) ==
          EVTX_STATUS_INVALID_OPTIONS);
    CHECK(parser == NULL);

    /* An MTA file that cannot be read fails the open as the CLI fails (after the header). */
    evtx_options_init(&options);
    options.mta_path = "/nonexistent/evtx-smoke.MTA";
    CHECK(evtx_parser_open_buffer(header, 4096, &options, &parser) == EVTX_STATUS_IO);
    CHECK(strstr(evtx_last_error(), "evtx-smoke.MTA") != NULL);
    CHECK(evtx_parser_open_buffer(header, 100, &options, &parser) == EVTX_STATUS_NOT_EVTX);
    CHECK(parser == NULL);

    /* Header only, and header plus a partial chunk: no records, no crash, END twice. */
    evtx_options_init(&options);
    options.ansi_codec = "windows-1251";
    options.event_ranges = &range; /* an empty range, accepted as the CLI does */
    options.event_ranges_count = 1;
    for (i = 0; i < 2; i++) {
        size_t len = i == 0 ? 4096 : sizeof header;
        evtx_status status = evtx_parser_open_buffer(header, len, &options, &parser);
        CHECK(status == EVTX_STATUS_OK);
        if (status != EVTX_STATUS_OK) continue;
        sink_init(&s);
        CHECK(pull_all(parser, &s, &ok, &bad) == EVTX_STATUS_END);
        CHECK(ok == 0 && bad == 0);
        {
            evtx_record record;
            CHECK(evtx_parser_next(parser, &record) == EVTX_STATUS_END);
            CHECK(evtx_parser_next(parser, NULL) == EVTX_STATUS_NULL_ARGUMENT);
            CHECK(evtx_parser_dump(parser, NULL, NULL, NULL, NULL) == EVTX_STATUS_NULL_ARGUMENT);
        }
        evtx_parser_free(parser);
        parser = NULL;
    }
}

static uint8_t *read_file(const char *path, size_t *len) {
    FILE *file = fopen(path, "rb");
    uint8_t *data;
    long size;
    if (file == NULL) return NULL;
    if (fseek(file, 0, SEEK_END) != 0 || (size = ftell(file)) < 0 || fseek(file, 0, SEEK_SET)) {
        fclose(file);
        return NULL;
    }
    data = (uint8_t *)malloc((size_t)size + 1);
    if (data != NULL && fread(data, 1, (size_t)size, file) != (size_t)size) {
        free(data);
        data = NULL;
    }
    fclose(file);
    *len = (size_t)size;
    return data;
}

/* The System columns of the batch just pulled: one value per entry, offsets from 0 and
   non-decreasing, nothing for error entries; or UNSUPPORTED (XML) with no entries. */
static void check_system(evtx_parser *parser, const evtx_batch *batch) {
    evtx_batch_system system;
    const uint64_t *offsets[3];
    size_t i, k;
    evtx_status status = evtx_parser_batch_system(parser, &system);
    if (status == EVTX_STATUS_UNSUPPORTED) {
        CHECK(system.count == 0);
        return;
    }
    CHECK(status == EVTX_STATUS_OK && system.count == batch->count);
    if (status != EVTX_STATUS_OK) return;
    offsets[0] = system.provider_offsets;
    offsets[1] = system.channel_offsets;
    offsets[2] = system.computer_offsets;
    for (k = 0; k < 3; k++) CHECK(offsets[k][0] == 0);
    for (i = 0; i < system.count; i++) {
        CHECK((system.present[i] & ~31u) == 0);
        for (k = 0; k < 3; k++) CHECK(offsets[k][i] <= offsets[k][i + 1]);
        if (batch->statuses[i] != EVTX_STATUS_OK) CHECK(system.present[i] == 0);
        if (!(system.present[i] & EVTX_SYSTEM_COMPUTER)) CHECK(offsets[2][i] == offsets[2][i + 1]);
        if (!(system.present[i] & EVTX_SYSTEM_EVENT_ID)) CHECK(system.event_ids[i] == 0);
    }
}

/* Everything in batches of `size` entries: the records' bytes into `s`, the counts. */
static evtx_status pull_batches(evtx_parser *parser, size_t size, sink *s, uint64_t *ok, uint64_t *bad) {
    evtx_batch batch;
    evtx_status status;
    size_t i;
    *ok = *bad = 0;
    while ((status = evtx_parser_next_batch(parser, size, 0, &batch)) == EVTX_STATUS_OK) {
        CHECK(batch.count >= 1 && batch.count <= size && batch.offsets[0] == 0);
        check_system(parser, &batch);
        for (i = 0; i < batch.count; i++) {
            CHECK(batch.offsets[i] <= batch.offsets[i + 1]);
            if (batch.statuses[i] == EVTX_STATUS_OK) {
                (*ok)++;
                sink_feed(s, batch.data + batch.offsets[i], batch.offsets[i + 1] - batch.offsets[i]);
            } else {
                CHECK(is_error_kind(batch.statuses[i]));
                CHECK(batch.recovered[i] == 0);
                (*bad)++;
            }
        }
    }
    CHECK(batch.count == 0);
    return status;
}

/* `evtx_record` as the header declared it before `checksum` (EVTX_ABI_VERSION 3): a caller
 * built then holds this struct. `checksum` went into its padding, so the library writes
 * nothing past it; `guard` after it must stay as set. */
typedef struct record_before_checksum {
    const uint8_t *data;
    size_t data_len;
    uint64_t record_id;
    uint64_t filetime;
    uint64_t file_offset;
    uint32_t chunk_index;
    uint32_t status;
    const char *message;
    uint8_t recovered;
} record_before_checksum;

typedef struct guarded_record {
    record_before_checksum record;
    uint64_t guard;
} guarded_record;

/* Pulls every entry of `path` into the old struct: the guard stays, the fields read as the
 * new struct's, and a validated chunk's records say `EVTX_CHECKSUM_OK` or unchecked. */
static void check_record_before_checksum(const char *path) {
    evtx_parser *parser = NULL;
    evtx_options options;
    guarded_record old;
    evtx_status status;
    CHECK(sizeof(record_before_checksum) == sizeof(evtx_record));
    CHECK(offsetof(evtx_record, checksum) > offsetof(evtx_record, recovered));
    evtx_options_init(&options);
    options.validate_checksums = 1;
    if (evtx_parser_open_path(path, &options, &parser) != EVTX_STATUS_OK) return;
    memset(&old, 0, sizeof old);
    old.guard = UINT64_C(0x5AFE5AFE5AFE5AFE);
    while ((status = evtx_parser_next(parser, (evtx_record *)&old.record)) != EVTX_STATUS_END) {
        const evtx_record *record = (const evtx_record *)&old.record;
        CHECK(old.guard == UINT64_C(0x5AFE5AFE5AFE5AFE));
        CHECK(record->checksum == EVTX_CHECKSUM_UNCHECKED || status == EVTX_STATUS_OK);
        CHECK(record->checksum != EVTX_CHECKSUM_BAD);
        if (status != EVTX_STATUS_OK && status >= EVTX_STATUS_INCOMPLETE_CHUNK) continue;
        if (status != EVTX_STATUS_OK) break;
    }
    evtx_parser_free(parser);
}

static void check_file(const char *path) {
    size_t len = 0, cut;
    uint8_t *data = read_file(path, &len);
    evtx_parser *parser = NULL;
    evtx_options options;
    evtx_stats stats;
    sink pulled, pushed, aborted;
    uint64_t ok = 0, bad = 0, ok2 = 0, bad2 = 0;
    evtx_status status;
    unsigned format;

    CHECK(data != NULL);
    if (data == NULL) return;

    for (format = EVTX_FORMAT_XML; format <= EVTX_FORMAT_JSONL; format++) {
        evtx_options_init(&options);
        options.format = format;
        options.threads = format == EVTX_FORMAT_JSON ? 2 : 1;

        /* Pull from the path. */
        status = evtx_parser_open_path(path, &options, &parser);
        if (status == EVTX_STATUS_NOT_EVTX) {
            /* A damaged fixture that is not EVTX at all: the buffer says the same. */
            CHECK(parser == NULL);
            CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_NOT_EVTX);
            CHECK(parser == NULL);
            printf("smoke: %s: not an evtx file (%s)\n", path, evtx_last_error());
            free(data);
            return;
        }
        CHECK(status == EVTX_STATUS_OK);
        if (status != EVTX_STATUS_OK) break;
        sink_init(&pulled);
        CHECK(pull_all(parser, &pulled, &ok, &bad) == EVTX_STATUS_END);
        evtx_parser_free(parser);

        /* Push from the buffer: same bytes, same counts. */
        CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
        sink_init(&pushed);
        CHECK(evtx_parser_dump(parser, sink_write, sink_error, &pushed, &stats) ==
              EVTX_STATUS_OK);
        CHECK(stats.records_ok == ok);
        CHECK(stats.records_failed == bad);
        CHECK(pushed.errors == bad);
        CHECK(stats.bytes_written == pulled.bytes);
        CHECK(pushed.bytes == pulled.bytes && pushed.hash == pulled.hash);
        /* A second dump has nothing left. */
        CHECK(evtx_parser_dump(parser, sink_write, NULL, &pushed, &stats) == EVTX_STATUS_OK);
        CHECK(stats.records_ok == 0 && stats.bytes_written == 0);
        evtx_parser_free(parser);
        /* Batches of 7 entries: the same bytes and counts as pulling one by one. */
        CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
        sink_init(&aborted);
        CHECK(pull_batches(parser, 7, &aborted, &ok2, &bad2) == EVTX_STATUS_END);
        CHECK(ok2 == ok && bad2 == bad);
        CHECK(aborted.bytes == pulled.bytes && aborted.hash == pulled.hash);
        evtx_parser_free(parser);
        printf("smoke: %s format %u: %llu records, %llu errors, %llu bytes, fnv %016llx\n", path,
               format, (unsigned long long)ok, (unsigned long long)bad,
               (unsigned long long)pulled.bytes, (unsigned long long)pulled.hash);
    }

    /* The callback stops the dump. */
    CHECK(evtx_parser_open_buffer(data, len, NULL, &parser) == EVTX_STATUS_OK);
    sink_init(&aborted);
    aborted.abort_after_calls = 1;
    status = evtx_parser_dump(parser, sink_write, NULL, &aborted, &stats);
    CHECK(ok == 0 || status == EVTX_STATUS_CALLBACK_ABORTED);
    CHECK(aborted.calls <= 1);
    evtx_parser_free(parser);

    /* Pull a few records, then dump the rest: together the whole output. */
    evtx_options_init(&options);
    options.format = EVTX_FORMAT_JSONL;
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
    sink_init(&pulled);
    {
        evtx_record record;
        int i;
        for (i = 0; i < 3; i++) {
            status = evtx_parser_next(parser, &record);
            if (status == EVTX_STATUS_OK) sink_feed(&pulled, record.data, record.data_len);
        }
    }
    CHECK(evtx_parser_dump(parser, sink_write, NULL, &pulled, &stats) == EVTX_STATUS_OK);
    evtx_parser_free(parser);
    CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
    sink_init(&pushed);
    CHECK(evtx_parser_dump(parser, sink_write, NULL, &pushed, NULL) == EVTX_STATUS_OK);
    CHECK(pushed.hash == pulled.hash && pushed.bytes == pulled.bytes);
    evtx_parser_free(parser);

    /* Free in the middle of a pull (any worker must be stopped and released). */
    CHECK(evtx_parser_open_buffer(data, len, NULL, &parser) == EVTX_STATUS_OK);
    {
        evtx_record record;
        (void)evtx_parser_next(parser, &record);
    }
    evtx_parser_free(parser);

    /* Truncated inside the second chunk: the partial chunk is ignored, nothing crashes. */
    cut = len > 4096 + 65536 + 30000 ? 4096 + 65536 + 30000 : len / 2;
    status = evtx_parser_open_buffer(data, cut, NULL, &parser);
    CHECK(status == EVTX_STATUS_OK || status == EVTX_STATUS_NOT_EVTX);
    if (status == EVTX_STATUS_OK) {
        sink_init(&pulled);
        CHECK(pull_all(parser, &pulled, &ok2, &bad2) == EVTX_STATUS_END);
        CHECK(ok2 <= ok);
        evtx_parser_free(parser);
    }

    /* Every record ID range filter keeps only records; errors still count. */
    {
        evtx_event_range ranges[2] = {{1, 10}, {20, 20}};
        evtx_options_init(&options);
        options.format = EVTX_FORMAT_JSONL;
        options.event_ranges = ranges;
        options.event_ranges_count = 2;
        CHECK(evtx_parser_open_buffer(data, len, &options, &parser) == EVTX_STATUS_OK);
        CHECK(evtx_parser_dump(parser, sink_write, NULL, &pushed, &stats) == EVTX_STATUS_OK);
        CHECK(stats.records_ok <= 11);
        evtx_parser_free(parser);
    }
    check_old_layout(data, len);
    check_filters(data, len);
    free(data);
}

/* evtx_last_error is per thread: a failure on another thread must not replace this
 * thread's message. Deterministic: the other thread fails and is joined in between. */
static const char thread_a_path[] = "/nonexistent/evtx-smoke-thread-a.evtx";
static const char thread_b_path[] = "/nonexistent/evtx-smoke-thread-b.evtx";

static void *fail_on_b(void *arg) {
    evtx_options options;
    evtx_parser *parser = NULL;
    int *saw_b = arg;
    evtx_options_init(&options);
    *saw_b = evtx_parser_open_path(thread_b_path, &options, &parser) == EVTX_STATUS_IO &&
             strstr(evtx_last_error(), thread_b_path) != NULL;
    evtx_parser_free(parser);
    return NULL;
}

static void check_last_error_per_thread(void) {
    evtx_options options;
    evtx_parser *parser = NULL;
    pthread_t thread_b;
    int saw_b = 0;
    evtx_options_init(&options);
    CHECK(evtx_parser_open_path(thread_a_path, &options, &parser) == EVTX_STATUS_IO);
    CHECK(strstr(evtx_last_error(), thread_a_path) != NULL);
    CHECK(pthread_create(&thread_b, NULL, fail_on_b, &saw_b) == 0);
    CHECK(pthread_join(thread_b, NULL) == 0);
    CHECK(saw_b);
    CHECK(strstr(evtx_last_error(), thread_a_path) != NULL);
}

int main(int argc, char **argv) {
    int i;
    check_library();
    check_options();
    check_null_arguments();
    check_bad_inputs();
    check_last_error_per_thread();
    for (i = 1; i < argc; i++) {
        check_file(argv[i]);
        check_record_before_checksum(argv[i]);
    }
    printf("smoke: %u passed, %u failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
