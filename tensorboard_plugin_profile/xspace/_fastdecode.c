/*
 * Optional compiled reader for the XSpace wire format (protos/xplane.proto).
 *
 * Why: walking millions of XEvent messages through the protobuf Python API
 * costs microseconds each. This reads the bytes and returns typed columns
 * (writable bytearrays, for numpy.frombuffer) with no Python object per event
 * or per stat: string stat values are interned, one Python object per
 * distinct string. decode.py builds the same tables from this raw form or
 * from the pure-Python reader (wire.py); a test checks that both agree, and a
 * fuzz test checks that both accept exactly what the protobuf library accepts.
 * docs/decoder.md describes the format.
 *
 * Three passes:
 *  1. (GIL held) walk planes, lines, metadata; for events only read each
 *     record's key and length, cutting each line's events into chunks of
 *     CHUNK_EVENTS with known first rows. Counts are exact, so the event
 *     columns are allocated once, at their final size.
 *  2. (GIL released, worker threads) parse the events of each chunk into their
 *     rows, and their stats into per-chunk buffers, interning strings by bytes.
 *  3. (GIL held) concatenate the chunks' stats in file order, merging the
 *     chunk string tables into one per plane, and make one Python object per
 *     distinct string (UTF-8 checked there, once per distinct string).
 *
 * decode(data, max_events, threads) -> dict(hostnames, errors, warnings, planes=[plane])
 * Absent strings are "", as in protobuf.
 * plane = dict(id, name, lines=[(id, display_id, name, display_name,
 *              timestamp_ns, duration_ps)], events=Columns, stats=Stats,
 *              event_metadata=[(id, name, display_name)] sorted by id,
 *              metadata_stats=Stats (in id order), stat_metadata={id: name},
 *              plane_stats=Stats)
 * Columns = (line int32, metadata_id, offset_ps, duration_ps, occurrences int64)
 * Stats = (owner int64, metadata_id int64, kind int8, int64, float64,
 *          string id int32 (-1: none), strings: list of distinct str/bytes)
 * Stat kinds: 0 double, 1 uint64 (bit-cast), 2 int64, 3 str, 4 bytes, 5 ref.
 * Malformed input raises ValueError; more events than max_events raises
 * OverflowError (decode.py turns both into typed errors).
 *
 * Wire rules follow the protobuf library (upb): a tag is at most 5 bytes and
 * fits 32 bits, field 0 and wire types 6/7 are malformed, groups are skipped
 * to their matching end, a known field with another wire type is an unknown
 * field, proto3 strings must be UTF-8, the last duplicate map key wins, and a
 * singular message that appears twice is merged.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <pthread.h>
#include <unistd.h>
#define HAVE_THREADS 1
#endif

#define CHUNK_EVENTS 32768
#define MAX_DEPTH 100

typedef struct {
    const uint8_t *p, *end;
} Reader;

/* ---- growable raw buffer (plain malloc: used without the GIL) ---------- */
typedef struct {
    char *data;
    size_t len, cap;
} Buf;

static int buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return 0;
    size_t cap = b->cap ? b->cap * 2 : 1024;
    while (cap < b->len + extra) cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown) return -1;
    b->data = grown;
    b->cap = cap;
    return 0;
}

#define BUF_PUT(b, value, type) \
    (buf_reserve((b), sizeof(type)) < 0 ? -1 \
     : (memcpy((b)->data + (b)->len, &(type){value}, sizeof(type)), (b)->len += sizeof(type), 0))

/* ---- string interning: (bytes, kind) -> dense id in first-seen order ---- */
typedef struct {
    const uint8_t *p;
    uint32_t len;
    uint8_t kind;
    uint64_t hash;
} StrKey;

typedef struct {
    int32_t *slots; /* -1 empty, else index into keys */
    size_t mask;
    StrKey *keys;
    size_t n, cap;
} Intern;

