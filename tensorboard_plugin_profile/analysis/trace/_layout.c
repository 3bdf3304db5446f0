/*
 * Compiled passes of the trace index (see analysis/trace/layout.py, which holds the
 * numpy fallback giving identical results; tests/analysis/test_trace_layout.py checks
 * both agree).
 *
 * Why: at 11 M events the index build is bound by memory, mostly the kernel faulting in
 * fresh pages for event-sized arrays. So nothing event-sized is made that the index does
 * not keep: the row order lives in the kept column, depths are computed twice rather
 * than stored, and the sort by depth goes through a scratch the size of the largest
 * row. The GIL is released while looping.
 *
 * Event numbers (order, source) are int32: under 2**31 events, which the callers check
 * (past that, numpy). Times are int64, end = begin + duration wrapping as numpy does.
 *
 * row_order(line, line_row, begin, duration, num_rows, order, bounds, threads=1)
 *     line: int32 line number per event; line_row: int64 row of each line. A stable
 *     counting sort by row: order[i] = the event at row position i, bounds[r] the first
 *     position of row r (num_rows + 1 values). Returns 1 when every row is then sorted
 *     by (begin, longest first), else 0. threads > 1: ranges of events and of positions
 *     on that many threads, the same bytes.
 * lay_out(bounds, begin, duration, source, keys_per_row, scratch, threads=1, min_split, window)
 *     source holds on entry the row order (row_order's): events sorted by row (bounds)
 *     and by begin inside a row. A row's positions are its range of the row order, so
 *     each row is laid out there: a pass counts its events per depth (_row_depths.h),
 *     a second one puts them in `scratch` (writable int32, at least one per event of
 *     the largest row) in a stable counting sort by depth, copied back. The caller
 *     makes the scratch with numpy, so inside blockpool.reusing() it is made of freed
 *     buffers the process already holds, not fresh pages beside them. The index keeps
 *     source alone: begin and end are read through it from the planes' columns.
 *     keys_per_row[r] = max depth + 1 (1 for an empty row); returns (re-laid rows,
 *     bytes of int64 event counts per (row, depth) key, rows in turn, rows laid out in
 *     parts), or None when an event ends before it begins (the caller then uses numpy,
 *     from the start). threads > 1: each row of at least min_split events (default
 *     TBPROF_PART_ROWS) is cut at top-level events into parts laid out on that many
 *     threads (_row_split.h; window: LAYOUT_WINDOW unless given, tests make it tiny),
 *     the same bytes for any count.
 * break_cuts, marked_positions: see _position_scans.h.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../kernels/_buffers.h"
#include "../../kernels/_threads.h"
#include "_row_depths.h"

#define BUF(k, type) ((type *)a[k].view.buf)
#define LEN(k) (a[k].view.len / a[k].view.itemsize)

#include "_position_scans.h" /* uses BUF and LEN */

/* --- row_order ------------------------------------------------------------------ */
/* On threads: each part counts the rows of a range of events, the counts give the row
 * bounds and where each part writes its events of each row (after the parts before it:
 * the stable counting sort of one pass), each part places its range, and the time-order
 * check runs over ranges of positions. */
typedef struct {
    const int32_t *line;
    const int64_t *line_row, *begin, *dur;
    Py_ssize_t num_lines, n, num_rows;
    int32_t *order;
    int64_t *bounds, *next; /* next: num_rows per part */
    int pass, status[TBPROF_MAX_PARTS];
} RowOrder;

/* Whether positions [lo, hi) hold each row's events in (begin, longest first) order. */
static int rows_in_time_order(const RowOrder *R, Py_ssize_t lo, Py_ssize_t hi) {
    Py_ssize_t r = 0, above = R->num_rows; /* the row holding lo: last r, bounds[r] <= lo */
    while (r + 1 < above) {
        Py_ssize_t mid = r + (above - r) / 2;
        if (R->bounds[mid] <= lo) r = mid;
        else above = mid;
    }
    for (Py_ssize_t i = lo; i < hi; i++) {
        while (R->bounds[r + 1] <= i) r++;
        if (i == R->bounds[r]) continue;
        int32_t s = R->order[i], t = R->order[i - 1];
        if (R->begin[s] > R->begin[t]) continue;
        if (R->begin[s] < R->begin[t]) return 0;
        /* Equal begins: longest first, compared as numpy does (begin - end, wrapping). */
        if ((int64_t)(0 - (uint64_t)R->dur[s]) < (int64_t)(0 - (uint64_t)R->dur[t])) return 0;
    }
    return 1;
}

