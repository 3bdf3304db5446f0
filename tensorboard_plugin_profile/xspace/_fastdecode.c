/*
 * Optional compiled reader for the XSpace wire format (protos/xplane.proto).
 *
 * Why: walking millions of XEvent messages through the protobuf Python API
 * costs microseconds each; this reads the bytes once and returns flat arrays
 * (as bytes objects, for numpy.frombuffer) plus the small metadata as Python
 * objects. decode.py builds the same tables from either reader, and a test
 * checks that both give identical results on every fixture.
 *
 * decode(data) -> dict(hostnames, errors, warnings, planes=[plane, ...])
 * plane = dict(id, name, lines=[(id, display_id, name, display_name,
 *              timestamp_ns, duration_ps)], events=Columns, stats=Stats,
 *              event_metadata=[(id, name, display_name)], metadata_stats=Stats,
 *              stat_metadata={id: name}, plane_stats=Stats)
 * Columns = (line int32, metadata_id, offset_ps, duration_ps, occurrences int64) as bytes
 * Stats = (owner int64, metadata_id int64, kind int8, int64, float64 as bytes, objects list)
 * Stat kinds: 0 double, 1 uint64 (bit-cast), 2 int64, 3 str, 4 bytes, 5 ref.
 * Malformed input raises ValueError.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    char *data;
    Py_ssize_t len, cap;
} Buf;

static int buf_put(Buf *b, const void *item, Py_ssize_t size) {
    if (b->len + size > b->cap) {
        Py_ssize_t cap = b->cap ? b->cap * 2 : 4096;
        while (cap < b->len + size) cap *= 2;
        char *grown = PyMem_Realloc(b->data, cap);
        if (!grown) {
            PyErr_NoMemory();
            return -1;
        }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, item, size);
    b->len += size;
    return 0;
}

static PyObject *buf_take(Buf *b) {
    PyObject *out = PyBytes_FromStringAndSize(b->data ? b->data : "", b->len);
    PyMem_Free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    return out;
}

/* Long-form stats of one owner kind (events, metadata or the plane). */
typedef struct {
    Buf owner, mid, kind, ival, fval;
    PyObject *objects; /* list: str/bytes value, or None */
} Stats;

typedef struct {
    const uint8_t *p, *end;
} Reader;

static int bad(const char *what) {
    PyErr_Format(PyExc_ValueError, "malformed XSpace: %s", what);
    return -1;
}

static int read_varint(Reader *r, uint64_t *out) {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
        if (r->p >= r->end) return bad("truncated varint");
        uint8_t byte = *r->p++;
        value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = value;
            return 0;
        }
    }
    return bad("varint too long");
}

/* Reads one field key; *sub is set to the payload for length-delimited fields. */
static int read_field(Reader *r, uint32_t *number, uint32_t *wire, uint64_t *value, Reader *sub) {
    uint64_t key;
    if (read_varint(r, &key) < 0) return -1;
    *number = (uint32_t)(key >> 3);
    *wire = (uint32_t)(key & 7);
    if (*number == 0) return bad("field number 0");
    switch (*wire) {
    case 0:
        return read_varint(r, value);
    case 1:
        if (r->end - r->p < 8) return bad("truncated fixed64");
        memcpy(value, r->p, 8);
        r->p += 8;
        return 0;
    case 2: {
        uint64_t len;
        if (read_varint(r, &len) < 0) return -1;
        if (len > (uint64_t)(r->end - r->p)) return bad("length past the end");
        sub->p = r->p;
        sub->end = r->p + len;
        r->p += len;
        return 0;
    }
    case 5:
        if (r->end - r->p < 4) return bad("truncated fixed32");
        *value = 0;
        memcpy(value, r->p, 4);
        r->p += 4;
        return 0;
    default:
        return bad("unsupported wire type");
    }
}

static PyObject *read_str(Reader *s) {
    return PyUnicode_DecodeUTF8((const char *)s->p, s->end - s->p, "strict");
}

static int stats_init(Stats *st) {
    memset(st, 0, sizeof(*st));
    st->objects = PyList_New(0);
    return st->objects ? 0 : -1;
}

