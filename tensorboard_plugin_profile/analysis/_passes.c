/*
 * Optional compiled sequential passes of the analysis (see analysis/passes.py).
 *
 * Why: a few passes carry state from one event to the next (a stack, a running
 * count per type, a heap of free lanes). numpy can only express them with extra
 * rounds or per-type copies of the whole input; a single loop here is O(n) (or
 * O(n log n) for the heap) with no temporary arrays. passes.py holds a numpy /
 * pure-Python fallback giving identical results, and a test checks both agree.
 *
 * All arrays are C-contiguous int64 buffers (numpy arrays); results are written
 * into an output buffer the caller allocated. The GIL is released while looping.
 *
 * sweep_top(group, kind, start, num_types, out)
 *     boundaries sorted per group; kind in [0, num_types); start 1 = a span starts,
 *     0 = it ends. out[i] = the highest type with a positive running count after
 *     boundary i (counts run over the whole array: each group is balanced), else 0.
 * tracker_top(group, kind, start, num_types, out)
 *     the same input; out[i] = upstream's tracked type after boundary i, which keeps
 *     an instant's type on until a later start (see step_sweep.py). The fallback
 *     gets the same pieces by stretching such instants and running sweep_top.
 * previous_enclosing(run, end, out)
 *     out[i] = the latest j < i with run[j] == run[i] and end[j] >= end[i], else -1.
 * first_free_levels(begin, end, out)
 *     events sorted by begin; out[i] = the smallest lane whose previous event
 *     ended at or before begin[i] (a new lane when none is free).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    Py_buffer view;
    int held;
} Arg;

static int as_int64(PyObject *obj, Arg *arg, int writable, Py_ssize_t n, const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &arg->view, flags) < 0) return -1;
    arg->held = 1;
    if (arg->view.itemsize != 8 || (n >= 0 && arg->view.len != n * 8)) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd int64 values", what, n);
        return -1;
    }
    return 0;
}

static void release(Arg *args, int count) {
    for (int i = 0; i < count; i++) {
        if (args[i].held) PyBuffer_Release(&args[i].view);
        args[i].held = 0;
    }
}

/* --- sweep_top, tracker_top -------------------------------------------------------- */
/* Both take (group, kind, start, num_types, out); parsed and range-checked here. */
typedef struct {
    Arg a[4];
    const int64_t *group, *kind, *start;
    int64_t *out, *count; /* count: one running count per type */
    Py_ssize_t n, num_types;
} Sweep;

static void sweep_release(Sweep *s) {
    release(s->a, 4);
    PyMem_Free(s->count);
    s->count = NULL;
}