static void row_order_part(void *arg, int k, int parts) {
    RowOrder *R = arg;
    Py_ssize_t lo = part_start(R->n, k, parts), hi = part_start(R->n, k + 1, parts);
    int64_t *next = R->next + (size_t)k * (size_t)R->num_rows;
    if (R->pass == 0) {
        R->status[k] = 0;
        for (Py_ssize_t j = lo; j < hi; j++) {
            int32_t l = R->line[j];
            int64_t r = l >= 0 && l < R->num_lines ? R->line_row[l] : -1;
            if (r < 0 || r >= R->num_rows) {
                R->status[k] = -1;
                return;
            }
            next[r]++;
        }
    } else if (R->pass == 1) {
        for (Py_ssize_t j = lo; j < hi; j++) R->order[next[R->line_row[R->line[j]]]++] = (int32_t)j;
    } else {
        R->status[k] = rows_in_time_order(R, lo, hi);
    }
}

/* 1 when every row is then in time order, 0 when not, -1 when a line or row is out of
 * range, -3 when out of memory. */
static int row_order_loop(RowOrder *R, int threads) {
    int parts = part_count(R->n, threads, TBPROF_MAX_PARTS);
    size_t cells = (size_t)parts * (size_t)R->num_rows;
    R->next = PyMem_RawCalloc(cells ? cells : 1, sizeof(int64_t));
    if (!R->next) return -3;
    R->pass = 0;
    run_parts(row_order_part, R, parts, threads);
    for (int k = 0; k < parts; k++)
        if (R->status[k] < 0) return -1;
    R->bounds[0] = 0;
    for (Py_ssize_t r = 0; r < R->num_rows; r++) { /* rows in turn, each part's events in turn */
        int64_t at = R->bounds[r];
        for (int k = 0; k < parts; k++) {
            int64_t *next = R->next + (size_t)k * (size_t)R->num_rows + r, count = *next;
            *next = at, at += count;
        }
        R->bounds[r + 1] = at;
    }
    R->pass = 1;
    run_parts(row_order_part, R, parts, threads);
    R->pass = 2;
    run_parts(row_order_part, R, parts, threads);
    for (int k = 0; k < parts; k++)
        if (!R->status[k]) return 0;
    return 1;
}

static PyObject *row_order(PyObject *self, PyObject *args) {
    PyObject *o[6];
    Py_ssize_t num_rows;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOnOO|i", &o[0], &o[1], &o[2], &o[3], &num_rows, &o[4], &o[5],
                          &threads))
        return NULL;
    Arg a[6];
    memset(a, 0, sizeof(a));
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
        get_buffer(o[5], &a[5], 1, 8, num_rows + 1, "bounds") < 0)
        goto fail;
    RowOrder R = {BUF(0, int32_t), BUF(1, int64_t), BUF(2, int64_t), BUF(3, int64_t), LEN(1), n, num_rows,
                  BUF(4, int32_t), BUF(5, int64_t), NULL};
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = row_order_loop(&R, threads);
    Py_END_ALLOW_THREADS
    PyMem_RawFree(R.next);
    release(a, 6);
    if (ok == -3) return PyErr_NoMemory();
    if (ok < 0) {
        PyErr_SetString(PyExc_ValueError, "row_order: line or row out of range");
        return NULL;
    }
    return PyBool_FromLong(ok);
fail:
    release(a, 6);
    return NULL;
}

/* --- lay_out -------------------------------------------------------------------- */
typedef struct {
    const int64_t *bounds, *begin, *duration;
    int32_t *source; /* the row order on entry */
    int64_t *keys_per_row;
    Py_ssize_t n, num_rows;
    /* Work: one row's sorted order, next position per depth, counts per key. */
    int32_t *sorted;
    int64_t *next, *counts;
    Py_ssize_t num_counts, counts_cap;
    DepthWork w;
} Layout;

