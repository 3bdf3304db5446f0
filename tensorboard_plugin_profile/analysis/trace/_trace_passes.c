/*
 * Compiled passes of the trace index (see analysis/trace/layout.py, which holds the
 * numpy fallback giving identical results; tests/analysis/test_trace_layout.py checks
 * both agree).
 *
 * Why: laying out 3 M events by (row, depth, begin) with numpy costs some forty
 * whole-column temporaries (sort keys, gathers, comparisons), and on a cold process
 * each one is fresh memory to fault in. Here two counting sorts write every column
 * of the index once, in place, with no temporaries. The GIL is released while looping.
 *
 * Event numbers (order, source, positions) are int32: under 2**31 events, which the
 * callers check (past that, numpy). Times and bounds are int64.
 *
 * row_order(line, line_row, begin, duration, num_rows, order, begin_t, end_t, bounds)
 *     line: int32 line number per event; line_row: int64 row of each line. A stable
 *     counting sort by row: order[i] = the event at position i, begin_t / end_t its
 *     times, bounds[r] the first position of row r (num_rows + 1 values). Returns 1
 *     when every row is then sorted by (begin, longest first), else 0.
 * lay_out(order, bounds, base, begin_t, end_t, depth_t, name, source, begin, end,
 *         row, depth, name_out, positions, break_key, key_bounds)
 *     events sorted by row (bounds) with a depth >= 0 each; key = base[row] + depth.
 *     A stable counting sort by key: source[p] = order[i] of the event put at p,
 *     begin/end/depth (int32)/row (int32)/name_out (int32, name[source]) its columns,
 *     positions[source] = p; key_bounds[k] = first position of key k (K + 1 values);
 *     break_key[p] = max(gap before, own duration, previous duration), INT64_MAX at
 *     the start of every key (written as each event is placed: one pass).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../_buffers.h"

#define BUF(k, type) ((type *)a[k].view.buf)
#define LEN(k) (a[k].view.len / a[k].view.itemsize)

/* --- row_order ------------------------------------------------------------------ */
static int row_order_loop(const int32_t *line, const int64_t *line_row, Py_ssize_t num_lines,
                          const int64_t *begin, const int64_t *dur, Py_ssize_t n,
                          Py_ssize_t num_rows, int32_t *order, int64_t *begin_t, int64_t *end_t,
                          int64_t *bounds, int64_t *next) {
    memset(bounds, 0, (size_t)(num_rows + 1) * sizeof(int64_t));
    for (Py_ssize_t j = 0; j < n; j++) {
        int32_t l = line[j];
        if (l < 0 || l >= num_lines) return -1;
        int64_t r = line_row[l];
        if (r < 0 || r >= num_rows) return -1;
        bounds[r + 1]++;
    }
    for (Py_ssize_t r = 0; r < num_rows; r++) bounds[r + 1] += bounds[r];
    memcpy(next, bounds, (size_t)num_rows * sizeof(int64_t));
    for (Py_ssize_t j = 0; j < n; j++) {
        int64_t i = next[line_row[line[j]]]++;
        order[i] = (int32_t)j;
        begin_t[i] = begin[j];
        end_t[i] = (int64_t)((uint64_t)begin[j] + (uint64_t)dur[j]);
    }
    for (Py_ssize_t r = 0; r < num_rows; r++) {
        for (int64_t i = bounds[r] + 1; i < bounds[r + 1]; i++) {
            if (begin_t[i] > begin_t[i - 1]) continue;
            /* Equal begins: longest first, compared as numpy does (begin - end, wrapping). */
            int64_t minus = (int64_t)((uint64_t)begin_t[i] - (uint64_t)end_t[i]);
            int64_t prev = (int64_t)((uint64_t)begin_t[i - 1] - (uint64_t)end_t[i - 1]);
            if (begin_t[i] < begin_t[i - 1] || minus < prev) return 0;
        }
    }
    return 1;
}

