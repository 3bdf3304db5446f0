/*
 * Compiled passes of step grouping over the event forest (see kernels/graph_passes.py).
 *
 * Why a forest: upstream nests the events of a line with a stack, so each event's
 * descendants on its line are the events pushed while it stays on the stack, a
 * contiguous range of rows. Storing where that range stops (int32 per row) replaces a
 * child adjacency list (two int64 arrays per row) and lets a flood walk rows in order,
 * jumping over subtrees that are already labelled. The few other edges (inter-thread,
 * producer/consumer, loop) are a small CSR by parent. Node ids are int32 (the caller
 * uses the numpy fallback past 2^31 - 1 rows). The GIL is released while looping.
 *
 * line_forest(line, begin, duration, skip, parent, stop, threads=1)
 *     line int32, begin / duration int64, skip uint8 (empty: none), parent / stop int32
 *     out. parent[i] = upstream's stack parent on its line (-1 for none); stop[i] = the
 *     row where i left the stack (or its line ended): i's descendants are the rows of
 *     (i, stop[i]) not skipped. A skipped row takes no part: stop[i] = i, parent -1.
 *     threads > 1: the rows are split where the stack is empty (see split_forest), the
 *     same output for any count; window: FOREST_WINDOW unless given (tests make it tiny).
 *     Returns how many parts the kept output was made in (1: one pass on one thread).
 * flood(stop, xnodes, xptr, xidx, xbits, order, values, proper, unreached, label,
 *       flooded, crossings) -> bytes of (outer, inner) int64 pairs
 *     label[x] (int64, or int32 when the values and unreached fit) = values[r] of the
 *     first seed order[r] with a path to x (at least one edge when proper), else unreached. Extra edges: xnodes (sorted, int32) are the
 *     nodes with extra children, xidx[xptr[k]:xptr[k+1]] those of xnodes[k]; xbits
 *     marks xnodes (bit x % 8 of byte x / 8). values empty: dense, a seed's value is
 *     the number of seeds that flooded before it. flooded[r] = 1 when seed r was not
 *     reached by an earlier seed. crossings: record every edge from a node labelled
 *     v into one labelled earlier with h != v, as the pair (v, h) (a pair equal to
 *     the previous one is not repeated).
 * csr(keys, values, n, ptr, out)
 *     int64 throughout (step grouping's numpy fallback and the trace layout use it): a
 *     stable counting sort by key in [0, n): ptr[k] .. ptr[k + 1] are the positions of
 *     key k in out, which holds ``values`` in key order (input order within a key).
 * rows_by_code(codes, slot, ptr, out, threads=1) -> rows
 *     codes int8/16/32/64 (a categorical's codes, -1 missing), slot int32 per code plus one
 *     last entry for missing codes (-1: not wanted), ptr int64 of slots + 1. out None:
 *     counts, ptr = where each slot's rows start. Else out (int64, ptr[-1] rows) = the
 *     rows of slot s, in table order, at ptr[s]:ptr[s + 1]. Parts of rows on `threads`
 *     threads, the same output for any count. A code >= len(slot) - 1 is an error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "_buffers.h"
#include "_threads.h"

/* --- line_forest --------------------------------------------------------------------- */
typedef struct {
    int64_t begin, end;
    int32_t row;
} Open;

/* end = begin + duration with numpy's wrap-around, not C's undefined overflow */
static inline int64_t end_of(const int64_t *begin, const int64_t *duration, Py_ssize_t i) {
    return (int64_t)((uint64_t)begin[i] + (uint64_t)duration[i]);
}

/* The stack pass over rows [lo, hi), starting with an empty stack; -1 when the stack cannot
 * grow. *clean (when hi < n) = whether row hi would pop the whole stack, i.e. a pass started
 * at hi with an empty stack continues this one exactly. Called without the GIL. */