static uint64_t hash_bytes(const uint8_t *p, size_t len, uint8_t kind) {
    uint64_t h = 1469598103934665603ULL ^ kind;
    for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int intern_grow(Intern *t) {
    size_t size = t->slots ? (t->mask + 1) * 2 : 64;
    int32_t *slots = malloc(size * sizeof(int32_t));
    if (!slots) return -1;
    memset(slots, 0xff, size * sizeof(int32_t));
    for (size_t i = 0; i < t->n; i++) {
        size_t at = t->keys[i].hash & (size - 1);
        while (slots[at] >= 0) at = (at + 1) & (size - 1);
        slots[at] = (int32_t)i;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
    return 0;
}

/* The id of (p, len, kind), added if new; -1 when out of memory. */
static int32_t intern(Intern *t, const uint8_t *p, size_t len, uint8_t kind, uint64_t hash) {
    if (!t->slots || (t->n + 1) * 2 > t->mask + 1) {
        if (intern_grow(t) < 0) return -1;
    }
    size_t at = hash & t->mask;
    for (;;) {
        int32_t id = t->slots[at];
        if (id < 0) break;
        StrKey *k = &t->keys[id];
        if (k->hash == hash && k->len == len && k->kind == kind && memcmp(k->p, p, len) == 0)
            return id;
        at = (at + 1) & t->mask;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        StrKey *keys = realloc(t->keys, cap * sizeof(StrKey));
        if (!keys) return -1;
        t->keys = keys;
        t->cap = cap;
    }
    t->keys[t->n] = (StrKey){p, (uint32_t)len, kind, hash};
    t->slots[at] = (int32_t)t->n;
    return (int32_t)t->n++;
}

static void intern_free(Intern *t) {
    free(t->slots);
    free(t->keys);
    memset(t, 0, sizeof(*t));
}

/* ---- wire reading ---------------------------------------------------------- */
/* Errors without the GIL: the first message wins, raised as ValueError later. */
typedef struct {
    const char *error;
} Err;

static int fail(Err *e, const char *what) {
    if (!e->error) e->error = what;
    return -1;
}

static int read_varint_slow(Reader *r, uint64_t *out, Err *e);

static inline int read_varint(Reader *r, uint64_t *out, Err *e) {
    if (r->p < r->end && !(*r->p & 0x80)) {
        *out = *r->p++;
        return 0;
    }
    if (r->end - r->p >= 2 && !(r->p[1] & 0x80)) {
        *out = (uint64_t)(r->p[0] & 0x7f) | ((uint64_t)r->p[1] << 7);
        r->p += 2;
        return 0;
    }
    return read_varint_slow(r, out, e);
}

static int read_varint_slow(Reader *r, uint64_t *out, Err *e) {
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return fail(e, "truncated varint");
        uint8_t byte = *r->p++;
        if (shift < 64) value |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = value;
            return 0;
        }
    }
    return fail(e, "varint too long");
}

/* Validates a packed run of varints (repeated int64 child_id). */
static int check_packed_varints(Reader r, Err *e) {
    uint64_t v;
    while (r.p < r.end)
        if (read_varint(&r, &v, e) < 0) return -1;
    return 0;
}

typedef struct {
    uint32_t number, wire;
    uint64_t value;
    Reader sub; /* payload of a length-delimited field */
} Field;

static int skip_group(Reader *r, uint32_t number, int depth, Err *e);

/* Reads one field; groups are skipped whole (and reported as wire 3). */
static int read_field(Reader *r, Field *f, int depth, Err *e) {
    const uint8_t *start = r->p;
    uint64_t key;
    if (read_varint(r, &key, e) < 0) return -1;
    if (r->p - start > 5 || key > 0xffffffffULL) return fail(e, "bad field key");
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    if (f->number == 0) return fail(e, "field number 0");
    f->value = 0;
    switch (f->wire) {
    case 0:
        return read_varint(r, &f->value, e);
    case 1:
        if (r->end - r->p < 8) return fail(e, "truncated fixed64");
        memcpy(&f->value, r->p, 8);
        r->p += 8;
        return 0;
    case 2: {
        uint64_t len;
        if (read_varint(r, &len, e) < 0) return -1;
        if (len > (uint64_t)(r->end - r->p) || len >= 0x7fffffffULL)
            return fail(e, "length past the end");
        f->sub.p = r->p;
        f->sub.end = r->p + len;
        r->p += len;
        return 0;
    }
    case 3:
        return skip_group(r, f->number, depth, e);
    case 5:
        if (r->end - r->p < 4) return fail(e, "truncated fixed32");
        memcpy(&f->value, r->p, 4);
        r->p += 4;
        return 0;
    default: /* 4: an end-group nobody opened; 6, 7: not a wire type */
        return fail(e, "unexpected wire type");
    }
}

static int skip_group(Reader *r, uint32_t number, int depth, Err *e) {
    if (depth + 1 > MAX_DEPTH) return fail(e, "nested too deep");
    for (;;) {
        if (r->p >= r->end) return fail(e, "unterminated group");
        const uint8_t *start = r->p;
        uint64_t key;
        if (read_varint(r, &key, e) < 0) return -1;
        if (r->p - start > 5 || key > 0xffffffffULL) return fail(e, "bad field key");
        if ((key & 7) == 4) {
            if ((key >> 3) != number) return fail(e, "mismatched end group");
            return 0;
        }
        r->p = start;
        Field f;
        if (read_field(r, &f, depth + 1, e) < 0) return -1;
    }
}

