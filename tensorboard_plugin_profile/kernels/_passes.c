/*
 * Optional compiled sequential passes of the analysis (see kernels/passes.py).
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
 *     an instant's type on until a later start (see analysis/steps/sweep.py). The fallback
 *     gets the same pieces by stretching such instants and running sweep_top.
 * previous_enclosing(run, end, out)
 *     out[i] = the latest j < i with run[j] == run[i] and end[j] >= end[i], else -1.
 * first_free_levels(begin, end, out)
 *     events sorted by begin; out[i] = the smallest lane whose previous event
 *     ended at or before begin[i] (a new lane when none is free).
 * dropping_stack(line, begin, end, kept, parent)
 *     activities sorted by (line, begin, longest first); torch-tb-profiler's stack: pop
 *     what ended at or before begin[i]; an activity ending after the top is dropped
 *     (kept 0, parent -1), else kept 1, parent = the top (-1 when empty), and pushed.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buffers.h"
#include "_lane_heap.h"

static int as_int64(PyObject *obj, Arg *arg, int writable, Py_ssize_t n, const char *what) {
    return get_buffer(obj, arg, writable, 8, n, what);
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

/* --- dropping_stack --------------------------------------------------------------- */
static PyObject *dropping_stack(PyObject *self, PyObject *py_args) {
    PyObject *o_line, *o_begin, *o_end, *o_kept, *o_parent;
    if (!PyArg_ParseTuple(py_args, "OOOOO", &o_line, &o_begin, &o_end, &o_kept, &o_parent))
        return NULL;
    Arg a[5];
    memset(a, 0, sizeof(a));
    if (as_int64(o_line, &a[0], 0, -1, "line") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 8;
    if (as_int64(o_begin, &a[1], 0, n, "begin") < 0 || as_int64(o_end, &a[2], 0, n, "end") < 0 ||
        get_buffer(o_kept, &a[3], 1, 1, n, "kept") < 0 ||
        as_int64(o_parent, &a[4], 1, n, "parent") < 0)
        goto fail;
    const int64_t *line = a[0].view.buf, *begin = a[1].view.buf, *end = a[2].view.buf;
    char *kept = a[3].view.buf;
    int64_t *parent = a[4].view.buf;
    int64_t *stack = PyMem_Malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!stack) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    Py_ssize_t top = 0; /* stack size; kept activities of the current line */
    for (Py_ssize_t i = 0; i < n; i++) {
        if (i > 0 && line[i] != line[i - 1]) top = 0;
        while (top > 0 && begin[i] >= end[stack[top - 1]]) top--;
        if (top > 0 && end[i] > end[stack[top - 1]]) { /* ends after its enclosing one */
            kept[i] = 0;
            parent[i] = -1;
            continue;
        }
        kept[i] = 1;
        parent[i] = top > 0 ? stack[top - 1] : -1;
        stack[top++] = i;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(stack);
    release(a, 5);
    Py_RETURN_NONE;
fail:
    release(a, 5);
    return NULL;
}

/* --- first_free_levels ------------------------------------------------------------ */

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
    LaneHeap busy = {mem, mem + cells, 0}, free_lanes = {mem + 2 * cells, mem + 3 * cells, 0};
    Py_BEGIN_ALLOW_THREADS
    int64_t lanes = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        while (busy.size > 0 && busy.key[0] <= begin[i]) {
            lane_heap_push(&free_lanes, busy.lane[0], busy.lane[0]);
            lane_heap_pop(&busy);
        }
        int64_t lane;
        if (free_lanes.size > 0) {
            lane = free_lanes.key[0];
            lane_heap_pop(&free_lanes);
        } else {
            lane = lanes++;
        }
        out[i] = lane;
        lane_heap_push(&busy, end[i], lane);
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
 * pack_boundaries(group, begin, end, kind, num_types, key, layout) -> bool
 *     n spans in, 2n keys out: key[2i] = span i's start, key[2i+1] its end, each
 *     (group - group_min) << (time_bits + tail_bits) | (time - time_min[group])
 *     << tail_bits | tail, tail = is_start * num_types + (num_types - 1 - kind): so
 *     ascending keys are per group, by time, ends before starts, higher types first.
 *     Times count from their group's earliest boundary, so the bits needed grow with
 *     the longest step, not with the profile. layout (5 + groups int64) = [num_types,
 *     time_bits, tail_bits, group_min, groups, time_min of each group...]; the caller
 *     sets layout[3] and layout[4] (group_min, groups = group_max - group_min + 1)
 *     and sizes it. False (keys unset) when the fields need more than 62 bits;
 *     ValueError when a kind is not in [0, num_types) or a group is out of range.
 * step_breakdown(key, layout, win_group, win_begin, win_end, per_type, present, total)
 *     key: packed keys sorted ascending; win_*: one window per step group, win_group
 *     sorted and unique. Runs upstream's tracker (as tracker_top) and, for every gap
 *     between two boundaries of one group that has a window, adds to cell (window,
 *     tracked type): per_type += the gap's overlap with the window, total += its
 *     length, present = 1 when it is not empty. Outputs: (windows x num_types) int64,
 *     zeroed by the caller. These are the sums of the pieces non_overlapping cuts,
 *     without a piece table (about one piece per boundary on real profiles).
 * num_types <= 62 (the keys need 2 * num_types tail values; 62 leaves room). */
static int bit_length(uint64_t v) {
    int bits = 0;
    while (v) {
        bits++;
        v >>= 1;
    }
    return bits;
}

static PyObject *pack_boundaries(PyObject *self, PyObject *py_args) {
    PyObject *o[6];
    Py_ssize_t num_types;
    if (!PyArg_ParseTuple(py_args, "OOOOnOO", &o[0], &o[1], &o[2], &o[3], &num_types, &o[4],
                          &o[5]))
        return NULL;
    Arg a[6];
    memset(a, 0, sizeof(a));
    int64_t *tmax = NULL;
    if (num_types <= 0 || num_types > 62) {
        PyErr_SetString(PyExc_ValueError, "pack_boundaries: num_types out of range");
        return NULL;
    }
    if (as_int64(o[0], &a[0], 0, -1, "group") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 8;
    if (as_int64(o[1], &a[1], 0, n, "begin") < 0 || as_int64(o[2], &a[2], 0, n, "end") < 0 ||
        as_int64(o[3], &a[3], 0, n, "kind") < 0 || as_int64(o[4], &a[4], 1, 2 * n, "key") < 0 ||
        as_int64(o[5], &a[5], 1, -1, "layout") < 0)
        goto fail;
    const int64_t *group = a[0].view.buf, *begin = a[1].view.buf, *end = a[2].view.buf;
    const int64_t *kind = a[3].view.buf;
    int64_t *key = a[4].view.buf, *layout = a[5].view.buf;
    Py_ssize_t size = a[5].view.len / 8;
    if (size < 5 || layout[4] < 1 || layout[4] != size - 5) {
        PyErr_SetString(PyExc_ValueError, "pack_boundaries: layout size != 5 + groups");
        goto fail;
    }
    const int64_t gmin = layout[3], groups = layout[4];
    int64_t *tmin = layout + 5;
    tmax = PyMem_Malloc((size_t)groups * sizeof(int64_t));
    if (!tmax) {
        PyErr_NoMemory();
        goto fail;
    }
    for (int64_t g = 0; g < groups; g++) {
        tmin[g] = INT64_MAX;
        tmax[g] = INT64_MIN;
    }
    int bad = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t g = (uint64_t)group[i] - (uint64_t)gmin;
        if (g >= (uint64_t)groups || kind[i] < 0 || kind[i] >= num_types) {
            bad = 1;
            break;
        }
        int64_t lo = begin[i] < end[i] ? begin[i] : end[i];
        int64_t hi = begin[i] < end[i] ? end[i] : begin[i];
        tmin[g] = lo < tmin[g] ? lo : tmin[g];
        tmax[g] = hi > tmax[g] ? hi : tmax[g];
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "step breakdown: type or group out of range");
        goto fail;
    }
    uint64_t widest = 0;
    for (int64_t g = 0; g < groups; g++) {
        if (tmin[g] > tmax[g]) { /* no span in this group */
            tmin[g] = 0;
            continue;
        }
        uint64_t width = (uint64_t)tmax[g] - (uint64_t)tmin[g];
        widest = width > widest ? width : widest;
    }
    int time_bits = bit_length(widest), tail_bits = bit_length((uint64_t)(2 * num_types - 1));
    PyMem_Free(tmax);
    tmax = NULL;
    if (bit_length((uint64_t)(groups - 1)) + time_bits + tail_bits > 62) {
        release(a, 6);
        Py_RETURN_FALSE;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t g = (uint64_t)group[i] - (uint64_t)gmin, base = (uint64_t)tmin[g];
        uint64_t high = g << (time_bits + tail_bits);
        uint64_t tail = (uint64_t)(num_types - 1 - kind[i]);
        key[2 * i] = (int64_t)(high | ((uint64_t)begin[i] - base) << tail_bits |
                               (tail + (uint64_t)num_types));
        key[2 * i + 1] = (int64_t)(high | ((uint64_t)end[i] - base) << tail_bits | tail);
    }
    Py_END_ALLOW_THREADS
    layout[0] = num_types;
    layout[1] = time_bits;
    layout[2] = tail_bits;
    release(a, 6);
    Py_RETURN_TRUE;
fail:
    PyMem_Free(tmax);
    release(a, 6);
    return NULL;
}