static int nest_rows(const int32_t *restrict line, const int64_t *restrict begin,
                     const int64_t *restrict duration, const uint8_t *restrict skip,
                     Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t n, int32_t *restrict parent,
                     int32_t *restrict stop, int *clean) {
    size_t cap = 1024, top = 0;
    Open *stack = malloc(cap * sizeof(Open));
    if (!stack) return -1;
    for (Py_ssize_t i = lo; i < hi; i++) {
        if (i > lo && line[i] != line[i - 1]) {
            while (top > 0) stop[stack[--top].row] = (int32_t)i;
        }
        if (skip && skip[i]) {
            parent[i] = -1;
            stop[i] = (int32_t)i;
            continue;
        }
        int64_t b = begin[i], e = end_of(begin, duration, i);
        int32_t up = -1;
        while (top > 0) {
            const Open *t = &stack[top - 1];
            if (t->begin <= b && e <= t->end) {
                up = t->row;
                break;
            }
            stop[t->row] = (int32_t)i;
            top--;
        }
        parent[i] = up;
        if (top == cap) {
            Open *grown = realloc(stack, 2 * cap * sizeof(Open));
            if (!grown) {
                free(stack);
                return -1;
            }
            stack = grown;
            cap *= 2;
        }
        stack[top].begin = b;
        stack[top].end = e;
        stack[top].row = (int32_t)i;
        top++;
    }
    if (hi < n && clean) {
        *clean = 1;
        if (hi > lo && line[hi] == line[hi - 1] && top > 0) {
            if (skip && skip[hi]) { /* a skipped row pops nothing */
                *clean = 0;
            } else {
                int64_t b = begin[hi], e = end_of(begin, duration, hi);
                for (size_t k = 0; k < top && *clean; k++)
                    *clean = !(stack[k].begin <= b && e <= stack[k].end);
            }
        }
    }
    while (top > 0) stop[stack[--top].row] = (int32_t)hi;
    free(stack);
    return 0;
}

/* Splitting the stack pass. The stack is empty before row s when the line changes at s or
 * no earlier row of the line contains s; a pass started there gives the same rows as one
 * pass. Such rows are frequent (every top-level event), but knowing one for sure needs
 * every earlier row, so each split is guessed from a window of rows before it (row s ends
 * after every row of the window: FOREST_WINDOW rows, more than the gaps between top-level
 * events seen in real profiles) and checked by the part before it when it reaches s (its
 * stack must pop whole there, nest_rows' *clean). A wrong guess (an event longer than the
 * window encloses s) costs one pass more: the rows are run again on one thread. */
#define FOREST_WINDOW 65536

typedef struct {
    const int32_t *line;
    const int64_t *begin, *duration;
    const uint8_t *skip;
    Py_ssize_t n, window;
    int32_t *parent, *stop;
    Py_ssize_t start[TBPROF_MAX_PARTS + 1]; /* part k runs rows [start[k], start[k + 1]) */
    int clean[TBPROF_MAX_PARTS], status[TBPROF_MAX_PARTS];
} Forest;

/* A row at or after t where the stack is likely empty (see above), or -1 if none is seen
 * within the window after t. */
static Py_ssize_t guess_split(const Forest *f, Py_ssize_t t) {
    Py_ssize_t from = t > f->window ? t - f->window : 0;
    Py_ssize_t limit = t + f->window < f->n ? t + f->window : f->n;
    int64_t latest = INT64_MIN; /* the latest end of the window's rows on the line */
    int any = 0;
    for (Py_ssize_t i = from; i < limit; i++) {
        if (i > from && f->line[i] != f->line[i - 1]) {
            if (i >= t) return i;
            any = 0;
        }
        if (f->skip && f->skip[i]) continue;
        int64_t e = end_of(f->begin, f->duration, i);
        if (i >= t && i > 0 && (!any || e > latest)) return i;
        if (!any || e > latest) latest = e;
        any = 1;
    }
    return -1;
}

static void forest_part(void *arg, int part, int parts) {
    Forest *f = arg;
    (void)parts;
    f->clean[part] = 1;
    f->status[part] = nest_rows(f->line, f->begin, f->duration, f->skip, f->start[part],
                                f->start[part + 1], f->n, f->parent, f->stop, &f->clean[part]);
}

/* The whole stack pass on up to `threads` threads: the number of parts kept (1 when the
 * rows were run on one thread), -1 when out of memory. */