/* UTF-8 as the protobuf library checks proto3 strings (no surrogates, no overlongs). */
static int utf8_ok(const uint8_t *p, const uint8_t *end) {
    while (p < end) {
        uint8_t c = *p;
        if (c < 0x80) {
            p++;
            continue;
        }
        int n;
        uint32_t cp;
        if (c >= 0xc2 && c <= 0xdf) n = 1, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef) n = 2, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4) n = 3, cp = c & 0x07;
        else return 0;
        if (end - p <= n) return 0;
        for (int i = 1; i <= n; i++) {
            if ((p[i] & 0xc0) != 0x80) return 0;
            cp = (cp << 6) | (p[i] & 0x3f);
        }
        if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return 0;
        p += n + 1;
    }
    return 1;
}

/* ---- long-form stats ----------------------------------------------------------- */
typedef struct {
    Buf owner, mid, kind, ival, fval, sid;
    Intern strings;
    size_t rows;
} Stats;

static void stats_free(Stats *st) {
    free(st->owner.data);
    free(st->mid.data);
    free(st->kind.data);
    free(st->ival.data);
    free(st->fval.data);
    free(st->sid.data);
    intern_free(&st->strings);
    memset(st, 0, sizeof(*st));
}

/* One XStat appended for owner; a stat without a value is skipped (no oneof set). */
static int read_stat(Reader r, int64_t owner, Stats *st, int depth, Err *e) {
    int64_t mid = 0, ival = 0;
    double fval = 0;
    int8_t kind = -1;
    Reader str = {0};
    if (depth > MAX_DEPTH) return fail(e, "nested too deep");
    while (r.p < r.end) {
        Field f;
        if (read_field(&r, &f, depth, e) < 0) return -1;
        if (f.number == 1 && f.wire == 0) {
            mid = (int64_t)f.value;
        } else if (f.number == 2 && f.wire == 1) {
            kind = 0;
            memcpy(&fval, &f.value, 8);
        } else if ((f.number == 3 || f.number == 4 || f.number == 7) && f.wire == 0) {
            kind = f.number == 3 ? 1 : f.number == 4 ? 2 : 5;
            ival = (int64_t)f.value;
        } else if ((f.number == 5 || f.number == 6) && f.wire == 2) {
            kind = f.number == 5 ? 3 : 4;
            str = f.sub;
        }
    }
    if (kind < 0) return 0;
    int32_t sid = -1;
    if (kind == 3 || kind == 4) {
        size_t len = str.end - str.p;
        sid = intern(&st->strings, str.p, len, (uint8_t)kind, hash_bytes(str.p, len, kind));
        if (sid < 0) return fail(e, "out of memory");
    }
    if (kind != 0) fval = 0;
    if (kind == 0 || kind == 3 || kind == 4) ival = 0;
    if (BUF_PUT(&st->owner, owner, int64_t) < 0 || BUF_PUT(&st->mid, mid, int64_t) < 0 ||
        BUF_PUT(&st->kind, kind, int8_t) < 0 || BUF_PUT(&st->ival, ival, int64_t) < 0 ||
        BUF_PUT(&st->fval, fval, double) < 0 || BUF_PUT(&st->sid, sid, int32_t) < 0)
        return fail(e, "out of memory");
    st->rows++;
    return 0;
}

/* ---- planes: pass 1 ------------------------------------------------------------ */
typedef struct {
    Reader r; /* from the first event record of the chunk to the end of its last */
    int plane;
    int32_t line;
    int64_t first_row, count;
    Stats stats;
    Err err;
} Chunk;

typedef struct {
    Chunk *items;
    size_t n, cap;
} Chunks;

typedef struct {
    int64_t id;
    PyObject *name, *lines, *stat_names;
    Reader *meta_entries; /* event_metadata map entries, in file order */
    size_t n_meta, cap_meta;
    Stats plane_stats;
    int64_t rows;
    int32_t line_count;
    /* event columns, sized after pass 1 */
    PyObject *col_line, *col_mid, *col_offset, *col_dur, *col_occ;
} Plane;

static int add_chunk(Chunks *c, Chunk chunk) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        Chunk *items = realloc(c->items, cap * sizeof(Chunk));
        if (!items) return -1;
        c->items = items;
        c->cap = cap;
    }
    c->items[c->n++] = chunk;
    return 0;
}

static PyObject *decode_str(Reader s) {
    return PyUnicode_DecodeUTF8((const char *)s.p, s.end - s.p, "strict");
}

static int raise_err(Err *e) {
    PyErr_Format(PyExc_ValueError, "malformed XSpace: %s", e->error ? e->error : "?");
    return -1;
}

