/*
 * Optional compiled merge of PlaneEdit's stats table (see preprocessing/stat_table.py).
 *
 * Why: the merged table (old rows minus replaced ones, then every addition, stably
 * sorted by event) has one row per stat value, ~13 M rows on an 11 M-event profile.
 * numpy can only build it through whole-length temporaries: each part's events moved
 * to their new rows (a gather), each row's place (a sort), then one scatter per column
 * and part. Here a counting sort runs over the parts as they are and each row is
 * written once, straight into the final columns; the typed event columns of integer
 * stats (group_id) are filled in the same pass. stat_table.py holds the numpy path
 * giving identical results; tests/preprocessing/test_stat_merge.py checks both agree.
 *
 * count_rows(events, keep, new_row, counts)
 *     events: int32 or int64 (as is the event out column of place_rows); for every kept row i (keep: None or bytes), e = new_row[events[i]] (new_row: int32 or
 *     int64, None = events[i]): counts[e + 1] += 1. counts: int32 or int64, one more than the events.
 * place_rows(part, outs, int_columns)
 *     part = (events, keep, new_row, code, kind, ints, float_rows, float_values, strs):
 *     writes each kept row at d = counts[e]++ (counts holding each event's first row, then
 *     advanced past the rows placed): event[d] = e, code[d] = table[code], kind[d],
 *     int[d], str[d] (-1 = none), float[d] for the rows listed in float_rows (ascending
 *     row numbers of the part, kept or not). code, kind, ints and strs are each an int
 *     (the same for every row) or an array of the part's rows (code and strs: signed ints
 *     of 1, 2, 4 or 8 bytes; kind int8; ints int64).
 *     outs = (counts, table, event, code, kind, int, float, str): table and code of one
 *     item size, str of 1, 2 or 4 bytes.
 *     int_columns: a tuple of (code, data, missing): each row of that (table) code also
 *     sets data[e] = its int and missing[e] = 0 (data int64, missing bytes, per event).
 * merge_rows(parts, outs, int_columns, n, threads=1): the same table without counts when
 *     every part's events ascend (_stat_merge_sorted.h), split by event ranges on threads.
 *
 * The GIL is released while looping.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "../kernels/_buffers.h"
#include "../kernels/_threads.h"

/* A column that is either one value for every row or an array of the part's rows. */
typedef struct {
    const void *buf; /* NULL: every row is `value` */
    Py_ssize_t itemsize;
    int64_t value;
} Column;

static inline int64_t int_at(const void *buf, Py_ssize_t itemsize, Py_ssize_t i) {
    switch (itemsize) {
    case 1: return ((const int8_t *)buf)[i];
    case 2: return ((const int16_t *)buf)[i];
    case 4: return ((const int32_t *)buf)[i];
    default: return ((const int64_t *)buf)[i];
    }
}

static inline void int_put(void *buf, Py_ssize_t itemsize, Py_ssize_t i, int64_t v) {
    switch (itemsize) {
    case 1: ((int8_t *)buf)[i] = (int8_t)v; break;
    case 2: ((int16_t *)buf)[i] = (int16_t)v; break;
    case 4: ((int32_t *)buf)[i] = (int32_t)v; break;
    default: ((int64_t *)buf)[i] = v;
    }
}

static inline int64_t column_at(const Column *c, Py_ssize_t i) {
    return c->buf ? int_at(c->buf, c->itemsize, i) : c->value;
}

static int sized(const Arg *arg, const char *what, int widest) {
    Py_ssize_t s = arg->view.itemsize;
    if (s == 1 || s == 2 || s == 4 || (widest && s == 8)) return 0;
    PyErr_Format(PyExc_ValueError, "%s: unsupported item size %zd", what, s);
    return -1;
}

/* An int argument, or an array of m ints of the sizes `sized` allows (exactly `size`
 * bytes when size > 0). */
