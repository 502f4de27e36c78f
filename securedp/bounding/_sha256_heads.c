/* The first 64 bits of SHA-256 (FIPS 180-4) of many short messages, each the concatenation
 * prefix || middle[i] || tail[j], computed with the x86 SHA extensions (SHA-NI).
 *
 * Used by securedp.bounding.sha256_heads only where the CPU has the SHA, SSSE3 and SSE4.1
 * instructions (available() says so); everywhere else the caller uses polars-hash or hashlib,
 * which give the same digests. The input is two tables of byte strings in Arrow's layout (one
 * buffer of bytes, int64 offsets) and, per message, the index of its middle and of its tail; every
 * index and offset is checked before a byte is read, and read once and checked again where it is used (the GIL
 * is released, so another thread may rewrite the buffers); the output may share no memory with an input. The
 * running time of one message depends on its length only (the number of 64-byte blocks), as for any SHA-256.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buffers.h" /* securedp/_buffers.h: the buffer checks both extensions share */

#if defined(__x86_64__) || defined(_M_X64)
#define HAVE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define HAVE_X86 0
#endif

#if HAVE_X86
static const uint32_t INITIAL[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

static const uint32_t K[64] __attribute__((aligned(16))) = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

/* One compression of the 64-byte block at data into state (the SHA-256 of FIPS 180-4, section 6.2.2),
 * four rounds per step: w[s % 4] holds the message words of step s, scheduled by sha256msg1/msg2. */
__attribute__((target("sha,ssse3,sse4.1"))) static void compress(uint32_t state[8], const uint8_t *data) {
    const __m128i order = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[0]), 0xB1);   /* CDAB */
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&state[4]), 0x1B);  /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);                                              /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);                                                   /* CDGH */
    const __m128i abef = s0, cdgh = s1;
    __m128i w[4];
#pragma GCC unroll 16
    for (int step = 0; step < 16; step++) {
        if (step < 4) {
            w[step] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * step)), order);
        }
        __m128i msg = _mm_add_epi32(w[step % 4], _mm_load_si128((const __m128i *)&K[4 * step]));
        s1 = _mm_sha256rnds2_epu32(s1, s0, msg);
        if (step >= 3 && step <= 14) {
            __m128i next = _mm_add_epi32(w[(step + 1) % 4], _mm_alignr_epi8(w[step % 4], w[(step + 3) % 4], 4));
            w[(step + 1) % 4] = _mm_sha256msg2_epu32(next, w[step % 4]);
        }
        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(msg, 0x0E));
        if (step >= 1 && step <= 12) {
            w[(step + 3) % 4] = _mm_sha256msg1_epu32(w[(step + 3) % 4], w[step % 4]);
        }
    }
    s0 = _mm_add_epi32(s0, abef);
    s1 = _mm_add_epi32(s1, cdgh);
    t = _mm_shuffle_epi32(s0, 0x1B);                 /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1);                /* DCHG */
    s0 = _mm_blend_epi16(t, s1, 0xF0);               /* DCBA */
    s1 = _mm_alignr_epi8(s1, t, 8);                  /* HGFE */
    _mm_storeu_si128((__m128i *)&state[0], s0);
    _mm_storeu_si128((__m128i *)&state[4], s1);
}

static int has_sha_extensions(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 9)) || !(c & (1u << 19))) {
        return 0; /* SSSE3 (bit 9) and SSE4.1 (bit 19) */
    }
    if (__get_cpuid_max(0, NULL) < 7) {
        return 0;
    }
    __cpuid_count(7, 0, a, b, c, d);
    return (b & (1u << 29)) != 0; /* SHA */
}

/* The first 8 bytes (big-endian) of SHA-256 of the len bytes at message; buffer holds len + 72 bytes
 * and message is its start (the padding is written after the message). */
static uint64_t head_of(uint8_t *message, size_t len) {
    size_t blocks = (len + 9 + 63) / 64;
    size_t padded = 64 * blocks;
    message[len] = 0x80;
    memset(message + len + 1, 0, padded - len - 1);
    uint64_t bits = (uint64_t)len * 8;
    for (int i = 0; i < 8; i++) {
        message[padded - 1 - i] = (uint8_t)(bits >> (8 * i));
    }
    uint32_t state[8];
    memcpy(state, INITIAL, sizeof state);
    for (size_t b = 0; b < blocks; b++) {
        compress(state, message + 64 * b);
    }
    return ((uint64_t)state[0] << 32) | state[1];
}
#endif

/* A table of byte strings in Arrow's layout: count strings, string k at data[offsets[k] .. offsets[k + 1]). */
typedef struct {
    const uint8_t *data;
    const int64_t *offsets;
    int64_t data_len, count, longest;
} table;

/* Checks offsets: at least one, the first >= 0, non-decreasing, the last within the data; sets the count and the
 * longest string. */
static int valid_table(const Py_buffer *data, const Py_buffer *offsets, table *t) {
    if (offsets->len < 8) {
        return 0;
    }
    const int64_t *o = (const int64_t *)offsets->buf;
    int64_t n = (int64_t)(offsets->len / 8) - 1, most = 0, previous = read_once(&o[0]);
    if (previous < 0) {
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        int64_t next = read_once(&o[i + 1]);
        if (next < previous) {
            return 0;
        }
        if (next - previous > most) {
            most = next - previous;
        }
        previous = next;
    }
    if (previous > (int64_t)data->len) {
        return 0;
    }
    t->data = (const uint8_t *)data->buf;
    t->offsets = o;
    t->data_len = (int64_t)data->len;
    t->count = n;
    t->longest = most;
    return 1;
}