/* Line scalars, and its event records cut into chunks (pass 1). */
static int scan_line(Reader r, int plane, Plane *pl, Chunks *chunks, int depth) {
    int64_t id = 0, display_id = 0, timestamp = 0, duration = 0;
    Reader name = {0}, display_name = {0};
    int has_name = 0, has_display = 0;
    int32_t index = pl->line_count++;
    Chunk open;
    int have_open = 0;
    const uint8_t *last_end = NULL;
    Err e = {0};
    while (r.p < r.end) {
        const uint8_t *start = r.p;
        Field f;
        if (*r.p == 0x22) { /* field 4, length-delimited: an event record */
            uint64_t len;
            r.p++;
            if (read_varint(&r, &len, &e) < 0) return raise_err(&e);
            if (len > (uint64_t)(r.end - r.p)) return fail(&e, "length past the end"), raise_err(&e);
            r.p += len;
            f.wire = 2;
            f.number = 4;
        } else if (read_field(&r, &f, depth, &e) < 0) {
            return raise_err(&e);
        }
        if (f.wire == 0 && f.number == 1) id = (int64_t)f.value;
        else if (f.wire == 0 && f.number == 10) display_id = (int64_t)f.value;
        else if (f.wire == 0 && f.number == 3) timestamp = (int64_t)f.value;
        else if (f.wire == 0 && f.number == 9) duration = (int64_t)f.value;
        else if (f.wire == 2 && f.number == 2) name = f.sub, has_name = 1;
        else if (f.wire == 2 && f.number == 11) display_name = f.sub, has_display = 1;
        else if (f.wire == 2 && f.number == 4) {
            if (have_open && open.count == CHUNK_EVENTS) {
                open.r.end = last_end;
                if (add_chunk(chunks, open) < 0) return PyErr_NoMemory(), -1;
                have_open = 0;
            }
            if (!have_open) {
                memset(&open, 0, sizeof(open));
                open.r.p = start;
                open.plane = plane;
                open.line = index;
                open.first_row = pl->rows;
                have_open = 1;
            }
            open.count++;
            pl->rows++;
            last_end = r.p;
        }
    }
    if (have_open) {
        open.r.end = last_end;
        if (add_chunk(chunks, open) < 0) return PyErr_NoMemory(), -1;
    }
    PyObject *n = has_name ? decode_str(name) : PyUnicode_FromString("");
    PyObject *d = has_display ? decode_str(display_name) : PyUnicode_FromString("");
    PyObject *row = NULL;
    if (n && d)
        row = Py_BuildValue("(LLOOLL)", (long long)id, (long long)display_id, n, d,
                            (long long)timestamp, (long long)duration);
    Py_XDECREF(n);
    Py_XDECREF(d);
    if (!row) return -1;
    int rc = PyList_Append(pl->lines, row);
    Py_DECREF(row);
    return rc;
}

/* The key of a map entry: 1 if the entry counts, 0 if protobuf would drop it
 * (an entry with any unknown field goes to the unknown fields, not the map). */
static int entry_key(Reader r, int64_t *key, int depth, Err *e) {
    int known = 1;
    *key = 0;
    while (r.p < r.end) {
        Field f;
        if (read_field(&r, &f, depth, e) < 0) return -1;
        if (f.number == 1 && f.wire == 0) *key = (int64_t)f.value;
        else if (f.number != 2 || f.wire != 2) known = 0;
    }
    return known;
}

/* XStatMetadata name over every value part of an entry (validates the strings). */
static PyObject *stat_metadata_name(Reader entry, int depth) {
    Reader name = {0};
    int has_name = 0;
    Err e = {0};
    while (entry.p < entry.end) {
        Field f;
        if (read_field(&entry, &f, depth, &e) < 0) return raise_err(&e), NULL;
        if (f.number != 2 || f.wire != 2) continue;
        Reader v = f.sub;
        while (v.p < v.end) {
            Field g;
            if (read_field(&v, &g, depth + 1, &e) < 0) return raise_err(&e), NULL;
            if (g.wire == 2 && g.number == 2) name = g.sub, has_name = 1;
            else if (g.wire == 2 && g.number == 3 && !utf8_ok(g.sub.p, g.sub.end))
                return raise_err(&(Err){"invalid UTF-8"}), NULL;
        }
    }
    return has_name ? decode_str(name) : PyUnicode_FromString("");
}

static int check_event_metadata(Reader entry, int64_t key);

static int scan_plane_field(Plane *pl, int plane, Field *f, Chunks *chunks, int depth) {
    Err e = {0};
    if (f->wire == 0 && f->number == 1) {
        pl->id = (int64_t)f->value;
    } else if (f->wire == 2 && f->number == 2) {
        PyObject *s = decode_str(f->sub);
        if (!s) return -1;
        Py_XSETREF(pl->name, s);
    } else if (f->wire == 2 && f->number == 3) {
        return scan_line(f->sub, plane, pl, chunks, depth + 1);
    } else if (f->wire == 2 && f->number == 4) {
        int64_t key;
        int known = entry_key(f->sub, &key, depth + 1, &e);
        if (known < 0) return raise_err(&e);
        if (!known) return check_event_metadata(f->sub, key);
        if (pl->n_meta == pl->cap_meta) {
            size_t cap = pl->cap_meta ? pl->cap_meta * 2 : 64;
            Reader *grown = realloc(pl->meta_entries, cap * sizeof(Reader));
            if (!grown) return PyErr_NoMemory(), -1;
            pl->meta_entries = grown;
            pl->cap_meta = cap;
        }
        pl->meta_entries[pl->n_meta++] = f->sub;
    } else if (f->wire == 2 && f->number == 5) {
        int64_t key;
        int known = entry_key(f->sub, &key, depth + 1, &e);
        if (known < 0) return raise_err(&e);
        PyObject *k = PyLong_FromLongLong(key);
        PyObject *name = k ? stat_metadata_name(f->sub, depth + 1) : NULL;
        int rc = (k && name) ? (known ? PyDict_SetItem(pl->stat_names, k, name) : 0) : -1;
        Py_XDECREF(k);
        Py_XDECREF(name);
        return rc;
    } else if (f->wire == 2 && f->number == 6) {
        if (read_stat(f->sub, 0, &pl->plane_stats, depth + 1, &e) < 0) return raise_err(&e);
    }
    return 0;
}