static int get_column(PyObject *obj, Arg *arg, Py_ssize_t m, Py_ssize_t size, Column *c,
                      const char *what) {
    c->buf = NULL;
    c->itemsize = 0;
    if (PyLong_Check(obj)) {
        c->value = PyLong_AsLongLong(obj);
        return c->value == -1 && PyErr_Occurred() ? -1 : 0;
    }
    if (get_buffer(obj, arg, 0, size, m, what) < 0 || (size <= 0 && sized(arg, what, 1) < 0))
        return -1;
    if (arg->view.len != m * arg->view.itemsize) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd values", what, m);
        return -1;
    }
    c->buf = arg->view.buf;
    c->itemsize = arg->view.itemsize;
    return 0;
}

/* The rows of one part: events, and where they go (kept, moved). */
typedef struct {
    const void *events;  /* int32 or int64 */
    int events_wide;     /* events are int64 (else int32) */
    const uint8_t *keep; /* NULL: every row */
    const void *new_row; /* NULL: rows did not move */
    int wide;            /* new_row is int64 (else int32) */
    Py_ssize_t m, moved; /* rows; length of new_row */
} Rows;

/* A buffer of int32 or int64 row numbers: its count, and whether it is int64. */
static int get_index_rows(PyObject *obj, Arg *arg, const char *what, Py_ssize_t *count,
                          int *wide) {
    if (get_buffer(obj, arg, 0, 0, -1, NULL) < 0) return -1;
    Py_ssize_t width = arg->view.itemsize;
    if (width != 4 && width != 8) {
        PyErr_Format(PyExc_ValueError, "%s must be int32 or int64", what);
        return -1;
    }
    *count = arg->view.len / width;
    *wide = width == 8;
    return 0;
}

/* args[0..2] hold events, keep, new_row. */
static int get_rows(PyObject *o_events, PyObject *o_keep, PyObject *o_new_row, Arg *args,
                    Rows *rows) {
    memset(rows, 0, sizeof(*rows));
    if (get_index_rows(o_events, &args[0], "events", &rows->m, &rows->events_wide) < 0) return -1;
    rows->events = args[0].view.buf;
    if (o_keep != Py_None) {
        if (get_buffer(o_keep, &args[1], 0, 1, rows->m, "keep") < 0) return -1;
        rows->keep = args[1].view.buf;
    }
    if (o_new_row != Py_None) {
        if (get_index_rows(o_new_row, &args[2], "new_row", &rows->moved, &rows->wide) < 0)
            return -1;
        rows->new_row = args[2].view.buf;
    }
    return 0;
}

/* The event row of part row i, or -1 when out of range (n events). */
static inline int64_t event_of(const Rows *r, Py_ssize_t i, int64_t n) {
    int64_t e = r->events_wide ? ((const int64_t *)r->events)[i] : ((const int32_t *)r->events)[i];
    if (r->new_row) {
        if (e < 0 || e >= r->moved) return -1;
        e = r->wide ? ((const int64_t *)r->new_row)[e] : ((const int32_t *)r->new_row)[e];
    }
    return e < 0 || e >= n ? -1 : e;
}

/* --- count_rows -------------------------------------------------------------------- */
#define COUNT(T)                                                                           \
    do {                                                                                   \
        T *count = (T *)a[3].view.buf;                                                     \
        for (Py_ssize_t i = 0; i < r.m && ok; i++) {                                       \
            if (r.keep && !r.keep[i]) continue;                                            \
            int64_t e = event_of(&r, i, n);                                                \
            if (e < 0) ok = 0;                                                             \
            else count[e + 1]++;                                                           \
        }                                                                                  \
    } while (0)