static Py_ssize_t window_slot(const int64_t *wg, Py_ssize_t nw, int64_t group) {
    Py_ssize_t lo = 0, hi = nw;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (wg[mid] < group) lo = mid + 1;
        else hi = mid;
    }
    return lo < nw && wg[lo] == group ? lo : -1;
}

typedef struct {
    const int64_t *key, *wg, *wb, *we;
    int64_t *per_type, *present, *total;
    Py_ssize_t n, nw;
    const int64_t *time_min; /* per group, from group_min on */
    int64_t num_types, tail_bits, group_min, groups, shift, time_mask, tail_mask;
} Breakdown;

/* The tracker and the sums; returns nonzero when the keys are unsorted or malformed.
 * The sums of the current cell stay in registers until the cell changes (rarely:
 * a new type or group), so consecutive pieces do not wait on memory. */
static int breakdown_run(const Breakdown *b, int64_t *count) {
    const int64_t nt = b->num_types;
    int64_t current = 0, group = -1, previous = 0, bad = 0;
    int64_t inside = 0, length = 0, some = 0, base = 0;
    Py_ssize_t slot = -1, cell = -1;
    for (Py_ssize_t i = 0; i < b->n; i++) {
        int64_t k = b->key[i], tail = k & b->tail_mask, g = k >> b->shift;
        bad |= (k < previous) | (tail >= 2 * nt) | (g >= b->groups);
        previous = k;
        if (bad) break;
        if (g != group) { /* a new group: everything starts afresh */
            memset(count, 0, (size_t)nt * sizeof(int64_t));
            current = 0;
            group = g;
            slot = window_slot(b->wg, b->nw, g + b->group_min);
            base = b->time_min[g];
        }
        if (tail >= nt) { /* a start */
            int64_t kind = 2 * nt - 1 - tail;
            count[kind]++;
            if (kind > current) current = kind;
        } else {
            int64_t kind = nt - 1 - tail;
            if (--count[kind] == 0 && kind == current) {
                current = 0;
                for (int64_t t = kind - 1; t > 0; t--) {
                    if (count[t] > 0) {
                        current = t;
                        break;
                    }
                }
            }
        }
        if (slot < 0 || i + 1 == b->n || (b->key[i + 1] >> b->shift) != g) continue;
        int64_t t0 = (int64_t)((uint64_t)((k >> b->tail_bits) & b->time_mask) + (uint64_t)base);
        int64_t t1 = (int64_t)((uint64_t)((b->key[i + 1] >> b->tail_bits) & b->time_mask) +
                               (uint64_t)base);
        Py_ssize_t here = slot * (Py_ssize_t)nt + current;
        if (here != cell) {
            if (cell >= 0) {
                b->per_type[cell] += inside;
                b->total[cell] += length;
                b->present[cell] |= some;
            }
            cell = here;
            inside = length = some = 0;
        }
        int64_t lo = t0 > b->wb[slot] ? t0 : b->wb[slot];
        int64_t hi = t1 < b->we[slot] ? t1 : b->we[slot];
        inside += hi > lo ? hi - lo : 0;
        length += t1 - t0;
        some |= t1 > t0;
    }
    if (cell >= 0) {
        b->per_type[cell] += inside;
        b->total[cell] += length;
        b->present[cell] |= some;
    }
    return bad != 0;
}