/* ---- pass 2: events of one chunk ---------------------------------------------- */
typedef struct {
    int32_t *line;
    int64_t *mid, *offset, *dur, *occ;
} EventCols;

static int parse_event(Reader r, int64_t row, EventCols *c, Stats *st, Err *e) {
    int64_t mid = 0, offset = 0, dur = 0, occ = 0;
    while (r.p < r.end) {
        /* Fast path: single-byte keys of the common fields. */
        uint8_t key = *r.p;
        if (key == 0x08 || key == 0x10 || key == 0x18 || key == 0x28) {
            r.p++;
            uint64_t v;
            if (read_varint(&r, &v, e) < 0) return -1;
            if (key == 0x08) mid = (int64_t)v;
            else if (key == 0x10) offset = (int64_t)v, occ = 0;
            else if (key == 0x28) occ = (int64_t)v, offset = 0;
            else dur = (int64_t)v;
            continue;
        }
        Field f;
        if (read_field(&r, &f, 4, e) < 0) return -1;
        if (f.wire == 0 && f.number == 1) mid = (int64_t)f.value;
        else if (f.wire == 0 && f.number == 2) offset = (int64_t)f.value, occ = 0;
        else if (f.wire == 0 && f.number == 5) occ = (int64_t)f.value, offset = 0;
        else if (f.wire == 0 && f.number == 3) dur = (int64_t)f.value;
        else if (f.wire == 2 && f.number == 4 && read_stat(f.sub, row, st, 5, e) < 0) return -1;
    }
    c->mid[row] = mid;
    c->offset[row] = offset;
    c->dur[row] = dur;
    c->occ[row] = occ;
    return 0;
}

static void parse_chunk(Chunk *ch, EventCols *c) {
    Reader r = ch->r;
    int64_t row = ch->first_row;
    while (r.p < r.end) {
        Field f;
        if (*r.p == 0x22) { /* an event record (checked in pass 1) */
            uint64_t len;
            r.p++;
            if (read_varint(&r, &len, &ch->err) < 0) return;
            f.sub.p = r.p;
            f.sub.end = r.p + len;
            r.p += len;
        } else {
            if (read_field(&r, &f, 3, &ch->err) < 0) return;
            if (f.wire != 2 || f.number != 4) continue;
        }
        c->line[row] = ch->line;
        if (parse_event(f.sub, row, c, &ch->stats, &ch->err) < 0) return;
        row++;
    }
}

typedef struct {
    Chunks *chunks;
    EventCols *cols; /* per plane */
    size_t next;
#ifdef HAVE_THREADS
    pthread_mutex_t lock;
#endif
} Work;

static void *worker(void *arg) {
    Work *w = arg;
    for (;;) {
        size_t i;
#ifdef HAVE_THREADS
        pthread_mutex_lock(&w->lock);
        i = w->next++;
        pthread_mutex_unlock(&w->lock);
#else
        i = w->next++;
#endif
        if (i >= w->chunks->n) return NULL;
        Chunk *ch = &w->chunks->items[i];
        parse_chunk(ch, &w->cols[ch->plane]);
    }
}

static void run_pass2(Work *w, int threads) {
#ifdef HAVE_THREADS
    pthread_t ids[16];
    int started = 0;
    if (threads > 16) threads = 16;
    pthread_mutex_init(&w->lock, NULL);
    for (int i = 1; i < threads && (size_t)i < w->chunks->n; i++)
        if (pthread_create(&ids[started], NULL, worker, w) == 0) started++;
    worker(w);
    for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
    pthread_mutex_destroy(&w->lock);
#else
    (void)threads;
    worker(w);
#endif
}

/* ---- pass 3: Python objects --------------------------------------------------- */
static PyObject *bytearray_of(const void *data, size_t len) {
    return PyByteArray_FromStringAndSize(data ? (const char *)data : "", (Py_ssize_t)len);
}

