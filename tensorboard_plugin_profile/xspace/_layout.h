/*
 * The final event-column layout of the compiled reader (included once, by _decode.c).
 *
 * Pass 2 writes the columns the tables keep, so decode.py wraps them without a pass over
 * the events of its own:
 *  - begin_ps = (line timestamp_ns - time base) * 1000 + offset_ps, in wrapping 64-bit
 *    arithmetic (what numpy computes from the same int64 values);
 *  - occurrences are written only where non-zero, into zeroed memory, so a profile
 *    without any (every real one) never touches that column;
 *  - the event's name and display name as codes into the distinct names of the plane's
 *    event metadata, in the width pandas gives categorical codes (int8 below 127
 *    categories, int16 below 32767, else int32).
 * Names are factorised in metadata-id order with "" (the name of an unknown id) last
 * unless some metadata has it: the categories pandas.factorize gives for the same list.
 */
#ifndef TBPROF_LAYOUT_H
#define TBPROF_LAYOUT_H

/* Metadata id -> row of the (id-sorted) metadata table, and each row's name codes.
 * Ids are usually dense (1..n): then a direct table by id - lo, else a hash table. */
typedef struct {
    int32_t *direct; /* row of id lo + i, -1: none (NULL: use the hash table) */
    int64_t lo;
    uint64_t span;
    int64_t *keys;
    int32_t *rows; /* -1: empty slot */
    size_t mask;
    int32_t *name, *display; /* per row, then the unknown id's code at [n] */
    size_t n;
} MetaIndex;

/* The final columns of a plane (rows from 0), or, with meta NULL, one chunk's own columns
 * while the file is still arriving (rows from row0; mid, begin holding the offset, dur and
 * occ only): the plane's metadata and the time base are not known yet then (_decode.c,
 * "Streaming"), and fill_chunk moves them into the final columns afterwards. */
typedef struct {
    int32_t *line;
    int32_t *mid; /* an id that does not fit is noted aside (widen_ids) */
    int64_t *begin, *dur, *occ; /* occ: zeroed, written where non-zero */
    const int64_t *line_base;         /* per line: its timestamp in ps from the time base */
    void *name, *display;
    int name_width, display_width; /* bytes per code */
    const MetaIndex *meta;
    int64_t row0; /* the row of index 0 (a chunk's own columns) */
} EventCols;

static inline uint64_t mix64(int64_t key) {
    uint64_t h = (uint64_t)key * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 31);
}

static void meta_index_free(MetaIndex *m) {
    free(m->direct);
    free(m->keys);
    free(m->rows);
    free(m->name);
    free(m->display);
    memset(m, 0, sizeof(*m));
}

/* Row of this metadata id, or n (the unknown id's slot) when no metadata has it. */
static inline size_t meta_row(const MetaIndex *m, int64_t id) {
    if (m->direct) {
        uint64_t i = (uint64_t)id - (uint64_t)m->lo;
        return i < m->span && m->direct[i] >= 0 ? (size_t)m->direct[i] : m->n;
    }
    if (!m->rows) return m->n;
    for (size_t at = mix64(id) & m->mask;; at = (at + 1) & m->mask) {
        int32_t row = m->rows[at];
        if (row < 0) return m->n;
        if (m->keys[at] == id) return (size_t)row;
    }
}

static inline void put_code(void *column, int width, int64_t row, int32_t code) {
    if (width == 1) ((int8_t *)column)[row] = (int8_t)code;
    else if (width == 2) ((int16_t *)column)[row] = (int16_t)code;
    else ((int32_t *)column)[row] = code;
}

static int code_width(Py_ssize_t categories) {
    return categories < 127 ? 1 : categories < 32767 ? 2 : 4;
}

/* Codes of item `field` of each metadata row (and of "" for unknown ids, at [n]) into the
 * distinct values in first-seen order; the distinct values go to *strings. */
static int factorise(PyObject *rows, int field, int32_t *codes, PyObject **strings) {
    Py_ssize_t n = PyList_GET_SIZE(rows);
    PyObject *seen = PyDict_New(), *empty = PyUnicode_FromString("");
    *strings = PyList_New(0);
    int rc = (seen && empty && *strings) ? 0 : -1;
    for (Py_ssize_t i = 0; rc == 0 && i <= n; i++) {
        PyObject *value = i < n ? PyTuple_GET_ITEM(PyList_GET_ITEM(rows, i), field) : empty;
        PyObject *code = PyDict_GetItemWithError(seen, value);
        if (code) {
            codes[i] = (int32_t)PyLong_AsLong(code);
            continue;
        }
        if (PyErr_Occurred()) rc = -1;
        code = rc == 0 ? PyLong_FromSsize_t(PyList_GET_SIZE(*strings)) : NULL;
        if (!code || PyDict_SetItem(seen, value, code) < 0 || PyList_Append(*strings, value) < 0)
            rc = -1;
        else codes[i] = (int32_t)PyLong_AsLong(code);
        Py_XDECREF(code);
    }
    Py_XDECREF(seen);
    Py_XDECREF(empty);
    if (rc < 0) Py_CLEAR(*strings);
    return rc;
}