static void stats_free(Stats *st) {
    PyMem_Free(st->owner.data);
    PyMem_Free(st->mid.data);
    PyMem_Free(st->kind.data);
    PyMem_Free(st->ival.data);
    PyMem_Free(st->fval.data);
    Py_CLEAR(st->objects);
}

static PyObject *stats_take(Stats *st) {
    PyObject *out = Py_BuildValue("(NNNNNO)", buf_take(&st->owner), buf_take(&st->mid),
                                  buf_take(&st->kind), buf_take(&st->ival),
                                  buf_take(&st->fval), st->objects);
    Py_CLEAR(st->objects);
    return out;
}

/* One XStat message appended to st for owner; messages without a value are skipped. */
static int read_stat(Reader r, int64_t owner, Stats *st) {
    int64_t mid = 0, ival = 0;
    double fval = 0;
    int8_t kind = -1;
    PyObject *obj = NULL;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t value = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &value, &sub) < 0) goto fail;
        if (number == 1 && wire == 0) {
            mid = (int64_t)value;
        } else if (number == 2 && wire == 1) {
            kind = 0;
            memcpy(&fval, &value, 8);
        } else if ((number == 3 || number == 4 || number == 7) && wire == 0) {
            kind = number == 3 ? 1 : number == 4 ? 2 : 5;
            ival = (int64_t)value;
        } else if ((number == 5 || number == 6) && wire == 2) {
            kind = number == 5 ? 3 : 4;
            Py_XDECREF(obj);
            obj = number == 5 ? read_str(&sub)
                              : PyBytes_FromStringAndSize((const char *)sub.p, sub.end - sub.p);
            if (!obj) goto fail;
            continue;
        } else {
            continue;
        }
        if (number >= 2) Py_CLEAR(obj); /* a later numeric value replaces a string */
    }
    if (kind < 0) {
        Py_XDECREF(obj);
        return 0;
    }
    if (kind != 3 && kind != 4) Py_CLEAR(obj);
    if (buf_put(&st->owner, &owner, 8) < 0 || buf_put(&st->mid, &mid, 8) < 0 ||
        buf_put(&st->kind, &kind, 1) < 0 || buf_put(&st->ival, &ival, 8) < 0 ||
        buf_put(&st->fval, &fval, 8) < 0)
        goto fail;
    if (PyList_Append(st->objects, obj ? obj : Py_None) < 0) goto fail;
    Py_XDECREF(obj);
    return 0;
fail:
    Py_XDECREF(obj);
    return -1;
}

typedef struct {
    Buf line, mid, offset, dur, occ;
} Events;

static int read_event(Reader r, int32_t line, int64_t row, Events *ev, Stats *st) {
    int64_t mid = 0, offset = 0, dur = 0, occ = 0;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t value = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &value, &sub) < 0) return -1;
        if (wire == 0 && number == 1) mid = (int64_t)value;
        else if (wire == 0 && number == 2) offset = (int64_t)value, occ = 0;
        else if (wire == 0 && number == 5) occ = (int64_t)value, offset = 0;
        else if (wire == 0 && number == 3) dur = (int64_t)value;
        else if (wire == 2 && number == 4 && read_stat(sub, row, st) < 0) return -1;
    }
    if (buf_put(&ev->line, &line, 4) < 0 || buf_put(&ev->mid, &mid, 8) < 0 ||
        buf_put(&ev->offset, &offset, 8) < 0 || buf_put(&ev->dur, &dur, 8) < 0 ||
        buf_put(&ev->occ, &occ, 8) < 0)
        return -1;
    return 0;
}