static int split_forest(Forest *f, int threads) {
    int wanted = part_count(f->n, threads, TBPROF_MAX_PARTS), parts = 0;
    f->start[0] = 0;
    for (int k = 1; k < wanted; k++) {
        Py_ssize_t s = guess_split(f, part_start(f->n, k, wanted));
        if (s > f->start[parts]) f->start[++parts] = s;
    }
    f->start[++parts] = f->n;
    if (parts > 1) {
        run_parts(forest_part, f, parts, threads);
        int ok = 1;
        for (int k = 0; k < parts; k++) {
            if (f->status[k] < 0) return -1;
            ok &= k == parts - 1 || f->clean[k];
        }
        if (ok) return parts;
    }
    return nest_rows(f->line, f->begin, f->duration, f->skip, 0, f->n, f->n, f->parent,
                     f->stop, NULL) < 0 ? -1 : 1;
}

static PyObject *line_forest(PyObject *self, PyObject *py_args) {
    PyObject *o[6];
    int threads = 1;
    Py_ssize_t window = FOREST_WINDOW;
    if (!PyArg_ParseTuple(py_args, "OOOOOO|in", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &threads, &window))
        return NULL;
    if (window < 1) {
        PyErr_SetString(PyExc_ValueError, "line_forest: window must be positive");
        return NULL;
    }
    Arg a[6];
    memset(a, 0, sizeof(a));
    if (get_buffer(o[0], &a[0], 0, 4, -1, "line") < 0) goto fail;
    Py_ssize_t n = a[0].view.len / 4;
    if (n >= INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "line_forest: too many rows for int32 ids");
        goto fail;
    }
    if (get_buffer(o[1], &a[1], 0, 8, n, "begin") < 0 ||
        get_buffer(o[2], &a[2], 0, 8, n, "duration") < 0 ||
        get_buffer(o[3], &a[3], 0, 1, -1, "skip") < 0 ||
        get_buffer(o[4], &a[4], 1, 4, n, "parent") < 0 ||
        get_buffer(o[5], &a[5], 1, 4, n, "stop") < 0)
        goto fail;
    if (a[3].view.len != 0 && a[3].view.len != n) {
        PyErr_SetString(PyExc_ValueError, "line_forest: skip has the wrong length");
        goto fail;
    }
    Forest f = {a[0].view.buf, a[1].view.buf, a[2].view.buf,
                a[3].view.len ? a[3].view.buf : NULL, n, window, a[4].view.buf, a[5].view.buf};
    int parts;
    Py_BEGIN_ALLOW_THREADS
    parts = split_forest(&f, threads);
    Py_END_ALLOW_THREADS
    release(a, 6);
    if (parts < 0) return PyErr_NoMemory();
    return PyLong_FromLong(parts);
fail:
    release(a, 6);
    return NULL;
}

/* --- flood --------------------------------------------------------------------------- */
typedef struct {
    const int32_t *stop, *xnodes, *xidx;
    const int64_t *xptr;
    const uint8_t *xbits;
    Py_ssize_t n, num_xnodes;
    int64_t *label, unreached; /* label: int64 per node, or NULL when label32 is used */
    int32_t *label32;          /* int32 labels (values and unreached fit in int32) */
    int32_t *work; /* rows labelled whose range and extra children wait to be walked */
    size_t top, cap;
    int64_t *pairs; /* crossings, two int64 each; NULL when not recorded */
    size_t num_pairs, pairs_cap;
    int record, oom;
} Flood;

static inline int64_t get_label(const Flood *f, Py_ssize_t i) {
    return f->label32 ? (int64_t)f->label32[i] : f->label[i];
}

static inline void set_label(Flood *f, Py_ssize_t i, int64_t v) {
    if (f->label32) f->label32[i] = (int32_t)v;
    else f->label[i] = v;
}

static void push(Flood *f, int32_t x) {
    if (f->top == f->cap) {
        size_t cap = f->cap ? 2 * f->cap : 1024;
        int32_t *grown = realloc(f->work, cap * sizeof(int32_t));
        if (!grown) {
            f->oom = 1;
            return;
        }
        f->work = grown;
        f->cap = cap;
    }
    f->work[f->top++] = x;
}