static PyObject *step_breakdown(PyObject *self, PyObject *py_args) {
    PyObject *o[8];
    if (!PyArg_ParseTuple(py_args, "OOOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6],
                          &o[7]))
        return NULL;
    Arg a[8];
    memset(a, 0, sizeof(a));
    int64_t *count = NULL;
    if (as_int64(o[0], &a[0], 0, -1, "key") < 0 || as_int64(o[1], &a[1], 0, -1, "layout") < 0 ||
        as_int64(o[2], &a[2], 0, -1, "win_group") < 0)
        goto fail;
    Breakdown b;
    b.n = a[0].view.len / 8;
    b.nw = a[2].view.len / 8;
    const int64_t *layout = a[1].view.buf;
    if (a[1].view.len < 5 * 8 || layout[4] < 1 || layout[4] != a[1].view.len / 8 - 5) {
        PyErr_SetString(PyExc_ValueError, "step_breakdown: layout size != 5 + groups");
        goto fail;
    }
    b.num_types = layout[0];
    int64_t time_bits = layout[1];
    b.tail_bits = layout[2];
    if (b.num_types <= 0 || b.num_types > 62 || time_bits < 0 || b.tail_bits < 1 ||
        time_bits + b.tail_bits > 62 || (2 * b.num_types - 1) >> b.tail_bits) {
        PyErr_SetString(PyExc_ValueError, "step_breakdown: bad key layout");
        goto fail;
    }
    Py_ssize_t cells = b.nw * (Py_ssize_t)b.num_types;
    if (as_int64(o[3], &a[3], 0, b.nw, "win_begin") < 0 ||
        as_int64(o[4], &a[4], 0, b.nw, "win_end") < 0 ||
        as_int64(o[5], &a[5], 1, cells, "per_type") < 0 ||
        as_int64(o[6], &a[6], 1, cells, "present") < 0 ||
        as_int64(o[7], &a[7], 1, cells, "total") < 0)
        goto fail;
    b.key = a[0].view.buf;
    b.wg = a[2].view.buf;
    b.wb = a[3].view.buf;
    b.we = a[4].view.buf;
    b.per_type = a[5].view.buf;
    b.present = a[6].view.buf;
    b.total = a[7].view.buf;
    b.group_min = layout[3];
    b.groups = layout[4];
    b.time_min = layout + 5;
    b.shift = time_bits + b.tail_bits;
    b.tail_mask = ((int64_t)1 << b.tail_bits) - 1;
    b.time_mask = ((int64_t)1 << time_bits) - 1;
    count = PyMem_Calloc((size_t)b.num_types, sizeof(int64_t));
    if (!count) {
        PyErr_NoMemory();
        goto fail;
    }
    int bad;
    Py_BEGIN_ALLOW_THREADS
    bad = breakdown_run(&b, count);
    Py_END_ALLOW_THREADS
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "step_breakdown: keys not sorted or out of range");
        goto fail;
    }
    PyMem_Free(count);
    release(a, 8);
    Py_RETURN_NONE;
