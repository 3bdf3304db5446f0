/*
 * Optional compiled nesting depths of trace rows (see analysis/trace/depths.py, which
 * holds the numpy fallback giving identical results; tests/analysis/test_trace_depths.py
 * checks both agree).
 *
 * Why: a depth is how many earlier events of the row are still open, a running state
 * numpy only reaches with a sort of the ends and a second sort to check that the events
 * of one depth are disjoint; one pass with a stack (and a heap for the events that
 * outlive the one they opened in) does both. The GIL is released while looping. The
 * trace index's own layout computes depths inside _layout.c (_row_depths.h, the same
 * algorithm without storing them); this module serves depths.py.
 *
 * row_depths(bounds, begin, end, depth) -> re-laid rows
 *     int64 throughout. Rows are [bounds[r], bounds[r + 1]), events sorted by begin
 *     inside a row (and end >= begin, else ValueError). depth[i] = how many earlier
 *     events of its row are still open at begin[i] (end > begin[i]). When two events of
 *     one depth overlap (the row is not well nested), the row is re-laid by greedy
 *     first-free lanes, as kernels/passes.first_free_levels. Returns the number of
 *     re-laid rows.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../kernels/_buffers.h"
#include "../../kernels/_lane_heap.h"

/* Depths of one row; returns 1 when every depth holds disjoint events. Open ends live on
 * a stack while they nest (ends never increase from bottom to top, so the top is the
 * smallest) and in a min-heap when an event outlives the one it opened inside; the
 * open count is the sum of both. last_end: one slot per depth. */
static int64_t depth_row(const int64_t *begin, const int64_t *end, Py_ssize_t n, int64_t *depth,
                         int64_t *stack, LaneHeap *outliving, int64_t *last_end) {
    int disjoint = 1;
    int64_t seen = 0, top = 0; /* depths 0 .. seen - 1 have a last end (a depth grows by one) */
    outliving->size = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        while (top > 0 && stack[top - 1] <= begin[i]) top--;
        while (outliving->size > 0 && outliving->key[0] <= begin[i]) lane_heap_pop(outliving);
        int64_t d = top + (int64_t)outliving->size;
        depth[i] = d;
        if (d < seen) {
            if (begin[i] < last_end[d]) disjoint = 0;
        } else {
            seen = d + 1;
        }
        last_end[d] = end[i];
        if (top == 0 || end[i] <= stack[top - 1])
            stack[top++] = end[i];
        else
            lane_heap_push(outliving, end[i], 0);
    }
    return disjoint;
}

/* Greedy first-free lanes of one row, as first_free_levels. A lane is free at a begin
 * iff its last event ended by then, so with few lanes a scan of their ends finds the
 * smallest free one; past MAX_SCANNED_LANES the two heaps take over (same lanes). */
#define MAX_SCANNED_LANES 64
static void lanes_row(const int64_t *begin, const int64_t *end, Py_ssize_t n, int64_t *out,
                      LaneHeap *busy, LaneHeap *free_lanes) {
    int64_t lane_end[MAX_SCANNED_LANES], lanes = 0;
    Py_ssize_t i = 0;
    for (; i < n; i++) {
        int64_t lane = 0;
        while (lane < lanes && lane_end[lane] > begin[i]) lane++;
        if (lane == lanes) {
            if (lanes == MAX_SCANNED_LANES) break;
            lanes++;
        }
        lane_end[lane] = end[i];
        out[i] = lane;
    }
    if (i == n) return;
    /* Hand the lanes over to the heaps: busy ones by end, the others free. */
    busy->size = free_lanes->size = 0;
    for (int64_t k = 0; k < lanes; k++) lane_heap_push(busy, lane_end[k], k);
    for (; i < n; i++) {
        while (busy->size > 0 && busy->key[0] <= begin[i]) {
            lane_heap_push(free_lanes, busy->lane[0], busy->lane[0]);
            lane_heap_pop(busy);
        }
        int64_t lane;
        if (free_lanes->size > 0) {
            lane = free_lanes->key[0];
            lane_heap_pop(free_lanes);
        } else {
            lane = lanes++;
        }
        out[i] = lane;
        lane_heap_push(busy, end[i], lane);
    }
}

static PyObject *row_depths(PyObject *self, PyObject *py_args) {
    PyObject *o_bounds, *o_begin, *o_end, *o_depth;
    if (!PyArg_ParseTuple(py_args, "OOOO", &o_bounds, &o_begin, &o_end, &o_depth)) return NULL;
    Arg a[4];
    memset(a, 0, sizeof(a));
    int64_t *mem = NULL;
    if (get_buffer(o_begin, &a[1], 0, 8, -1, "begin") < 0) goto fail;
    Py_ssize_t n = a[1].view.len / 8;
    if (get_buffer(o_bounds, &a[0], 0, 8, -1, "bounds") < 0 ||
        get_buffer(o_end, &a[2], 0, 8, n, "end") < 0 ||
        get_buffer(o_depth, &a[3], 1, 8, n, "depth") < 0)
        goto fail;
    const int64_t *bounds = a[0].view.buf, *begin = a[1].view.buf, *end = a[2].view.buf;
    int64_t *depth = a[3].view.buf;
    Py_ssize_t num_bounds = a[0].view.len / 8;
    int bad = num_bounds < 1 || bounds[0] != 0 || bounds[num_bounds - 1] != n;
    for (Py_ssize_t r = 0; r + 1 < num_bounds && !bad; r++) bad = bounds[r + 1] < bounds[r];
    for (Py_ssize_t r = 0; r + 1 < num_bounds && !bad; r++)
        for (int64_t i = bounds[r]; i < bounds[r + 1] && !bad; i++)
            bad = end[i] < begin[i] || (i > bounds[r] && begin[i] < begin[i - 1]);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "row_depths: rows not sorted by begin");
        goto fail;
    }
    size_t cells = (size_t)(n ? n : 1);
    mem = PyMem_Malloc(cells * 5 * sizeof(int64_t));
    if (!mem) {
        PyErr_NoMemory();
        goto fail;
    }
    LaneHeap busy = {mem, mem + cells, 0}, free_lanes = {mem + 2 * cells, mem + 3 * cells, 0};
    int64_t *last_end = mem + 4 * cells, relaid = 0;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t r = 0; r + 1 < num_bounds; r++) {
        int64_t lo = bounds[r], hi = bounds[r + 1];
        if (hi - lo < 1) continue;
        if (!depth_row(begin + lo, end + lo, hi - lo, depth + lo, free_lanes.key, &busy, last_end)) {
            lanes_row(begin + lo, end + lo, hi - lo, depth + lo, &busy, &free_lanes);
            relaid++;
        }
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(mem);
    release(a, 4);
    return PyLong_FromLongLong(relaid);
fail:
    PyMem_Free(mem);
    release(a, 4);
    return NULL;
}

static PyMethodDef methods[] = {
    {"row_depths", row_depths, METH_VARARGS, "Nesting depth per event of begin-sorted rows."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_depths",
                                    "Compiled nesting depths of trace rows.", -1, methods};

PyMODINIT_FUNC PyInit__depths(void) { return PyModule_Create(&module); }