static void cross(Flood *f, int64_t outer, int64_t inner) {
    if (!f->record || inner == outer) return;
    size_t k = f->num_pairs;
    if (k > 0 && f->pairs[2 * k - 2] == outer && f->pairs[2 * k - 1] == inner) return;
    if (k == f->pairs_cap) {
        size_t cap = f->pairs_cap ? 2 * f->pairs_cap : 256;
        int64_t *grown = realloc(f->pairs, 2 * cap * sizeof(int64_t));
        if (!grown) {
            f->oom = 1;
            return;
        }
        f->pairs = grown;
        f->pairs_cap = cap;
    }
    f->pairs[2 * k] = outer;
    f->pairs[2 * k + 1] = inner;
    f->num_pairs = k + 1;
}

/* The extra children of u: labelled ones are crossings, the others are labelled v. */
static void extras(Flood *f, int32_t u, int64_t v) {
    if (!(f->xbits[u >> 3] >> (u & 7) & 1)) return;
    Py_ssize_t lo = 0, hi = f->num_xnodes;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (f->xnodes[mid] < u) lo = mid + 1;
        else hi = mid;
    }
    if (lo == f->num_xnodes || f->xnodes[lo] != u) return;
    for (int64_t e = f->xptr[lo]; e < f->xptr[lo + 1]; e++) {
        int32_t c = f->xidx[e];
        int64_t l = get_label(f, c);
        if (l != f->unreached) {
            cross(f, v, l);
        } else {
            set_label(f, c, v);
            push(f, c);
        }
    }
}

/* y's descendants in row order (y itself is labelled by the caller, or is a proper
 * seed): a labelled row's whole subtree is labelled already, so it is jumped over. */
static void walk(Flood *f, int32_t y, int64_t v) {
    const int32_t *stop = f->stop;
    int32_t i = y + 1, end = stop[y];
    while (i < end) {
        int32_t s = stop[i];
        int64_t l;
        if (s == i) { /* skipped: not in the forest */
            i++;
        } else if ((l = get_label(f, i)) != f->unreached) {
            cross(f, v, l);
            i = s;
        } else {
            set_label(f, i, v);
            extras(f, i, v);
            i++;
        }
    }
    extras(f, y, v);
}

static void flood_seeds(Flood *f, const int64_t *order, Py_ssize_t num_seeds,
                        const int64_t *values, int proper, uint8_t *flooded) {
    for (Py_ssize_t k = 0; k < f->n; k++) set_label(f, k, f->unreached);
    int64_t dense = 0;
    for (Py_ssize_t r = 0; r < num_seeds && !f->oom; r++) {
        int32_t x = (int32_t)order[r];
        flooded[r] = get_label(f, x) == f->unreached;
        if (!flooded[r]) continue; /* an earlier seed reached x and all it reaches */
        int64_t v = values ? values[r] : dense++;
        if (!proper) set_label(f, x, v);
        walk(f, x, v);
        while (f->top > 0 && !f->oom) {
            int32_t y = f->work[--f->top];
            walk(f, y, v);
        }
    }
}

static int check_flood_args(Arg *a, Py_ssize_t n, Py_ssize_t num_xnodes, Py_ssize_t num_extra) {
    const int32_t *stop = a[0].view.buf, *xnodes = a[1].view.buf, *xidx = a[3].view.buf;
    const int64_t *xptr = a[2].view.buf, *order = a[5].view.buf;
    Py_ssize_t num_seeds = a[5].view.len / 8;
    int bad = a[4].view.len != (n + 7) / 8 || xptr[0] != 0 || xptr[num_xnodes] != num_extra;
    for (Py_ssize_t i = 0; i < n && !bad; i++) bad = stop[i] < i || stop[i] > n;
    for (Py_ssize_t k = 0; k < num_xnodes && !bad; k++)
        bad = xnodes[k] < 0 || xnodes[k] >= n || (k > 0 && xnodes[k] <= xnodes[k - 1]) ||
              xptr[k + 1] < xptr[k];
    for (Py_ssize_t e = 0; e < num_extra && !bad; e++) bad = xidx[e] < 0 || xidx[e] >= n;
    for (Py_ssize_t r = 0; r < num_seeds && !bad; r++) bad = order[r] < 0 || order[r] >= n;
    if (bad) PyErr_SetString(PyExc_ValueError, "flood: malformed forest or seeds");
    return bad ? -1 : 0;
}

