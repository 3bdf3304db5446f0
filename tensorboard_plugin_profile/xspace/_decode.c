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
 *     columns are allocated once, at their final size. Then the metadata
 *     tables, the distinct event names and each line's base time are made.
 *  2. (GIL released, worker threads) parse the events of each chunk into their
 *     rows of the final columns (_layout.h), and their stats into per-chunk
 *     buffers, interning strings by bytes (copied out: with discard, the
 *     chunk's pages of the file go back to the OS once it is parsed).
 *  3. (GIL held) concatenate the chunks' stats in file order, merging the
 *     chunk string tables into one per plane, and make one Python object per
 *     distinct string (UTF-8 checked there, once per distinct string).
 *
 * decode(data, max_events, threads, discard, arrived, alloc) -> dict(hostnames, errors,
 *        warnings, time_base_ns, planes=[plane]): the final layout of rawform.py.
 * Columns are bytearrays, or with `alloc` what alloc(nbytes) returns (a writable buffer:
 * decode.py gives numpy bytes, which the block pool serves).
 * Absent strings are "", as in protobuf.
 * plane = dict(id, name, lines=[(id, display_id, name, display_name,
 *              timestamp_ns, duration_ps)], events=Columns, names=Names,
 *              stats=Stats, event_metadata=[(id, name, display_name)] sorted by id,
 *              metadata_stats=Stats (in id order), stat_metadata={id: name},
 *              plane_stats=Stats)
 * Columns = (line int32, metadata_id int32 (int64 when some id needs it), begin_ps, duration_ps int64,
 *            occurrences int64 or None when all are zero)
 * Names = (name codes, display-name codes (int8/16/32), names, display names)
 * Stats = (owner int64, metadata_id int64, kind int8, int64, float64 (None: all 0.0),
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
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef _WIN32
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
#define HAVE_THREADS 1
#ifdef MADV_DONTNEED
#define HAVE_MADVISE 1
#endif
#endif

#define CHUNK_EVENTS 32768
#include "_wire.h"
#include "_layout.h"

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

/* A row's float value. The column stays empty while every value is 0.0 (all of them in
 * real profiles, which have no doubles): no page written here, nor by its concatenation. */
static int put_float(Stats *st, double value) {
    uint64_t bits;
    memcpy(&bits, &value, 8);
    if (!st->fval.len && !bits) return 0;
    if (!st->fval.len) { /* the first other value: zeros for the rows before it */
        if (buf_reserve(&st->fval, (st->rows + 1) * 8) < 0) return -1;
        memset(st->fval.data, 0, st->rows * 8);
        st->fval.len = st->rows * 8;
    }
    return BUF_PUT(&st->fval, value, double);
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
        put_float(st, fval) < 0 || BUF_PUT(&st->sid, sid, int32_t) < 0)
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
    int any_occ; /* an event with non-zero occurrences */
    Buf wide;    /* (row, id) of events whose metadata id does not fit int32 */
    Stats stats;
    Err err;
    /* streaming: the chunk's own columns until fill_chunk: begin offsets then durations
     * (local, 2 x count int64), metadata ids (local_mid), occurrences (local_occ). in_file:
     * local lies in the chunk's own bytes of the file, else it is malloc'd; mid_apart:
     * local_mid is malloc'd on its own, else it follows local */
    int64_t *local;
    int32_t *local_mid;
    int64_t *local_occ;
    uint8_t in_file, mid_apart;
} Chunk;

struct Stream;

typedef struct {
    Chunk *items;
    size_t n, cap;
    struct Stream *stream; /* NULL: the whole file is there */
} Chunks;

typedef struct {
    int64_t id;
    PyObject *name, *lines, *stat_names;
    Reader *meta_entries; /* event_metadata map entries, in file order */
    size_t n_meta, cap_meta;
    Stats plane_stats;
    int64_t rows;
    int32_t line_count;
    int64_t *line_ts; /* per line: timestamp_ns, then (after pass 1) its base in ps */
    size_t cap_ts;
    /* after pass 1: metadata rows and stats, the id index, the distinct names */
    PyObject *meta_rows, *meta_stats, *name_strings, *display_strings;
    MetaIndex meta;
    /* event columns, sized after pass 1 (occ: zeroed, a bytearray only if used) */
    PyObject *col_line, *col_mid, *col_begin, *col_dur, *col_name, *col_display;
    int64_t *occ;
    PyObject *alloc; /* borrowed: decode()'s `alloc` (NULL: bytearrays) */
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

/* ---- streaming: a file that is still arriving ---------------------------------
 * decode(..., arrived): `arrived` holds two int64, [0] the bytes of the file that have
 * arrived (a prefix that only grows), [1] non-zero once no more will (a failed download).
 * The writer (remote.py) fills the file in order and publishes the prefix with arrive(), a
 * release store after the bytes are in place, and a futex wake. Pass 1 waits (GIL released,
 * asleep on that futex; polling every 0.2 ms where there is none) before it reads bytes past
 * the prefix, and hands each chunk it cuts to the
 * worker threads at once, which parse its events into the chunk's own columns (the
 * plane's metadata, at the plane's end, and the time base, over all planes, are not
 * known yet). Once the walk is done, fill_chunk moves each chunk's rows into the final
 * columns with their names and line bases. If the writer gives up, the wait ends and
 * decode raises ConnectionAbortedError (remote.py raises the download's own error). */
#ifdef HAVE_THREADS
#include <time.h>
#if defined(__linux__)
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
/* The waiter sleeps on the low half of arrived[0] until arrive() stores a new prefix and
 * wakes it (at most 10 ms: a wake that came between its look and its sleep, or a failure
 * flagged in arrived[1], is seen then). Both sides are in this process: private futex. */
static uint32_t *arrived_word(int64_t *arrived) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    return (uint32_t *)arrived + 1;
#else
    return (uint32_t *)arrived;
#endif
}
static void arrival_sleep(int64_t *arrived, int64_t seen) {
    struct timespec most = {0, 10000000};
    syscall(SYS_futex, arrived_word(arrived), FUTEX_WAIT_PRIVATE, (uint32_t)seen, &most, NULL, 0);
}
static void arrival_wake(int64_t *arrived) {
    syscall(SYS_futex, arrived_word(arrived), FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
#else /* elsewhere: polled every 0.2 ms */
static void arrival_sleep(int64_t *arrived, int64_t seen) {
    (void)arrived;
    (void)seen;
    struct timespec nap = {0, 200000};
    nanosleep(&nap, NULL);
}
static void arrival_wake(int64_t *arrived) { (void)arrived; }
#endif
typedef struct Stream {
    const uint8_t *base, *known; /* known: base + the bytes seen arrived */
    int64_t *arrived;
    Chunks *chunks;
    int discard;
    pthread_mutex_t lock;
    pthread_cond_t wake; /* a chunk was cut, or the walk ended */
    size_t next, cut;    /* the next chunk to parse; chunks [0, cut) may be parsed */
    int64_t events, max_events; /* cut so far; past the limit nothing more is parsed */
    int scanning, abandon;
    pthread_t ids[16];
    int started;
} Stream;

/* 0 once the bytes before `upto` have arrived; -1 (error set) if they never will. */
static int await_bytes(Stream *s, const uint8_t *upto) {
    if (!s || upto <= s->known) return 0;
    int64_t have = __atomic_load_n(&s->arrived[0], __ATOMIC_ACQUIRE);
    int failed = 0;
    if (s->base + have < upto) {
        Py_BEGIN_ALLOW_THREADS
        for (;;) {
            have = __atomic_load_n(&s->arrived[0], __ATOMIC_ACQUIRE);
            if (s->base + have >= upto) break;
            if (__atomic_load_n(&s->arrived[1], __ATOMIC_ACQUIRE)) {
                failed = 1;
                break;
            }
            arrival_sleep(s->arrived, have);
        }
        Py_END_ALLOW_THREADS
    }
    if (failed) {
        PyErr_SetString(PyExc_ConnectionAbortedError, "the profile stopped arriving");
        return -1;
    }
    s->known = s->base + have;
    return 0;
}

/* A chunk cut by pass 1, handed to the workers once its bytes are there. */
static int cut_chunk(Chunks *c, Chunk chunk) {
    Stream *s = c->stream;
    if (!s) return add_chunk(c, chunk) < 0 ? (PyErr_NoMemory(), -1) : 0;
    if (await_bytes(s, chunk.r.end) < 0) return -1;
    pthread_mutex_lock(&s->lock); /* workers copy items out under it: no realloc under them */
    int rc = add_chunk(c, chunk);
    s->events += chunk.count;
    if (s->max_events >= 0 && s->events > s->max_events) { /* pass 1 only counts on */
        s->abandon = 1;
        pthread_cond_broadcast(&s->wake);
    } else if (rc == 0) {
        s->cut = c->n;
        pthread_cond_signal(&s->wake);
    }
    pthread_mutex_unlock(&s->lock);
    return rc < 0 ? (PyErr_NoMemory(), -1) : 0;
}
#else
typedef struct Stream {
    const uint8_t *known;
} Stream;
static int await_bytes(Stream *s, const uint8_t *upto) {
    (void)s;
    (void)upto;
    return 0;
}
static int cut_chunk(Chunks *c, Chunk chunk) {
    return add_chunk(c, chunk) < 0 ? (PyErr_NoMemory(), -1) : 0;
}
#endif

/* Before reading a field at r->p: its key and value or length (at most 15 bytes), or all
 * of the enclosing message for a group (skipped by reading it). */
static int await_field(Chunks *c, const Reader *r) {
    if (!c->stream) return 0;
    if (await_bytes(c->stream, r->end - r->p > 16 ? r->p + 16 : r->end) < 0) return -1;
    return (*r->p & 7) == 3 ? await_bytes(c->stream, r->end) : 0;
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
        if (await_field(chunks, &r) < 0) return -1;
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
        } else if (f.wire == 2 && f.number != 4 && await_bytes(chunks->stream, f.sub.end) < 0) {
            return -1;
        }
        if (chunks->stream && have_open && !(f.wire == 2 && f.number == 4)) {
            /* Streaming: a chunk's pages may go back while this line is still walked, so
             * no chunk spans another field of the line (its name is read at the line's end) */
            open.r.end = last_end;
            if (cut_chunk(chunks, open) < 0) return -1;
            have_open = 0;
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
                if (cut_chunk(chunks, open) < 0) return -1;
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
        if (cut_chunk(chunks, open) < 0) return -1;
    }
    if ((size_t)index >= pl->cap_ts) {
        size_t cap = pl->cap_ts ? pl->cap_ts * 2 : 16;
        int64_t *grown = realloc(pl->line_ts, cap * sizeof(int64_t));
        if (!grown) return PyErr_NoMemory(), -1;
        pl->line_ts = grown;
        pl->cap_ts = cap;
    }
    pl->line_ts[index] = timestamp;
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
static int parse_event(Reader r, int64_t row, Chunk *ch, EventCols *c) {
    int64_t mid = 0, offset = 0, dur = 0, occ = 0;
    Err *e = &ch->err;
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
        else if (f.wire == 2 && f.number == 4 && read_stat(f.sub, row, &ch->stats, 5, e) < 0)
            return -1;
    }
    if (put_event(c, row, ch->line, mid, offset, dur, occ, &ch->any_occ, &ch->wide) < 0)
        return fail(e, "out of memory");
    return 0;
}

static void parse_chunk(Chunk *ch, EventCols *c) {
    Reader r = ch->r;
    int64_t row = ch->first_row;
    while (r.p < r.end) {
        Reader event;
        if (*r.p == 0x22) { /* an event record (checked in pass 1) */
            uint64_t len;
            r.p++;
            if (read_varint(&r, &len, &ch->err) < 0) return;
            /* Kept out of a Field: a Field lives in memory (read_field takes its address),
             * and reloading its halves as one 16-byte value stalls every event. */
            event.p = r.p;
            event.end = r.p + len;
            r.p += len;
        } else {
            Field f;
            if (read_field(&r, &f, 3, &ch->err) < 0) return;
            if (f.wire != 2 || f.number != 4) continue;
            event = f.sub;
        }
        if (parse_event(event, row, ch, c) < 0) return;
        row++;
    }
}

/* Gives the pages wholly inside [p, end) back to the OS (their content reads as zeros
 * afterwards). Only for a buffer that nothing reads again: decode(discard=True) is called
 * with the file's bytes in anonymous memory of their own (decode.py), and everything read
 * after its walk was copied out (interned strings into their tables' arenas). */
static void release_pages(const uint8_t *p, const uint8_t *end) {
#if defined(HAVE_MADVISE)
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)p + page - 1) & ~(page - 1), hi = (uintptr_t)end & ~(page - 1);
    if (lo < hi) madvise((void *)lo, hi - lo, MADV_DONTNEED);
#else
    (void)p;
    (void)end;
#endif
}

