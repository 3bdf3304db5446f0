/*
 * The host step database's one pass over events (see analysis/steps/keys.py).
 *
 * Why: choosing step markers and typed spans from a host plane, then packing each
 * span's boundaries into sort keys (as _passes.pack_boundaries does), took a chain
 * of whole-length numpy temporaries: masks, row indices, four gathered span columns,
 * the keys. Here one walk over the event columns in memory order classifies each
 * event through per-name tables and keeps only what the step breakdown needs.
 *
 * host_step_keys(line, line_ok, group, group_mask, name_code, step_code, begin,
 *                duration, span_type, stage_type, stage_rows, skip_rows, windows,
 *                num_types) -> (work, marker_rows, key, layout)
 *     line: per event (int32), an index into line_ok (uint8: 1 = a real line). group
 *     (int64 or int32) with group_mask (bool, 1 = no group; or None). name_code / step_code:
 *     integer codes of any width, -1 = missing (step_code may be None: no step names).
 *     span_type / stage_type (int8, one per name and a last one for a missing name):
 *     the event's step-time type, -1 = a step marker by name, -2 = not step work;
 *     stage_type is used for the events listed in stage_rows (sorted event indices:
 *     root input-pipeline stages). skip_rows (sorted): events that are neither.
 *     windows: None, or (begin, end) int64 arrays sorted by begin; then group and
 *     group_mask are None and an event's group is the index of the last window that
 *     begins at or before it, if it begins before that window's end (else it is
 *     skipped), as numpy's searchsorted(begin, event_begin, "right") - 1 gives it.
 *     An event on a real line with a group is a marker when its name says so or it has
 *     a step name (code >= 0); otherwise, unless not step work, it is a work span
 *     [begin, begin + duration) of its type.
 *     marker_rows: bytes of int64 event indices, ascending. work: the number of work
 *     spans. key: _passes.pack_boundaries' keys of the work spans (a bytearray), except
 *     that a span is left out when an earlier kept span of the same group and type
 *     covers it (boundaries inside the other's, see below), packed per run of
 *     consecutive groups whose keys fit in 62 bits (_step_walk.h plan_chunks): runs is
 *     a list of (key stop, layout bytearray), run r's keys key[stop of r - 1 : its
 *     stop], its layout as pack_boundaries' for those groups. Where all groups fit in
 *     one layout, one run with pack_boundaries' keys and layout. key and runs are None
 *     when there is no span or one group alone spans more than 2^56 ps. The whole
 *     result is None when group ids are sparser than pack_boundaries accepts (4 per
 *     span + 1024).
 *
 * Leaving out a covered span changes no sum of step_breakdown: while the covering span
 * is open its type's count stays >= 1, so the inner span's start and end do not move
 * the tracker (or do so only between boundaries of one moment, where no time passes),
 * and the piece it would split is summed the same in two parts. Its group's earliest
 * and latest times are the covering span's, so the layout is the same too.
 * tests/analysis/test_step_keys.py checks the breakdowns against the numpy path.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../../kernels/_buffers.h"

enum { MARKER = -1, NOT_STEP_WORK = -2, ARGS = 15 };

#include "_step_walk.h"

static int get_codes(PyObject *obj, Arg *arg, Py_ssize_t n, const char *what) {
    if (get_buffer(obj, arg, 0, -1, -1, what) < 0) return -1;
    Py_ssize_t size = arg->view.itemsize;
    if ((size != 1 && size != 2 && size != 4 && size != 8) || arg->view.len != n * size) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd integer codes", what, n);
        return -1;
    }
    return 0;
}

enum { SKIP = -3, BAD_LINE = -4, BAD_NAME = -5 };

/* An event's type, or MARKER, NOT_STEP_WORK, SKIP (not on a real line or no group),
 * BAD_LINE, BAD_NAME; `slot`: its name's entry of the type tables. */
static inline int64_t event_type(const Walk *w, Py_ssize_t i, int64_t l, int64_t c, int step,
                                 Py_ssize_t *slot) {
    if (l < 0 || l >= w->lines) return BAD_LINE;
    if (!w->line_ok[l] || (w->mask && w->mask[i])) return SKIP;
    if (c < -1 || c >= w->names) return BAD_NAME;
    *slot = c < 0 ? w->names : (Py_ssize_t)c;
    return step ? MARKER : w->span_type[*slot];
}