static PyObject *read_line(Reader r, int32_t index, int64_t *row, Events *ev, Stats *st) {
    int64_t id = 0, display_id = 0, timestamp = 0, duration = 0;
    PyObject *name = NULL, *display_name = NULL;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t value = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &value, &sub) < 0) goto fail;
        if (wire == 0 && number == 1) id = (int64_t)value;
        else if (wire == 0 && number == 10) display_id = (int64_t)value;
        else if (wire == 0 && number == 3) timestamp = (int64_t)value;
        else if (wire == 0 && number == 9) duration = (int64_t)value;
        else if (wire == 2 && (number == 2 || number == 11)) {
            PyObject *s = read_str(&sub);
            if (!s) goto fail;
            if (number == 2) Py_XSETREF(name, s);
            else Py_XSETREF(display_name, s);
        } else if (wire == 2 && number == 4) {
            if (read_event(sub, index, (*row)++, ev, st) < 0) goto fail;
        }
    }
    PyObject *out = Py_BuildValue("(LLOOLL)", (long long)id, (long long)display_id,
                                  name ? name : Py_None, display_name ? display_name : Py_None,
                                  (long long)timestamp, (long long)duration);
    Py_XDECREF(name);
    Py_XDECREF(display_name);
    return out;
fail:
    Py_XDECREF(name);
    Py_XDECREF(display_name);
    return NULL;
}

/* XEventMetadata: appends (id, name, display_name) to rows, its stats to st. */
static int read_event_metadata(Reader r, int64_t key, PyObject *rows, Stats *st) {
    int64_t id = key;
    PyObject *name = NULL, *display_name = NULL;
    Stats own;
    if (stats_init(&own) < 0) return -1;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t value = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &value, &sub) < 0) goto fail;
        if (wire == 0 && number == 1) id = (int64_t)value;
        else if (wire == 2 && (number == 2 || number == 4)) {
            PyObject *s = read_str(&sub);
            if (!s) goto fail;
            if (number == 2) Py_XSETREF(name, s);
            else Py_XSETREF(display_name, s);
        } else if (wire == 2 && number == 5 && read_stat(sub, key, st) < 0) goto fail;
    }
    (void)id; /* the map key identifies the metadata, as in the protobuf API */
    PyObject *row = Py_BuildValue("(LOO)", (long long)key, name ? name : Py_None,
                                  display_name ? display_name : Py_None);
    if (!row || PyList_Append(rows, row) < 0) {
        Py_XDECREF(row);
        goto fail;
    }
    Py_DECREF(row);
    stats_free(&own);
    Py_XDECREF(name);
    Py_XDECREF(display_name);
    return 0;
fail:
    stats_free(&own);
    Py_XDECREF(name);
    Py_XDECREF(display_name);
    return -1;
}

/* A map<int64, Message> entry: key then value payload. */
static int read_map_entry(Reader r, int64_t *key, Reader *value, int *has_value) {
    *key = 0;
    *has_value = 0;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t v = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &v, &sub) < 0) return -1;
        if (number == 1 && wire == 0) *key = (int64_t)v;
        else if (number == 2 && wire == 2) *value = sub, *has_value = 1;
    }
    return 0;
}

static PyObject *read_stat_metadata_name(Reader r) {
    PyObject *name = NULL;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t v = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &v, &sub) < 0) goto fail;
        if (number == 2 && wire == 2) {
            PyObject *s = read_str(&sub);
            if (!s) goto fail;
            Py_XSETREF(name, s);
        }
    }
    return name ? name : PyUnicode_FromString("");
fail:
    Py_XDECREF(name);
    return NULL;
}

typedef struct {
    int64_t id;
    PyObject *name, *lines, *meta_rows, *stat_names;
    Events ev;
    Stats ev_stats, meta_stats, plane_stats;
    int64_t rows;
    int32_t line_count;
} Plane;

static int plane_field(Plane *pl, uint32_t number, uint32_t wire, uint64_t value, Reader sub) {
    if (wire == 0 && number == 1) {
        pl->id = (int64_t)value;
    } else if (wire == 2 && number == 2) {
        PyObject *s = read_str(&sub);
        if (!s) return -1;
        Py_XSETREF(pl->name, s);
    } else if (wire == 2 && number == 3) {
        PyObject *line = read_line(sub, pl->line_count++, &pl->rows, &pl->ev, &pl->ev_stats);
        if (!line || PyList_Append(pl->lines, line) < 0) {
            Py_XDECREF(line);
            return -1;
        }
        Py_DECREF(line);
    } else if (wire == 2 && (number == 4 || number == 5)) {
        int64_t key;
        int has_value;
        Reader entry = {0};
        if (read_map_entry(sub, &key, &entry, &has_value) < 0) return -1;
        if (number == 4)
            return read_event_metadata(entry, key, pl->meta_rows, &pl->meta_stats);
        PyObject *k = PyLong_FromLongLong(key);
        PyObject *name = has_value ? read_stat_metadata_name(entry) : PyUnicode_FromString("");
        int rc = (k && name) ? PyDict_SetItem(pl->stat_names, k, name) : -1;
        Py_XDECREF(k);
        Py_XDECREF(name);
        return rc;
    } else if (wire == 2 && number == 6) {
        return read_stat(sub, 0, &pl->plane_stats);
    }
    return 0;
}