static PyObject *string_object(StrKey *k) {
    if (k->kind == 4) return PyBytes_FromStringAndSize((const char *)k->p, k->len);
    return PyUnicode_DecodeUTF8((const char *)k->p, k->len, "strict");
}

/* Appends src's rows to dst, re-interning src's strings into dst's table. */
static int stats_append(Stats *dst, Stats *src) {
    if (!src->rows) return 0;
    if (!dst->rows && !dst->strings.n) { /* the first chunk: take its buffers as they are */
        stats_free(dst);
        *dst = *src;
        memset(src, 0, sizeof(*src));
        return 0;
    }
    int32_t *remap = malloc((src->strings.n + 1) * sizeof(int32_t));
    if (!remap) return -1;
    for (size_t i = 0; i < src->strings.n; i++) {
        StrKey *k = &src->strings.keys[i];
        remap[i] = intern(&dst->strings, k->p, k->len, k->kind, k->hash);
        if (remap[i] < 0) return free(remap), -1;
    }
    size_t n = src->rows;
    if (buf_reserve(&dst->owner, n * 8) < 0 || buf_reserve(&dst->mid, n * 8) < 0 ||
        buf_reserve(&dst->kind, n) < 0 || buf_reserve(&dst->ival, n * 8) < 0 ||
        buf_reserve(&dst->fval, n * 8) < 0 || buf_reserve(&dst->sid, n * 4) < 0)
        return free(remap), -1;
    memcpy(dst->owner.data + dst->owner.len, src->owner.data, n * 8);
    memcpy(dst->mid.data + dst->mid.len, src->mid.data, n * 8);
    memcpy(dst->kind.data + dst->kind.len, src->kind.data, n);
    memcpy(dst->ival.data + dst->ival.len, src->ival.data, n * 8);
    memcpy(dst->fval.data + dst->fval.len, src->fval.data, n * 8);
    int32_t *out = (int32_t *)(dst->sid.data + dst->sid.len);
    const int32_t *in = (const int32_t *)src->sid.data;
    for (size_t i = 0; i < n; i++) out[i] = in[i] < 0 ? -1 : remap[in[i]];
    dst->owner.len += n * 8;
    dst->mid.len += n * 8;
    dst->kind.len += n;
    dst->ival.len += n * 8;
    dst->fval.len += n * 8;
    dst->sid.len += n * 4;
    dst->rows += n;
    free(remap);
    return 0;
}

static PyObject *stats_take(Stats *st) {
    PyObject *strings = PyList_New((Py_ssize_t)st->strings.n);
    if (!strings) return NULL;
    for (size_t i = 0; i < st->strings.n; i++) {
        PyObject *s = string_object(&st->strings.keys[i]);
        if (!s) return Py_DECREF(strings), NULL;
        PyList_SET_ITEM(strings, (Py_ssize_t)i, s);
    }
    return Py_BuildValue("(NNNNNNN)", bytearray_of(st->owner.data, st->owner.len),
                         bytearray_of(st->mid.data, st->mid.len),
                         bytearray_of(st->kind.data, st->kind.len),
                         bytearray_of(st->ival.data, st->ival.len),
                         bytearray_of(st->fval.data, st->fval.len),
                         bytearray_of(st->sid.data, st->sid.len), strings);
}