/* Buffers of flood(): a[0..8] = stop, xnodes, xptr, xidx, xbits, order, values, label,
 * flooded; f is filled in. label is int64, or int32 when every value and unreached fit. */
static int flood_parse(PyObject **o, Arg *a, Flood *f, int64_t unreached) {
    if (get_buffer(o[0], &a[0], 0, 4, -1, "stop") < 0) return -1;
    Py_ssize_t n = a[0].view.len / 4;
    if (get_buffer(o[1], &a[1], 0, 4, -1, "xnodes") < 0) return -1;
    Py_ssize_t num_xnodes = a[1].view.len / 4;
    if (get_buffer(o[2], &a[2], 0, 8, num_xnodes + 1, "xptr") < 0 ||
        get_buffer(o[3], &a[3], 0, 4, -1, "xidx") < 0 ||
        get_buffer(o[4], &a[4], 0, 1, -1, "xbits") < 0 ||
        get_buffer(o[5], &a[5], 0, 8, -1, "order") < 0)
        return -1;
    Py_ssize_t num_seeds = a[5].view.len / 8;
    if (get_buffer(o[6], &a[6], 0, 8, -1, "values") < 0 ||
        get_buffer(o[7], &a[7], 1, 0, -1, "label") < 0 ||
        get_buffer(o[8], &a[8], 1, 1, num_seeds, "flooded") < 0)
        return -1;
    Py_ssize_t width = a[7].view.itemsize;
    if ((width != 4 && width != 8) || a[7].view.len != n * width) {
        PyErr_SetString(PyExc_ValueError, "label: expected one int32 or int64 per node");
        return -1;
    }
    const int64_t *values = a[6].view.buf;
    if (a[6].view.len && a[6].view.len != num_seeds * 8) {
        PyErr_SetString(PyExc_ValueError, "flood: one value per seed");
        return -1;
    }
    for (Py_ssize_t r = 0; r < a[6].view.len / 8; r++) {
        if (values[r] == unreached) {
            PyErr_SetString(PyExc_ValueError, "flood: a value equals unreached");
            return -1;
        }
        if (width == 4 && (values[r] < INT32_MIN || values[r] > INT32_MAX)) {
            PyErr_SetString(PyExc_ValueError, "flood: a value does not fit int32 labels");
            return -1;
        }
    }
    /* Dense values count seeds: they fit when there are fewer than 2**31. */
    if (width == 4 && (unreached < INT32_MIN || unreached > INT32_MAX || num_seeds > INT32_MAX)) {
        PyErr_SetString(PyExc_ValueError, "flood: unreached does not fit int32 labels");
        return -1;
    }
    if (check_flood_args(a, n, num_xnodes, a[3].view.len / 4) < 0) return -1;
    f->stop = a[0].view.buf;
    f->xnodes = a[1].view.buf;
    f->xptr = a[2].view.buf;
    f->xidx = a[3].view.buf;
    f->xbits = a[4].view.buf;
    f->n = n;
    f->num_xnodes = num_xnodes;
    f->label = width == 8 ? a[7].view.buf : NULL;
    f->label32 = width == 4 ? a[7].view.buf : NULL;
    f->unreached = unreached;
    return 0;
}

static PyObject *flood(PyObject *self, PyObject *py_args) {
    PyObject *o[9];
    int proper, record;
    long long unreached;
    if (!PyArg_ParseTuple(py_args, "OOOOOOOpLOOp", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5],
                          &o[6], &proper, &unreached, &o[7], &o[8], &record))
        return NULL;
    Arg a[9];
    memset(a, 0, sizeof(a));
    Flood f;
    memset(&f, 0, sizeof(f));
    PyObject *result = NULL;
    if (flood_parse(o, a, &f, unreached) < 0) goto done;
    f.record = record;
    const int64_t *values = a[6].view.len ? a[6].view.buf : NULL;
    Py_BEGIN_ALLOW_THREADS
    flood_seeds(&f, a[5].view.buf, a[5].view.len / 8, values, proper, a[8].view.buf);
    Py_END_ALLOW_THREADS
    if (f.oom) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyBytes_FromStringAndSize((const char *)f.pairs,
                                       (Py_ssize_t)(f.num_pairs * 2 * sizeof(int64_t)));
