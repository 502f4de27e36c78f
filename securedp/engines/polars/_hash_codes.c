/* Dense codes of 64-bit hashes: code[i] = the number of distinct hashes whose first row comes before the first row
 * holding hashes[i] (codes in order of first appearance), and first[c] = the first row holding code c.
 *
 * Used by securedp.engines.polars.pair_codes to number the distinct keyed hashes of a text column (the
 * caller then checks every text against the text its code decodes to, so a collision of hashes is found
 * there, never here). The pass is a radix partition by the hash's top 8 bits (sequential writes) and, per
 * partition, an open-addressing table small enough for the cache, then a renumbering in order of first
 * appearance: on 10**7 shuffled hashes with 1.8 million distinct, 0.35-0.37 s, against 0.81-0.94 s for
 * Polars' join and the scatter back to row order.
 * Every length is checked before a byte is read or written; the GIL is released during the pass.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buffers.h" /* securedp/_buffers.h: the buffer checks both extensions share */

typedef struct {
    uint64_t hash;
    int64_t row;
} entry;

/* Writes codes[0 .. n) and first[0 .. distinct); returns the number of distinct hashes, -1 when out of memory, or -2
 * when the buffers changed during the call (another thread writing them while the GIL is released): every index read
 * back from memory the caller can write is checked, so such a race gives an error, never a write out of bounds. */
static int64_t dense_codes(const uint64_t *hashes, int64_t n, int64_t *codes, int64_t *first) {
    if ((uint64_t)n > SIZE_MAX / sizeof(entry) / 2) {
        return -1;
    }
    int64_t start[257] = {0};
    for (int64_t i = 0; i < n; i++) {
        start[(hashes[i] >> 56) + 1]++;
    }
    int64_t widest = 0;
    for (int b = 0; b < 256; b++) {
        if (start[b + 1] > widest) {
            widest = start[b + 1];
        }
        start[b + 1] += start[b];
    }
    uint64_t room = 2;
    while (room < 2 * (uint64_t)widest) {
        room <<= 1; /* room <= 4 n: no overflow below (n checked above) */
    }
    entry *parts = malloc((size_t)(n > 0 ? n : 1) * sizeof(entry));
    uint64_t *keys = malloc((size_t)room * sizeof(uint64_t));
    int64_t *slots = malloc((size_t)room * sizeof(int64_t));
    int64_t *next = malloc(256 * sizeof(int64_t));
    if (parts == NULL || keys == NULL || slots == NULL || next == NULL) {
        free(parts);
        free(keys);
        free(slots);
        free(next);
        return -1;
    }
    memcpy(next, start, 256 * sizeof(int64_t));
    for (int64_t i = 0; i < n; i++) {
        uint64_t hash = ((const volatile uint64_t *)hashes)[i]; /* read once */
        int b = (int)(hash >> 56);
        int64_t at = next[b]++;
        if (at >= start[b + 1]) { /* more rows in this partition than were counted: the hashes changed */
            free(parts);
            free(keys);
            free(slots);
            free(next);
            return -2;
        }
        parts[at].hash = hash;
        parts[at].row = i;
    }
    int64_t distinct = 0;
    for (int b = 0; b < 256; b++) {
        int64_t lo = start[b], hi = start[b + 1];
        uint64_t size = 2;
        int shift = 63;
        while (size < 2 * (uint64_t)(hi - lo)) {
            size <<= 1;
            shift--;
        }
        uint64_t mask = size - 1;
        memset(slots, 0xff, (size_t)size * sizeof(int64_t)); /* -1: empty */
        for (int64_t p = lo; p < hi; p++) {
            uint64_t key = parts[p].hash;
            /* Fibonacci hashing: the product's top bits depend on every bit of the key (its low bits only on the key's
             * low bits, so keys sharing their low bits would share a slot and the probing turn quadratic). */
            uint64_t s = (key * UINT64_C(0x9E3779B97F4A7C15)) >> shift;
            while (slots[s] >= 0 && keys[s] != key) {
                s = (s + 1) & mask;
            }
            if (slots[s] < 0) {
                keys[s] = key;
                slots[s] = distinct;
                first[distinct++] = parts[p].row;
            }
            codes[parts[p].row] = slots[s];
        }
    }
    /* Renumber in order of first appearance: code c's first row is first[c] (a stable partition keeps the rows of a
     * partition in order), so codes follow the rows, and rows sorted by person keep their codes sorted (the pair
     * sort after this then finds its input in order). */
    free(keys);
    free(slots);
    free(next);
    int64_t *renumber = malloc((size_t)(distinct > 0 ? distinct : 1) * sizeof(int64_t));
    if (renumber == NULL) {
        free(parts);
        return -1;
    }
    memset(renumber, 0xff, (size_t)distinct * sizeof(int64_t)); /* -1: not met */
    int64_t order = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t c = codes[i];
        if ((uint64_t)c >= (uint64_t)distinct) {
            goto changed;
        }
        if (first[c] == i && renumber[c] < 0) {
            renumber[c] = order++;
        }
    }
    if (order != distinct) {
        goto changed;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t c = codes[i];
        if ((uint64_t)c >= (uint64_t)distinct) {
            goto changed;
        }
        codes[i] = renumber[c];
    }
    int64_t *moved = (int64_t *)parts; /* n entries of 16 bytes: room for the distinct first rows */
    for (int64_t c = 0; c < distinct; c++) {
        moved[renumber[c]] = first[c];
    }
    memcpy(first, moved, (size_t)distinct * sizeof(int64_t));
    free(renumber);
    free(parts);
    return distinct;