#if HAVE_X86
/* String ``index`` of ``t``, every value read once and checked where it is used (the buffers may have changed since
 * valid_table): 0 if it is outside the table, the data or the room counted for the longest string. */
static int string_of(const table *t, int64_t index, const uint8_t **start, size_t *len) {
    if ((uint64_t)index >= (uint64_t)t->count) {
        return 0;
    }
    int64_t a = read_once(&t->offsets[index]), b = read_once(&t->offsets[index + 1]);
    if (a < 0 || b < a || b > t->data_len || b - a > t->longest) {
        return 0;
    }
    *start = t->data + a;
    *len = (size_t)(b - a);
    return 1;
}
#endif

enum { PREFIX, MID, MID_OFFSETS, MID_OF, TAIL, TAIL_OFFSETS, TAIL_OF, OUT, ARGS };

static PyObject *heads(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objects[ARGS];
    if (!PyArg_ParseTuple(args, "OOOOOOOO", &objects[0], &objects[1], &objects[2], &objects[3], &objects[4],
                          &objects[5], &objects[6], &objects[7])) {
        return NULL;
    }
    Py_buffer views[ARGS];
    memset(views, 0, sizeof views); /* PyBuffer_Release of a view never taken does nothing */
    PyObject *result = NULL;
    for (int k = 0; k < ARGS; k++) {
        if (get_buffer(objects[k], &views[k], k == OUT, k + 1) < 0) {
            goto done;
        }
    }
#if HAVE_X86
    if (!has_sha_extensions()) {
        PyErr_SetString(PyExc_RuntimeError, "this CPU has no SHA extensions");
        goto done;
    }
#else
    PyErr_SetString(PyExc_RuntimeError, "built without the x86 SHA extensions");
    goto done;
#endif
    table mid, tail;
    if (!native_words(&views[MID_OFFSETS], "qlQL") || !native_words(&views[TAIL_OFFSETS], "qlQL") ||
        !native_words(&views[MID_OF], "ql") || !native_words(&views[TAIL_OF], "ql") ||
        !native_words(&views[OUT], "QL") || views[MID_OF].len != views[OUT].len ||
        views[TAIL_OF].len != views[OUT].len || !valid_table(&views[MID], &views[MID_OFFSETS], &mid) ||
        !valid_table(&views[TAIL], &views[TAIL_OFFSETS], &tail)) {
        PyErr_SetString(PyExc_ValueError, "inconsistent tables, indices or output (native aligned 8-byte integers: "
                                          "int64 offsets and indices, a uint64 output)");
        goto done;
    }
    for (int k = 0; k < OUT; k++) {
        if (overlap(&views[OUT], &views[k])) {
            PyErr_SetString(PyExc_ValueError, "the output must not share memory with an input");
            goto done;
        }
    }
    Py_ssize_t n = views[OUT].len / 8;
    const int64_t *mo = (const int64_t *)views[MID_OF].buf, *to = (const int64_t *)views[TAIL_OF].buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t a = read_once(&mo[i]), b = read_once(&to[i]);
        if (a < 0 || a >= mid.count || b < 0 || b >= tail.count) {
            PyErr_SetString(PyExc_IndexError, "an index is outside its table");
            goto done;
        }
    }
#if HAVE_X86
    {
        size_t at = (size_t)views[PREFIX].len, room = at + (size_t)mid.longest + (size_t)tail.longest + 72;
        uint8_t *buffer = malloc(room);
        if (buffer == NULL) {
            PyErr_NoMemory();
            goto done;
        }
        uint64_t *heads_out = (uint64_t *)views[OUT].buf;
        memcpy(buffer, views[PREFIX].buf, at);
        int changed = 0;
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n; i++) {
            const uint8_t *m, *t;
            size_t ml, tl;
            if (!string_of(&mid, read_once(&mo[i]), &m, &ml) || !string_of(&tail, read_once(&to[i]), &t, &tl)) {
                changed = 1; /* another thread rewrote an index or an offset since the checks */
                break;
            }
            memcpy(buffer + at, m, ml);
            memcpy(buffer + at + ml, t, tl);
            heads_out[i] = head_of(buffer, at + ml + tl);
        }
        Py_END_ALLOW_THREADS
        free(buffer);
        if (changed) {
            PyErr_SetString(PyExc_RuntimeError, "the indices or offsets changed during the call");
            goto done;
        }
    }
    result = Py_None;
    Py_INCREF(result);
#endif
done:
    for (int k = 0; k < ARGS; k++) {
        PyBuffer_Release(&views[k]);
    }
    return result;
}

static PyObject *available(PyObject *self, PyObject *unused) {
    (void)self;
    (void)unused;
#if HAVE_X86
    return PyBool_FromLong(has_sha_extensions());
#else
    Py_RETURN_FALSE;
#endif
}

static PyMethodDef METHODS[] = {
    {"heads", heads, METH_VARARGS,
     "heads(prefix, middles, middle_offsets, middle_of, tails, tail_offsets, tail_of, out): write into out "
     "(uint64) the first 64 bits of SHA-256(prefix || middle || tail) of each message."},
    {"available", available, METH_NOARGS, "Whether this CPU has the SHA extensions heads() needs."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_sha256_heads",
                                    "SHA-256 heads of many short messages (x86 SHA extensions).", -1, METHODS,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__sha256_heads(void) { return PyModule_Create(&MODULE); }