fail:
    PyMem_Free(count);
    release(a, 8);
    return NULL;
}
/* === end of stream A section ======================================================= */

/* --- stable_order ------------------------------------------------------------------
 * np.argsort(key, kind="stable") of 8-byte integer keys: an LSD radix sort of each key
 * relative to the least (signed keys read with the sign bit flipped, so their order is the
 * unsigned order), RADIX_BITS a pass, as many passes as the range of the keys needs, and a
 * pass skipped when every key has the same digit there. Each pass scatters in input order,
 * so equal keys keep it: the order is the stable one, whatever the passes. Memory beside
 * `out`: two key buffers and one position buffer, 24 bytes a key (none for one pass), in
 * the caller's `scratch` when given. */
#define RADIX_BITS 11
#define RADIX (1 << RADIX_BITS)
#define MAX_RADIX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

static int radix_order(const uint64_t *key, Py_ssize_t n, uint64_t flip, int64_t *out,
                       uint64_t *scratch) {
    if (n <= 0) return 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t v = key[i] ^ flip;
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    uint64_t range = hi - lo;
    int bits = range ? 64 - __builtin_clzll(range) : 0;
    int passes = (bits + RADIX_BITS - 1) / RADIX_BITS;
    Py_ssize_t *count = passes ? calloc((size_t)passes * RADIX, sizeof(Py_ssize_t)) : NULL;
    if (passes && !count) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        uint64_t v = (key[i] ^ flip) - lo;
        for (int p = 0; p < passes; p++) count[p * RADIX + ((v >> (p * RADIX_BITS)) & (RADIX - 1))]++;
    }
    int need[MAX_RADIX_PASSES], m = 0;
    uint64_t first = (key[0] ^ flip) - lo;
    for (int p = 0; p < passes; p++)
        if (count[p * RADIX + ((first >> (p * RADIX_BITS)) & (RADIX - 1))] != n) need[m++] = p;
    if (m == 0) {
        for (Py_ssize_t i = 0; i < n; i++) out[i] = i;
        free(count);
        return 0;
    }
    /* The caller's scratch (3n values: numpy memory, so a block pool may serve it), or ours. */
    uint64_t *own = NULL, *keys[2] = {NULL, NULL};
    int64_t *spare = NULL;
    int failed = 0;
    if (m > 1) {
        uint64_t *room = scratch ? scratch : (own = malloc((size_t)n * 3 * sizeof(uint64_t)));
        failed = !room;
        if (room) {
            keys[0] = room;
            keys[1] = room + n;
            spare = (int64_t *)(room + 2 * (size_t)n);
        }
    }
    if (!failed) {
        const uint64_t *src_key = NULL; /* NULL: the input, made relative on the fly */
        const int64_t *src_pos = NULL;  /* NULL: the input's own positions */
        for (int j = 0; j < m; j++) {
            int p = need[j], shift = p * RADIX_BITS, last = j == m - 1;
            Py_ssize_t *offset = count + (size_t)p * RADIX, at = 0;
            for (int d = 0; d < RADIX; d++) {
                Py_ssize_t c = offset[d];
                offset[d] = at;
                at += c;
            }
            int64_t *dst_pos = ((m - 1 - j) % 2 == 0) ? out : spare; /* the last pass: out */
            uint64_t *dst_key = last ? NULL : keys[j % 2];
            for (Py_ssize_t i = 0; i < n; i++) {
                uint64_t v = src_key ? src_key[i] : (key[i] ^ flip) - lo;
                Py_ssize_t to = offset[(v >> shift) & (RADIX - 1)]++;
                if (dst_key) dst_key[to] = v;
                dst_pos[to] = src_pos ? src_pos[i] : i;
            }
            src_key = dst_key;
            src_pos = dst_pos;
        }
    }
    free(own);
    free(count);
    return failed ? -1 : 0;
}