done:
    free(f.work);
    free(f.pairs);
    release(a, 9);
    return result;
}

/* --- csr ----------------------------------------------------------------------------- */
/* Stable counting sort of keys[e] -> values[e] into n buckets. ptr[k] doubles as the
 * next free slot of bucket k while filling, then is shifted back. */
static void counting_sort(Py_ssize_t n, const int64_t *keys, const int64_t *values,
                          Py_ssize_t m, int64_t *ptr, int64_t *out) {
    memset(ptr, 0, (size_t)(n + 1) * sizeof(int64_t));
    for (Py_ssize_t e = 0; e < m; e++) ptr[keys[e] + 1]++;
    for (Py_ssize_t k = 0; k < n; k++) ptr[k + 1] += ptr[k];
    for (Py_ssize_t e = 0; e < m; e++) out[ptr[keys[e]]++] = values[e];
    for (Py_ssize_t k = n; k > 0; k--) ptr[k] = ptr[k - 1];
    ptr[0] = 0;
}

static PyObject *csr(PyObject *self, PyObject *py_args) {
    PyObject *o_keys, *o_values, *o_ptr, *o_out;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(py_args, "OOnOO", &o_keys, &o_values, &n, &o_ptr, &o_out)) return NULL;
    Arg a[4];
    memset(a, 0, sizeof(a));
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "csr: negative n");
        return NULL;
    }
    if (get_buffer(o_keys, &a[0], 0, 8, -1, "keys") < 0) goto fail;
    Py_ssize_t m = a[0].view.len / 8;
    if (get_buffer(o_values, &a[1], 0, 8, m, "values") < 0 ||
        get_buffer(o_ptr, &a[2], 1, 8, n + 1, "ptr") < 0 ||
        get_buffer(o_out, &a[3], 1, 8, m, "out") < 0)
        goto fail;
    const int64_t *keys = a[0].view.buf, *values = a[1].view.buf;
    int64_t *ptr = a[2].view.buf, *out = a[3].view.buf;
    for (Py_ssize_t i = 0; i < m; i++) {
        if (keys[i] < 0 || keys[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "csr: key out of range");
            goto fail;
        }
    }
    Py_BEGIN_ALLOW_THREADS
    counting_sort(n, keys, values, m, ptr, out);
    Py_END_ALLOW_THREADS
    release(a, 4);
    Py_RETURN_NONE;
fail:
    release(a, 4);
    return NULL;
}

/* --- rows_by_code -------------------------------------------------------------------- */
/* The rows of each wanted code of a small-range code column (a categorical's codes, e.g.
 * the stat names of a long stats table), grouped by slot, in table order within a slot:
 * the stable counting sort of the wanted rows by slot, where numpy needed a flag per row,
 * a nonzero and a stable argsort over the whole column. Parts of rows count per slot,
 * then each part writes its rows from the sum of the counts of the parts before it. */
typedef struct {
    const void *codes;
    int size; /* bytes per code: 1, 2, 4 or 8 */
    Py_ssize_t n, nslot;
    const int32_t *slot; /* per code, and for any negative code the last entry; -1: unwanted */
    Py_ssize_t k;        /* slots */
    int parts;
    int64_t *counts; /* parts x k: the rows of each slot in each part */
    int64_t *out;    /* NULL: count only */
    int bad;         /* a code at or above nslot - 1 (set by any part, read after the join) */
} CodeRows;

/* The loop over rows [lo, hi) of one code width; BODY sees s, the row's slot. Every field
 * is read into a local first (a store through an int64_t pointer could alias them). */
#define CODE_ROWS_LOOP(T, BODY)                                                            \
    do {                                                                                   \
        const T *restrict c = (const T *)codes;                                            \
        for (Py_ssize_t i = lo; i < hi; i++) {                                             \
            int64_t code = (int64_t)c[i];                                                  \
            if (code >= top) {                                                             \
                __atomic_store_n(&q->bad, 1, __ATOMIC_RELAXED);                           \
                return;                                                                    \
            }                                                                              \
            int32_t s = slot[code < 0 ? top : code];                                       \
            if (s >= 0) { BODY }                                                           \
        }                                                                                  \
    } while (0)