static int add_marker(Walk *w, Py_ssize_t i) {
    if (grow((void **)&w->markers, &w->markers_cap, w->n_markers + 1, 8) < 0) {
        w->error = "out of memory";
        return -1;
    }
    w->markers[w->n_markers++] = i;
    return 0;
}

/* The group of an event starting at b: the last window beginning at or before b, if b
 * is before its end, else -1. `hint` (the previous answer) makes a line's events, in
 * time order, cost a step forward each; a step back costs a binary search. */
static inline int64_t window_of(const Walk *w, int64_t b, Py_ssize_t *hint) {
    Py_ssize_t k = *hint;
    if (k < 0 || w->wb[k] > b) {
        Py_ssize_t lo = 0, hi = w->nw;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (w->wb[mid] <= b) lo = mid + 1;
            else hi = mid;
        }
        k = lo - 1;
    } else {
        while (k + 1 < w->nw && w->wb[k + 1] <= b) k++;
    }
    *hint = k;
    return k >= 0 && b < w->we[k] ? k : -1;
}

/* Whether event i is in a sorted list, `next` its cursor (events come in order). */
static inline int listed(const int64_t *rows, Py_ssize_t count, Py_ssize_t *next, Py_ssize_t i) {
    while (*next < count && rows[*next] < i) ++*next;
    return *next < count && rows[*next] == i;
}

/* The walk for one width of name codes and one test of step codes (line indices are
 * int32), so the compiler sees plain loads. */
#define WALK(NAME, NAME_T, STEP_TEST)                                                    \
    static int NAME(Walk *w) {                                                           \
        const int32_t *line = w->line;                                                   \
        const NAME_T *name = w->name;                                                    \
        Span cover = {0, 1, 0, -1}; /* covers nothing */                                 \
        Py_ssize_t next_stage = 0, next_skip = 0, slot = 0, hint = -1;                   \
        for (Py_ssize_t i = 0; i < w->n; i++) {                                          \
            int64_t t = event_type(w, i, line[i], name[i], STEP_TEST, &slot);            \
            if (t == SKIP || t == NOT_STEP_WORK) continue;                               \
            if (t < MARKER) {                                                            \
                w->error = t == BAD_LINE ? "an event's line is out of range"             \
                                         : "an event's name code is out of range";       \
                return -1;                                                               \
            }                                                                            \
            if (listed(w->skip, w->skips, &next_skip, i)) continue;                      \
            if (t == MARKER) {                                                           \
                if (add_marker(w, i) < 0) return -1;                                     \
                continue;                                                                \
            }                                                                            \
            if (listed(w->stage, w->stages, &next_stage, i)) t = w->stage_type[slot];    \
            int64_t b = w->begin[i], g = w->wb            ? window_of(w, b, &hint)       \
                                         : w->group32 ? w->group32[i]                    \
                                                      : w->group[i];                     \
            int64_t e = (int64_t)((uint64_t)b + (uint64_t)w->duration[i]); /* wraps */   \
            if (g < 0 && w->wb) continue;                                                \
            if (add_span(w, &cover, g, b, e, t) < 0) return -1;                          \
        }                                                                                \
        return 0;                                                                        \
    }
