/*
 * Optional compiled passes of PlaneEdit (see preprocessing/edit_passes.py).
 *
 * Why: preprocessing adds a few thousand events (thread-pool regions) to a table
 * of millions that is already sorted per line. numpy can only place them by
 * sorting or gathering the whole table once per column, with a full-size index
 * and mask each time; these loops check the order once and copy each column in
 * long runs. edit_passes.py holds numpy fallbacks giving identical results, and
 * tests/preprocessing/test_edit_passes.py checks both agree (hypothesis).
 *
 * insertion_points(line, begin, duration, new_line, new_begin, new_duration, out)
 *     -> bool. False when the old rows are not sorted by (line, begin, longest
 *     first). Else out[j] = the number of old rows whose key is <= new row j's
 *     key (where a stable sort of old rows then new rows puts new row j).
 *     line: int32 or int64; the rest int64; the new rows need not be sorted.
 * insert_rows(old, at, values, out, threads=1)
 *     out = old with values[j] put before old[at[j]] (at non-decreasing), like
 *     numpy.insert; any one fixed item size for old, values and out.
 * shifted_rows(at, out, threads=1)
 *     out[i] = i + the number of j with at[j] <= i: old row i's row after the insertion
 *     (out: int32, when the rows fit, or int64).
 * stable_dest(keys, n, dest)
 *     a stable counting sort of keys (int64) in [0, n): dest[i] = where row i goes;
 *     then keys are overwritten with themselves in sorted order.
 * mark_used(codes, used, threads=1)
 *     used[c] = 1 for every code c (codes: signed ints of 1, 2, 4 or 8 bytes; used: bytes),
 *     over parts of the codes on `threads` threads; a code out of range is a ValueError
 *     (with some flags set).
 * recode(codes, table, out)
 *     out[i] = table[codes[i]] (codes as in mark_used; table and out of one item size).
 * insert_recoded(codes, table, at, values, out)
 *     insert_rows of table[codes] (codes as in recode; table, values and out of one item
 *     size of 1, 2, 4 or 8 bytes), without the recoded temporary.
 *
 * The GIL is released while looping.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../kernels/_buffers.h"
#include "../kernels/_threads.h"

static int get(PyObject *obj, Arg *arg, int writable) {
    return get_buffer(obj, arg, writable, 0, -1, NULL);
}

/* A buffer of n integers of this item size (n < 0: any count). */
static int get_ints(PyObject *obj, Arg *arg, int writable, Py_ssize_t itemsize, Py_ssize_t n,
                    const char *what) {
    return get_buffer(obj, arg, writable, itemsize, n, what);
}

/* 0 if at[0..m) is non-decreasing in [0, n], else -1 with a ValueError naming the caller. */
static int check_at(const int64_t *at, Py_ssize_t m, Py_ssize_t n, const char *caller) {
    for (Py_ssize_t j = 0; j < m; j++) {
        if (at[j] < 0 || at[j] > n || (j > 0 && at[j] < at[j - 1])) {
            PyErr_Format(PyExc_ValueError, "%s: at must be non-decreasing in [0, n]", caller);
            return -1;
        }
    }
    return 0;
}

/* --- insertion_points -------------------------------------------------------------- */
typedef struct {
    const void *line; /* int32 or int64 */
    int wide;
    const int64_t *begin, *duration;
} Keys;

static inline int64_t line_at(const Keys *k, Py_ssize_t i) {
    return k->wide ? ((const int64_t *)k->line)[i] : ((const int32_t *)k->line)[i];
}

/* The sort key's last part is -duration, with numpy's wrap-around. */
static inline int64_t minus(int64_t d) { return (int64_t)(0 - (uint64_t)d); }

/* <0, 0, >0 as key a of keys x compares with key b of keys y. */
static inline int compare(const Keys *x, Py_ssize_t a, const Keys *y, Py_ssize_t b) {
    int64_t la = line_at(x, a), lb = line_at(y, b);
    if (la != lb) return la < lb ? -1 : 1;
    if (x->begin[a] != y->begin[b]) return x->begin[a] < y->begin[b] ? -1 : 1;
    int64_t ma = minus(x->duration[a]), mb = minus(y->duration[b]);
    return ma < mb ? -1 : ma > mb;
}

