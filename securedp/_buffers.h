/* The buffer checks of securedp's C extensions, in one place (included by _sha256_heads.c, _hash_codes.c and
 * _tight_envelope.c).
 *
 * Each extension releases the GIL while it runs, so another thread may write a buffer meanwhile: a value that
 * decides where memory is read or written is read once (read_once) and checked where it is used. A buffer is
 * taken only C-contiguous with its format (get_buffer), must hold native, aligned 8-byte integers of the
 * expected struct codes (native_words), and an output may share no byte with an input (overlap).
 */
#ifndef SECUREDP_BUFFERS_H
#define SECUREDP_BUFFERS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* 1 when two buffers share a byte. */
static int overlap(const Py_buffer *a, const Py_buffer *b) {
    uintptr_t a0 = (uintptr_t)a->buf, b0 = (uintptr_t)b->buf;
    return a->len > 0 && b->len > 0 && a0 < b0 + (uintptr_t)b->len && b0 < a0 + (uintptr_t)a->len;
}

/* 1 when a buffer holds native items of ``size`` bytes (a power of two) of one of the struct codes in ``codes``
 * ("ql": signed 8-byte integers, "d": doubles), aligned to their size. */
static int native_items(const Py_buffer *view, Py_ssize_t size, const char *codes) {
    const char *f = view->format;
    if (f == NULL || view->itemsize != size || view->len % size != 0 || ((uintptr_t)view->buf & (uintptr_t)(size - 1)) != 0) {
        return 0;
    }
    if (*f == '@' || *f == '=' || (*f == '<' && PY_LITTLE_ENDIAN) || ((*f == '>' || *f == '!') && !PY_LITTLE_ENDIAN)) {
        f++;
    }
    return f[0] != '\0' && f[1] == '\0' && strchr(codes, f[0]) != NULL;
}

/* 1 when a buffer holds native 8-byte integers of one of the struct codes in ``codes`` ("ql": signed), 8-byte
 * aligned. */
static int native_words(const Py_buffer *view, const char *codes) { return native_items(view, 8, codes); }

/* One read of an int64 that another thread may be writing (the GIL is released): the compiler may not read it
 * again after it was checked. */
static inline int64_t read_once(const int64_t *at) { return *(const volatile int64_t *)at; }

/* A C-contiguous buffer of ``obj`` (with its format; writable if asked), a TypeError if it has none. */
static int get_buffer(PyObject *obj, Py_buffer *view, int writable, int position) {
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0)) < 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "argument %d must be a C-contiguous%s buffer", position,
                     writable ? " writable" : "");
        return -1;
    }
    return 0;
}

#endif
