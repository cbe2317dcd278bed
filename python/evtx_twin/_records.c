/* The dicts of `records()` / `records_json()` for one batch without errors, built in C.
 *
 * Why: in Python each record costs ~8,000 instructions of CPython's own floor (a bytes slice
 * and its decode, a 6-key dict display, the timestamp slice, the zip and generator around
 * them; PERF.md P11), about as much as the engine spends rendering it. Here each record is one
 * `PyDict_Copy` of a 6-key template (the keys table is copied, not rebuilt), six
 * `PyDict_SetItem`s on keys whose hashes are cached, and one UTF-8 decode straight from the
 * batch's bytes (no intermediate `bytes` object); PERF.md P17.
 *
 * It is a plain shared library (not an extension module) loaded with `ctypes.PyDLL` and called
 * once per batch, using only the stable ABI (Py_LIMITED_API 3.9): the wheel stays `py3-none`,
 * and where it cannot be loaded (another Python implementation) `_parser.py` falls back to
 * the Python code it replaces, which the tests compare it with.
 */
#define Py_LIMITED_API 0x03090000
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define KEY_COUNT 6

/* A u64 or u32 column entry; the buffers are the library's little-endian columns as bytes,
 * so they are read with memcpy (no alignment is promised for a bytes object's data). */
static uint64_t u64_at(const char *base, Py_ssize_t i) {
    uint64_t v;
    memcpy(&v, base + 8 * i, 8);
    return v;
}

static uint32_t u32_at(const char *base, Py_ssize_t i) {
    uint32_t v;
    memcpy(&v, base + 4 * i, 4);
    return v;
}

/* Checks that `object` is bytes of at least `need` bytes; sets TypeError/ValueError if not. */
static const char *column(PyObject *object, Py_ssize_t need, const char *name) {
    if (!PyBytes_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes", name);
        return NULL;
    }
    if (PyBytes_Size(object) < need) {
        PyErr_Format(PyExc_ValueError, "%s is shorter than the batch", name);
        return NULL;
    }
    return PyBytes_AsString(object);
}

/* Sets template's key `key` to `value` (a new reference, stolen); 0 on success. */
static int set_stolen(PyObject *dict, PyObject *key, PyObject *value) {
    if (value == NULL) return -1;
    int failed = PyDict_SetItem(dict, key, value);
    Py_DECREF(value);
    return failed;
}

/* One record's dict: template's keys, in template's order, with this record's values. */
static PyObject *record(PyObject *template, PyObject *const *keys, const char *data,
                        uint64_t start, uint64_t end, PyObject *id, PyObject *stamp,
                        uint32_t chunk, uint64_t offset, int recovered) {
    PyObject *dict = PyDict_Copy(template);
    if (dict == NULL) {
        Py_DECREF(id);
        Py_DECREF(stamp);
        return NULL;
    }
    if (set_stolen(dict, keys[0], id) != 0
            || set_stolen(dict, keys[1], stamp) != 0
            || set_stolen(dict, keys[2], PyUnicode_DecodeUTF8(data + start,
                                                              (Py_ssize_t)(end - start), NULL)) != 0
            || set_stolen(dict, keys[3], PyLong_FromUnsignedLong(chunk)) != 0
            || set_stolen(dict, keys[4], PyLong_FromUnsignedLongLong(offset)) != 0
            || set_stolen(dict, keys[5], PyBool_FromLong(recovered)) != 0) {
        Py_DECREF(dict);
        return NULL;
    }
    return dict;
}

/* The list of the dicts of entries first .. first + count - 1 of a batch whose entries are all
 * records (the caller asks for a few hundred at a time, so the dicts it has not consumed yet
 * stay in the cache, as its Python generator's did; PERF.md P17).
 *
 * template: a dict whose keys are, in order, event_record_id, timestamp, data, chunk, offset,
 * recovered (the values are replaced); keys: those six keys as a tuple; total: the batch's
 * entries; data and data_size: the batch's texts (a `bytes` object's, or the library's own
 * buffer, valid until its next batch call: PERF.md P17); offsets (total + 1
 * u64), record_ids (u64), stamp_data and stamp_offsets (count + 1 u64; an empty text is None),
 * chunk_indexes (u32), file_offsets (u64), recovered (u8): the batch's columns as bytes; trim:
 * the bytes each entry's text ends with that `data` leaves out (1 for JSONL, 2 for XML).
 * Raises (returns NULL) on a range outside the batch, any inconsistent offset or an invalid
 * UTF-8 text. */