#define CODE_ROWS_WIDTHS(BODY)                                                             \
    switch (size) {                                                                        \
    case 1: CODE_ROWS_LOOP(int8_t, BODY); break;                                           \
    case 2: CODE_ROWS_LOOP(int16_t, BODY); break;                                          \
    case 4: CODE_ROWS_LOOP(int32_t, BODY); break;                                          \
    default: CODE_ROWS_LOOP(int64_t, BODY); break;                                         \
    }

static void code_rows_part(void *ctx, int part, int parts) {
    CodeRows *q = ctx;
    const Py_ssize_t lo = part_start(q->n, part, parts), hi = part_start(q->n, part + 1, parts);
    const Py_ssize_t k = q->k;
    const void *codes = q->codes;
    const int size = q->size;
    const int64_t top = (int64_t)q->nslot - 1;
    const int32_t *restrict slot = q->slot;
    int64_t *restrict at = q->counts + (size_t)part * (size_t)k;
    int64_t *restrict out = q->out; /* NULL: count; else `at` = this part's first positions */
    if (out == NULL && size == 1) {
        /* int8 codes (a table of up to 127 names, the usual case): four histograms by code
         * byte, taken in turn, so that runs of one code do not wait on one counter, and no
         * branch per row; their sums per slot after. */
        int64_t hist[4][256];
        memset(hist, 0, sizeof(hist));
        const uint8_t *restrict c = codes;
        Py_ssize_t i = lo;
        for (; i + 4 <= hi; i += 4) {
            hist[0][c[i]]++;
            hist[1][c[i + 1]]++;
            hist[2][c[i + 2]]++;
            hist[3][c[i + 3]]++;
        }
        for (; i < hi; i++) hist[0][c[i]]++;
        memset(at, 0, (size_t)k * sizeof(int64_t));
        for (int b = 0; b < 256; b++) {
            int64_t count = hist[0][b] + hist[1][b] + hist[2][b] + hist[3][b];
            if (!count) continue;
            int64_t code = (int8_t)b;
            if (code >= top) {
                __atomic_store_n(&q->bad, 1, __ATOMIC_RELAXED);
                return;
            }
            int32_t s = slot[code < 0 ? top : code];
            if (s >= 0) at[s] += count;
        }
    } else if (out == NULL) {
        memset(at, 0, (size_t)k * sizeof(int64_t));
        CODE_ROWS_WIDTHS(at[s]++;)
    } else if (size == 1) {
        /* The count before the fill checked every code: a slot per code byte, one load and
         * one well-predicted branch per row. */
        int32_t by_byte[256];
        for (int b = 0; b < 256; b++) {
            int64_t code = (int8_t)b;
            by_byte[b] = code >= top ? -1 : slot[code < 0 ? top : code];
        }
        const uint8_t *restrict c = codes;
        for (Py_ssize_t i = lo; i < hi; i++) {
            int32_t s = by_byte[c[i]];
            if (s >= 0) out[at[s]++] = (int64_t)i;
        }
    } else {
        CODE_ROWS_WIDTHS(out[at[s]++] = (int64_t)i;)
    }
}

