/* The tight envelope of exponent groups in one pass over a block (securedp.hazmat.samplers.envelope).
 *
 * For each entry i of a block of float64 d[i] (the gaps' approximations, or x_i when c is not normal):
 *
 *     y = fl(d[i] * factor);  y = min(y, ceiling);  s = trunc(y);
 *     exponents[i] = s >> 16;  counts[i] = table[s & 0xffff];  sums[exponents[i]] += counts[i]
 *
 * the same IEEE operations, in the same order, as the NumPy passes of envelope.py (a multiplication correctly
 * rounded to nearest, a minimum, a truncation of a value below 2**37 to int64): the module docstring's error
 * analysis assumes each operation correctly rounded and no fused multiply-add, so this file is compiled with
 * -ffp-contract=off and refuses to compile under fast-math or with excess precision. The sums of the block's counts
 * per exponent are exact int64 (each count below 2**29, a block below 2**16 entries), spread over 8 lanes of counters
 * (entry i adds to lane i % 8) so that no addition waits for the one before whatever the exponents: equal exponents
 * take the time spread ones take (securedp.hazmat.samplers.tally explains why). Over 10**5 float scores the NumPy passes
 * and a Tally took 0.38 ms, the fill and this pass 0.13 ms (issue 40). Every index is bounded before memory is touched: the ceiling is checked below
 * groups * 2**16 once, each y is clipped to it in a register, a table index is 16 bits; the GIL is released.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "_buffers.h" /* securedp/_buffers.h: the buffer checks every extension shares */

#if defined(__FAST_MATH__)
#error "the envelope's error analysis needs IEEE arithmetic: compile without fast-math"
#endif
#if !defined(FLT_EVAL_METHOD) || FLT_EVAL_METHOD != 0
#error "the envelope's error analysis needs each double operation rounded to double (FLT_EVAL_METHOD 0)"
#endif

#define FRACTION_BITS 16
#define TABLE_SIZE (1 << FRACTION_BITS)
#define LANES 8

/* Writes exponents, counts and sums (zeroed here); returns 0, -1 when out of memory, -2 when an entry is negative or
 * NaN (outside the caller's contract: nothing is indexed by it). */
static int tight(const double *d, int64_t n, double factor, double ceiling, const int32_t *table, void *exponents,
                 int width, int32_t *counts, int64_t *sums, int64_t groups) {
    int64_t *lanes = calloc((size_t)groups * LANES, sizeof(int64_t));
    if (lanes == NULL) {
        return -1;
    }
    int bad = 0;
    for (int64_t i = 0; i < n; i++) {
        double y = d[i] * factor;
        if (!(y >= 0.0)) { /* NaN or negative: refused below, indexes nothing */
            bad = 1;
            y = 0.0;
        }
        if (!(y < ceiling)) {
            y = ceiling;
        }
        int64_t s = (int64_t)y; /* 0 <= y <= ceiling < groups * 2**16: exact truncation */
        int64_t e = s >> FRACTION_BITS;
        int32_t count = table[s & (TABLE_SIZE - 1)];
        counts[i] = count;
        lanes[e * LANES + (i & (LANES - 1))] += count;
        if (width == 1) {
            ((uint8_t *)exponents)[i] = (uint8_t)e;
        } else if (width == 2) {
            ((uint16_t *)exponents)[i] = (uint16_t)e;
        } else {
            ((uint32_t *)exponents)[i] = (uint32_t)e;
        }
    }
    for (int64_t g = 0; g < groups; g++) {
        int64_t total = 0;
        for (int lane = 0; lane < LANES; lane++) {
            total += lanes[g * LANES + lane];
        }
        sums[g] = total;
    }
    free(lanes);
    return bad ? -2 : 0;
}

enum { D, TABLE, EXPONENTS, COUNTS, SUMS, VIEWS };

static PyObject *tight_block(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *objects[VIEWS];
    double factor, ceiling;
    if (!PyArg_ParseTuple(args, "OddOOOO", &objects[D], &factor, &ceiling, &objects[TABLE], &objects[EXPONENTS],
                          &objects[COUNTS], &objects[SUMS])) {
        return NULL;
    }
    Py_buffer views[VIEWS];
    int taken = 0;
    PyObject *result = NULL;
    for (; taken < VIEWS; taken++) {
        int writable = taken == EXPONENTS || taken == COUNTS || taken == SUMS;
        if (get_buffer(objects[taken], &views[taken], writable, taken == D ? 1 : taken + 3) < 0) {
            goto done;
        }
    }
    Py_ssize_t width = views[EXPONENTS].itemsize;
    int64_t n = (int64_t)(views[D].len / 8), groups = (int64_t)(views[SUMS].len / 8);
    if (!native_items(&views[D], 8, "d") || !native_items(&views[TABLE], 4, "i") ||
        views[TABLE].len != TABLE_SIZE * 4 || !(width == 1 || width == 2 || width == 4) ||
        !native_items(&views[EXPONENTS], width, width == 1 ? "B" : width == 2 ? "H" : "I") ||
        !native_items(&views[COUNTS], 4, "i") || !native_words(&views[SUMS], "ql") ||
        views[EXPONENTS].len != n * width || views[COUNTS].len != n * 4 || groups < 1 ||
        groups > ((int64_t)1 << 24) || (width < 4 && groups > ((int64_t)1 << (8 * width)))) {
        PyErr_SetString(PyExc_ValueError, "give float64 entries, an int32 table of 2**16 counts, one unsigned exponent "
                                          "and one int32 count per entry, and one int64 sum per group");
        goto done;
    }
    if (!(ceiling >= 0.0 && ceiling < (double)groups * TABLE_SIZE)) {
        PyErr_SetString(PyExc_ValueError, "the ceiling must lie in [0, groups * 2**16)");
        goto done;
    }
    for (int a = 0; a < VIEWS; a++) {
        for (int b = EXPONENTS; b < VIEWS; b++) {
            if (a != b && overlap(&views[a], &views[b])) {
                PyErr_SetString(PyExc_ValueError, "an output must share no memory with another buffer");
                goto done;
            }
        }
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = tight((const double *)views[D].buf, n, factor, ceiling, (const int32_t *)views[TABLE].buf,
                   views[EXPONENTS].buf, (int)width, (int32_t *)views[COUNTS].buf, (int64_t *)views[SUMS].buf, groups);
    Py_END_ALLOW_THREADS
    if (status == -1) {
        PyErr_NoMemory();
        goto done;
    }
    if (status == -2) {
        PyErr_SetString(PyExc_ValueError, "an entry times the factor is negative or NaN");
        goto done;
    }
    result = Py_NewRef(Py_None);
done:
    for (int v = 0; v < taken; v++) {
        PyBuffer_Release(&views[v]);
    }
    return result;
}

static PyMethodDef METHODS[] = {
    {"tight_block", tight_block, METH_VARARGS,
     "tight_block(d, factor, ceiling, table, exponents, counts, sums): y = min(fl(d * factor), ceiling), s = trunc(y); "
     "write s >> 16 into exponents, table[s & 0xffff] into counts and each exponent's sum of counts into sums."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_tight_envelope",
                                    "The tight envelope of exponent groups in one pass over a block.", -1, METHODS,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__tight_envelope(void) { return PyModule_Create(&MODULE); }