static PyObject *count_rows(PyObject *self, PyObject *py_args) {
    PyObject *o[4];
    if (!PyArg_ParseTuple(py_args, "OOOO", &o[0], &o[1], &o[2], &o[3])) return NULL;
    Arg a[4];
    memset(a, 0, sizeof(a));
    Rows r;
    if (get_rows(o[0], o[1], o[2], a, &r) < 0 || get_buffer(o[3], &a[3], 1, 0, -1, NULL) < 0)
        goto fail;
    Py_ssize_t size = a[3].view.itemsize;
    if (size != 4 && size != 8) {
        PyErr_SetString(PyExc_ValueError, "count_rows: counts must be int32 or int64");
        goto fail;
    }
    int64_t n = a[3].view.len / size - 1;
    int ok = 1;
    Py_BEGIN_ALLOW_THREADS
    if (size == 4)
        COUNT(int32_t);
    else
        COUNT(int64_t);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "count_rows: event out of range");
        goto fail;
    }
    release(a, 4);
    Py_RETURN_NONE;
fail:
    release(a, 4);
    return NULL;
}
#undef COUNT

/* --- place_rows -------------------------------------------------------------------- */
typedef struct {
    Column code, kind, ints, strs;
    const int64_t *float_rows;
    const double *float_values;
    Py_ssize_t num_floats;
} Fields;

typedef struct {
    void *counts;
    Py_ssize_t count_size;
    const void *table;
    Py_ssize_t table_len, code_size, str_size;
    int64_t *ints;
    void *event, *code, *strs; /* event: int32 or int64 */
    Py_ssize_t event_size;
    int8_t *kind;
    double *floats;
    Py_ssize_t total; /* rows of the merged table */
    int64_t n;        /* events */
} Outs;

typedef struct {
    Py_ssize_t *column_of; /* table code -> int column, or -1 */
    int64_t **data;
    uint8_t **missing;
} IntColumns;

/* args: 9 for the part's arrays. */
static int parse_part(PyObject *part, Arg *args, Rows *rows, Fields *f) {
    PyObject *o[9];
    if (!PyTuple_Check(part) || !PyArg_ParseTuple(part, "OOOOOOOOO", &o[0], &o[1], &o[2], &o[3],
                                                  &o[4], &o[5], &o[6], &o[7], &o[8]))
        return -1;
    memset(f, 0, sizeof(*f));
    if (get_rows(o[0], o[1], o[2], args, rows) < 0) return -1;
    Py_ssize_t m = rows->m;
    if (get_column(o[3], &args[3], m, 0, &f->code, "code") < 0 ||
        get_column(o[4], &args[4], m, 1, &f->kind, "kind") < 0 ||
        get_column(o[5], &args[5], m, 8, &f->ints, "ints") < 0 ||
        get_buffer(o[6], &args[6], 0, 8, -1, "float_rows") < 0)
        return -1;
    f->num_floats = args[6].view.len / 8;
    if (get_buffer(o[7], &args[7], 0, 8, f->num_floats, "float_values") < 0 ||
        get_column(o[8], &args[8], m, 0, &f->strs, "strs") < 0)
        return -1;
    f->float_rows = args[6].view.buf;
    f->float_values = args[7].view.buf;
    for (Py_ssize_t k = 0; k < f->num_floats; k++) {
        if (f->float_rows[k] < 0 || f->float_rows[k] >= m ||
            (k && f->float_rows[k] <= f->float_rows[k - 1])) {
            PyErr_SetString(PyExc_ValueError, "place_rows: float_rows must ascend in [0, m)");
            return -1;
        }
    }
    return 0;
}