static PyObject *rows_by_code(PyObject *self, PyObject *py_args) {
    PyObject *o_codes, *o_slot, *o_ptr, *o_out;
    int threads = 1;
    if (!PyArg_ParseTuple(py_args, "OOOO|i", &o_codes, &o_slot, &o_ptr, &o_out, &threads))
        return NULL;
    Arg a[4];
    memset(a, 0, sizeof(a));
    CodeRows q;
    memset(&q, 0, sizeof(q));
    if (get_buffer(o_codes, &a[0], 0, -1, -1, "codes") < 0 ||
        get_buffer(o_slot, &a[1], 0, 4, -1, "slot") < 0)
        goto fail;
    q.size = (int)a[0].view.itemsize;
    if (q.size != 1 && q.size != 2 && q.size != 4 && q.size != 8) {
        PyErr_SetString(PyExc_ValueError, "rows_by_code: codes of 1, 2, 4 or 8 bytes expected");
        goto fail;
    }
    q.codes = a[0].view.buf;
    q.n = a[0].view.len / q.size;
    q.nslot = a[1].view.len / 4;
    q.slot = a[1].view.buf;
    if (q.nslot < 1) {
        PyErr_SetString(PyExc_ValueError, "rows_by_code: slot needs an entry for missing codes");
        goto fail;
    }
    if (get_buffer(o_ptr, &a[2], 1, 8, -1, "ptr") < 0) goto fail;
    q.k = a[2].view.len / 8 - 1;
    if (q.k < 0) {
        PyErr_SetString(PyExc_ValueError, "rows_by_code: ptr needs slots + 1 entries");
        goto fail;
    }
    for (Py_ssize_t j = 0; j < q.nslot; j++) {
        if (q.slot[j] >= q.k || q.slot[j] < -1) {
            PyErr_SetString(PyExc_ValueError, "rows_by_code: slot out of range");
            goto fail;
        }
    }
    int64_t *ptr = a[2].view.buf;
    int filling = o_out != Py_None;
    if (filling) {
        if (get_buffer(o_out, &a[3], 1, 8, -1, "out") < 0) goto fail;
        if (ptr[0] != 0 || a[3].view.len / 8 != ptr[q.k]) {
            PyErr_SetString(PyExc_ValueError, "rows_by_code: out does not match ptr");
            goto fail;
        }
        for (Py_ssize_t s = 0; s < q.k; s++) {
            if (ptr[s + 1] < ptr[s]) {
                PyErr_SetString(PyExc_ValueError, "rows_by_code: ptr must not decrease");
                goto fail;
            }
        }
    }
    q.parts = part_count(q.n, threads, 8 * TBPROF_MAX_PARTS);
    q.counts = malloc((size_t)q.parts * (size_t)(q.k > 0 ? q.k : 1) * sizeof(int64_t));
    if (!q.counts) {
        PyErr_NoMemory();
        goto fail;
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    run_parts(code_rows_part, &q, q.parts, threads);
    if (!q.bad) {
        /* counts -> each part's first position of each slot (from ptr when filling) */
        for (Py_ssize_t s = 0; s < q.k; s++) {
            int64_t at = filling ? ptr[s] : 0;
            for (int p = 0; p < q.parts; p++) {
                int64_t count = q.counts[(size_t)p * (size_t)q.k + (size_t)s];
                q.counts[(size_t)p * (size_t)q.k + (size_t)s] = at;
                at += count;
            }
            if (!filling) {
                ptr[s + 1] = at;
            } else if (at != ptr[s + 1]) {
                failed = 1;
            }
        }
        if (!filling) {
            ptr[0] = 0;
            for (Py_ssize_t s = 0; s < q.k; s++) ptr[s + 1] += ptr[s];
        } else if (!failed) {
            q.out = a[3].view.buf;
            run_parts(code_rows_part, &q, q.parts, threads);
        }
    }
    Py_END_ALLOW_THREADS
    free(q.counts);
    if (q.bad) {
        PyErr_SetString(PyExc_ValueError, "rows_by_code: a code has no slot");
        goto fail;
    }
    if (failed) {
        PyErr_SetString(PyExc_ValueError, "rows_by_code: ptr does not match the codes' counts");
        goto fail;
    }
    release(a, 4);
    return PyLong_FromLongLong((long long)ptr[q.k]);
fail:
    release(a, 4);
    return NULL;
}

static PyMethodDef methods[] = {
    {"line_forest", line_forest, METH_VARARGS, "Stack parents and subtree stops per row."},
    {"flood", flood, METH_VARARGS, "First seed reaching each node over the forest."},
    {"csr", csr, METH_VARARGS, "Stable counting sort of values by key."},
    {"rows_by_code", rows_by_code, METH_VARARGS, "Rows of each wanted code, by slot."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_graph_passes",
                                    "Compiled step grouping passes over the event forest.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__graph_passes(void) { return PyModule_Create(&module); }
