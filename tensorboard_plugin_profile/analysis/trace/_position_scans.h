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
 * Both take an optional last argument `threads` (1 unless given): the positions are cut
 * into ranges (kernels/_threads.h part_count), each scanned into its own list, and the
 * lists joined in order, so the bytes are the same for any count.
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

/* A scan of positions [lo, hi) into `out`: 0, or a negative error. */
typedef int (*range_scan)(const void *scan, Py_ssize_t lo, Py_ssize_t hi, Positions *out);

typedef struct {
    range_scan fn;
    const void *scan;
    Py_ssize_t n;
    Positions out[TBPROF_MAX_PARTS];
    int status[TBPROF_MAX_PARTS];
} PositionParts;

static void positions_part(void *arg, int k, int parts) {
    PositionParts *P = arg;
    positions_init(&P->out[k]);
    if (!P->out[k].data) return;
    P->status[k] = P->fn(P->scan, part_start(P->n, k, parts), part_start(P->n, k + 1, parts), &P->out[k]);
}

/* fn over positions [0, n) in ranges on up to `threads` threads, joined into *joined (the
 * ranges' lists in order); 0, the first range's error, or -2 when out of memory. */
static int scan_positions(range_scan fn, const void *scan, Py_ssize_t n, int threads, Positions *joined) {
    PositionParts P;
    memset(&P, 0, sizeof(P));
    P.fn = fn, P.scan = scan, P.n = n;
    int parts = part_count(n, threads, TBPROF_MAX_PARTS), status = 0;
    run_parts(positions_part, &P, parts, threads);
    Py_ssize_t total = 0;
    for (int k = 0; k < parts; k++) {
        if (!status && P.status[k] < 0) status = P.status[k];
        if (!status && !P.out[k].data) status = -2;
        total += P.out[k].size;
    }
    joined->size = 0, joined->cap = total ? total : 1;
    joined->data = status ? NULL : PyMem_RawMalloc((size_t)joined->cap * sizeof(int32_t));
    if (!status && !joined->data) status = -2;
    for (int k = 0; k < parts; k++) {
        if (!status) memcpy(joined->data + joined->size, P.out[k].data, (size_t)P.out[k].size * sizeof(int32_t));
        joined->size += P.out[k].size;
        PyMem_RawFree(P.out[k].data);
    }
    return status;
}

/* --- break_cuts ----------------------------------------------------------------- */
static int64_t max3(int64_t a, int64_t b, int64_t c) {
    int64_t m = a > b ? a : b;
    return m > c ? m : c;
}

typedef struct {
    const int64_t *begin, *duration, *bounds;
    const int32_t *source;
    Py_ssize_t num_events, num_segments;
    int64_t size;
} CutScan;

/* The cuts among positions [lo, hi): 0, or -1 when a source is out of range. */
static int break_cuts_range(const void *scan, Py_ssize_t lo, Py_ssize_t hi, Positions *out) {
    const CutScan *c = scan;
    const int64_t *bounds = c->bounds;
    if (lo >= hi) return 0;
    Py_ssize_t g = 0, above = c->num_segments; /* the segment holding lo: last g, bounds[g] <= lo */
    while (g + 1 < above) {
        Py_ssize_t mid = g + (above - g) / 2;
        if (bounds[mid] <= lo) g = mid;
        else above = mid;
    }
    uint64_t end_before = 0; /* the previous position's end, and duration */
    int64_t before = 0;
    if (lo > bounds[g]) {
        uint32_t s = (uint32_t)c->source[lo - 1];
        if (s >= (uint64_t)c->num_events) return -1;
        end_before = (uint64_t)c->begin[s] + (uint64_t)c->duration[s], before = c->duration[s];
    }
    for (Py_ssize_t p = lo; p < hi && out->data; p++) {
        while (bounds[g + 1] <= p) g++;
        uint32_t s = (uint32_t)c->source[p];
        if (s >= (uint64_t)c->num_events) return -1;
        int64_t b = c->begin[s], dur = c->duration[s];
        int64_t gap = (int64_t)((uint64_t)b - end_before), dur_before = before;
        end_before = (uint64_t)b + (uint64_t)dur, before = dur;
        if (p > bounds[g] && max3(gap, dur, dur_before) < c->size) continue;
        positions_push(out, p);
    }
    return 0;
}

static PyObject *break_cuts(PyObject *self, PyObject *args) {
    PyObject *o[4];
    long long size;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OOOOL|i", &o[0], &o[1], &o[2], &o[3], &size, &threads)) return NULL;
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
    CutScan scan = {BUF(0, int64_t), BUF(1, int64_t), bounds, BUF(2, int32_t), LEN(0), S, (int64_t)size};
    Py_BEGIN_ALLOW_THREADS
    ok = scan_positions(break_cuts_range, &scan, n, threads, &cuts);
    Py_END_ALLOW_THREADS
    if (ok < 0) {
        if (ok == -2) PyErr_NoMemory();
        else PyErr_SetString(PyExc_ValueError, "break_cuts: source out of range");
        goto done;
    }
    result = positions_bytes(&cuts);
done:
    release(a, 4);
    return result;
}

/* --- marked_positions ----------------------------------------------------------- */
typedef struct {
    const int32_t *source;
    const uint8_t *bits; /* a bit per event: the wanted ones */
    Py_ssize_t n;
} MarkedScan;

/* The marked positions among [lo, hi): 0, or -1 when a source is out of range. */
static int marked_range(const void *scan, Py_ssize_t lo, Py_ssize_t hi, Positions *out) {
    const MarkedScan *m = scan;
    for (Py_ssize_t p = lo; p < hi && out->data; p++) {
        uint32_t s = (uint32_t)m->source[p];
        if (s >= (uint32_t)m->n) return -1;
        if (m->bits[s >> 3] & (1u << (s & 7))) positions_push(out, p);
    }
    return 0;
}

/* 0; -1 when an event number is out of range; -2 out of memory. A bit per event marks
 * the wanted ones (n / 8 bytes: fresh pages are what costs here, not the scan). */
static int marked_loop(const int32_t *source, Py_ssize_t n, const int64_t *events,
                       Py_ssize_t num_events, int threads, Positions *out) {
    uint8_t *bits = PyMem_RawCalloc((size_t)n / 8 + 1, 1);
    if (!bits) return -2;
    int ok = 0;
    for (Py_ssize_t k = 0; k < num_events && !ok; k++) {
        if ((uint64_t)events[k] >= (uint64_t)n) ok = -1;
        else bits[events[k] >> 3] |= (uint8_t)(1u << (events[k] & 7));
    }
    MarkedScan scan = {source, bits, n};
    if (!ok) ok = scan_positions(marked_range, &scan, n, threads, out);
    PyMem_RawFree(bits);
    return ok;
}

static PyObject *marked_positions(PyObject *self, PyObject *args) {
    PyObject *o[2];
    int threads = 1;
    if (!PyArg_ParseTuple(args, "OO|i", &o[0], &o[1], &threads)) return NULL;
    Arg a[2];
    memset(a, 0, sizeof(a));
    PyObject *result = NULL;
    if (get_buffer(o[0], &a[0], 0, 4, -1, "source") < 0 || get_buffer(o[1], &a[1], 0, 8, -1, "events") < 0)
        goto done;
    Positions found = {NULL, 0, 0};
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = marked_loop(BUF(0, int32_t), LEN(0), BUF(1, int64_t), LEN(1), threads, &found);
    Py_END_ALLOW_THREADS
    if (ok < 0) {
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