/* Streaming: a chunk's events into its own columns (put_event with meta NULL). With
 * `scratch` (a worker's buffer of CHUNK_EVENTS rows; only under discard, when nothing reads
 * the file's bytes again), they are parsed there, then copied over the chunk's own bytes of
 * the file, as much as these hold (begin and duration at least, else all in fresh memory):
 * those pages are in memory already (the download wrote them), where fresh memory costs a
 * page fault and a page clearing per 4 KiB, most of the streamed walk's extra CPU
 * (docs/decoder.md, "Streaming"). */
typedef struct {
    int64_t *cols; /* CHUNK_EVENTS rows of begin, duration, id (only under discard) */
    int64_t *occ;  /* CHUNK_EVENTS occurrences, zeros between chunks */
} Scratch;

/* A chunk's occurrences, parsed into the scratch's: kept apart only when one is non-zero
 * (rare), the scratch zeroed again; a calloc per chunk cleared 256 KiB each time. */
static int keep_occ(Chunk *ch, Scratch *scratch, int64_t **occ) {
    if (*occ != scratch->occ) return 0;
    size_t n = (size_t)ch->count;
    *occ = NULL;
    if (!ch->any_occ) return 0;
    *occ = malloc(n * 8 + 8);
    if (*occ) memcpy(*occ, scratch->occ, n * 8);
    memset(scratch->occ, 0, n * 8);
    return *occ ? 0 : -1;
}

