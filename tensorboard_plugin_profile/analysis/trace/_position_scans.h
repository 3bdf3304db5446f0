/* Scans of the trace index that return positions (included by _layout.c; numpy
 * fallbacks in analysis/trace/layout.py, tests/analysis/test_trace_layout.py checks both
 * agree). Positions are int32 (the index holds under 2**31 events), returned as bytes.
 *
 * break_cuts(begin, duration, source, seg_bounds, size)
 *     bytes of int32 positions p whose break key is >= size: p not the first of its
 *     segment and max(begin[p] - end[p-1], end[p] - begin[p], end[p-1] - begin[p-1])
 *     >= size, or p the first of a non-empty segment (its key is INT64_MAX). The index
 *     keeps no times: begin and duration are per event, read through source[p], and
 *     end = begin + duration (wrapping as numpy does).
 * marked_positions(source, events)
 *     bytes of int32 positions p whose source[p] is one of `events` (int64), in order:
 *     the positions of a few events without inverting all of source.
 */
#ifndef TBPROF_POSITION_SCANS_H
#define TBPROF_POSITION_SCANS_H

/* A growing list of positions; `data` is NULL once out of memory. */
typedef struct {
    int32_t *data;
    Py_ssize_t size, cap;
} Positions;

static void positions_init(Positions *out) {
    out->size = 0, out->cap = 1024;
    out->data = PyMem_RawMalloc((size_t)out->cap * sizeof(int32_t));
}

static void positions_push(Positions *out, int64_t p) {
    if (out->size == out->cap) {
        int32_t *grown = PyMem_RawRealloc(out->data, (size_t)(out->cap *= 2) * sizeof(int32_t));
        if (!grown) PyMem_RawFree(out->data);
        out->data = grown;
        if (!grown) return;
    }
    out->data[out->size++] = (int32_t)p;
}

/* The list as bytes (freed either way); NULL with MemoryError when it ran out. */
static PyObject *positions_bytes(Positions *out) {
    if (!out->data) return PyErr_NoMemory();
    PyObject *result = PyBytes_FromStringAndSize((const char *)out->data,
                                                 out->size * (Py_ssize_t)sizeof(int32_t));
    PyMem_RawFree(out->data);
    out->data = NULL;
    return result;
}

/* --- break_cuts ----------------------------------------------------------------- */
static int64_t max3(int64_t a, int64_t b, int64_t c) {
    int64_t m = a > b ? a : b;
    return m > c ? m : c;
}

/* 0, or -1 when a source is out of range. */
static int break_cuts_loop(const int64_t *begin, const int64_t *duration, Py_ssize_t num_events,
                           const int32_t *source, const int64_t *bounds, Py_ssize_t num_segments,
                           int64_t size, Positions *out) {
    for (Py_ssize_t g = 0; out->data && g < num_segments; g++) {
        uint64_t end_before = 0; /* the previous position's end, and duration */
        int64_t before = 0;
        for (int64_t p = bounds[g]; p < bounds[g + 1] && out->data; p++) {
            uint32_t s = (uint32_t)source[p];
            if (s >= (uint64_t)num_events) return -1;
            int64_t b = begin[s], dur = duration[s];
            int64_t gap = (int64_t)((uint64_t)b - end_before), dur_before = before;
            end_before = (uint64_t)b + (uint64_t)dur, before = dur;
            if (p > bounds[g] && max3(gap, dur, dur_before) < size) continue;
            positions_push(out, p);
        }
    }
    return 0;
}

static PyObject *break_cuts(PyObject *self, PyObject *args) {
    PyObject *o[4];
    long long size;
    if (!PyArg_ParseTuple(args, "OOOOL", &o[0], &o[1], &o[2], &o[3], &size)) return NULL;
    Arg a[4];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    if (get_buffer(o[0], &a[0], 0, 8, -1, "begin") < 0 || get_buffer(o[1], &a[1], 0, 8, LEN(0), "duration") < 0 ||
        get_buffer(o[2], &a[2], 0, 4, -1, "source") < 0 || get_buffer(o[3], &a[3], 0, 8, -1, "seg_bounds") < 0)
        goto done;
    Py_ssize_t n = LEN(2), S = LEN(3) - 1;
    const int64_t *bounds = BUF(3, int64_t);
    int bad = n > INT32_MAX || S < 0 || bounds[0] != 0 || bounds[S] != n;
    for (Py_ssize_t g = 0; g < S && !bad; g++) bad = bounds[g + 1] < bounds[g];
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "break_cuts: bad segment bounds, or 2**31 events");
        goto done;
    }
    Positions cuts;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    positions_init(&cuts);
    ok = break_cuts_loop(BUF(0, int64_t), BUF(1, int64_t), LEN(0), BUF(2, int32_t), bounds, S,
                         (int64_t)size, &cuts);
    Py_END_ALLOW_THREADS
    if (ok < 0) {
        PyMem_RawFree(cuts.data);
        PyErr_SetString(PyExc_ValueError, "break_cuts: source out of range");
        goto done;
    }
    result = positions_bytes(&cuts);
done:
    release(a, 4);
    return result;
}

/* --- marked_positions ----------------------------------------------------------- */
/* 0; -1 when an event number is out of range; -2 out of memory. A bit per event marks
 * the wanted ones (n / 8 bytes: fresh pages are what costs here, not the scan). */
static int marked_loop(const int32_t *source, Py_ssize_t n, const int64_t *events,
                       Py_ssize_t num_events, Positions *out) {
    uint8_t *bits = PyMem_RawCalloc((size_t)n / 8 + 1, 1);
    if (!bits) return -2;
    int ok = 0;
    for (Py_ssize_t k = 0; k < num_events && !ok; k++) {
        if ((uint64_t)events[k] >= (uint64_t)n) ok = -1;
        else bits[events[k] >> 3] |= (uint8_t)(1u << (events[k] & 7));
    }
    for (Py_ssize_t p = 0; p < n && out->data && !ok; p++) {
        uint32_t s = (uint32_t)source[p];
        if (s >= (uint32_t)n) ok = -1;
        else if (bits[s >> 3] & (1u << (s & 7))) positions_push(out, p);
    }
    PyMem_RawFree(bits);
    return ok;
}

static PyObject *marked_positions(PyObject *self, PyObject *args) {
    PyObject *o[2];
    if (!PyArg_ParseTuple(args, "OO", &o[0], &o[1])) return NULL;
    Arg a[2];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    if (get_buffer(o[0], &a[0], 0, 4, -1, "source") < 0 || get_buffer(o[1], &a[1], 0, 8, -1, "events") < 0)
        goto done;
    Positions found;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    positions_init(&found);
    ok = marked_loop(BUF(0, int32_t), LEN(0), BUF(1, int64_t), LEN(1), &found);
    Py_END_ALLOW_THREADS
    if (ok < 0) {
        PyMem_RawFree(found.data);
        if (ok == -1)
            PyErr_SetString(PyExc_ValueError, "marked_positions: event number out of range");
        else
            PyErr_NoMemory();
        goto done;
    }
    result = positions_bytes(&found);
done:
    release(a, 2);
    return result;
}

#endif