static int cmp_pair(const void *a, const void *b) {
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

/* One XEventMetadata over all value parts of its entry: row + stats. */
static int read_event_metadata(Reader entry, int64_t key, PyObject *rows, Stats *st) {
    Reader name = {0}, display = {0};
    int has_name = 0, has_display = 0;
    Err e = {0};
    while (entry.p < entry.end) {
        Field f;
        if (read_field(&entry, &f, 2, &e) < 0) return raise_err(&e);
        if (f.number != 2 || f.wire != 2) continue;
        Reader v = f.sub;
        while (v.p < v.end) {
            Field g;
            if (read_field(&v, &g, 3, &e) < 0) return raise_err(&e);
            if (g.wire == 2 && g.number == 2) name = g.sub, has_name = 1;
            else if (g.wire == 2 && g.number == 4) display = g.sub, has_display = 1;
            else if (g.wire == 2 && g.number == 5 && read_stat(g.sub, key, st, 4, &e) < 0)
                return raise_err(&e);
            else if (g.wire == 2 && g.number == 6 && check_packed_varints(g.sub, &e) < 0)
                return raise_err(&e);
        }
    }
    PyObject *n = has_name ? decode_str(name) : PyUnicode_FromString("");
    PyObject *d = has_display ? decode_str(display) : PyUnicode_FromString("");
    PyObject *row = (n && d) ? Py_BuildValue("(LOO)", (long long)key, n, d) : NULL;
    Py_XDECREF(n);
    Py_XDECREF(d);
    int rc = row ? PyList_Append(rows, row) : -1;
    Py_XDECREF(row);
    return rc;
}

/* An entry protobuf drops from the map must still be well-formed. */
static int check_event_metadata(Reader entry, int64_t key) {
    PyObject *rows = PyList_New(0);
    Stats st;
    memset(&st, 0, sizeof(st));
    int rc = rows ? read_event_metadata(entry, key, rows, &st) : -1;
    PyObject *strings = rc == 0 ? stats_take(&st) : NULL; /* checks their UTF-8 */
    if (rc == 0 && !strings) rc = -1;
    Py_XDECREF(strings);
    Py_XDECREF(rows);
    stats_free(&st);
    return rc;
}

/* Event metadata in id order; a repeated key keeps its last entry, as protobuf does. */
static int event_metadata(Plane *pl, PyObject **rows_out, PyObject **stats_out) {
    size_t n = pl->n_meta;
    int64_t(*order)[2] = malloc((n + 1) * sizeof(*order));
    PyObject *rows = PyList_New(0);
    Stats st;
    memset(&st, 0, sizeof(st));
    int rc = -1;
    if (!order || !rows) goto done;
    for (size_t i = 0; i < n; i++) {
        Err e = {0};
        entry_key(pl->meta_entries[i], &order[i][0], 2, &e);
        order[i][1] = (int64_t)i;
    }
    qsort(order, n, sizeof(*order), cmp_pair); /* by key, then by entry index */
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && order[i + 1][0] == order[i][0]) continue; /* a later entry wins */
        if (read_event_metadata(pl->meta_entries[order[i][1]], order[i][0], rows, &st) < 0)
            goto done;
    }
    *stats_out = stats_take(&st);
    if (*stats_out) {
        *rows_out = rows;
        rows = NULL;
        rc = 0;
    }
done:
    free(order);
    Py_XDECREF(rows);
    stats_free(&st);
    return rc;
}

static void plane_free(Plane *pl) {
    Py_CLEAR(pl->name);
    Py_CLEAR(pl->lines);
    Py_CLEAR(pl->stat_names);
    Py_CLEAR(pl->col_line);
    Py_CLEAR(pl->col_mid);
    Py_CLEAR(pl->col_offset);
    Py_CLEAR(pl->col_dur);
    Py_CLEAR(pl->col_occ);
    free(pl->meta_entries);
    stats_free(&pl->plane_stats);
}

static PyObject *plane_object(Plane *pl, Stats *ev_stats, PyObject *empty) {
    PyObject *meta_rows = NULL, *meta_stats = NULL;
    if (event_metadata(pl, &meta_rows, &meta_stats) < 0) return NULL;
    PyObject *events = Py_BuildValue("(OOOOO)", pl->col_line, pl->col_mid, pl->col_offset,
                                     pl->col_dur, pl->col_occ);
    PyObject *stats = stats_take(ev_stats);
    PyObject *plane_stats = stats_take(&pl->plane_stats);
    PyObject *out = NULL;
    if (events && stats && plane_stats)
        out = Py_BuildValue("{s:L,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "id", (long long)pl->id,
                            "name", pl->name ? pl->name : empty, "lines", pl->lines, "events",
                            events, "stats", stats, "event_metadata", meta_rows,
                            "metadata_stats", meta_stats, "stat_metadata", pl->stat_names,
                            "plane_stats", plane_stats);
    Py_XDECREF(events);
    Py_XDECREF(stats);
    Py_XDECREF(plane_stats);
    Py_XDECREF(meta_rows);
    Py_XDECREF(meta_stats);
    return out;
}

/* ---- decode(): the three passes ------------------------------------------------ */
typedef struct {
    Plane *items;
    size_t n, cap;
} Planes;

static int scan_space(Reader r, Planes *planes, Chunks *chunks, PyObject *lists[4]) {
    Err e = {0};
    while (r.p < r.end) {
        Field f;
        if (read_field(&r, &f, 0, &e) < 0) return raise_err(&e);
        if (f.wire != 2 || f.number < 1 || f.number > 4) continue;
        if (f.number > 1) {
            PyObject *s = decode_str(f.sub);
            int rc = s ? PyList_Append(lists[f.number - 1], s) : -1;
            Py_XDECREF(s);
            if (rc < 0) return -1;
            continue;
        }
        if (planes->n == planes->cap) {
            size_t cap = planes->cap ? planes->cap * 2 : 8;
            Plane *grown = realloc(planes->items, cap * sizeof(Plane));
            if (!grown) return PyErr_NoMemory(), -1;
            planes->items = grown;
            planes->cap = cap;
        }
        Plane *pl = &planes->items[planes->n++];
        memset(pl, 0, sizeof(*pl));
        pl->lines = PyList_New(0);
        pl->stat_names = PyDict_New();
        if (!pl->lines || !pl->stat_names) return -1;
        Reader p = f.sub;
        while (p.p < p.end) {
            Field g;
            if (read_field(&p, &g, 1, &e) < 0) return raise_err(&e);
            if (scan_plane_field(pl, (int)planes->n - 1, &g, chunks, 1) < 0) return -1;
        }
    }
    return 0;
}