static void plane_free(Plane *pl) {
    Py_XDECREF(pl->name);
    Py_XDECREF(pl->lines);
    Py_XDECREF(pl->meta_rows);
    Py_XDECREF(pl->stat_names);
    PyMem_Free(pl->ev.line.data);
    PyMem_Free(pl->ev.mid.data);
    PyMem_Free(pl->ev.offset.data);
    PyMem_Free(pl->ev.dur.data);
    PyMem_Free(pl->ev.occ.data);
    stats_free(&pl->ev_stats);
    stats_free(&pl->meta_stats);
    stats_free(&pl->plane_stats);
}

static PyObject *read_plane(Reader r) {
    Plane pl;
    memset(&pl, 0, sizeof(pl));
    pl.lines = PyList_New(0);
    pl.meta_rows = PyList_New(0);
    pl.stat_names = PyDict_New();
    PyObject *out = NULL;
    if (!pl.lines || !pl.meta_rows || !pl.stat_names || stats_init(&pl.ev_stats) < 0 ||
        stats_init(&pl.meta_stats) < 0 || stats_init(&pl.plane_stats) < 0)
        goto done;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t value = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &value, &sub) < 0) goto done;
        if (plane_field(&pl, number, wire, value, sub) < 0) goto done;
    }
    PyObject *events = Py_BuildValue("(NNNNN)", buf_take(&pl.ev.line), buf_take(&pl.ev.mid),
                                     buf_take(&pl.ev.offset), buf_take(&pl.ev.dur),
                                     buf_take(&pl.ev.occ));
    if (!events) goto done;
    out = Py_BuildValue("{s:L,s:O,s:O,s:N,s:N,s:O,s:N,s:O,s:N}", "id", (long long)pl.id, "name",
                        pl.name ? pl.name : Py_None, "lines", pl.lines, "events", events, "stats",
                        stats_take(&pl.ev_stats), "event_metadata", pl.meta_rows,
                        "metadata_stats", stats_take(&pl.meta_stats), "stat_metadata",
                        pl.stat_names, "plane_stats", stats_take(&pl.plane_stats));
done:
    plane_free(&pl);
    return out;
}

static PyObject *decode(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    Reader r = {(const uint8_t *)view.buf, (const uint8_t *)view.buf + view.len};
    PyObject *planes = PyList_New(0), *hostnames = PyList_New(0);
    PyObject *errors = PyList_New(0), *warnings = PyList_New(0), *out = NULL;
    if (!planes || !hostnames || !errors || !warnings) goto done;
    while (r.p < r.end) {
        uint32_t number, wire;
        uint64_t value = 0;
        Reader sub = {0};
        if (read_field(&r, &number, &wire, &value, &sub) < 0) goto done;
        if (wire != 2 || number < 1 || number > 4) continue;
        PyObject *item = number == 1 ? read_plane(sub) : read_str(&sub);
        PyObject *target = number == 1 ? planes : number == 2 ? errors
                           : number == 3 ? warnings : hostnames;
        if (!item || PyList_Append(target, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    out = Py_BuildValue("{s:O,s:O,s:O,s:O}", "planes", planes, "hostnames", hostnames, "errors",
                        errors, "warnings", warnings);
done:
    Py_XDECREF(planes);
    Py_XDECREF(hostnames);
    Py_XDECREF(errors);
    Py_XDECREF(warnings);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_O, "Reads serialized XSpace bytes into flat columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastdecode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastdecode(void) { return PyModule_Create(&module); }