static void parse_local(Chunk *ch, Scratch *scratch) {
    size_t n = (size_t)ch->count;
    uint8_t *own = (uint8_t *)(((uintptr_t)ch->r.p + 7) & ~(uintptr_t)7);
    size_t room = own < ch->r.end ? (size_t)(ch->r.end - own) : 0;
    int in_file = scratch->cols && n <= CHUNK_EVENTS && room >= n * 16;
    int mid_apart = in_file && room < n * 20;
    int64_t *block = in_file ? scratch->cols : malloc(n * 20 + 8);
    int32_t *mid = mid_apart ? malloc(n * 4 + 4) : NULL;
    int64_t *occ = scratch->occ && n <= CHUNK_EVENTS ? scratch->occ : calloc(n + 1, 8);
    if (!block || !occ || (mid_apart && !mid)) {
        if (!in_file) free(block);
        free(mid);
        if (occ != scratch->occ) free(occ);
        fail(&ch->err, "out of memory");
        return;
    }
    EventCols c;
    memset(&c, 0, sizeof(c));
    c.row0 = ch->first_row;
    c.begin = block;
    c.dur = block + n;
    c.mid = (int32_t *)(block + 2 * n);
    c.occ = occ;
    parse_chunk(ch, &c);
    if (keep_occ(ch, scratch, &occ) < 0) {
        if (!in_file) free(block);
        free(mid);
        fail(&ch->err, "out of memory");
        return;
    }
    if (in_file) { /* the walk of the chunk's bytes is over: they may be overwritten */
        memcpy(own, block, n * 16);
        if (mid_apart) memcpy(mid, c.mid, n * 4);
        else memcpy(mid = (int32_t *)(own + n * 16), c.mid, n * 4);
        block = (int64_t *)own;
    }
    ch->local = block;
    ch->local_mid = in_file ? mid : c.mid;
    ch->local_occ = occ;
    ch->in_file = (uint8_t)in_file;
    ch->mid_apart = (uint8_t)mid_apart;
}