#define STEP_AT(T) (((const T *)w->step)[i] >= 0)
#define WALKS(N, NAME_T)                                                                 \
    WALK(walk_##N##_0, NAME_T, 0)                                                        \
    WALK(walk_##N##_1, NAME_T, STEP_AT(int8_t))                                          \
    WALK(walk_##N##_2, NAME_T, STEP_AT(int16_t))                                         \
    WALK(walk_##N##_4, NAME_T, STEP_AT(int32_t))                                         \
    WALK(walk_##N##_8, NAME_T, STEP_AT(int64_t))
WALKS(1, int8_t)
WALKS(2, int16_t)
WALKS(4, int32_t)
WALKS(8, int64_t)

typedef int (*WalkFn)(Walk *);
static const WalkFn walks[4][5] = {
    {walk_1_0, walk_1_1, walk_1_2, walk_1_4, walk_1_8},
    {walk_2_0, walk_2_1, walk_2_2, walk_2_4, walk_2_8},
    {walk_4_0, walk_4_1, walk_4_2, walk_4_4, walk_4_8},
    {walk_8_0, walk_8_1, walk_8_2, walk_8_4, walk_8_8},
};

static int width_index(Py_ssize_t size) { return size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3; }

static int walk(Walk *w) {
    int step = w->step ? 1 + width_index(w->step_size) : 0;
    return walks[width_index(w->name_size)][step](w);
}

/* The optional inputs: group (or windows), step codes, windows. */
static int parse_optional(PyObject **o, Arg *a, Walk *w) {
    PyObject *wins = o[12];
    if (wins != Py_None) {
        PyObject *wb, *we;
        if (o[2] != Py_None || o[3] != Py_None || !PyArg_ParseTuple(wins, "OO", &wb, &we)) {
            PyErr_SetString(PyExc_ValueError, "host_step_keys: windows = (begin, end), no group");
            return -1;
        }
        if (get_buffer(wb, &a[12], 0, 8, -1, "window begin") < 0) return -1;
        w->wb = a[12].view.buf, w->nw = a[12].view.len / 8;
        if (get_buffer(we, &a[13], 0, 8, w->nw, "window end") < 0) return -1;
        w->we = a[13].view.buf;
    } else {
        if (get_buffer(o[2], &a[2], 0, -1, -1, "group") < 0) return -1;
        Py_ssize_t size = a[2].view.itemsize;
        if ((size != 4 && size != 8) || a[2].view.len != w->n * size) {
            PyErr_Format(PyExc_ValueError, "group: expected %zd int32 or int64 ids", w->n);
            return -1;
        }
        if (size == 4) w->group32 = a[2].view.buf;
        else w->group = a[2].view.buf;
        if (o[3] != Py_None && get_buffer(o[3], &a[3], 0, 1, w->n, "group_mask") < 0) return -1;
        w->mask = o[3] == Py_None ? NULL : a[3].view.buf;
    }
    if (o[5] != Py_None) {
        if (get_codes(o[5], &a[5], w->n, "step_code") < 0) return -1;
        w->step = a[5].view.buf, w->step_size = a[5].view.itemsize;
    }
    return 0;
}

static int parse_tables(Walk *w) {
    if (w->names < 0) {
        PyErr_SetString(PyExc_ValueError, "host_step_keys: empty type tables");
        return -1;
    }
    for (Py_ssize_t i = 0; i <= w->names; i++) {
        int t = w->span_type[i], u = w->stage_type[i];
        if (t < NOT_STEP_WORK || t >= w->num_types || u < NOT_STEP_WORK || u >= w->num_types) {
            PyErr_SetString(PyExc_ValueError, "host_step_keys: a type is out of range");
            return -1;
        }
    }
    return 0;
}

static int parse(PyObject *py_args, Arg *a, Walk *w) {
    PyObject *o[13];
    if (!PyArg_ParseTuple(py_args, "OOOOOOOOOOOOOL", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &o[7], &o[8], &o[9], &o[10], &o[11], &o[12], &w->num_types))
        return -1;
    if (w->num_types <= 0 || w->num_types > 62) {
        PyErr_SetString(PyExc_ValueError, "host_step_keys: num_types out of range");
        return -1;
    }
    if (get_buffer(o[6], &a[6], 0, 8, -1, "begin") < 0) return -1;
    w->n = a[6].view.len / 8;
    if (get_buffer(o[0], &a[0], 0, 4, w->n, "line") < 0 ||
        get_buffer(o[1], &a[1], 0, 1, -1, "line_ok") < 0 ||
        get_codes(o[4], &a[4], w->n, "name_code") < 0 ||
        get_buffer(o[7], &a[7], 0, 8, w->n, "duration") < 0 ||
        get_buffer(o[8], &a[8], 0, 1, -1, "span_type") < 0 ||
        get_buffer(o[9], &a[9], 0, 1, a[8].view.len, "stage_type") < 0 ||
        get_buffer(o[10], &a[10], 0, 8, -1, "stage_rows") < 0 ||
        get_buffer(o[11], &a[11], 0, 8, -1, "skip_rows") < 0 || parse_optional(o, a, w) < 0)
        return -1;
    w->line = a[0].view.buf, w->lines = a[1].view.len, w->line_ok = a[1].view.buf;
    w->name = a[4].view.buf, w->name_size = a[4].view.itemsize;
    w->begin = a[6].view.buf, w->duration = a[7].view.buf;
    w->span_type = a[8].view.buf, w->stage_type = a[9].view.buf, w->names = a[8].view.len - 1;
    w->stage = a[10].view.buf, w->stages = a[10].view.len / 8;
    w->skip = a[11].view.buf, w->skips = a[11].view.len / 8;
    return parse_tables(w);
}

/* The kept spans packed run by run (plan_chunks): (key bytearray, list of (key stop,
 * layout bytearray) per run); Py_None when one group is too wide to pack; NULL on error. */
static PyObject *packed(const Walk *w) {
    int tail_bits = bit_length((uint64_t)(2 * w->num_types - 1));
    Chunk *chunks = NULL;
    Py_ssize_t nc = plan_chunks(w, tail_bits, &chunks);
    if (nc <= 0) return nc ? PyErr_NoMemory() : (Py_INCREF(Py_None), Py_None);
    int64_t groups = w->gmax - w->gmin + 1;
    int32_t *run_of = PyMem_RawMalloc((size_t)groups * sizeof(int32_t));
    int64_t *next = PyMem_RawMalloc((size_t)nc * sizeof(int64_t));
    PyObject *key = NULL, *runs = NULL, *out = NULL;
    if (!run_of || !next) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t c = 0; c < nc; c++)
        for (int64_t g = 0; g < chunks[c].groups; g++) run_of[chunks[c].first + g] = (int32_t)c;
    for (Py_ssize_t i = 0; i < w->n_kept; i++) chunks[run_of[w->kept[i].group - w->gmin]].spans++;
    key = PyByteArray_FromStringAndSize(NULL, 16 * w->n_kept);
    runs = PyList_New(nc);
    if (!key || !runs) goto done;
    for (Py_ssize_t c = 0, stop = 0; c < nc; c++) {
        PyObject *layout = PyByteArray_FromStringAndSize(NULL, 8 * (5 + chunks[c].groups));
        if (!layout) goto done;
        fill_layout(w, &chunks[c], tail_bits, (int64_t *)PyByteArray_AS_STRING(layout));
        stop += 2 * chunks[c].spans;
        PyObject *run = Py_BuildValue("(nN)", stop, layout);
        if (!run) goto done;
        PyList_SET_ITEM(runs, c, run);
    }
    Py_BEGIN_ALLOW_THREADS
    pack(w, chunks, nc, run_of, next, tail_bits, (int64_t *)PyByteArray_AS_STRING(key));
    Py_END_ALLOW_THREADS
    out = Py_BuildValue("(OO)", key, runs);
done:
    Py_XDECREF(key);
    Py_XDECREF(runs);
    PyMem_RawFree(run_of);
    PyMem_RawFree(next);
    PyMem_RawFree(chunks);
    return out;
}

/* (work, marker_rows, key, runs) from a finished walk; key and runs None when the
 * spans do not pack. */
static PyObject *results(const Walk *w) {
    PyObject *markers = PyBytes_FromStringAndSize((const char *)w->markers, 8 * w->n_markers);
    PyObject *keys = NULL;
    if (!markers) return NULL;
    if (w->work && (uint64_t)(w->gmax - w->gmin) < 4 * (uint64_t)w->work + 1024) {
        keys = packed(w);
        if (!keys) {
            Py_DECREF(markers);
            return NULL;
        }
    }
    if (keys && keys != Py_None) {
        PyObject *out = Py_BuildValue("(nNOO)", w->work, markers, PyTuple_GET_ITEM(keys, 0),
                                      PyTuple_GET_ITEM(keys, 1));
        Py_DECREF(keys);
        return out;
    }
    Py_XDECREF(keys);
    return Py_BuildValue("(nNOO)", w->work, markers, Py_None, Py_None);
}

static PyObject *host_step_keys(PyObject *self, PyObject *py_args) {
    Arg a[ARGS];
    Walk w;
    memset(a, 0, sizeof(a));
    memset(&w, 0, sizeof(w));
    w.gmin = INT64_MAX, w.gmax = INT64_MIN;
    PyObject *out = NULL;
    if (parse(py_args, a, &w) == 0) {
        int failed;
        Py_BEGIN_ALLOW_THREADS
        failed = walk(&w) < 0 && !w.sparse;
        Py_END_ALLOW_THREADS
        if (failed && strcmp(w.error, "out of memory") == 0) PyErr_NoMemory();
        else if (failed) PyErr_Format(PyExc_ValueError, "host_step_keys: %s", w.error);
        else if (w.sparse) {
            Py_INCREF(Py_None);
            out = Py_None;
        }
        else out = results(&w);
    }
    walk_free(&w);
    release(a, ARGS);
    return out;
}

static PyMethodDef methods[] = {
    {"host_step_keys", host_step_keys, METH_VARARGS,
     "Step markers and packed span keys of a host plane in one pass."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_keys",
                                    "The host step database's pass over events.", -1, methods};

PyMODINIT_FUNC PyInit__keys(void) { return PyModule_Create(&module); }