static int keys_parse(PyObject *o_line, PyObject *o_begin, PyObject *o_dur, Arg *a, Keys *k,
                      Py_ssize_t *n) {
    if (get(o_line, &a[0], 0) < 0) return -1;
    if (a[0].view.itemsize != 4 && a[0].view.itemsize != 8) {
        PyErr_SetString(PyExc_ValueError, "insertion_points: line must be int32 or int64");
        return -1;
    }
    *n = a[0].view.len / a[0].view.itemsize;
    if (get_ints(o_begin, &a[1], 0, 8, *n, "begin") < 0 ||
        get_ints(o_dur, &a[2], 0, 8, *n, "duration") < 0)
        return -1;
    k->line = a[0].view.buf;
    k->wide = a[0].view.itemsize == 8;
    k->begin = a[1].view.buf;
    k->duration = a[2].view.buf;
    return 0;
}

static PyObject *insertion_points(PyObject *self, PyObject *py_args) {
    PyObject *o[7];
    if (!PyArg_ParseTuple(py_args, "OOOOOOO", &o[0], &o[1], &o[2], &o[3], &o[4], &o[5], &o[6]))
        return NULL;
    Arg a[7];
    memset(a, 0, sizeof(a));
    Keys old, add;
    Py_ssize_t n, m;
    if (keys_parse(o[0], o[1], o[2], a, &old, &n) < 0 ||
        keys_parse(o[3], o[4], o[5], a + 3, &add, &m) < 0 ||
        get_ints(o[6], &a[6], 1, 8, m, "out") < 0) {
        release(a, 7);
        return NULL;
    }
    int64_t *out = a[6].view.buf;
    int sorted = 1;
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 1; i < n && sorted; i++) sorted = compare(&old, i - 1, &old, i) <= 0;
    for (Py_ssize_t j = 0; j < m && sorted; j++) {
        Py_ssize_t lo = 0, hi = n; /* the first old row whose key is greater */
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (compare(&old, mid, &add, j) <= 0)
                lo = mid + 1;
            else
                hi = mid;
        }
        out[j] = lo;
    }
    Py_END_ALLOW_THREADS
    release(a, 7);
    return PyBool_FromLong(sorted);
}

/* --- insert_rows, insert_recoded: filled by ranges of output rows ------------------- */
typedef struct {
    const char *old, *values; /* old: NULL when the old rows are codes into table */
    char *out;
    const int64_t *at;
    Py_ssize_t n, m, size;
    const Py_buffer *codes; /* insert_recoded: the old rows' codes */
    const char *table;
} Insert;