/* The chunk's own columns, once moved (or on an error). */
static void local_free(Chunk *ch) {
    if (!ch->in_file) free(ch->local);
    if (ch->mid_apart) free(ch->local_mid);
    free(ch->local_occ);
    ch->local = NULL;
    ch->local_mid = NULL;
    ch->local_occ = NULL;
}

/* Streaming, once the walk is done: a chunk's own columns into the plane's final ones,
 * with the line's base added and the names looked up (what put_event does at once). */
static void fill_chunk(Chunk *ch, EventCols *c) {
    if (!ch->local) return; /* not parsed (out of memory: its error is set) */
    size_t n = (size_t)ch->count;
    const int64_t *begin = ch->local, *dur = begin + n;
    const int32_t *mid = ch->local_mid;
    uint64_t base = (uint64_t)c->line_base[ch->line];
    int64_t row = ch->first_row;
    for (size_t i = 0; i < n; i++, row++) {
        c->line[row] = ch->line;
        c->mid[row] = mid[i];
        c->begin[row] = (int64_t)((uint64_t)begin[i] + base);
        c->dur[row] = dur[i];
        size_t meta = meta_row(c->meta, mid[i]);
        put_code(c->name, c->name_width, row, c->meta->name[meta]);
        put_code(c->display, c->display_width, row, c->meta->display[meta]);
    }
    for (size_t i = 0; ch->any_occ && i < n; i++)
        if (ch->local_occ[i]) c->occ[ch->first_row + (int64_t)i] = ch->local_occ[i];
    const int64_t *noted = (const int64_t *)ch->wide.data; /* ids past int32: their names */
    for (size_t j = 0; j + 1 < ch->wide.len / 8; j += 2) {
        size_t meta = meta_row(c->meta, noted[j + 1]);
        put_code(c->name, c->name_width, noted[j], c->meta->name[meta]);
        put_code(c->display, c->display_width, noted[j], c->meta->display[meta]);
    }
    if (ch->in_file) release_pages(ch->r.p, ch->r.end); /* nothing reads them again */
    local_free(ch);
}

typedef struct {
    Chunks *chunks;
    EventCols *cols; /* per plane */
    size_t next;
    int discard;     /* hand each walked chunk's pages back (release_pages) */
    int fill;        /* streaming: fill_chunk, not parse_chunk */
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
        if (w->fill) {
            fill_chunk(ch, &w->cols[ch->plane]);
            continue;
        }
        parse_chunk(ch, &w->cols[ch->plane]);
        if (w->discard) release_pages(ch->r.p, ch->r.end);
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

#ifdef HAVE_THREADS
/* Streaming workers: parse each chunk as soon as pass 1 has cut it (and its bytes are
 * there), until the walk ends. A chunk is copied out and back under the lock: pass 1 may
 * grow (move) the array meanwhile. */
static void *stream_worker(void *arg) {
    Stream *s = arg;
    Scratch scratch = {s->discard ? malloc(CHUNK_EVENTS * 20) : NULL, /* reused: warm */
                       calloc(CHUNK_EVENTS + 1, 8)};
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (!s->abandon && s->next >= s->cut && s->scanning) pthread_cond_wait(&s->wake, &s->lock);
        if (s->abandon || s->next >= s->cut) break;
        size_t i = s->next++;
        Chunk ch = s->chunks->items[i];
        pthread_mutex_unlock(&s->lock);
        parse_local(&ch, &scratch);
        if (s->discard && !ch.in_file) release_pages(ch.r.p, ch.r.end);
        pthread_mutex_lock(&s->lock);
        s->chunks->items[i] = ch;
    }
    pthread_mutex_unlock(&s->lock);
    free(scratch.cols);
    free(scratch.occ);
    return NULL;
}

static void stream_start(Stream *s, int threads) {
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->wake, NULL);
    s->scanning = 1;
    if (threads > 16) threads = 16;
    for (int i = 0; i < threads; i++)
        if (pthread_create(&s->ids[s->started], NULL, stream_worker, s) == 0) s->started++;
}

/* The walk ended (ok: every chunk is cut; else the workers stop): parse what is left here
 * too, then wait for the workers. */