static PyObject *row_order(PyObject *self, PyObject *args) {
    PyObject *o[8];
    Py_ssize_t num_rows;
    if (!PyArg_ParseTuple(args, "OOOOnOOOO", &o[0], &o[1], &o[2], &o[3], &num_rows, &o[4], &o[5],
                          &o[6], &o[7]))
        return NULL;
    Arg a[8];
    memset(a, 0, sizeof(a));
    int64_t *next = NULL;
    if (num_rows < 0) {
        PyErr_SetString(PyExc_ValueError, "row_order: num_rows < 0");
        return NULL;
    }
    if (get_buffer(o[0], &a[0], 0, 4, -1, "line") < 0) goto fail;
    Py_ssize_t n = LEN(0);
    if (n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "row_order: more than 2**31 events");
        goto fail;
    }
    if (get_buffer(o[1], &a[1], 0, 8, -1, "line_row") < 0 || get_buffer(o[2], &a[2], 0, 8, n, "begin") < 0 ||
        get_buffer(o[3], &a[3], 0, 8, n, "duration") < 0 || get_buffer(o[4], &a[4], 1, 4, n, "order") < 0 ||
        get_buffer(o[5], &a[5], 1, 8, n, "begin_t") < 0 || get_buffer(o[6], &a[6], 1, 8, n, "end_t") < 0 ||
        get_buffer(o[7], &a[7], 1, 8, num_rows + 1, "bounds") < 0)
        goto fail;
    next = PyMem_Malloc((size_t)(num_rows + 1) * sizeof(int64_t));
    if (!next) {
        PyErr_NoMemory();
        goto fail;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = row_order_loop(BUF(0, int32_t), BUF(1, int64_t), LEN(1), BUF(2, int64_t),
                        BUF(3, int64_t), n, num_rows, BUF(4, int32_t), BUF(5, int64_t),
                        BUF(6, int64_t), BUF(7, int64_t), next);
    Py_END_ALLOW_THREADS
    PyMem_Free(next);
    release(a, 8);
    if (ok < 0) {
        PyErr_SetString(PyExc_ValueError, "row_order: line or row out of range");
        return NULL;
    }
    return PyBool_FromLong(ok);
fail:
    PyMem_Free(next);
    release(a, 8);
    return NULL;
}

/* --- lay_out -------------------------------------------------------------------- */
typedef struct {
    const int64_t *bounds, *base, *begin_t, *end_t, *depth_t;
    const int32_t *order, *name;
    int64_t *begin, *end, *key, *key_bounds, *next;
    int32_t *source, *positions, *row, *depth, *name_out;
    Py_ssize_t n, num_rows, num_keys;
} Layout;

static int64_t max3(int64_t a, int64_t b, int64_t c) {
    int64_t m = a > b ? a : b;
    return m > c ? m : c;
}

static int lay_out_loop(Layout *L) {
    Py_ssize_t K = L->num_keys;
    memset(L->key_bounds, 0, (size_t)(K + 1) * sizeof(int64_t));
    for (Py_ssize_t r = 0; r < L->num_rows; r++) {
        for (int64_t i = L->bounds[r]; i < L->bounds[r + 1]; i++) {
            int64_t k = L->base[r] + L->depth_t[i];
            if (L->depth_t[i] < 0 || k >= L->base[r + 1]) return -1;
            L->key_bounds[k + 1]++;
        }
    }
    for (Py_ssize_t k = 0; k < K; k++) L->key_bounds[k + 1] += L->key_bounds[k];
    memcpy(L->next, L->key_bounds, (size_t)K * sizeof(int64_t));
    for (Py_ssize_t r = 0; r < L->num_rows; r++) {
        for (int64_t i = L->bounds[r]; i < L->bounds[r + 1]; i++) {
            int64_t k = L->base[r] + L->depth_t[i], p = L->next[k]++;
            int32_t s = L->order[i];
            if (s < 0 || s >= L->n) return -1;
            int64_t b = L->begin_t[i], e = L->end_t[i];
            /* A key's events land at consecutive positions, so p - 1 is the one before. */
            if (p == L->key_bounds[k]) {
                L->key[p] = INT64_MAX;
            } else {
                int64_t gap = (int64_t)((uint64_t)b - (uint64_t)L->end[p - 1]);
                int64_t dur = (int64_t)((uint64_t)e - (uint64_t)b);
                int64_t prev = (int64_t)((uint64_t)L->end[p - 1] - (uint64_t)L->begin[p - 1]);
                L->key[p] = max3(gap, dur, prev);
            }
            L->source[p] = s;
            L->begin[p] = b;
            L->end[p] = e;
            L->row[p] = (int32_t)r;
            L->depth[p] = (int32_t)L->depth_t[i];
            L->name_out[p] = L->name[s];
            L->positions[s] = (int32_t)p;
        }
    }
    return 0;
}