/* Appends `more` zero counts; -1 when out of memory. */
static int grow_counts(Layout *L, Py_ssize_t more) {
    if (L->num_counts + more > L->counts_cap) {
        Py_ssize_t cap = 2 * (L->num_counts + more);
        int64_t *counts = PyMem_RawRealloc(L->counts, (size_t)cap * sizeof(int64_t));
        if (!counts) return -1;
        L->counts = counts, L->counts_cap = cap;
    }
    memset(L->counts + L->num_counts, 0, (size_t)more * sizeof(int64_t));
    L->num_counts += more;
    return 0;
}

/* Row r (see lay_out above): events per depth, then a stable counting sort of its range
 * of source by depth (the same depths computed again, not stored). */
static int lay_out_row(Layout *L, Py_ssize_t r, int *relaid) {
    int64_t lo = L->bounds[r], m = L->bounds[r + 1] - lo;
    int32_t *order = L->source + lo;
    RowEvents row = {order, L->begin, L->duration, m, L->n};
    const DepthSink count_only = {NULL, NULL}, sort = {L->sorted, L->next};
    int disjoint = nesting_depths(&row, &count_only, &L->w);
    if (disjoint < 0) return disjoint == -1 ? -2 : -1;
    if (!disjoint) {
        first_free_lanes(&row, &count_only, &L->w);
        ++*relaid;
    }
    int64_t keys = L->w.depths > 0 ? L->w.depths : 1; /* an empty row: one empty key */
    Py_ssize_t first = L->num_counts;
    if (grow_counts(L, keys) < 0) return -3;
    int64_t *counts = L->counts + first, at = 0;
    memcpy(counts, L->w.count, (size_t)L->w.depths * sizeof(int64_t));
    L->keys_per_row[r] = keys;
    for (int64_t d = 0; d < keys; d++) L->next[d] = at, at += counts[d];
    if (disjoint)
        nesting_depths(&row, &sort, &L->w);
    else
        first_free_lanes(&row, &sort, &L->w);
    memcpy(order, L->sorted, (size_t)m * sizeof(int32_t));
    return 0;
}

/* Work arrays for rows of up to `m` events (the sorted scratch is the caller's); -1 when
 * out of memory. Only the first slots of each are written (as many as a row's depths or
 * open events), so their untouched pages are never faulted in. */
static int lay_out_work(Layout *L, Py_ssize_t m) {
    size_t cells = (size_t)(m ? m : 1);
    L->next = PyMem_RawMalloc(cells * 8 * sizeof(int64_t));
    if (!L->next) return -1;
    int64_t *mem = L->next + cells;
    L->w = (DepthWork){mem, mem + cells, mem + 2 * cells, 0, {mem + 3 * cells, mem + 4 * cells, 0},
                       {mem + 5 * cells, mem + 6 * cells, 0}};
    return 0;
}

static Py_ssize_t largest_row(const Layout *L) {
    Py_ssize_t m = 0;
    for (Py_ssize_t r = 0; r < L->num_rows; r++)
        m = L->bounds[r + 1] - L->bounds[r] > m ? L->bounds[r + 1] - L->bounds[r] : m;
    return m;
}

#include "_row_split.h" /* uses Layout and grow_counts */

/* Every row; rows of at least `min_split` events (and 2) are split on `threads` threads
 * (_row_split.h), the others and every row whose split fails laid out on this one.
 * *split = rows laid out in parts. */
static int lay_out_loop(Layout *L, int *relaid, int threads, Py_ssize_t min_split,
                        Py_ssize_t window, int *split) {
    if (lay_out_work(L, largest_row(L)) < 0) return -3;
    for (Py_ssize_t r = 0; r < L->num_rows; r++) {
        Py_ssize_t m = L->bounds[r + 1] - L->bounds[r];
        int ok = 0;
        if (threads > 1 && m >= min_split && m >= 2) {
            ok = lay_out_row_split(L, r, threads, window, relaid);
            if (ok < 0) return ok;
            *split += ok;
        }
        if (ok == 0) ok = lay_out_row(L, r, relaid);
        if (ok < 0) return ok;
    }
    return 0;
}