/* The first new row j whose place in the output, at[j] + j (increasing), is >= p. */
static Py_ssize_t first_new_from(const int64_t *at, Py_ssize_t m, Py_ssize_t p) {
    Py_ssize_t lo = 0, hi = m;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (at[mid] + mid < p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Code i of a buffer of signed ints of 1, 2, 4 or 8 bytes. */
static inline int64_t code_at(const Py_buffer *v, Py_ssize_t i) {
    switch (v->itemsize) {
    case 1: return ((const int8_t *)v->buf)[i];
    case 2: return ((const int16_t *)v->buf)[i];
    case 4: return ((const int32_t *)v->buf)[i];
    default: return ((const int64_t *)v->buf)[i];
    }
}

/* out[p, p + count) = old rows [row, row + count), recoded through the table if any. */
static void copy_old(const Insert *w, Py_ssize_t p, Py_ssize_t row, Py_ssize_t count) {
    if (w->old) {
        memcpy(w->out + p * w->size, w->old + row * w->size, (size_t)(count * w->size));
        return;
    }
#define RECODED(T)                                                                         \
    for (Py_ssize_t i = 0; i < count; i++)                                                 \
        ((T *)w->out)[p + i] = ((const T *)w->table)[code_at(w->codes, row + i)];
    switch (w->size) {
    case 1: RECODED(int8_t) break;
    case 2: RECODED(int16_t) break;
    case 4: RECODED(int32_t) break;
    default: RECODED(int64_t)
    }
#undef RECODED
}

/* Output rows of part k: each new row j at at[j] + j, the old rows around them in runs. */
static void insert_part(void *arg, int part, int parts) {
    const Insert *w = arg;
    Py_ssize_t total = w->n + w->m;
    Py_ssize_t p = part_start(total, part, parts), end = part_start(total, part + 1, parts);
    Py_ssize_t j = first_new_from(w->at, w->m, p);
    while (p < end) {
        Py_ssize_t next = j < w->m ? w->at[j] + j : total; /* where new row j goes */
        if (next == p) {
            memcpy(w->out + p * w->size, w->values + j * w->size, (size_t)w->size);
            p++;
            j++;
            continue;
        }
        Py_ssize_t upto = next < end ? next : end;
        copy_old(w, p, p - j, upto - p); /* j new rows lie before p */
        p = upto;
    }
}

static PyObject *insert_rows(PyObject *self, PyObject *py_args) {
    PyObject *o_old, *o_at, *o_values, *o_out;
    int threads = 1;
    if (!PyArg_ParseTuple(py_args, "OOOO|i", &o_old, &o_at, &o_values, &o_out, &threads))
        return NULL;
    Arg a[4];
    memset(a, 0, sizeof(a));
    if (get(o_old, &a[0], 0) < 0 || get_ints(o_at, &a[1], 0, 8, -1, "at") < 0) goto fail;
    Py_ssize_t size = a[0].view.itemsize, n = a[0].view.len / size, m = a[1].view.len / 8;
    if (get_ints(o_values, &a[2], 0, size, m, "values") < 0 ||
        get_ints(o_out, &a[3], 1, size, n + m, "out") < 0)
        goto fail;
    const int64_t *at = a[1].view.buf;
    if (check_at(at, m, n, "insert_rows") < 0) goto fail;
    Insert w = {a[0].view.buf, a[2].view.buf, a[3].view.buf, at, n, m, size, NULL, NULL};
    Py_BEGIN_ALLOW_THREADS
    run_parts(insert_part, &w, part_count(n + m, threads, INT32_MAX), threads);
    Py_END_ALLOW_THREADS
    release(a, 4);
    Py_RETURN_NONE;
fail:
    release(a, 4);
    return NULL;
}

/* --- shifted_rows ------------------------------------------------------------------ */
typedef struct {
    const int64_t *at;
    Py_ssize_t m, n, size;
    void *out;
} Shift;

/* Old rows of part k; j starts at the first new row placed at or after the part. */
static void shift_part(void *arg, int part, int parts) {
    const Shift *w = arg;
    Py_ssize_t i = part_start(w->n, part, parts), end = part_start(w->n, part + 1, parts);
    Py_ssize_t lo = 0, hi = w->m; /* the first j with at[j] >= i */
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (w->at[mid] < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    Py_ssize_t j = lo;
    for (; i < end; i++) {
        while (j < w->m && w->at[j] <= i) j++;
        if (w->size == 4)
            ((int32_t *)w->out)[i] = (int32_t)(i + j);
        else
            ((int64_t *)w->out)[i] = i + j;
    }
}

static PyObject *shifted_rows(PyObject *self, PyObject *py_args) {
    PyObject *o_at, *o_out;
    int threads = 1;
    if (!PyArg_ParseTuple(py_args, "OO|i", &o_at, &o_out, &threads)) return NULL;
    Arg a[2];
    memset(a, 0, sizeof(a));
    if (get_ints(o_at, &a[0], 0, 8, -1, "at") < 0 || get(o_out, &a[1], 1) < 0) goto fail;
    Py_ssize_t size = a[1].view.itemsize, m = a[0].view.len / 8, n = a[1].view.len / size;
    if ((size != 4 && size != 8) || (size == 4 && n + m > INT32_MAX)) {
        PyErr_SetString(PyExc_ValueError, "shifted_rows: out must be int64, or int32 if it fits");
        goto fail;
    }
    const int64_t *at = a[0].view.buf;
    if (check_at(at, m, n, "shifted_rows") < 0) goto fail;
    Shift w = {at, m, n, size, a[1].view.buf};
    Py_BEGIN_ALLOW_THREADS
    run_parts(shift_part, &w, part_count(n, threads, INT32_MAX), threads);
    Py_END_ALLOW_THREADS
    release(a, 2);
    Py_RETURN_NONE;
fail:
    release(a, 2);
    return NULL;
}

/* --- stable_dest ------------------------------------------------------------------- */
/* The counts are int32 when the rows fit (half the memory of a table-sized array). */
#define COUNTING_SORT(T)                                                                   \
    do {                                                                                   \
        T *count = (T *)counts;                                                            \
        for (Py_ssize_t i = 0; i < m; i++) count[keys[i] + 1]++;                           \
        for (Py_ssize_t k = 0; k < n; k++) count[k + 1] += count[k];                       \
        for (Py_ssize_t i = 0; i < m; i++) dest[i] = count[keys[i]]++;                     \
        Py_ssize_t row = 0; /* now count[k] is the end of key k's rows */                  \
        for (Py_ssize_t k = 0; k < n; k++)                                                 \
            for (; row < (Py_ssize_t)count[k]; row++) keys[row] = k;                       \
    } while (0)

static PyObject *stable_dest(PyObject *self, PyObject *py_args) {
    PyObject *o_keys, *o_dest;
    Py_ssize_t n;
    if (!PyArg_ParseTuple(py_args, "OnO", &o_keys, &n, &o_dest)) return NULL;
    Arg a[2];
    memset(a, 0, sizeof(a));
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "stable_dest: negative n");
        return NULL;
    }
    if (get_ints(o_keys, &a[0], 1, 8, -1, "keys") < 0) goto fail;
    Py_ssize_t m = a[0].view.len / 8;
    if (get_ints(o_dest, &a[1], 1, 8, m, "dest") < 0) goto fail;
    int64_t *keys = a[0].view.buf, *dest = a[1].view.buf;
    for (Py_ssize_t i = 0; i < m; i++) {
        if (keys[i] < 0 || keys[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "stable_dest: key out of range");
            goto fail;
        }
    }
    int narrow = m < INT32_MAX;
    void *counts = PyMem_Calloc((size_t)n + 1, narrow ? sizeof(int32_t) : sizeof(int64_t));
    if (!counts) {
        PyErr_NoMemory();
        goto fail;
    }
    Py_BEGIN_ALLOW_THREADS
    if (narrow)
        COUNTING_SORT(int32_t);
    else
        COUNTING_SORT(int64_t);
    Py_END_ALLOW_THREADS
    PyMem_Free(counts);
    release(a, 2);
    Py_RETURN_NONE;
fail:
    release(a, 2);
    return NULL;
}
#undef COUNTING_SORT

/* --- mark_used, recode ------------------------------------------------------------- */

static int codes_in_range(const Py_buffer *codes, Py_ssize_t n, const char *name) {
    Py_ssize_t count = codes->len / codes->itemsize;
    for (Py_ssize_t i = 0; i < count; i++) {
        int64_t c = code_at(codes, i);
        if (c < 0 || c >= n) {
            PyErr_Format(PyExc_ValueError, "%s: code out of range", name);
            return -1;
        }
    }
    return 0;
}

static int get_codes(PyObject *obj, Arg *arg) {
    if (get(obj, arg, 0) < 0) return -1;
    Py_ssize_t size = arg->view.itemsize;
    if (size != 1 && size != 2 && size != 4 && size != 8) {
        PyErr_SetString(PyExc_ValueError, "codes must be ints of 1, 2, 4 or 8 bytes");
        return -1;
    }
    return 0;
}

/* mark_used over parts of the codes: each part checks its codes and sets their flags. Two
 * parts may set one flag: every store writes 1 (relaxed atomics, plain byte stores on
 * common CPUs), so the flags are the same for any thread count. */
typedef struct {
    const void *codes;
    Py_ssize_t size, count, n;
    uint8_t *used;
    int bad; /* a code out of [0, n) in some part (read after the join) */
} MarkUsed;

#define MARK_USED_LOOP(T)                                                                  \
    do {                                                                                   \
        const T *restrict c = (const T *)q->codes;                                         \
        for (Py_ssize_t i = lo; i < hi; i++) {                                             \
            int64_t code = (int64_t)c[i];                                                  \
            if (code < 0 || code >= n) {                                                   \
                __atomic_store_n(&q->bad, 1, __ATOMIC_RELAXED);                            \
                return;                                                                    \
            }                                                                              \
            __atomic_store_n(&used[code], (uint8_t)1, __ATOMIC_RELAXED);                   \
        }                                                                                  \
    } while (0)

static void mark_used_part(void *ctx, int part, int parts) {
    MarkUsed *q = ctx;
    const Py_ssize_t lo = part_start(q->count, part, parts);
    const Py_ssize_t hi = part_start(q->count, part + 1, parts);
    const int64_t n = (int64_t)q->n;
    uint8_t *used = q->used;
    switch (q->size) {
    case 1: MARK_USED_LOOP(int8_t); break;
    case 2: MARK_USED_LOOP(int16_t); break;
    case 4: MARK_USED_LOOP(int32_t); break;
    default: MARK_USED_LOOP(int64_t); break;
    }
}

static PyObject *mark_used(PyObject *self, PyObject *py_args) {
    PyObject *o_codes, *o_used;
    int threads = 1;
    if (!PyArg_ParseTuple(py_args, "OO|i", &o_codes, &o_used, &threads)) return NULL;
    Arg a[2];
    memset(a, 0, sizeof(a));
    if (get_codes(o_codes, &a[0]) < 0 || get_ints(o_used, &a[1], 1, 1, -1, "used") < 0) {
        release(a, 2);
        return NULL;
    }
    MarkUsed q = {a[0].view.buf, a[0].view.itemsize, a[0].view.len / a[0].view.itemsize,
                  a[1].view.len, a[1].view.buf, 0};
    Py_BEGIN_ALLOW_THREADS
    run_parts(mark_used_part, &q, part_count(q.count, threads, 8 * TBPROF_MAX_PARTS), threads);
    Py_END_ALLOW_THREADS
    release(a, 2);
    if (q.bad) {
        /* the flags of the codes before it may be set: callers pass fresh flags */
        PyErr_SetString(PyExc_ValueError, "mark_used: code out of range");
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *recode(PyObject *self, PyObject *py_args) {
    PyObject *o_codes, *o_table, *o_out;
    if (!PyArg_ParseTuple(py_args, "OOO", &o_codes, &o_table, &o_out)) return NULL;
    Arg a[3];
    memset(a, 0, sizeof(a));
    if (get_codes(o_codes, &a[0]) < 0 || get(o_table, &a[1], 0) < 0) goto fail;
    Py_ssize_t size = a[1].view.itemsize, count = a[0].view.len / a[0].view.itemsize;
    if (get_ints(o_out, &a[2], 1, size, count, "out") < 0 ||
        codes_in_range(&a[0].view, a[1].view.len / size, "recode") < 0)
        goto fail;
    const Py_buffer *codes = &a[0].view;
    Py_BEGIN_ALLOW_THREADS
#define RECODE(T)                                                                          \
    for (Py_ssize_t i = 0; i < count; i++)                                                 \
        ((T *)a[2].view.buf)[i] = ((const T *)a[1].view.buf)[code_at(codes, i)];
    switch (size) {
    case 1: RECODE(int8_t) break;
    case 2: RECODE(int16_t) break;
    case 4: RECODE(int32_t) break;
    case 8: RECODE(int64_t) break;
    default:
        for (Py_ssize_t i = 0; i < count; i++)
            memcpy((char *)a[2].view.buf + i * size,
                   (const char *)a[1].view.buf + code_at(codes, i) * size, (size_t)size);
    }
#undef RECODE
    Py_END_ALLOW_THREADS
    release(a, 3);
    Py_RETURN_NONE;
fail:
    release(a, 3);
    return NULL;
}

/* --- insert_recoded --------------------------------------------------------------- */
static PyObject *insert_recoded(PyObject *self, PyObject *py_args) {
    PyObject *o[5];
    int threads = 1;
    if (!PyArg_ParseTuple(py_args, "OOOOO|i", &o[0], &o[1], &o[2], &o[3], &o[4], &threads))
        return NULL;
    Arg a[5];
    memset(a, 0, sizeof(a));
    if (get_codes(o[0], &a[0]) < 0 || get(o[1], &a[1], 0) < 0 ||
        get_ints(o[2], &a[2], 0, 8, -1, "at") < 0)
        goto fail;
    Py_ssize_t size = a[1].view.itemsize, n = a[0].view.len / a[0].view.itemsize;
    Py_ssize_t m = a[2].view.len / 8;
    if ((size != 1 && size != 2 && size != 4 && size != 8) ||
        get_ints(o[3], &a[3], 0, size, m, "values") < 0 ||
        get_ints(o[4], &a[4], 1, size, n + m, "out") < 0 ||
        codes_in_range(&a[0].view, a[1].view.len / size, "insert_recoded") < 0)
        goto fail;
    const int64_t *at = a[2].view.buf;
    if (check_at(at, m, n, "insert_recoded") < 0) goto fail;
    Insert w = {NULL, a[3].view.buf, a[4].view.buf, at, n, m, size, &a[0].view, a[1].view.buf};
    Py_BEGIN_ALLOW_THREADS
    run_parts(insert_part, &w, part_count(n + m, threads, INT32_MAX), threads);
    Py_END_ALLOW_THREADS
    release(a, 5);
    Py_RETURN_NONE;
fail:
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "insert_recoded: bad table");
    release(a, 5);
    return NULL;
}

static PyMethodDef methods[] = {
    {"insertion_points", insertion_points, METH_VARARGS,
     "Where new events go among events sorted per line (False if they are not)."},
    {"insert_rows", insert_rows, METH_VARARGS, "numpy.insert of sorted positions, by runs."},
    {"shifted_rows", shifted_rows, METH_VARARGS, "Old rows' rows after an insertion."},
    {"stable_dest", stable_dest, METH_VARARGS, "Stable counting sort: each row's place."},
    {"mark_used", mark_used, METH_VARARGS, "Flags the codes that occur."},
    {"recode", recode, METH_VARARGS, "Codes mapped through a table."},
    {"insert_recoded", insert_recoded, METH_VARARGS, "insert_rows of codes mapped through a table."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_edit_passes",
                                    "Compiled passes of PlaneEdit.", -1, methods};

PyMODINIT_FUNC PyInit__edit_passes(void) { return PyModule_Create(&module); }