static void stream_stop(Stream *s, int ok) {
    pthread_mutex_lock(&s->lock);
    s->scanning = 0;
    s->abandon |= !ok;
    pthread_cond_broadcast(&s->wake);
    pthread_mutex_unlock(&s->lock);
    Py_BEGIN_ALLOW_THREADS
    if (ok) stream_worker(s);
    for (int i = 0; i < s->started; i++) pthread_join(s->ids[i], NULL);
    Py_END_ALLOW_THREADS
    pthread_cond_destroy(&s->wake);
    pthread_mutex_destroy(&s->lock);
}
#endif

/* ---- pass 3: Python objects --------------------------------------------------- */
static PyObject *bytearray_of(const void *data, size_t len) {
    return PyByteArray_FromStringAndSize(data ? (const char *)data : "", (Py_ssize_t)len);
}

/* A writable column of `bytes` bytes, *data its memory: alloc(bytes) (decode.py's numpy
 * buffers, which the block pool serves inside `blockpool.reusing()`: freed columns are
 * reused, not unmapped), or a bytearray when alloc is NULL. */
static PyObject *new_column(PyObject *alloc, Py_ssize_t bytes, void **data) {
    if (!alloc) {
        PyObject *out = PyByteArray_FromStringAndSize(NULL, bytes);
        if (out) *data = PyByteArray_AS_STRING(out);
        return out;
    }
    PyObject *out = PyObject_CallFunction(alloc, "n", bytes);
    Py_buffer view;
    if (!out || PyObject_GetBuffer(out, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_XDECREF(out);
        return NULL;
    }
    int short_buffer = view.len < bytes;
    *data = view.buf; /* stays valid: out owns it and does not move it */
    PyBuffer_Release(&view);
    if (short_buffer) {
        Py_DECREF(out);
        PyErr_SetString(PyExc_ValueError, "decode: alloc gave a short buffer");
        return NULL;
    }
    return out;
}

static PyObject *string_object(StrKey *k) {
    if (k->kind == 4) return PyBytes_FromStringAndSize((const char *)k->p, k->len);
    return PyUnicode_DecodeUTF8((const char *)k->p, k->len, "strict");
}

static void buf_free(Buf *b) {
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* One column of parts' rows, concatenated into a new bytearray of `width` bytes a row; each
 * part's buffer is freed once copied (the two copies of a column never coexist whole). */
static PyObject *concat(PyObject *alloc, Stats **parts, size_t n, size_t rows, size_t width,
                        size_t field) {
    char *at;
    PyObject *out = new_column(alloc, (Py_ssize_t)(rows * width), (void **)&at);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        Buf *b = (Buf *)((char *)parts[i] + field);
        if (b->len) memcpy(at, b->data, b->len);
        at += b->len;
        buf_free(b);
    }
    return out;
}

/* The float column of parts' rows (an empty part: zeros), or None when every part is
 * empty: nothing to write nor to read for a column of zeros. */
static PyObject *concat_floats(PyObject *alloc, Stats **parts, size_t n, size_t rows) {
    int any = 0;
    for (size_t i = 0; i < n; i++) any |= parts[i]->fval.len != 0;
    if (!any) {
        for (size_t i = 0; i < n; i++) buf_free(&parts[i]->fval);
        Py_RETURN_NONE;
    }
    char *at;
    PyObject *out = new_column(alloc, (Py_ssize_t)(rows * 8), (void **)&at);
    if (!out) return NULL;
    for (size_t i = 0; i < n; i++) {
        Buf *b = &parts[i]->fval;
        if (b->len) memcpy(at, b->data, b->len);
        else memset(at, 0, parts[i]->rows * 8);
        at += parts[i]->rows * 8;
        buf_free(b);
    }
    return out;
}

/* String ids of parts' rows into one table (first-seen order), and its strings. */
static PyObject *merged_strings(PyObject *alloc, Stats **parts, size_t n, size_t rows,
                                PyObject **strings) {
    Intern all = {0};
    all.borrow = 1; /* keys point into the parts' arenas, freed after this */
    int32_t *ids = NULL;
    PyObject *out = new_column(alloc, (Py_ssize_t)(rows * 4), (void **)&ids);
    if (!out) ids = NULL;
    for (size_t i = 0; ids && i < n; i++) {
        Intern *t = &parts[i]->strings;
        int32_t *remap = malloc((t->n + 1) * sizeof(int32_t));
        int ok = remap != NULL;
        for (size_t j = 0; ok && j < t->n; j++) {
            StrKey *k = &t->keys[j];
            ok = (remap[j] = intern(&all, k->p, k->len, k->kind, k->hash)) >= 0;
        }
        const int32_t *in = (const int32_t *)parts[i]->sid.data;
        for (size_t j = 0; ok && j < parts[i]->rows; j++) *ids++ = in[j] < 0 ? -1 : remap[in[j]];
        free(remap);
        buf_free(&parts[i]->sid);
        if (!ok) {
            ids = NULL;
            Py_CLEAR(out);
        }
    }
    *strings = out ? PyList_New((Py_ssize_t)all.n) : NULL;
    for (size_t i = 0; *strings && i < all.n; i++) {
        PyObject *s = string_object(&all.keys[i]);
        if (!s) Py_CLEAR(*strings);
        else PyList_SET_ITEM(*strings, (Py_ssize_t)i, s);
    }
    intern_free(&all);
    if (!*strings) Py_CLEAR(out);
    if (!out && !PyErr_Occurred()) PyErr_NoMemory();
    return out;
}

/* The Stats tuple of parts' rows in order (each part's buffers are left as they are). */
static PyObject *stats_concat(PyObject *alloc, Stats **parts, size_t n) {
    size_t rows = 0;
    for (size_t i = 0; i < n; i++) rows += parts[i]->rows;
    PyObject *strings = NULL, *ids = merged_strings(alloc, parts, n, rows, &strings);
    if (!ids) return NULL;
    return Py_BuildValue("(NNNNNNN)", concat(alloc, parts, n, rows, 8, offsetof(Stats, owner)),
                         concat(alloc, parts, n, rows, 8, offsetof(Stats, mid)),
                         concat(alloc, parts, n, rows, 1, offsetof(Stats, kind)),
                         concat(alloc, parts, n, rows, 8, offsetof(Stats, ival)),
                         concat_floats(alloc, parts, n, rows), ids, strings);
}

static PyObject *stats_take(PyObject *alloc, Stats *st) { return stats_concat(alloc, &st, 1); }

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
    PyObject *strings = rc == 0 ? stats_take(NULL, &st) : NULL; /* checks their UTF-8 */
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
    *stats_out = stats_take(pl->alloc, &st);
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
    Py_CLEAR(pl->meta_rows);
    Py_CLEAR(pl->meta_stats);
    Py_CLEAR(pl->name_strings);
    Py_CLEAR(pl->display_strings);
    Py_CLEAR(pl->col_line);
    Py_CLEAR(pl->col_mid);
    Py_CLEAR(pl->col_begin);
    Py_CLEAR(pl->col_dur);
    Py_CLEAR(pl->col_name);
    Py_CLEAR(pl->col_display);
    free(pl->meta_entries);
    free(pl->line_ts);
    free(pl->occ);
    meta_index_free(&pl->meta);
    stats_free(&pl->plane_stats);
}