PyObject *evtx_twin_record_dicts(PyObject *template, PyObject *keys, Py_ssize_t first,
                                 Py_ssize_t count, Py_ssize_t total, const char *data,
                                 Py_ssize_t data_size, PyObject *offsets_bytes,
                                 PyObject *ids_bytes, PyObject *stamp_data_bytes,
                                 PyObject *stamp_offsets_bytes, PyObject *chunks_bytes,
                                 PyObject *file_offsets_bytes, PyObject *recovered_bytes,
                                 Py_ssize_t trim) {
    if (!PyDict_Check(template) || !PyTuple_Check(keys) || PyTuple_Size(keys) != KEY_COUNT
            || PyDict_Size(template) != KEY_COUNT || first < 0 || count < 0 || total < 0
            || first > total || count > total - first || trim < 0) {
        PyErr_SetString(PyExc_ValueError, "evtx_twin_record_dicts: bad template or range");
        return NULL;
    }
    PyObject *key[KEY_COUNT];
    for (Py_ssize_t k = 0; k < KEY_COUNT; k++) key[k] = PyTuple_GetItem(keys, k);
    const char *offsets = column(offsets_bytes, 8 * (total + 1), "offsets");
    const char *ids = column(ids_bytes, 8 * total, "record_ids");
    const char *stamp_data = column(stamp_data_bytes, 0, "stamp data");
    const char *stamp_offsets = column(stamp_offsets_bytes, 8 * (total + 1), "stamp offsets");
    const char *chunks = column(chunks_bytes, 4 * total, "chunk_indexes");
    const char *file_offsets = column(file_offsets_bytes, 8 * total, "file_offsets");
    const char *recovered = column(recovered_bytes, total, "recovered");
    if (!offsets || !ids || !stamp_data || !stamp_offsets || !chunks || !file_offsets
            || !recovered) {
        return NULL;
    }
    if (data == NULL || data_size < 0) {
        PyErr_SetString(PyExc_ValueError, "evtx_twin_record_dicts: no data");
        return NULL;
    }
    uint64_t data_len = (uint64_t)data_size;
    uint64_t stamp_len = (uint64_t)PyBytes_Size(stamp_data_bytes);
    PyObject *list = PyList_New(count);
    if (list == NULL) return NULL;
    for (Py_ssize_t j = 0; j < count; j++) {
        Py_ssize_t i = first + j;
        uint64_t start = u64_at(offsets, i), end = u64_at(offsets, i + 1);
        uint64_t stamp_start = u64_at(stamp_offsets, i), stamp_end = u64_at(stamp_offsets, i + 1);
        if (start > end || end > data_len || end - start < (uint64_t)trim
                || stamp_start > stamp_end || stamp_end > stamp_len) {
            PyErr_SetString(PyExc_ValueError, "evtx_twin_record_dicts: offsets out of order");
            Py_DECREF(list);
            return NULL;
        }
        PyObject *id = PyLong_FromUnsignedLongLong(u64_at(ids, i));
        PyObject *stamp;
        if (stamp_end == stamp_start) {
            Py_INCREF(Py_None);
            stamp = Py_None;
        } else {
            stamp = PyUnicode_DecodeUTF8(stamp_data + stamp_start,
                                         (Py_ssize_t)(stamp_end - stamp_start), NULL);
        }
        if (id == NULL || stamp == NULL) {
            Py_XDECREF(id);
            Py_XDECREF(stamp);
            Py_DECREF(list);
            return NULL;
        }
        PyObject *dict = record(template, key, data, start, end - (uint64_t)trim, id, stamp,
                                u32_at(chunks, i), u64_at(file_offsets, i), recovered[i] != 0);
        if (dict == NULL || PyList_SetItem(list, j, dict) != 0) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}