static int sweep_parse(PyObject *py_args, Sweep *s, const char *name) {
    PyObject *o_group, *o_kind, *o_start, *o_out;
    memset(s, 0, sizeof(*s));
    if (!PyArg_ParseTuple(py_args, "OOOnO", &o_group, &o_kind, &o_start, &s->num_types, &o_out))
        return -1;
    if (s->num_types <= 0 || s->num_types > 1024) {
        PyErr_Format(PyExc_ValueError, "%s: num_types out of range", name);
        return -1;
    }
    if (as_int64(o_kind, &s->a[1], 0, -1, "kind") < 0) return -1;
    s->n = s->a[1].view.len / 8;
    if (as_int64(o_group, &s->a[0], 0, s->n, "group") < 0 ||
        as_int64(o_start, &s->a[2], 0, s->n, "start") < 0 ||
        as_int64(o_out, &s->a[3], 1, s->n, "out") < 0)
        return -1;
    s->group = s->a[0].view.buf;
    s->kind = s->a[1].view.buf;
    s->start = s->a[2].view.buf;
    s->out = s->a[3].view.buf;
    for (Py_ssize_t i = 0; i < s->n; i++) {
        if (s->kind[i] < 0 || s->kind[i] >= s->num_types) {
            PyErr_Format(PyExc_ValueError, "%s: kind out of range", name);
            return -1;
        }
    }
    s->count = PyMem_Calloc((size_t)s->num_types, sizeof(int64_t));
    if (!s->count) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static PyObject *sweep_top(PyObject *self, PyObject *py_args) {
    Sweep s;
    if (sweep_parse(py_args, &s, "sweep_top") < 0) {
        sweep_release(&s);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < s.n; i++) {
        s.count[s.kind[i]] += s.start[i] ? 1 : -1;
        int64_t top = 0;
        for (int64_t t = s.num_types - 1; t > 0; t--) {
            if (s.count[t] > 0) {
                top = t;
                break;
            }
        }
        s.out[i] = top;
    }
    Py_END_ALLOW_THREADS
    sweep_release(&s);
    Py_RETURN_NONE;
}

/* Upstream's priority tracker, literally: the current type rises with every start
 * and, at the end that empties the current type, falls to the highest type still
 * open. Counts and the current type start afresh in each group. */
static PyObject *tracker_top(PyObject *self, PyObject *py_args) {
    Sweep s;
    if (sweep_parse(py_args, &s, "tracker_top") < 0) {
        sweep_release(&s);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    int64_t current = 0;
    for (Py_ssize_t i = 0; i < s.n; i++) {
        int64_t k = s.kind[i];
        if (i > 0 && s.group[i] != s.group[i - 1]) {
            memset(s.count, 0, (size_t)s.num_types * sizeof(int64_t));
            current = 0;
        }
        if (s.start[i]) {
            s.count[k]++;
            if (k > current) current = k;
        } else if (--s.count[k] == 0 && k == current) {
            current = 0;
            for (int64_t t = k - 1; t >= 0; t--) {
                if (s.count[t] > 0) {
                    current = t;
                    break;
                }
            }
        }
        s.out[i] = current;
    }
    Py_END_ALLOW_THREADS
    sweep_release(&s);
    Py_RETURN_NONE;
}

/* --- previous_enclosing ----------------------------------------------------------- */
static PyObject *previous_enclosing(PyObject *self, PyObject *py_args) {
    PyObject *o_run, *o_end, *o_out;
    if (!PyArg_ParseTuple(py_args, "OOO", &o_run, &o_end, &o_out)) return NULL;
    Arg a[3];
    memset(a, 0, sizeof(a));
    if (as_int64(o_run, &a[0], 0, -1, "run") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 8;
    if (as_int64(o_end, &a[1], 0, n, "end") < 0 || as_int64(o_out, &a[2], 1, n, "out") < 0)
        goto fail;
    const int64_t *run = a[0].view.buf, *end = a[1].view.buf;
    int64_t *out = a[2].view.buf;
    int64_t *stack = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!stack) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t top = 0; /* stack size; entries of the current run, ends non-increasing */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0 && run[i] != run[i - 1]) top = 0;
        while (top > 0 && end[stack[top - 1]] < end[i]) top--;
        out[i] = top > 0 ? stack[top - 1] : -1;
        stack[top++] = i;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(stack);
    release(a, 3);
    Py_RETURN_NONE;
fail:
    release(a, 3);
    return NULL;
}

/* --- first_free_levels ------------------------------------------------------------ */
/* A binary min-heap of (key, level) pairs ordered by key, then level. */
typedef struct {
    int64_t *key, *level;
    Py_ssize_t size;
} Heap;

static int heap_less(const Heap *h, Py_ssize_t a, Py_ssize_t b) {
    return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && h->level[a] < h->level[b]);
}

static void heap_swap(Heap *h, Py_ssize_t a, Py_ssize_t b) {
    int64_t k = h->key[a], l = h->level[a];
    h->key[a] = h->key[b];
    h->level[a] = h->level[b];
    h->key[b] = k;
    h->level[b] = l;
}