static PyObject *stable_order(PyObject *self, PyObject *py_args) {
    PyObject *o_key, *o_out, *o_scratch = Py_None;
    int is_signed;
    if (!PyArg_ParseTuple(py_args, "OpO|O", &o_key, &is_signed, &o_out, &o_scratch)) return NULL;
    Arg a[3];
    memset(a, 0, sizeof(a));
    if (get_buffer(o_key, &a[0], 0, 8, -1, "key") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 8;
    if (as_int64(o_out, &a[1], 1, n, "out") < 0) goto fail;
    if (o_scratch != Py_None && get_buffer(o_scratch, &a[2], 1, 8, 3 * n, "scratch") < 0)
        goto fail;
    const uint64_t *key = a[0].view.buf;
    int64_t *out = a[1].view.buf;
    uint64_t *scratch = a[2].held ? a[2].view.buf : NULL;
    uint64_t flip = is_signed ? (uint64_t)1 << 63 : 0;
    int failed;
    Py_BEGIN_ALLOW_THREADS
    failed = radix_order(key, n, flip, out, scratch);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto fail;
    }
    release(a, 3);
    Py_RETURN_NONE;
fail:
    release(a, 3);
    return NULL;
}

/* --- order_runs --------------------------------------------------------------------
 * After a stable order by key: each run of equal keys put in order of the `then` arrays in
 * turn, then of input position (what np.lexsort((*reversed(then), key)) gives). Runs are a
 * flow's few ends: insertion sort; a long run (ids reused) is merge sorted. */
#define MAX_THEN 4
typedef struct {
    const int64_t *then[MAX_THEN];
    int k;
} RunOrder;

static inline int run_less(const RunOrder *r, int64_t a, int64_t b) {
    for (int t = 0; t < r->k; t++) {
        int64_t x = r->then[t][a], y = r->then[t][b];
        if (x != y) return x < y;
    }
    return a < b;
}

