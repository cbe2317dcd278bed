/* A stand-in C library for compare/gates/run.sh: forwards every evtx.h call the harness makes to
 * the library named by $EVTX_SHIM_LIB, and flips `recovered` on each record the pull API returns.
 * The output bytes stay the real library's, so only the per-record fields can tell: ABI parity
 * (evtx-bench --parity) must go red on it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "evtx.h"

static void *real(const char *name) {
    static void *library;
    if (!library) {
        const char *path = getenv("EVTX_SHIM_LIB");
        library = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        if (!library) {
            fprintf(stderr, "flip_recovered: cannot load $EVTX_SHIM_LIB: %s\n", dlerror());
            abort();
        }
    }
    void *symbol = dlsym(library, name);
    if (!symbol) abort();
    return symbol;
}

#define FORWARD(ret, name, params, args) \
    ret name params { return ((ret(*) params)real(#name)) args; }

FORWARD(uint32_t, evtx_abi_version, (void), ())
FORWARD(const char *, evtx_backend_name, (void), ())
FORWARD(const char *, evtx_backend_version, (void), ())
FORWARD(const char *, evtx_status_name, (uint32_t status), (status))
FORWARD(const char *, evtx_last_error, (void), ())
FORWARD(evtx_status, evtx_parser_open_buffer,
        (const uint8_t *data, size_t len, const struct evtx_options *options,
         struct evtx_parser **parser),
        (data, len, options, parser))
FORWARD(evtx_status, evtx_parser_open_path,
        (const char *path, const struct evtx_options *options, struct evtx_parser **parser),
        (path, options, parser))
FORWARD(evtx_status, evtx_parser_dump,
        (struct evtx_parser *parser, evtx_write_fn write, evtx_error_fn error, void *user_data,
         struct evtx_stats *stats),
        (parser, write, error, user_data, stats))

void evtx_options_init(struct evtx_options *options) {
    ((void (*)(struct evtx_options *))real("evtx_options_init"))(options);
}

void evtx_options_init_v1(struct evtx_options *options) {
    ((void (*)(struct evtx_options *))real("evtx_options_init_v1"))(options);
}

void evtx_parser_free(struct evtx_parser *parser) {
    ((void (*)(struct evtx_parser *))real("evtx_parser_free"))(parser);
}

evtx_status evtx_parser_next(struct evtx_parser *parser, struct evtx_record *record) {
    evtx_status status =
        ((evtx_status(*)(struct evtx_parser *, struct evtx_record *))real("evtx_parser_next"))(
            parser, record);
    if (status == EVTX_STATUS_OK) record->recovered = !record->recovered;
    return status;
}