changed:
    free(renumber);
    free(parts);
    return -2;
}

static PyObject *codes(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *h, *o, *f;
    if (!PyArg_ParseTuple(args, "OOO", &h, &o, &f)) {
        return NULL;
    }
    Py_buffer hashes, out, first;
    if (get_buffer(h, &hashes, 0, 1) < 0) {
        return NULL;
    }
    if (get_buffer(o, &out, 1, 2) < 0) {
        PyBuffer_Release(&hashes);
        return NULL;
    }
    if (get_buffer(f, &first, 1, 3) < 0) {
        PyBuffer_Release(&hashes);
        PyBuffer_Release(&out);
        return NULL;
    }
    PyObject *result = NULL;
    if (hashes.len % 8 != 0 || out.len != hashes.len || first.len != hashes.len || !native_words(&hashes, "qlQL") ||
        !native_words(&out, "ql") || !native_words(&first, "ql")) {
        PyErr_SetString(PyExc_ValueError, "give one uint64 hash, one int64 code and one int64 row place per row "
                                          "(native 8-byte integers, aligned)");
        goto done;
    }
    if (overlap(&hashes, &out) || overlap(&hashes, &first) || overlap(&out, &first)) {
        PyErr_SetString(PyExc_ValueError, "the hashes, the codes and the rows must not share memory");
        goto done;
    }
    int64_t n = (int64_t)(hashes.len / 8), distinct;
    Py_BEGIN_ALLOW_THREADS
    distinct = dense_codes((const uint64_t *)hashes.buf, n, (int64_t *)out.buf, (int64_t *)first.buf);
    Py_END_ALLOW_THREADS
    if (distinct == -2) {
        PyErr_SetString(PyExc_RuntimeError, "the buffers changed during the call");
        goto done;
    }
    if (distinct < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyLong_FromLongLong(distinct);
done:
    PyBuffer_Release(&hashes);
    PyBuffer_Release(&out);
    PyBuffer_Release(&first);
    return result;
}

static PyMethodDef METHODS[] = {
    {"codes", codes, METH_VARARGS,
     "codes(hashes, out, first) -> distinct: write into out (int64) a dense code of each uint64 hash and into "
     "first[:distinct] (int64) a row holding each code."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_hash_codes", "Dense codes of 64-bit hashes.", -1,
                                    METHODS, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__hash_codes(void) { return PyModule_Create(&MODULE); }