static void merge_run(const RunOrder *r, int64_t *v, int64_t *tmp, Py_ssize_t n) {
    if (n <= 24) {
        for (Py_ssize_t i = 1; i < n; i++) {
            int64_t x = v[i];
            Py_ssize_t j = i;
            while (j > 0 && run_less(r, x, v[j - 1])) {
                v[j] = v[j - 1];
                j--;
            }
            v[j] = x;
        }
        return;
    }
    Py_ssize_t half = n / 2;
    merge_run(r, v, tmp, half);
    merge_run(r, v + half, tmp, n - half);
    memcpy(tmp, v, (size_t)half * sizeof(int64_t));
    Py_ssize_t i = 0, j = half, o = 0;
    while (i < half && j < n) v[o++] = run_less(r, v[j], tmp[i]) ? v[j++] : tmp[i++];
    while (i < half) v[o++] = tmp[i++];
}

static PyObject *order_runs(PyObject *self, PyObject *py_args) {
    PyObject *o_order, *o_key, *o_then;
    if (!PyArg_ParseTuple(py_args, "OOO!", &o_order, &o_key, &PyTuple_Type, &o_then)) return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(o_then);
    if (k > MAX_THEN) {
        PyErr_SetString(PyExc_ValueError, "order_runs: at most 4 arrays after the key");
        return NULL;
    }
    Arg a[2 + MAX_THEN];
    memset(a, 0, sizeof(a));
    int64_t *tmp = NULL;
    if (as_int64(o_order, &a[0], 1, -1, "order") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 8;
    if (get_buffer(o_key, &a[1], 0, 8, -1, "key") < 0) goto fail;
    RunOrder r = {{NULL}, (int)k};
    for (Py_ssize_t t = 0; t < k; t++) {
        if (as_int64(PyTuple_GET_ITEM(o_then, t), &a[2 + t], 0, a[1].view.len / 8, "then") < 0)
            goto fail;
        r.then[t] = a[2 + t].view.buf;
    }
    int64_t *order = a[0].view.buf;
    const uint64_t *key = a[1].view.buf;
    Py_ssize_t rows = a[1].view.len / 8;
    for (Py_ssize_t i = 0; i < n; i++)
        if (order[i] < 0 || order[i] >= rows) {
            PyErr_SetString(PyExc_IndexError, "order_runs: a position outside the key");
            goto fail;
        }
    tmp = PyMem_Malloc((size_t)(n / 2 + 1) * sizeof(int64_t));
    if (!tmp) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n;) {
        Py_ssize_t j = i + 1;
        while (j < n && key[order[j]] == key[order[i]]) j++;
        if (j - i > 1 && k > 0) merge_run(&r, order + i, tmp, j - i);
        i = j;
    }
    Py_END_ALLOW_THREADS
    PyMem_Free(tmp);
    release(a, 2 + MAX_THEN);
    Py_RETURN_NONE;
fail:
    PyMem_Free(tmp);
    release(a, 2 + MAX_THEN);
    return NULL;
}

static PyMethodDef methods[] = {
    {"sweep_top", sweep_top, METH_VARARGS, "Highest open type after each sorted boundary."},
    {"stable_order", stable_order, METH_VARARGS, "Stable argsort of 8-byte integer keys."},
    {"order_runs", order_runs, METH_VARARGS, "Runs of equal keys ordered by later arrays."},
    {"tracker_top", tracker_top, METH_VARARGS, "Upstream's priority tracker per boundary."},
    {"previous_enclosing", previous_enclosing, METH_VARARGS,
     "Latest earlier event of the run ending at or after each event."},
    {"first_free_levels", first_free_levels, METH_VARARGS, "Greedy lanes of sorted events."},
    {"dropping_stack", dropping_stack, METH_VARARGS,
     "torch-tb-profiler's stack over sorted activities: kept and parent."},
    /* stream A: step breakdown */
    {"pack_boundaries", pack_boundaries, METH_VARARGS, "Packed sort keys of span boundaries."},
    {"step_breakdown", step_breakdown, METH_VARARGS,
     "Per step window and type: tracked time inside the window, in all, and presence."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_passes",
                                    "Compiled sequential analysis passes.", -1, methods};

PyMODINIT_FUNC PyInit__passes(void) { return PyModule_Create(&module); }