/* Occurrences as a column, or None when no event has any (decode.py: a zeros view). */
static PyObject *occ_column(Plane *pl, int any_occ) {
    if (!any_occ && pl->rows) Py_RETURN_NONE;
    return bytearray_of(pl->occ, (size_t)pl->rows * 8);
}

static PyObject *plane_object(Plane *pl, Stats **ev_stats, size_t n_parts, int any_occ,
                              PyObject *empty) {
    PyObject *occ = occ_column(pl, any_occ);
    PyObject *events = occ ? Py_BuildValue("(OOOON)", pl->col_line, pl->col_mid, pl->col_begin,
                                           pl->col_dur, occ)
                           : NULL;
    PyObject *names = Py_BuildValue("(OOOO)", pl->col_name, pl->col_display, pl->name_strings,
                                    pl->display_strings);
    PyObject *stats = stats_concat(pl->alloc, ev_stats, n_parts);
    PyObject *plane_stats = stats_take(pl->alloc, &pl->plane_stats);
    PyObject *out = NULL;
    if (events && names && stats && plane_stats)
        out = Py_BuildValue("{s:L,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O,s:O}", "id",
                            (long long)pl->id, "name", pl->name ? pl->name : empty, "lines",
                            pl->lines, "events", events, "names", names, "stats", stats,
                            "event_metadata", pl->meta_rows, "metadata_stats", pl->meta_stats,
                            "stat_metadata", pl->stat_names, "plane_stats", plane_stats);
    Py_XDECREF(events);
    Py_XDECREF(names);
    Py_XDECREF(stats);
    Py_XDECREF(plane_stats);
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
        if (await_field(chunks, &r) < 0) return -1;
        if (read_field(&r, &f, 0, &e) < 0) return raise_err(&e);
        if (f.wire != 2 || f.number < 1 || f.number > 4) continue;
        if (f.number > 1) {
            if (await_bytes(chunks->stream, f.sub.end) < 0) return -1;
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
            if (await_field(chunks, &p) < 0) return -1;
            if (read_field(&p, &g, 1, &e) < 0) return raise_err(&e);
            if (g.wire == 2 && g.number != 3 && await_bytes(chunks->stream, g.sub.end) < 0)
                return -1;
            if (scan_plane_field(pl, (int)planes->n - 1, &g, chunks, 1) < 0) return -1;
        }
    }
    return 0;
}

/* Line timestamps above this (ns) are absolute epoch times: rebase them (ps overflow). */
#define ABSOLUTE_TIME_NS (1LL << 50)

static int64_t time_base(Planes *planes) {
    int64_t lo = 0, hi = 0;
    int any = 0;
    for (size_t i = 0; i < planes->n; i++) {
        Plane *pl = &planes->items[i];
        for (int32_t j = 0; j < pl->line_count; j++) {
            int64_t t = pl->line_ts[j];
            if (!any || t < lo) lo = t;
            if (!any || t > hi) hi = t;
            any = 1;
        }
    }
    return any && hi > ABSOLUTE_TIME_NS ? lo : 0;
}