/* args: 8 for the outputs; counts None (a merge of sorted parts): n events given. */
static int parse_outs(PyObject *outs, Arg *a, Outs *out, int64_t n) {
    PyObject *o[8];
    if (!PyTuple_Check(outs) || !PyArg_ParseTuple(outs, "OOOOOOOO", &o[0], &o[1], &o[2], &o[3],
                                                  &o[4], &o[5], &o[6], &o[7]))
        return -1;
    memset(out, 0, sizeof(*out));
    if ((o[0] != Py_None && get_buffer(o[0], &a[0], 1, 0, -1, NULL) < 0) ||
        get_buffer(o[1], &a[1], 0, 0, -1, NULL) < 0 || sized(&a[1], "table", 0) < 0 ||
        get_buffer(o[2], &a[2], 1, 0, -1, NULL) < 0)
        return -1;
    out->event_size = a[2].view.itemsize;
    if (out->event_size != 4 && out->event_size != 8) {
        PyErr_SetString(PyExc_ValueError, "place_rows: event out must be int32 or int64");
        return -1;
    }
    out->n = n;
    if (o[0] != Py_None) {
        out->count_size = a[0].view.itemsize;
        if (out->count_size != 4 && out->count_size != 8) {
            PyErr_SetString(PyExc_ValueError, "place_rows: counts must be int32 or int64");
            return -1;
        }
        out->n = a[0].view.len / out->count_size - 1;
        out->counts = a[0].view.buf;
    }
    out->total = a[2].view.len / out->event_size;
    out->code_size = a[1].view.itemsize;
    out->table_len = a[1].view.len / out->code_size;
    Py_ssize_t t = out->total;
    if (get_buffer(o[3], &a[3], 1, out->code_size, t, "code out") < 0 ||
        get_buffer(o[4], &a[4], 1, 1, t, "kind out") < 0 ||
        get_buffer(o[5], &a[5], 1, 8, t, "int out") < 0 ||
        get_buffer(o[6], &a[6], 1, 8, t, "float out") < 0 ||
        get_buffer(o[7], &a[7], 1, 0, -1, NULL) < 0 || sized(&a[7], "str out", 0) < 0)
        return -1;
    if (a[7].view.len != t * a[7].view.itemsize) {
        PyErr_SetString(PyExc_ValueError, "place_rows: str out of the wrong length");
        return -1;
    }
    out->table = a[1].view.buf;
    out->event = a[2].view.buf;
    out->code = a[3].view.buf;
    out->kind = a[4].view.buf;
    out->ints = a[5].view.buf;
    out->floats = a[6].view.buf;
    out->strs = a[7].view.buf;
    out->str_size = a[7].view.itemsize;
    return 0;
}

/* args: 2 per column; the lookup table is allocated (freed by the caller). */
static int parse_int_columns(PyObject *cols, Arg *args, const Outs *out, IntColumns *ic) {
    Py_ssize_t count = PyTuple_GET_SIZE(cols);
    ic->column_of = PyMem_Malloc(sizeof(Py_ssize_t) * (size_t)(out->table_len + 1));
    ic->data = PyMem_Calloc((size_t)count + 1, sizeof(int64_t *));
    ic->missing = PyMem_Calloc((size_t)count + 1, sizeof(uint8_t *));
    if (!ic->column_of || !ic->data || !ic->missing) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t c = 0; c < out->table_len; c++) ic->column_of[c] = -1;
    for (Py_ssize_t k = 0; k < count; k++) {
        Py_ssize_t code;
        PyObject *o_data, *o_missing, *item = PyTuple_GET_ITEM(cols, k);
        if (!PyTuple_Check(item) || !PyArg_ParseTuple(item, "nOO", &code, &o_data, &o_missing))
            return -1;
        if (code < 0 || code >= out->table_len) {
            PyErr_SetString(PyExc_ValueError, "place_rows: int column code out of range");
            return -1;
        }
        if (get_buffer(o_data, &args[2 * k], 1, 8, out->n, "data") < 0 ||
            get_buffer(o_missing, &args[2 * k + 1], 1, 1, out->n, "missing") < 0)
            return -1;
        ic->column_of[code] = k;
        ic->data[k] = args[2 * k].view.buf;
        ic->missing[k] = args[2 * k + 1].view.buf;
    }
    return 0;
}

/* Writes part row i (event e) as table row d; 0 if its code is out of range. */
static inline int put_row(const Fields *f, Py_ssize_t i, int64_t e, int64_t d, const double *fl,
                          const Outs *out, const IntColumns *ic) {
    int64_t c = column_at(&f->code, i), v = column_at(&f->ints, i);
    if (c < 0 || c >= out->table_len) return 0;
    int_put(out->event, out->event_size, d, e);
    int_put(out->code, out->code_size, d, int_at(out->table, out->code_size, c));
    out->kind[d] = (int8_t)column_at(&f->kind, i);
    out->ints[d] = v;
    int_put(out->strs, out->str_size, d, column_at(&f->strs, i));
    if (fl) out->floats[d] = *fl;
    Py_ssize_t k = ic->column_of[c];
    if (k >= 0) {
        ic->data[k][e] = v;
        ic->missing[k][e] = 0;
    }
    return 1;
}