static int alloc_columns(Planes *planes, EventCols *cols) {
    for (size_t i = 0; i < planes->n; i++) {
        Plane *pl = &planes->items[i];
        Py_ssize_t n = (Py_ssize_t)pl->rows;
        pl->col_line = PyByteArray_FromStringAndSize(NULL, n * 4);
        pl->col_mid = PyByteArray_FromStringAndSize(NULL, n * 8);
        pl->col_offset = PyByteArray_FromStringAndSize(NULL, n * 8);
        pl->col_dur = PyByteArray_FromStringAndSize(NULL, n * 8);
        pl->col_occ = PyByteArray_FromStringAndSize(NULL, n * 8);
        if (!pl->col_line || !pl->col_mid || !pl->col_offset || !pl->col_dur || !pl->col_occ)
            return -1;
        cols[i].line = (int32_t *)PyByteArray_AS_STRING(pl->col_line);
        cols[i].mid = (int64_t *)PyByteArray_AS_STRING(pl->col_mid);
        cols[i].offset = (int64_t *)PyByteArray_AS_STRING(pl->col_offset);
        cols[i].dur = (int64_t *)PyByteArray_AS_STRING(pl->col_dur);
        cols[i].occ = (int64_t *)PyByteArray_AS_STRING(pl->col_occ);
    }
    return 0;
}

static PyObject *build_planes(Planes *planes, Chunks *chunks) {
    PyObject *out = PyList_New(0);
    size_t next = 0;
    for (size_t i = 0; out && i < planes->n; i++) {
        Stats st;
        memset(&st, 0, sizeof(st));
        int ok = 1;
        for (; next < chunks->n && chunks->items[next].plane == (int)i; next++)
            if (stats_append(&st, &chunks->items[next].stats) < 0) ok = 0;
        PyObject *empty = PyUnicode_FromString("");
        PyObject *plane = !empty ? NULL
                          : ok   ? plane_object(&planes->items[i], &st, empty)
                                 : PyErr_NoMemory();
        Py_XDECREF(empty);
        stats_free(&st);
        if (!plane || PyList_Append(out, plane) < 0) Py_CLEAR(out);
        Py_XDECREF(plane);
    }
    return out;
}

static int default_threads(void) {
#ifdef HAVE_THREADS
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer view;
    long long max_events = -1;
    int threads = 0;
    if (!PyArg_ParseTuple(args, "y*|Li", &view, &max_events, &threads)) return NULL;
    if (threads <= 0) threads = default_threads();
    Reader r = {(const uint8_t *)view.buf, (const uint8_t *)view.buf + view.len};
    PyObject *lists[4] = {NULL, PyList_New(0), PyList_New(0), PyList_New(0)};
    Planes planes = {0};
    Chunks chunks = {0};
    EventCols *cols = NULL;
    PyObject *out = NULL, *plane_list = NULL;
    if (!lists[1] || !lists[2] || !lists[3]) goto done;
    if (scan_space(r, &planes, &chunks, lists) < 0) goto done;
    int64_t total = 0;
    for (size_t i = 0; i < planes.n; i++) total += planes.items[i].rows;
    if (max_events >= 0 && total > max_events) {
        PyErr_Format(PyExc_OverflowError, "%lld events", (long long)total);
        goto done;
    }
    cols = calloc(planes.n + 1, sizeof(EventCols));
    if (!cols) {
        PyErr_NoMemory();
        goto done;
    }
    if (alloc_columns(&planes, cols) < 0) goto done;
    Work work = {&chunks, cols, 0};
    Py_BEGIN_ALLOW_THREADS
    run_pass2(&work, threads);
    Py_END_ALLOW_THREADS
    for (size_t i = 0; i < chunks.n; i++)
        if (chunks.items[i].err.error) {
            raise_err(&chunks.items[i].err);
            goto done;
        }
    plane_list = build_planes(&planes, &chunks);
    if (!plane_list) goto done;
    out = Py_BuildValue("{s:O,s:O,s:O,s:O}", "planes", plane_list, "hostnames", lists[3],
                        "errors", lists[1], "warnings", lists[2]);
done:
    Py_XDECREF(plane_list);
    for (int i = 1; i < 4; i++) Py_XDECREF(lists[i]);
    for (size_t i = 0; i < planes.n; i++) plane_free(&planes.items[i]);
    free(planes.items);
    for (size_t i = 0; i < chunks.n; i++) stats_free(&chunks.items[i].stats);
    free(chunks.items);
    free(cols);
    PyBuffer_Release(&view);
    return out;
}

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(data, max_events=-1, threads=0): serialized XSpace bytes -> typed columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fastdecode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__fastdecode(void) { return PyModule_Create(&module); }