/* Between the passes (GIL held): metadata tables and names, each line's base in ps. */
static int prepare_plane(Plane *pl, int64_t base) {
    for (int32_t j = 0; j < pl->line_count; j++)
        pl->line_ts[j] = (int64_t)(((uint64_t)pl->line_ts[j] - (uint64_t)base) * 1000u);
    if (event_metadata(pl, &pl->meta_rows, &pl->meta_stats) < 0) return -1;
    return meta_index_build(&pl->meta, pl->meta_rows, &pl->name_strings, &pl->display_strings);
}

static PyObject *column(Plane *pl, Py_ssize_t bytes, void **data) {
    return new_column(pl->alloc, bytes, data);
}

/* The memory of a column new_column made (NULL with an error set). */
static void *column_data(PyObject *col) {
    if (PyByteArray_Check(col)) return PyByteArray_AS_STRING(col);
    Py_buffer view;
    if (PyObject_GetBuffer(col, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) return NULL;
    void *data = view.buf;
    PyBuffer_Release(&view);
    return data;
}

static int alloc_columns(Plane *pl, EventCols *c) {
    Py_ssize_t n = (Py_ssize_t)pl->rows;
    c->name_width = code_width(PyList_GET_SIZE(pl->name_strings));
    c->display_width = code_width(PyList_GET_SIZE(pl->display_strings));
    c->line_base = pl->line_ts;
    c->meta = &pl->meta;
    pl->occ = calloc((size_t)n + 1, 8); /* untouched pages cost no memory */
    c->occ = pl->occ;
    if (!(pl->col_line = column(pl, n * 4, (void **)&c->line)) ||
        !(pl->col_mid = column(pl, n * 4, (void **)&c->mid)) ||
        !(pl->col_begin = column(pl, n * 8, (void **)&c->begin)) ||
        !(pl->col_dur = column(pl, n * 8, (void **)&c->dur)) ||
        !(pl->col_name = column(pl, n * c->name_width, &c->name)) ||
        !(pl->col_display = column(pl, n * c->display_width, &c->display)))
        return -1;
    return pl->occ ? 0 : (PyErr_NoMemory(), -1);
}

/* Metadata ids as int64 in every plane when some event's id does not fit int32 (never in
 * real profiles, whose ids are small and dense): the ids pass 2 noted aside are patched in. */
static int widen_ids(Planes *planes, Chunks *chunks) {
    for (size_t i = 0; i < planes->n; i++) {
        Plane *pl = &planes->items[i];
        int64_t *wide;
        PyObject *col = column(pl, (Py_ssize_t)pl->rows * 8, (void **)&wide);
        if (!col) return -1;
        const int32_t *narrow = column_data(pl->col_mid);
        if (!narrow) {
            Py_DECREF(col);
            return -1;
        }
        for (int64_t j = 0; j < pl->rows; j++) wide[j] = narrow[j];
        Py_SETREF(pl->col_mid, col);
    }
    for (size_t i = 0; i < chunks->n; i++) {
        Chunk *ch = &chunks->items[i];
        int64_t *wide = column_data(planes->items[ch->plane].col_mid);
        if (!wide) return -1;
        const int64_t *noted = (const int64_t *)ch->wide.data;
        for (size_t j = 0; j + 1 < ch->wide.len / 8; j += 2) wide[noted[j]] = noted[j + 1];
    }
    return 0;
}

static PyObject *build_planes(Planes *planes, Chunks *chunks) {
    PyObject *out = PyList_New(0);
    Stats **parts = malloc((chunks->n + 1) * sizeof(Stats *));
    if (!parts) Py_CLEAR(out);
    size_t next = 0;
    for (size_t i = 0; out && i < planes->n; i++) {
        size_t n = 0;
        int any_occ = 0;
        for (; next < chunks->n && chunks->items[next].plane == (int)i; next++) {
            any_occ |= chunks->items[next].any_occ;
            parts[n++] = &chunks->items[next].stats;
        }
        PyObject *empty = PyUnicode_FromString("");
        PyObject *plane = empty ? plane_object(&planes->items[i], parts, n, any_occ, empty) : NULL;
        Py_XDECREF(empty);
        for (size_t j = 0; j < n; j++) stats_free(parts[j]); /* no longer needed */
        if (!plane || PyList_Append(out, plane) < 0) Py_CLEAR(out);
        Py_XDECREF(plane);
    }
    free(parts);
    return out ? out : (PyErr_Occurred() ? NULL : PyErr_NoMemory());
}

static int default_threads(void) {
#ifdef HAVE_THREADS
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
#else
    return 1;
#endif
}

/* The `arrived` buffer of a streamed decode: two aligned, writable int64. */
static int arrived_buffer(PyObject *arrived, Py_buffer *view) {
    if (PyObject_GetBuffer(arrived, view, PyBUF_WRITABLE) < 0) return -1;
    if (view->len < 16 || ((uintptr_t)view->buf & 7)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_TypeError, "arrived must be 16 writable, aligned bytes");
        return -1;
    }
    return 0;
}

static PyObject *decode(PyObject *self, PyObject *args) {
    Py_buffer view, arrived_view;
    long long max_events = -1;
    int threads = 0, discard = 0;
    PyObject *arrived = Py_None, *alloc = Py_None;
    if (!PyArg_ParseTuple(args, "y*|LipOO", &view, &max_events, &threads, &discard, &arrived,
                          &alloc))
        return NULL;
    if (discard && view.readonly) { /* zeroing the pages of an immutable object: never */
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "decode(discard=True) needs a writable buffer");
        return NULL;
    }