/* The part's double at row i, if listed (*next: the first listed row not before i). */
static inline const double *float_at(const Fields *f, Py_ssize_t *next, Py_ssize_t i) {
    while (*next < f->num_floats && f->float_rows[*next] < i) ++*next;
    return *next < f->num_floats && f->float_rows[*next] == i ? &f->float_values[*next] : NULL;
}

/* Writes the part's rows; 0 if a row's event or code is out of range or the table full. */
#define PLACE(T)                                                                           \
    do {                                                                                   \
        T *count = (T *)out->counts;                                                       \
        Py_ssize_t next_float = 0;                                                         \
        for (Py_ssize_t i = 0; i < r->m; i++) {                                            \
            if (r->keep && !r->keep[i]) continue;                                          \
            int64_t e = event_of(r, i, out->n);                                            \
            if (e < 0) return 0;                                                           \
            int64_t d = count[e]++;                                                        \
            if (d < 0 || d >= out->total) return 0;                                        \
            if (!put_row(f, i, e, d, float_at(f, &next_float, i), out, ic)) return 0;      \
        }                                                                                  \
    } while (0)

static int place(const Rows *r, const Fields *f, const Outs *out, const IntColumns *ic) {
    if (out->count_size == 4)
        PLACE(int32_t);
    else
        PLACE(int64_t);
    return 1;
}
#undef PLACE

static PyObject *place_rows(PyObject *self, PyObject *py_args) {
    PyObject *o_part, *o_outs, *o_cols;
    if (!PyArg_ParseTuple(py_args, "OOO!", &o_part, &o_outs, &PyTuple_Type, &o_cols))
        return NULL;
    Py_ssize_t num_cols = PyTuple_GET_SIZE(o_cols);
    Arg a[17];
    memset(a, 0, sizeof(a));
    Arg *col_args = PyMem_Calloc((size_t)(2 * num_cols + 1), sizeof(Arg));
    IntColumns ic = {NULL, NULL, NULL};
    PyObject *result = NULL;
    Rows rows;
    Fields fields;
    Outs outs;
    if (!col_args) {
        PyErr_NoMemory();
        goto done;
    }
    if (parse_part(o_part, a, &rows, &fields) < 0 || parse_outs(o_outs, a + 9, &outs, 0) < 0 ||
        parse_int_columns(o_cols, col_args, &outs, &ic) < 0)
        goto done;
    if (!outs.counts) {
        PyErr_SetString(PyExc_ValueError, "place_rows: counts are needed");
        goto done;
    }
    int ok;
    Py_BEGIN_ALLOW_THREADS
    ok = place(&rows, &fields, &outs, &ic);
    Py_END_ALLOW_THREADS
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "place_rows: event or code out of range");
        goto done;
    }

    result = Py_None;
    Py_INCREF(result);
done:
    release(a, 17);
    if (col_args) release(col_args, (int)(2 * num_cols));
    PyMem_Free(col_args);
    PyMem_Free(ic.column_of);
    PyMem_Free(ic.data);
    PyMem_Free(ic.missing);
    return result;
}

#include "_stat_merge_sorted.h"

static PyMethodDef methods[] = {
    {"count_rows", count_rows, METH_VARARGS, "Rows per (moved) event, added to counts."},
    {"place_rows", place_rows, METH_VARARGS, "One part's rows written into the merged table."},
    {"merge_rows", merge_rows, METH_VARARGS, "Parts sorted by moved event merged into the table."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_stat_merge",
                                    "Compiled merge of PlaneEdit's stats table.", -1, methods};

PyMODINIT_FUNC PyInit__stat_merge(void) { return PyModule_Create(&module); }