/* A direct table when the ids span at most a few times their count (rows sorted by id). */
static int direct_index(MetaIndex *m, PyObject *rows) {
    size_t n = m->n;
    int64_t lo = PyLong_AsLongLong(PyTuple_GET_ITEM(PyList_GET_ITEM(rows, 0), 0));
    int64_t hi = PyLong_AsLongLong(PyTuple_GET_ITEM(PyList_GET_ITEM(rows, n - 1), 0));
    uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
    if (span == 0 || span > 4 * (uint64_t)n + 4096) return 0;
    m->direct = malloc(span * sizeof(int32_t));
    if (!m->direct) return PyErr_NoMemory(), -1;
    memset(m->direct, 0xff, span * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) {
        int64_t id = PyLong_AsLongLong(PyTuple_GET_ITEM(PyList_GET_ITEM(rows, i), 0));
        m->direct[(uint64_t)id - (uint64_t)lo] = (int32_t)i;
    }
    m->lo = lo;
    m->span = span;
    return 0;
}

/* The index of a plane's metadata rows [(id, name, display_name)], sorted by unique id. */
static int meta_index_build(MetaIndex *m, PyObject *rows, PyObject **names, PyObject **displays) {
    size_t n = (size_t)PyList_GET_SIZE(rows), size = 16;
    while (size < 2 * n) size *= 2;
    memset(m, 0, sizeof(*m));
    m->n = n;
    m->mask = size - 1;
    m->keys = malloc(size * sizeof(int64_t));
    m->rows = malloc(size * sizeof(int32_t));
    m->name = malloc((n + 1) * sizeof(int32_t));
    m->display = malloc((n + 1) * sizeof(int32_t));
    if (!m->keys || !m->rows || !m->name || !m->display) return PyErr_NoMemory(), -1;
    memset(m->rows, 0xff, size * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) {
        int64_t id = PyLong_AsLongLong(PyTuple_GET_ITEM(PyList_GET_ITEM(rows, i), 0));
        size_t at = mix64(id) & m->mask;
        while (m->rows[at] >= 0) at = (at + 1) & m->mask;
        m->keys[at] = id;
        m->rows[at] = (int32_t)i;
    }
    if (n && direct_index(m, rows) < 0) return -1;
    if (factorise(rows, 1, m->name, names) < 0) return -1;
    return factorise(rows, 2, m->display, displays);
}

/* An event whose metadata id does not fit the int32 column: (row, id), for widen_ids. */
static int note_wide_id(Buf *wide, int64_t row, int64_t mid) {
    return BUF_PUT(wide, row, int64_t) < 0 || BUF_PUT(wide, mid, int64_t) < 0 ? -1 : 0;
}

/* One event's row of the final columns; -1 when out of memory. */
static inline int put_event(EventCols *c, int64_t row, int32_t line, int64_t mid, int64_t offset,
                            int64_t dur, int64_t occ, int *any_occ, Buf *wide) {
    if (!c->meta) { /* a chunk's own columns: no names, no line base yet */
        int64_t i = row - c->row0;
        c->mid[i] = (int32_t)mid;
        c->begin[i] = offset;
        c->dur[i] = dur;
        if (occ) {
            c->occ[i] = occ;
            *any_occ = 1;
        }
        return mid != (int32_t)mid ? note_wide_id(wide, row, mid) : 0;
    }
    c->line[row] = line;
    c->mid[row] = (int32_t)mid;
    c->begin[row] = (int64_t)((uint64_t)offset + (uint64_t)c->line_base[line]);
    c->dur[row] = dur;
    if (occ) {
        c->occ[row] = occ;
        *any_occ = 1;
    }
    size_t meta = meta_row(c->meta, mid);
    put_code(c->name, c->name_width, row, c->meta->name[meta]);
    put_code(c->display, c->display_width, row, c->meta->display[meta]);
    return mid != (int32_t)mid ? note_wide_id(wide, row, mid) : 0;
}
#endif