static void heap_push(Heap *h, int64_t key, int64_t level) {
    Py_ssize_t i = h->size++;
    h->key[i] = key;
    h->level[i] = level;
    while (i > 0 && heap_less(h, i, (i - 1) / 2)) {
        heap_swap(h, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void heap_pop(Heap *h) {
    h->size--;
    h->key[0] = h->key[h->size];
    h->level[0] = h->level[h->size];
    Py_ssize_t i = 0;
    for (;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->size && heap_less(h, l, m)) m = l;
        if (r < h->size && heap_less(h, r, m)) m = r;
        if (m == i) break;
        heap_swap(h, i, m);
        i = m;
    }
}

static PyObject *first_free_levels(PyObject *self, PyObject *py_args) {
    PyObject *o_begin, *o_end, *o_out;
    if (!PyArg_ParseTuple(py_args, "OOO", &o_begin, &o_end, &o_out)) return NULL;
    Arg a[3];
    memset(a, 0, sizeof(a));
    if (as_int64(o_begin, &a[0], 0, -1, "begin") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 8;
    if (as_int64(o_end, &a[1], 0, n, "end") < 0 || as_int64(o_out, &a[2], 1, n, "out") < 0)
        goto fail;
    const int64_t *begin = a[0].view.buf, *end = a[1].view.buf;
    int64_t *out = a[2].view.buf;
    size_t cells = (size_t)(n ? n : 1);
    int64_t *mem = PyMem_Malloc(cells * 4 * sizeof(int64_t));
    if (!mem) {
        PyErr_NoMemory();
        goto fail;
    }
    /* busy: (end, level) of occupied lanes; free: (level, level) of free lanes. */
    Heap busy = {mem, mem + cells, 0}, free_lanes = {mem + 2 * cells, mem + 3 * cells, 0};
    Py_BEGIN_ALLOW_THREADS
    int64_t lanes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        while (busy.size > 0 && busy.key[0] <= begin[i]) {
            heap_push(&free_lanes, busy.level[0], busy.level[0]);
            heap_pop(&busy);
        }
        int64_t lane;
        if (free_lanes.size > 0) {
            lane = free_lanes.key[0];
            heap_pop(&free_lanes);
        } else {
            lane = lanes++;
        }
        out[i] = lane;
        heap_push(&busy, end[i], lane);
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(mem);
    release(a, 3);
    Py_RETURN_NONE;
fail:
    release(a, 3);
    return NULL;
}

/* === Stream A: step breakdown from packed boundary keys ============================
 * step_breakdown(key, layout, win_group, win_begin, win_end, per_type, present, total)
 *     key: sorted packed boundaries (group | time | start, type; see step_sweep.py),
 *     layout: int64 [num_types, time_bits, tail_bits, group_min, time_min];
 *     win_*: one window per step group, win_group sorted and unique.
 *     Runs upstream's tracker (as tracker_top) and, for every non-empty gap between
 *     two boundaries of one group that has a window, adds to row (window, type):
 *     per_type += the gap's overlap with the window, total += its length, and
 *     present = 1. Outputs are (windows x num_types) int64, zeroed by the caller.
 * The same sums as cutting the pieces (non_overlapping) and adding them up, without
 * materialising a piece table (one row per boundary on real profiles). */
static Py_ssize_t window_slot(const int64_t *wg, Py_ssize_t nw, int64_t group) {
    Py_ssize_t lo = 0, hi = nw;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (wg[mid] < group) lo = mid + 1;
        else hi = mid;
    }
    return lo < nw && wg[lo] == group ? lo : -1;
}

static PyObject *step_breakdown(PyObject *self, PyObject *py_args) {
    PyObject *o[8];
    if (!PyArg_ParseTuple(py_args, "OOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7]))
        return NULL;
    Arg a[8];
    memset(a, 0, sizeof(a));
    int64_t *count = NULL;
    if (as_int64(o[0], &a[0], 0, -1, "key") < 0 || as_int64(o[1], &a[1], 0, 5, "layout") < 0 ||
        as_int64(o[2], &a[2], 0, -1, "win_group") < 0)
        goto fail;
    Py_ssize_t n = a[0].view.len / 8, nw = a[2].view.len / 8;
    const int64_t *layout = a[1].view.buf;
    int64_t num_types = layout[0], time_bits = layout[1], tail_bits = layout[2];
    if (num_types <= 0 || num_types > 1024 || time_bits < 0 || tail_bits < 1 ||
        time_bits + tail_bits > 62 || (2 * num_types - 1) >> tail_bits) {
        PyErr_SetString(PyExc_ValueError, "step_breakdown: bad key layout");
        goto fail;
    }
    Py_ssize_t cells = nw * (Py_ssize_t)num_types;
    if (as_int64(o[3], &a[3], 0, nw, "win_begin") < 0 ||
        as_int64(o[4], &a[4], 0, nw, "win_end") < 0 ||
        as_int64(o[5], &a[5], 1, cells, "per_type") < 0 ||
        as_int64(o[6], &a[6], 1, cells, "present") < 0 ||
        as_int64(o[7], &a[7], 1, cells, "total") < 0)
        goto fail;
    const int64_t *key = a[0].view.buf, *wg = a[2].view.buf;
    const int64_t *wb = a[3].view.buf, *we = a[4].view.buf;
    int64_t *per_type = a[5].view.buf, *present = a[6].view.buf, *total = a[7].view.buf;
    const int64_t group_min = layout[3], time_min = layout[4];
    const int shift = (int)(time_bits + tail_bits);
    const int64_t tail_mask = ((int64_t)1 << tail_bits) - 1;
    const int64_t time_mask = ((int64_t)1 << time_bits) - 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t tail = key[i] & tail_mask;
        if (key[i] < 0 || tail >= 2 * num_types || (i > 0 && key[i] < key[i - 1])) {
            PyErr_SetString(PyExc_ValueError, "step_breakdown: keys not sorted or out of range");
            goto fail;
        }
    }
    count = PyMem_Calloc((size_t)num_types, sizeof(int64_t));
    if (!count) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    int64_t current = 0, group = -1;
    Py_ssize_t slot = -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int64_t k = key[i], tail = k & tail_mask, g = k >> shift;
        int is_start = tail >= num_types; /* tail < 2 * num_types: checked above */
        int64_t kind = num_types - 1 - (is_start ? tail - num_types : tail);
        if (i == 0 || g != group) {
            memset(count, 0, (size_t)num_types * sizeof(int64_t));
            current = 0;
            group = g;
            slot = window_slot(wg, nw, g + group_min);
        }
        if (is_start) {
            count[kind]++;
            if (kind > current) current = kind;
        } else if (--count[kind] == 0 && kind == current) {
            current = 0;
            for (int64_t t = kind - 1; t >= 0; t--) {
                if (count[t] > 0) {
                    current = t;
                    break;
                }
            }
        }
        if (slot < 0 || i + 1 == n || (key[i + 1] >> shift) != g) continue;
        int64_t begin = ((k >> tail_bits) & time_mask) + time_min;
        int64_t end = ((key[i + 1] >> tail_bits) & time_mask) + time_min;
        if (end <= begin) continue;
        Py_ssize_t cell = slot * (Py_ssize_t)num_types + current;
        int64_t lo = begin > wb[slot] ? begin : wb[slot];
        int64_t hi = end < we[slot] ? end : we[slot];
        per_type[cell] += hi > lo ? hi - lo : 0;
        total[cell] += end - begin;
        present[cell] = 1;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(count);
    release(a, 8);
    Py_RETURN_NONE;
fail:
    PyMem_Free(count);
    release(a, 8);
    return NULL;
}
/* === end of stream A section ======================================================= */

static PyMethodDef methods[] = {
    {"sweep_top", sweep_top, METH_VARARGS, "Highest open type after each sorted boundary."},
    {"tracker_top", tracker_top, METH_VARARGS, "Upstream's priority tracker per boundary."},
    {"previous_enclosing", previous_enclosing, METH_VARARGS,
     "Latest earlier event of the run ending at or after each event."},
    {"first_free_levels", first_free_levels, METH_VARARGS, "Greedy lanes of sorted events."},
    {"step_breakdown", step_breakdown, METH_VARARGS,
     "Per step window and type: tracked time inside the window, in all, and presence."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_passes",
                                    "Compiled sequential analysis passes.", -1, methods};

PyMODINIT_FUNC PyInit__passes(void) { return PyModule_Create(&module); }