#ifndef HAVE_THREADS
    if (arrived != Py_None) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_TypeError, "this build decodes whole files only (no threads)");
        return NULL;
    }
#endif
    if (arrived != Py_None && arrived_buffer(arrived, &arrived_view) < 0) {
        PyBuffer_Release(&view);
        return NULL;
    }
    if (threads <= 0) threads = default_threads();
    Reader r = {(const uint8_t *)view.buf, (const uint8_t *)view.buf + view.len};
    PyObject *lists[4] = {NULL, PyList_New(0), PyList_New(0), PyList_New(0)};
    Planes planes = {0};
    Chunks chunks = {0};
    EventCols *cols = NULL;
    PyObject *out = NULL, *plane_list = NULL;
    if (!lists[1] || !lists[2] || !lists[3]) goto done;
#ifdef HAVE_THREADS
    Stream stream;
    if (arrived != Py_None) {
        memset(&stream, 0, sizeof(stream));
        stream.base = stream.known = r.p;
        stream.arrived = arrived_view.buf;
        stream.chunks = &chunks;
        stream.discard = discard;
        stream.max_events = max_events;
        stream_start(&stream, threads);
        chunks.stream = &stream;
    }
    int scanned = scan_space(r, &planes, &chunks, lists);
    if (chunks.stream) stream_stop(&stream, scanned == 0);
    if (scanned < 0) goto done;
#else
    if (scan_space(r, &planes, &chunks, lists) < 0) goto done;
#endif
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
    int64_t base = time_base(&planes);
    for (size_t i = 0; i < planes.n; i++) planes.items[i].alloc = alloc != Py_None ? alloc : NULL;
    for (size_t i = 0; i < planes.n; i++)
        if (prepare_plane(&planes.items[i], base) < 0 || alloc_columns(&planes.items[i], &cols[i]) < 0)
            goto done;
    /* streaming: the chunks were parsed as they arrived; their rows move into place */
    Work work = {&chunks, cols, 0, discard && !chunks.stream, chunks.stream != NULL};
    Py_BEGIN_ALLOW_THREADS
    run_pass2(&work, threads);
    Py_END_ALLOW_THREADS
    for (size_t i = 0; i < chunks.n; i++)
        if (chunks.items[i].err.error) {
            raise_err(&chunks.items[i].err);
            goto done;
        }
    if (discard) /* nothing reads the file's bytes again */
        release_pages(view.buf, (const uint8_t *)view.buf + view.len);
    for (size_t i = 0; i < chunks.n; i++)
        if (chunks.items[i].wide.len) {
            if (widen_ids(&planes, &chunks) < 0) goto done;
            break;
        }
    plane_list = build_planes(&planes, &chunks);
    if (!plane_list) goto done;
    out = Py_BuildValue("{s:O,s:O,s:O,s:O,s:L}", "planes", plane_list, "hostnames", lists[3],
                        "errors", lists[1], "warnings", lists[2], "time_base_ns",
                        (long long)base);
done:
    Py_XDECREF(plane_list);
    for (int i = 1; i < 4; i++) Py_XDECREF(lists[i]);
    for (size_t i = 0; i < planes.n; i++) plane_free(&planes.items[i]);
    free(planes.items);
    for (size_t i = 0; i < chunks.n; i++) {
        stats_free(&chunks.items[i].stats);
        free(chunks.items[i].wide.data);
        local_free(&chunks.items[i]);
    }
    free(chunks.items);
    free(cols);
    PyBuffer_Release(&view);
    if (arrived != Py_None) PyBuffer_Release(&arrived_view);
    return out;
}

#ifdef HAVE_THREADS
static PyObject *arrive(PyObject *self, PyObject *args) {
    PyObject *arrived;
    long long available;
    int failed = 0;
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "OL|p", &arrived, &available, &failed)) return NULL;
    if (arrived_buffer(arrived, &view) < 0) return NULL;
    int64_t *slots = view.buf;
    if (failed) __atomic_store_n(&slots[1], 1, __ATOMIC_RELEASE);
    else __atomic_store_n(&slots[0], (int64_t)available, __ATOMIC_RELEASE);
    arrival_wake(slots);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}
#endif

static PyMethodDef methods[] = {
    {"decode", decode, METH_VARARGS,
     "decode(data, max_events=-1, threads=0, discard=False): serialized XSpace bytes -> "
     "typed columns. discard: data's pages may be handed back to the OS as they are walked "
     "(only for a buffer nothing else reads; its content is zeros afterwards). arrived: "
     "a file still being written in order; see arrive()."},
#ifdef HAVE_THREADS
    {"arrive", arrive, METH_VARARGS,
     "arrive(arrived, available, failed=False): publishes to a streamed decode that the "
     "first `available` bytes of its file are in place (a release store: call it after "
     "writing them), or that no more will come (failed)."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_decode", NULL, -1, methods};

PyMODINIT_FUNC PyInit__decode(void) { return PyModule_Create(&module); }