/* Parses lay_out's 6 buffers into L (sizes, kinds and bounds checked); -1 on error. */
static int lay_out_parse(PyObject *args, Arg *a, Layout *L, int *threads, Py_ssize_t *min_split,
                         Py_ssize_t *window) {
    PyObject *o[6];
    if (!PyArg_ParseTuple(args, "OOOOOO|inn", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], threads,
                          min_split, window))
        return -1;
    if (*window < 1) {
        PyErr_SetString(PyExc_ValueError, "lay_out: window must be positive");
        return -1;
    }
    if (get_buffer(o[0], &a[0], 0, 8, -1, "bounds") < 0 || get_buffer(o[1], &a[1], 0, 8, -1, "begin") < 0)
        return -1;
    Py_ssize_t n = LEN(1), R = LEN(0) - 1;
    if (get_buffer(o[2], &a[2], 0, 8, n, "duration") < 0 || get_buffer(o[3], &a[3], 1, 4, n, "source") < 0 ||
        get_buffer(o[4], &a[4], 1, 8, R, "keys_per_row") < 0)
        return -1;
    const int64_t *bounds = BUF(0, int64_t);
    int bad = n > INT32_MAX || R < 0 || bounds[0] != 0 || bounds[R] != n;
    for (Py_ssize_t r = 0; r < R && !bad; r++) bad = bounds[r + 1] < bounds[r];
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "lay_out: bad bounds, or 2**31 events");
        return -1;
    }
    L->bounds = bounds, L->begin = BUF(1, int64_t), L->duration = BUF(2, int64_t);
    L->source = BUF(3, int32_t), L->keys_per_row = BUF(4, int64_t);
    L->n = n, L->num_rows = R;
    if (get_buffer(o[5], &a[5], 1, 4, -1, "scratch") < 0) return -1;
    if (LEN(5) < largest_row(L)) {
        PyErr_SetString(PyExc_ValueError, "lay_out: scratch smaller than the largest row");
        return -1;
    }
    L->sorted = BUF(5, int32_t);
    return 0;
}

static PyObject *lay_out(PyObject *self, PyObject *args) {
    Arg a[6];
    memset(a, 0, sizeof(a));
    Layout L;
    memset(&L, 0, sizeof(L));
    PyObject *result = NULL;
    int ok = -4, relaid = 0, threads = 1, split = 0;
    Py_ssize_t min_split = TBPROF_PART_ROWS, window = LAYOUT_WINDOW;
    if (lay_out_parse(args, a, &L, &threads, &min_split, &window) == 0) {
        Py_BEGIN_ALLOW_THREADS
        ok = lay_out_loop(&L, &relaid, threads, min_split, window, &split);
        Py_END_ALLOW_THREADS
    }
    if (ok == 0) {
        PyObject *counts = PyBytes_FromStringAndSize((const char *)L.counts,
                                                     L.num_counts * (Py_ssize_t)sizeof(int64_t));
        result = counts ? Py_BuildValue("(iNi)", relaid, counts, split) : NULL;
    } else if (ok == -2) {
        Py_INCREF(Py_None);
        result = Py_None;
    } else if (ok == -3) {
        PyErr_NoMemory();
    } else if (ok == -1) {
        PyErr_SetString(PyExc_ValueError, "lay_out: source out of range");
    }
    PyMem_RawFree(L.next);
    PyMem_RawFree(L.counts);
    release(a, 6);
    return result;
}

static PyMethodDef methods[] = {
    {"row_order", row_order, METH_VARARGS, "Stable counting sort of events by row."},
    {"lay_out", lay_out, METH_VARARGS, "Depths, then index columns in (row, depth, begin) order."},
    {"break_cuts", break_cuts, METH_VARARGS, "Positions whose break key reaches a size."},
    {"marked_positions", marked_positions, METH_VARARGS, "Positions of marked source events."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_layout",
                                    "Compiled passes of the trace index.", -1, methods};

PyMODINIT_FUNC PyInit__layout(void) { return PyModule_Create(&module); }