/* Parses lay_out's 16 buffers into L (sizes, kinds and bounds checked); -1 on error. */
static int lay_out_parse(PyObject *args, Arg *a, Layout *L) {
    PyObject *o[16];
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &o[13], &o[14],
                          &o[15]))
        return -1;
    if (get_buffer(o[0], &a[0], 0, 4, -1, "order") < 0 || get_buffer(o[1], &a[1], 0, 8, -1, "bounds") < 0 ||
        get_buffer(o[2], &a[2], 0, 8, LEN(1), "base") < 0)
        return -1;
    Py_ssize_t n = LEN(0), R = LEN(1) - 1;
    const char *names[] = {"begin_t", "end_t", "depth_t", "name", "source", "begin", "end",
                           "row", "depth", "name_out", "positions", "break_key"};
    const int sizes[] = {8, 8, 8, 4, 4, 8, 8, 4, 4, 4, 4, 8};
    for (int k = 3; k < 15; k++)
        if (get_buffer(o[k], &a[k], k >= 7, sizes[k - 3], n, names[k - 3]) < 0) return -1;
    if (get_buffer(o[15], &a[15], 1, 8, -1, "key_bounds") < 0) return -1;
    const int64_t *bounds = BUF(1, int64_t), *base = BUF(2, int64_t);
    int bad = n > INT32_MAX || R < 0 || LEN(15) < 1;
    bad = bad || bounds[0] != 0 || bounds[R] != n || base[0] != 0 || base[R] != LEN(15) - 1;
    for (Py_ssize_t r = 0; r < R && !bad; r++) bad = bounds[r + 1] < bounds[r] || base[r + 1] < base[r];
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "lay_out: bad bounds or base, or 2**31 events");
        return -1;
    }
    *L = (Layout){bounds, base, BUF(3, int64_t), BUF(4, int64_t), BUF(5, int64_t),
                  BUF(0, int32_t), BUF(6, int32_t), BUF(8, int64_t), BUF(9, int64_t),
                  BUF(14, int64_t), BUF(15, int64_t), NULL, BUF(7, int32_t), BUF(13, int32_t),
                  BUF(10, int32_t), BUF(11, int32_t), BUF(12, int32_t), n, R, LEN(15) - 1};
    return 0;
}

static PyObject *lay_out(PyObject *self, PyObject *args) {
    Arg a[16];
    memset(a, 0, sizeof(a));
    Layout L;
    memset(&L, 0, sizeof(L));
    if (lay_out_parse(args, a, &L) < 0) goto fail;
    L.next = PyMem_Malloc((size_t)(L.num_keys + 1) * sizeof(int64_t));
    if (!L.next) {
        PyErr_NoMemory();
        goto fail;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = lay_out_loop(&L);
    Py_END_ALLOW_THREADS
    PyMem_Free(L.next);
    release(a, 16);
    if (ok < 0) {
        PyErr_SetString(PyExc_ValueError, "lay_out: depth or source out of range");
        return NULL;
    }
    Py_RETURN_NONE;
fail:
    release(a, 16);
    return NULL;
}

static PyMethodDef methods[] = {
    {"row_order", row_order, METH_VARARGS, "Stable counting sort of events by row."},
    {"lay_out", lay_out, METH_VARARGS, "Index columns in (row, depth, begin) order."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_trace_passes",
                                    "Compiled passes of the trace index.", -1, methods};

PyMODINIT_FUNC PyInit__trace_passes(void) { return PyModule_Create(&module); }
