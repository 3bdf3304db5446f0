/*
 * Optional compiled scanner of Chrome-trace events (see chrome_trace/collect.py).
 *
 * Why: the pure-Python reader decodes every event into a dict and turns its args into
 * stat columns in a Python loop; on large PyTorch traces that costs more per MB than the
 * compiled XSpace decoder. Here the common events (X, instants i/I/R, flows s/t/f) go
 * straight from the JSON text into the Collector's columns: names, keys, string values
 * and (pid, tid) pairs are looked up in C hash tables and only a distinct text reaches
 * the Collector's Python interners (same ids, same first-seen order).
 *
 * scan(text, pos, collector[, max_chars]) -> (pos, count)
 *     text: the stream's window (a str of 1-byte kind, else nothing is scanned); pos: the
 *     start of an array element; max_chars: an event longer than this stops the scan (the
 *     stream skips such events). Consumes complete events while each is one this scanner
 *     handles exactly like Collector.add, and returns the position just after the last
 *     one consumed (before its comma) and how many. Anything else (another phase, an
 *     escape in a string, a number or value it does not reproduce, a duplicate arg, the
 *     end of the window inside an event) stops it *before* that event, having changed
 *     nothing, so the Python path decodes it: results are identical by construction,
 *     and tests/chrome_trace/test_scan.py checks it on every fixture and edge case.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifndef _WIN32
#include <locale.h>
#endif

#include "../kernels/_threads.h"

#define KIND_DOUBLE 0
#define KIND_INT64 2
#define KIND_STR 3
#define MAX_ARGS 64

/* --- growable columns ------------------------------------------------------------- */
typedef struct { char *data; Py_ssize_t len, cap; } Col;

static int col_put(Col *c, const void *v, Py_ssize_t size) {
    if (c->len + size > c->cap) {
        Py_ssize_t cap = c->cap ? c->cap * 2 : 4096;
        while (cap < c->len + size) cap *= 2;
        char *d = realloc(c->data, cap);
        if (!d) return -1; /* the caller reports it, holding the GIL */
        c->data = d; c->cap = cap;
    }
    memcpy(c->data + c->len, v, size);
    c->len += size;
    return 0;
}
#define PUT64(c, v) do { int64_t _v = (v); if (col_put((c), &_v, 8) < 0) return -1; } while (0)

/* --- text -> id tables (a cache in front of an Interner) ---------------------------- */
typedef struct { uint64_t hash; char *key; Py_ssize_t len; int64_t id; } Entry;
typedef struct { Entry *e; Py_ssize_t cap, used; } Table;

static uint64_t hash_of(const char *s, Py_ssize_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (Py_ssize_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h | 1;
}

static Entry *table_find(Table *t, const char *s, Py_ssize_t n, uint64_t h) {
    if (!t->cap) return NULL;
    for (Py_ssize_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
        Entry *e = &t->e[i];
        if (!e->hash) return e;
        if (e->hash == h && e->len == n && memcmp(e->key, s, n) == 0) return e;
    }
}

static int table_add(Table *t, const char *s, Py_ssize_t n, uint64_t h, int64_t id) {
    if ((t->used + 1) * 2 > t->cap) {
        Table g = {calloc(t->cap ? t->cap * 2 : 1024, sizeof(Entry)), t->cap ? t->cap * 2 : 1024, 0};
        if (!g.e) return -1;
        for (Py_ssize_t i = 0; i < t->cap; i++)
            if (t->e[i].hash) { *table_find(&g, t->e[i].key, t->e[i].len, t->e[i].hash) = t->e[i]; g.used++; }
        free(t->e);
        *t = g;
    }
    Entry *e = table_find(t, s, n, h);
    e->key = malloc(n ? n : 1);
    if (!e->key) return -1;
    memcpy(e->key, s, n);
    e->hash = h; e->len = n; e->id = id;
    t->used++;
    return 0;
}

static void table_free(Table *t) {
    for (Py_ssize_t i = 0; i < t->cap; i++) if (t->e[i].hash) free(t->e[i].key);
    free(t->e);
    t->e = NULL; t->cap = t->used = 0;
}

/* The id of a Python key in an Interner (ids dict + values list), adding it when new. */
static int64_t intern_object(PyObject *interner_ids, PyObject *values, PyObject *key) {
    PyObject *found = PyDict_GetItemWithError(interner_ids, key);
    if (found) return PyLong_AsLongLong(found);
    if (PyErr_Occurred()) return -1;
    Py_ssize_t id = PyList_GET_SIZE(values);
    PyObject *num = PyLong_FromSsize_t(id);
    if (!num || PyDict_SetItem(interner_ids, key, num) < 0 || PyList_Append(values, key) < 0) {
        Py_XDECREF(num);
        return -1;
    }
    Py_DECREF(num);
    return id;
}

/* --- the JSON of one event ---------------------------------------------------------- */
typedef struct { const char *s; Py_ssize_t n; } Span;
enum { V_NONE, V_INT, V_FLOAT, V_STR, V_TRUE, V_FALSE, V_NULL, V_ARRAY, V_OBJECT };
typedef struct { int type; Span text; int64_t i; double d; } Value;

typedef struct {
    const char *p, *end;
    char canon[4096]; /* compact JSON of one nested arg value */
    Py_ssize_t canon_len;
} Parser;

/* Every parse function returns 0 when the scanner must stop (unsupported or incomplete). */
static void ws(Parser *ps) {
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\t')) ps->p++;
}

/* A string without escapes; strict: no control characters (the JSON decoder's rule). */
static int string(Parser *ps, Span *out) {
    const char *s = ++ps->p;
    while (ps->p < ps->end) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') { out->s = s; out->n = ps->p - s; ps->p++; return 1; }
        if (c == '\\' || c < 0x20) return 0;
        ps->p++;
    }
    return 0;
}

/* A number's text as float() reads it: correctly rounded, '.' whatever the locale. Parts
 * run without the GIL, so not PyOS_string_to_double (its big-number arithmetic shares
 * state); glibc's and the BSDs' strtod round correctly too. */
#ifdef _WIN32
static double text_to_double(const char *s) { return PyOS_string_to_double(s, NULL, NULL); }
#else
static locale_t c_numbers;
static double text_to_double(const char *s) { return strtod_l(s, NULL, c_numbers); }
#endif

/* A JSON number as Python's json reads it: int (if it fits int64) or float. */
static int number(Parser *ps, Value *v) {
    const char *s = ps->p, *q = s;
    int is_float = 0;
    if (q < ps->end && *q == '-') q++;
    if (q >= ps->end) return 0;
    if (*q == '0') q++;
    else if (*q >= '1' && *q <= '9') while (q < ps->end && *q >= '0' && *q <= '9') q++;
    else return 0;
    if (q < ps->end && *q == '.') {
        const char *f = ++q;
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
        if (q == f) return 0;
        is_float = 1;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-')) q++;
        const char *f = q;
        while (q < ps->end && *q >= '0' && *q <= '9') q++;
        if (q == f) return 0;
        is_float = 1;
    }
    if (q >= ps->end) return 0; /* the number may go on in the next block */
    char buf[64];
    Py_ssize_t n = q - s;
    if (n >= (Py_ssize_t)sizeof(buf)) return 0;
    memcpy(buf, s, n);
    buf[n] = 0;
    v->text.s = s; v->text.n = n;
    ps->p = q;
    if (is_float) {
        v->type = V_FLOAT;
        v->d = text_to_double(buf);
        return 1;
    }
    if (n == 2 && buf[0] == '-' && buf[1] == '0') return 0; /* -0: Python's int is 0 */
    errno = 0;
    char *stop;
    long long x = strtoll(buf, &stop, 10);
    if (errno || *stop) return 0; /* beyond int64: Python keeps a big int */
    v->type = V_INT; v->i = x;
    return 1;
}

static int literal(Parser *ps, const char *word, int type, Value *v) {
    size_t n = strlen(word);
    if (ps->end - ps->p <= (Py_ssize_t)n || memcmp(ps->p, word, n) != 0) return 0;
    ps->p += n; v->type = type;
    return 1;
}

/* A nested array as json.dumps(separators=(",", ":")) writes it, when that is the text
 * without blanks: ints, plain printable-ASCII strings, true/false/null, nested arrays. */
static int canon_put(Parser *ps, const char *s, Py_ssize_t n) {
    if (ps->canon_len + n > (Py_ssize_t)sizeof(ps->canon)) return 0;
    memcpy(ps->canon + ps->canon_len, s, n);
    ps->canon_len += n;
    return 1;
}

static int array_value(Parser *ps, int depth) {
    if (depth > 32 || !canon_put(ps, "[", 1)) return 0;
    ps->p++;
    ws(ps);
    if (ps->p < ps->end && *ps->p == ']') { ps->p++; return canon_put(ps, "]", 1); }
    for (;;) {
        ws(ps);
        if (ps->p >= ps->end) return 0;
        char c = *ps->p;
        Value v;
        if (c == '[') { if (!array_value(ps, depth + 1)) return 0; }
        else if (c == '"') {
            Span sp;
            const char *start = ps->p;
            if (!string(ps, &sp)) return 0;
            for (Py_ssize_t i = 0; i < sp.n; i++) if ((unsigned char)sp.s[i] > 0x7e) return 0;
            if (!canon_put(ps, start, ps->p - start)) return 0;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            if (!number(ps, &v) || v.type != V_INT || !canon_put(ps, v.text.s, v.text.n)) return 0;
        } else if (literal(ps, "true", V_TRUE, &v)) { if (!canon_put(ps, "true", 4)) return 0; }
        else if (literal(ps, "false", V_FALSE, &v)) { if (!canon_put(ps, "false", 5)) return 0; }
        else if (literal(ps, "null", V_NULL, &v)) { if (!canon_put(ps, "null", 4)) return 0; }
        else return 0; /* objects, floats, NaN: the Python path */
        ws(ps);
        if (ps->p >= ps->end) return 0;
        if (*ps->p == ']') { ps->p++; return canon_put(ps, "]", 1); }
        if (*ps->p != ',' || !canon_put(ps, ",", 1)) return 0;
        ps->p++;
    }
}

/* Any value we reproduce; nested arrays leave their compact text in ps->canon. */
static int value(Parser *ps, Value *v) {
    ws(ps);
    if (ps->p >= ps->end) return 0;
    char c = *ps->p;
    if (c == '"') { v->type = V_STR; return string(ps, &v->text); }
    if (c == '-' || (c >= '0' && c <= '9')) return number(ps, v);
    if (c == '[') {
        Py_ssize_t start = ps->canon_len;
        v->type = V_ARRAY;
        if (!array_value(ps, 0)) return 0;
        v->text.s = ps->canon + start;
        v->text.n = ps->canon_len - start;
        return 1;
    }
    if (c == '{') { v->type = V_OBJECT; return 0; }
    return literal(ps, "true", V_TRUE, v) || literal(ps, "false", V_FALSE, v) ||
           literal(ps, "null", V_NULL, v);
}

typedef struct {
    Span ph, name, cat;
    Value ts, dur, pid, tid, id, bind_id;
    int has_ts, has_dur, has_name, has_cat, has_pid, has_tid, has_id, has_bind_id;
    int nargs;
    Span keys[MAX_ARGS];
    Value vals[MAX_ARGS];
} Event;

static int key_is(Span k, const char *word) {
    return (Py_ssize_t)strlen(word) == k.n && memcmp(k.s, word, k.n) == 0;
}

static int args_object(Parser *ps, Event *ev) {
    ev->nargs = 0;
    ps->p++;
    ws(ps);
    if (ps->p < ps->end && *ps->p == '}') { ps->p++; return 1; }
    for (;;) {
        ws(ps);
        if (ps->p >= ps->end || *ps->p != '"' || ev->nargs == MAX_ARGS) return 0;
        Span k;
        if (!string(ps, &k)) return 0;
        for (int i = 0; i < ev->nargs; i++) /* a repeated key: Python keeps the last value */
            if (ev->keys[i].n == k.n && memcmp(ev->keys[i].s, k.s, k.n) == 0) return 0;
        ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') return 0;
        ps->p++;
        if (!value(ps, &ev->vals[ev->nargs])) return 0;
        ev->keys[ev->nargs++] = k;
        ws(ps);
        if (ps->p >= ps->end) return 0;
        if (*ps->p == '}') { ps->p++; return 1; }
        if (*ps->p != ',') return 0;
        ps->p++;
    }
}

static int event(Parser *ps, Event *ev) {
    memset(ev, 0, offsetof(Event, keys));
    ps->canon_len = 0;
    ps->p++; /* '{' */
    for (;;) {
        ws(ps);
        if (ps->p >= ps->end || *ps->p != '"') return 0;
        Span k;
        if (!string(ps, &k)) return 0;
        ws(ps);
        if (ps->p >= ps->end || *ps->p != ':') return 0;
        ps->p++;
        ws(ps);
        if (ps->p >= ps->end) return 0;
        Value v;
        if (key_is(k, "args")) {
            if (*ps->p == '{') { if (!args_object(ps, ev)) return 0; }
            else { ev->nargs = 0; if (!value(ps, &v)) return 0; }
        } else {
            if (!value(ps, &v)) return 0;
            if (key_is(k, "ph")) { if (v.type != V_STR) return 0; ev->ph = v.text; }
            else if (key_is(k, "ts")) { ev->ts = v; ev->has_ts = 1; }
            else if (key_is(k, "dur")) { ev->dur = v; ev->has_dur = 1; }
            else if (key_is(k, "name")) { if (v.type != V_STR) return 0; ev->name = v.text; ev->has_name = 1; }
            else if (key_is(k, "cat")) { if (v.type != V_STR) return 0; ev->cat = v.text; ev->has_cat = 1; }
            else if (key_is(k, "pid")) { ev->pid = v; ev->has_pid = 1; }
            else if (key_is(k, "tid")) { ev->tid = v; ev->has_tid = 1; }
            else if (key_is(k, "id")) { ev->id = v; ev->has_id = 1; }
            else if (key_is(k, "bind_id")) { ev->bind_id = v; ev->has_bind_id = 1; }
        }
        ws(ps);
        if (ps->p >= ps->end) return 0;
        if (*ps->p == '}') { ps->p++; return 1; }
        if (*ps->p != ',') return 0;
        ps->p++;
    }
}

/* --- the Collector's side ------------------------------------------------------------ */
enum { C_LINE, C_NAME, C_CAT, C_BEGIN, C_DUR, C_ST_EVENT, C_ST_KEY, C_ST_KIND, C_ST_INT,
       C_ST_FLOAT, C_FLOW_LINE, C_FLOW_TS, C_FLOW_KEY, C_FLOW_PHASE, N_COLS };
static const char *COLUMN_NAMES[N_COLS] = {
    "ev_line", "ev_name", "ev_cat", "ev_begin", "ev_dur", "st_event", "st_key", "st_kind",
    "st_int", "st_float", "flow_line", "flow_ts", "flow_key", "flow_phase"};

/* The Collector's interners a part adds to: texts (names, categories, string values), stat
 * keys, (pid, tid) lines and (category, id) flow keys. */
enum { T_STRINGS, T_KEYS, T_LINES, T_FLOWS, N_TABLES };
static const char *INTERNER_NAMES[N_TABLES] = {"strings", "stat_keys", "lines", "flow_keys"};

typedef struct { Table t[N_TABLES]; } Caches; /* text -> the Collector's id, kept on the Collector */

/* Texts a part met that the caches did not hold, in the part's first-seen order. The part
 * writes -(index + 1) for them; the join turns that into the Collector's id. */
typedef struct { char *key; Py_ssize_t len; uint64_t hash; } Named;
typedef struct { Table t; Named *order; Py_ssize_t n, cap; } Local;

/* One stretch of the window, scanned without the GIL into its own columns. */
typedef struct {
    const Caches *caches; /* read only while parts run */
    Local local[N_TABLES];
    Col col[N_COLS];
    int64_t rows, end_ps, base; /* rows: of this part, from 0 */
    int has_base, failed, reached;
    const char *start, *stop, *end, *consumed;
    Py_ssize_t count, max_chars;
    Parser ps;
    Event ev;
    char key[2200];
} Part;

#define NO_ID INT64_MIN /* out of memory */

static int64_t id_of(Part *pt, int which, const char *s, Py_ssize_t n) {
    uint64_t h = hash_of(s, n);
    Entry *e = table_find((Table *)&pt->caches->t[which], s, n, h);
    if (e && e->hash) return e->id;
    Local *local = &pt->local[which];
    e = table_find(&local->t, s, n, h);
    if (e && e->hash) return e->id;
    if (local->n == local->cap) {
        Py_ssize_t cap = local->cap ? 2 * local->cap : 256;
        Named *order = realloc(local->order, cap * sizeof(Named));
        if (!order) return NO_ID;
        local->order = order; local->cap = cap;
    }
    int64_t id = -(int64_t)(local->n + 1);
    if (table_add(&local->t, s, n, h, id) < 0) return NO_ID;
    local->order[local->n++] = (Named){table_find(&local->t, s, n, h)->key, n, h};
    return id;
}

static void local_free(Local *local) {
    table_free(&local->t);
    free(local->order);
}

static void caches_free(PyObject *capsule) {
    Caches *c = PyCapsule_GetPointer(capsule, "chrome_trace._collect.caches");
    if (!c) return;
    for (int i = 0; i < N_TABLES; i++) table_free(&c->t[i]);
    free(c);
}

static int id_ok(const Value *v, int has) {
    return !has || v->type == V_NULL || v->type == V_INT || (v->type == V_STR && v->text.n < 1000);
}

/* A pid or tid as key text: a tag ('n' None, 'i' int64, 's' str), a length, the bytes. */
static Py_ssize_t put_key_part(char *out, const Value *v, int has) {
    char tag = (!has || v->type == V_NULL) ? 'n' : v->type == V_INT ? 'i' : 's';
    const char *s = tag == 'i' ? (const char *)&v->i : tag == 's' ? v->text.s : "";
    Py_ssize_t n = tag == 'i' ? 8 : tag == 's' ? v->text.n : 0;
    out[0] = tag;
    memcpy(out + 1, &n, sizeof(n));
    memcpy(out + 1 + sizeof(n), s, n);
    return 1 + sizeof(n) + n;
}

/* The line of (pid, tid), as Collector.lines((pid, tid)). */
static int64_t line_of(Part *pt, const Event *ev) {
    Py_ssize_t n = put_key_part(pt->key, &ev->pid, ev->has_pid);
    n += put_key_part(pt->key + n, &ev->tid, ev->has_tid);
    return id_of(pt, T_LINES, pt->key, n);
}

/* (cat, str(id)) of Collector.flow_keys as key text: cat's length, cat, id. */
static int64_t flow_key_of(Part *pt, Span cat, Span id) {
    memcpy(pt->key, &cat.n, sizeof(cat.n));
    memcpy(pt->key + sizeof(cat.n), cat.s, cat.n);
    memcpy(pt->key + sizeof(cat.n) + cat.n, id.s, id.n);
    return id_of(pt, T_FLOWS, pt->key, sizeof(cat.n) + cat.n + id.n);
}
/* exact_times.micros_to_ps: microseconds written [-]digits[.digits] -> picoseconds, exactly (a
 * seventh decimal on rounds half to even). 1 = done, 0 = another form (an exponent: the
 * float rules apply), -1 = beyond int64 (the event is left to the Python path). */
static int micros_to_ps(Span t, int64_t *out) {
    const char *p = t.s, *end = t.s + t.n;
    for (const char *q = p; q < end; q++) if (*q == 'e' || *q == 'E') return 0;
    int negative = p < end && *p == '-';
    if (negative) p++;
    int64_t whole = 0, frac = 0;
    for (; p < end && *p != '.'; p++) {
        if (__builtin_mul_overflow(whole, 10, &whole) || __builtin_add_overflow(whole, *p - '0', &whole))
            return -1;
    }
    if (p < end) p++; /* the point */
    int digits = 0;
    for (; p < end && digits < 6; p++, digits++) frac = frac * 10 + (*p - '0');
    for (; digits < 6; digits++) frac *= 10;
    int64_t ps;
    if (__builtin_mul_overflow(whole, 1000000, &ps) || __builtin_add_overflow(ps, frac, &ps))
        return -1;
    if (p < end) { /* past the sixth decimal: half to even */
        int up = *p > '5';
        if (*p == '5') {
            int more = 0;
            for (const char *q = p + 1; q < end; q++) if (*q != '0') more = 1;
            up = more || (ps & 1);
        }
        if (up && __builtin_add_overflow(ps, 1, &ps)) return -1;
    }
    *out = negative ? -ps : ps;
    return 1;
}

/* Collector._ps: picoseconds from the first timestamp (int microseconds); 0 = stop. */
static int to_ps(Part *pt, const Value *ts, int64_t *base, int *has_base, int64_t *out) {
    if (ts->type == V_INT) {
        int64_t b = *has_base ? *base : ts->i, delta;
        if (__builtin_sub_overflow(ts->i, b, &delta) || __builtin_mul_overflow(delta, 1000000, out))
            return 0;
        *base = b; *has_base = 1;
        return 1;
    }
    if (ts->type != V_FLOAT || !isfinite(ts->d)) return 0;
    int64_t b = *base;
    if (!*has_base) {
        if (!(fabs(ts->d) < 9.2e18)) return 0;
        b = (int64_t)ts->d; /* int(ts) truncates */
    }
    int64_t exact, base_ps;
    int got = micros_to_ps(ts->text, &exact);
    if (got < 0) return 0;
    if (got > 0) { /* from the text, to the picosecond (exact_times.py) */
        if (__builtin_mul_overflow(b, 1000000, &base_ps) || __builtin_sub_overflow(exact, base_ps, out))
            return 0;
        *base = b; *has_base = 1;
        return 1;
    }
    double r = nearbyint((ts->d - (double)b) * 1e6); /* round() is half-even */
    if (!(fabs(r) < 9.2e18)) return 0;
    *out = (int64_t)r; *base = b; *has_base = 1;
    return 1;
}

static int dur_ps(const Event *ev, int64_t *out) {
    *out = 0;
    if (!ev->has_dur || ev->dur.type == V_NULL || ev->dur.type == V_FALSE) return 1;
    double d;
    if (ev->dur.type == V_INT) d = (double)ev->dur.i; /* dur * 1e6 is a float product */
    else if (ev->dur.type == V_FLOAT) {
        d = ev->dur.d;
        int64_t exact;
        int got = micros_to_ps(ev->dur.text, &exact);
        if (got < 0) return 0;
        if (got > 0) { /* from the text (exact_times.py); negative: left to the Python path */
            if (exact < 0) return 0;
            *out = d == 0 ? 0 : exact;
            return 1;
        }
    }
    else return 0;
    double r = nearbyint(d * 1e6);
    if (!isfinite(r) || !(fabs(r) < 9.2e18)) return 0;
    if (r < 0) return 0; /* negative: the Python path clamps it to 0 and counts it */
    *out = d == 0 ? 0 : (int64_t)r;
    return 1;
}

static int add_stat(Part *pt, int64_t row, Span key, const Value *v) {
    int64_t k = id_of(pt, T_KEYS, key.s, key.n), iv = 0;
    double fv = 0.0;
    int8_t kind = KIND_INT64;
    if (k == NO_ID) return -1;
    switch (v->type) {
    case V_INT: iv = v->i; break;
    case V_TRUE: iv = 1; break;
    case V_FALSE: break;
    case V_FLOAT: kind = KIND_DOUBLE; fv = v->d; break;
    default: /* strings, null (as JSON "null") and nested arrays (their compact JSON) */
        kind = KIND_STR;
        iv = v->type == V_NULL ? id_of(pt, T_STRINGS, "null", 4)
                               : id_of(pt, T_STRINGS, v->text.s, v->text.n);
        if (iv == NO_ID) return -1;
    }
    PUT64(&pt->col[C_ST_EVENT], row);
    PUT64(&pt->col[C_ST_KEY], k);
    if (col_put(&pt->col[C_ST_KIND], &kind, 1) < 0) return -1;
    PUT64(&pt->col[C_ST_INT], iv);
    return col_put(&pt->col[C_ST_FLOAT], &fv, 8);
}

/* Adds one parsed event as Collector.add would: 1 done, 0 not handled here, -1 out of memory. */
static int commit(Part *pt, const Event *ev) {
    if (ev->ph.n != 1 || !ev->has_ts || !id_ok(&ev->pid, ev->has_pid) || !id_ok(&ev->tid, ev->has_tid))
        return 0;
    char ph = ev->ph.s[0];
    int flow = ph == 's' ? 0 : ph == 't' ? 1 : ph == 'f' ? 2 : -1;
    int instant = ph == 'i' || ph == 'I' || ph == 'R';
    if (flow < 0 && !instant && ph != 'X') return 0;
    int64_t base = pt->base, begin, dur = 0;
    int has_base = pt->has_base;
    if (!to_ps(pt, &ev->ts, &base, &has_base, &begin)) return 0;
    if (ph == 'X' && !dur_ps(ev, &dur)) return 0;
    if (flow >= 0) {
        const Value *id = ev->has_id ? &ev->id : ev->has_bind_id ? &ev->bind_id : NULL;
        if (!id || (id->type != V_INT && id->type != V_STR)) return 0;
        if (ev->cat.n + id->text.n + 8 > (Py_ssize_t)sizeof(pt->key)) return 0;
        int64_t line = line_of(pt, ev);
        if (line == NO_ID) return -1;
        pt->base = base; pt->has_base = has_base;
        Span cat = ev->has_cat ? ev->cat : (Span){"", 0};
        int64_t key = flow_key_of(pt, cat, id->text);
        if (key == NO_ID) return -1;
        int8_t phase = (int8_t)flow;
        PUT64(&pt->col[C_FLOW_LINE], line);
        PUT64(&pt->col[C_FLOW_TS], begin);
        PUT64(&pt->col[C_FLOW_KEY], key);
        return col_put(&pt->col[C_FLOW_PHASE], &phase, 1) < 0 ? -1 : 1;
    }
    pt->base = base; pt->has_base = has_base;
    int64_t line = line_of(pt, ev);
    int64_t name = line == NO_ID ? NO_ID : id_of(pt, T_STRINGS, ev->has_name ? ev->name.s : "", ev->name.n);
    int64_t cat = name == NO_ID ? NO_ID : id_of(pt, T_STRINGS, ev->has_cat ? ev->cat.s : "", ev->cat.n);
    if (cat == NO_ID) return -1;
    int64_t row = pt->rows++;
    PUT64(&pt->col[C_LINE], line);
    PUT64(&pt->col[C_NAME], name);
    PUT64(&pt->col[C_CAT], cat);
    PUT64(&pt->col[C_BEGIN], begin);
    PUT64(&pt->col[C_DUR], dur);
    if (begin + dur > pt->end_ps) pt->end_ps = begin + dur;
    for (int i = 0; i < ev->nargs; i++)
        if (add_stat(pt, row, ev->keys[i], &ev->vals[i]) < 0) return -1;
    return 1;
}

/* --- one part: events from its start to its stop, without the GIL --------------------- */
static void scan_part(void *ctx, int k, int parts) {
    (void)parts;
    Part *pt = &((Part *)ctx)[k];
    Parser *ps = &pt->ps;
    ps->end = pt->end;
    const char *consumed = pt->start;
    for (;;) {
        ps->p = consumed;
        if (pt->count) {
            ws(ps);
            if (ps->p >= ps->end || *ps->p != ',') break;
            ps->p++;
        }
        ws(ps);
        if (pt->stop && ps->p >= pt->stop) { /* the next part starts here, or its guess was wrong */
            pt->reached = ps->p == pt->stop;
            break;
        }
        const char *start = ps->p;
        if (ps->p >= ps->end || *ps->p != '{' || !event(ps, &pt->ev)) break;
        if (ps->p - start > pt->max_chars) break; /* too long: the stream skips it */
        int done = commit(pt, &pt->ev);
        if (done < 0) { pt->failed = 1; break; }
        if (!done) break;
        consumed = ps->p;
        pt->count++;
    }
    pt->consumed = consumed;
}

static int is_blank(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* A guess at an event start at or after `from`: a '{' after ',' after '}' (blanks between).
 * It may lie inside a string or a nested value; the part before it checks (Part.reached). */
static const char *guess_start(const char *lo, const char *from, const char *end) {
    for (const char *p = from; p < end; p++) {
        p = memchr(p, '{', end - p);
        if (!p) return NULL;
        const char *q = p - 1;
        while (q > lo && is_blank(*q)) q--;
        if (q <= lo || *q != ',') continue;
        q--;
        while (q > lo && is_blank(*q)) q--;
        if (*q == '}') return p;
    }
    return NULL;
}

/* --- the join, holding the GIL --------------------------------------------------------- */
typedef struct {
    PyObject *collector, *ids[N_TABLES], *values[N_TABLES]; /* borrowed from the Collector */
    Caches *caches;
    int64_t rows, end_ps, base;
    int has_base, unusable;
} Target;

static PyObject *text_object(const char *s, Py_ssize_t n) {
    return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, s, n);
}

/* A pid or tid from its key text (put_key_part), as Collector.add would have it. */
static PyObject *id_object(const char **key) {
    char tag = **key;
    Py_ssize_t n;
    memcpy(&n, *key + 1, sizeof(n));
    const char *s = *key + 1 + sizeof(n);
    *key = s + n;
    if (tag == 'n') Py_RETURN_NONE;
    if (tag == 'i') { int64_t v; memcpy(&v, s, 8); return PyLong_FromLongLong(v); }
    return text_object(s, n);
}

/* The Python value the Collector interns for a part's key text. */
static PyObject *key_object(int which, const Named *named) {
    PyObject *a, *b;
    if (which == T_STRINGS || which == T_KEYS) return text_object(named->key, named->len);
    if (which == T_LINES) {
        const char *key = named->key;
        a = id_object(&key);
        b = a ? id_object(&key) : NULL;
    } else {
        Py_ssize_t n;
        memcpy(&n, named->key, sizeof(n));
        a = text_object(named->key + sizeof(n), n);
        b = a ? text_object(named->key + sizeof(n) + n, named->len - (Py_ssize_t)sizeof(n) - n) : NULL;
    }
    PyObject *pair = b ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a); Py_XDECREF(b);
    return pair;
}

static void remap(Col *c, const int64_t *map, const Col *kinds) {
    int64_t *v = (int64_t *)c->data;
    const int8_t *kind = kinds ? (const int8_t *)kinds->data : NULL;
    for (Py_ssize_t i = 0, n = c->len / 8; i < n; i++)
        if (v[i] < 0 && (!kind || kind[i] == KIND_STR)) v[i] = map[-v[i] - 1];
}

/* Adds a part to the Collector: the texts new to it interned in the part's first-seen order
 * (parts joined in file order: the ids one pass over the whole window gives), then its
 * columns with those ids and its rows after the Collector's. */
static int join_part(Target *tg, Part *pt) {
    int64_t *map[N_TABLES] = {NULL};
    int ok = 0;
    for (int w = 0; w < N_TABLES; w++) {
        Local *local = &pt->local[w];
        map[w] = malloc((local->n ? local->n : 1) * sizeof(int64_t));
        if (!map[w]) { PyErr_NoMemory(); goto done; }
        for (Py_ssize_t i = 0; i < local->n; i++) {
            Named *named = &local->order[i];
            Entry *e = table_find(&tg->caches->t[w], named->key, named->len, named->hash);
            if (e && e->hash) { map[w][i] = e->id; continue; }
            PyObject *value = key_object(w, named);
            int64_t id = value ? intern_object(tg->ids[w], tg->values[w], value) : -1;
            Py_XDECREF(value);
            if (id < 0) goto done;
            if (table_add(&tg->caches->t[w], named->key, named->len, named->hash, id) < 0) {
                PyErr_NoMemory();
                goto done;
            }
            map[w][i] = id;
        }
    }
    remap(&pt->col[C_LINE], map[T_LINES], NULL);
    remap(&pt->col[C_NAME], map[T_STRINGS], NULL);
    remap(&pt->col[C_CAT], map[T_STRINGS], NULL);
    remap(&pt->col[C_ST_KEY], map[T_KEYS], NULL);
    remap(&pt->col[C_ST_INT], map[T_STRINGS], &pt->col[C_ST_KIND]);
    remap(&pt->col[C_FLOW_LINE], map[T_LINES], NULL);
    remap(&pt->col[C_FLOW_KEY], map[T_FLOWS], NULL);
    int64_t *owner = (int64_t *)pt->col[C_ST_EVENT].data;
    for (Py_ssize_t i = 0, n = pt->col[C_ST_EVENT].len / 8; i < n; i++) owner[i] += tg->rows;
    for (int i = 0; i < N_COLS; i++) {
        if (!pt->col[i].len) continue;
        PyObject *column = PyObject_GetAttrString(tg->collector, COLUMN_NAMES[i]);
        PyObject *r = column ? PyObject_CallMethod(column, "frombytes", "y#", pt->col[i].data, pt->col[i].len) : NULL;
        Py_XDECREF(column);
        if (!r) goto done;
        Py_DECREF(r);
    }
    tg->rows += pt->rows;
    if (pt->end_ps > tg->end_ps) tg->end_ps = pt->end_ps;
    if (!tg->has_base && pt->has_base) { tg->base = pt->base; tg->has_base = 1; }
    ok = 1;
done:
    for (int w = 0; w < N_TABLES; w++) free(map[w]);
    return ok ? 0 : -1;
}

static int setup(Target *tg, PyObject *collector) {
    tg->collector = collector;
    PyObject *capsule = PyObject_GetAttrString(collector, "_scan_caches");
    if (!capsule) {
        PyErr_Clear();
        Caches *c = calloc(1, sizeof(Caches));
        if (!c) { PyErr_NoMemory(); return -1; }
        capsule = PyCapsule_New(c, "chrome_trace._collect.caches", caches_free);
        if (!capsule) { free(c); return -1; }
        if (PyObject_SetAttrString(collector, "_scan_caches", capsule) < 0) { Py_DECREF(capsule); return -1; }
    }
    tg->caches = PyCapsule_GetPointer(capsule, "chrome_trace._collect.caches");
    Py_DECREF(capsule);
    if (!tg->caches) return -1;
    for (int i = 0; i < N_TABLES; i++) { /* borrowed: the Collector keeps them alive */
        PyObject *in = PyObject_GetAttrString(collector, INTERNER_NAMES[i]);
        if (!in) return -1;
        PyObject *ids = PyObject_GetAttrString(in, "ids"), *values = PyObject_GetAttrString(in, "values");
        Py_DECREF(in);
        Py_XDECREF(ids); Py_XDECREF(values);
        if (!ids || !values || !PyDict_Check(ids) || !PyList_Check(values)) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "collector interners");
            return -1;
        }
        tg->ids[i] = ids; tg->values[i] = values;
    }
    PyObject *begins = PyObject_GetAttrString(collector, "ev_begin");
    PyObject *base = PyObject_GetAttrString(collector, "base_us");
    PyObject *end = PyObject_GetAttrString(collector, "end_ps");
    int ok = begins && base && end;
    if (ok) {
        tg->rows = PyObject_Length(begins);
        tg->end_ps = PyLong_AsLongLong(end);
        tg->has_base = base != Py_None;
        tg->base = tg->has_base ? PyLong_AsLongLong(base) : 0;
        if (tg->has_base && tg->base == -1 && PyErr_Occurred() &&
            PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear(); /* a base beyond int64 (a garbage first ts): Python reads it all */
            tg->unusable = 1;
        }
    }
    Py_XDECREF(begins); Py_XDECREF(base); Py_XDECREF(end);
    return ok && !PyErr_Occurred() && tg->rows >= 0 ? 0 : -1;
}

static int set_int(PyObject *collector, const char *attr, int64_t value) {
    PyObject *v = PyLong_FromLongLong(value);
    int r = v ? PyObject_SetAttrString(collector, attr, v) : -1;
    Py_XDECREF(v);
    return r;
}

/* --- scan() ------------------------------------------------------------------------- */
#define PARTS_PER_THREAD 4

/* The window from `pos` is cut into up to PARTS_PER_THREAD parts a thread at guessed event
 * starts; the parts scan at once (`threads` at a time), each into its own columns and
 * new-text tables, and are joined in file order. A part counts only when the one before it ended exactly at its start (so the
 * guess was a real event start); after a part that did not, nothing more is joined, and
 * the stream goes on from where the joined ones stopped (the next call splits again). The
 * columns, ids and times are the same bytes for any number of threads. The first call (no
 * base time yet) runs on one part: every later part needs the base. */
static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *text, *collector;
    Py_ssize_t pos, max_chars = PY_SSIZE_T_MAX;
    int threads = 1;
    (void)part_count; /* _threads.h's sizing is for row passes; a window splits by text */
    if (!PyArg_ParseTuple(args, "UnO|ni", &text, &pos, &collector, &max_chars, &threads)) return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND || pos < 0 || pos >= length)
        return Py_BuildValue("(nn)", pos, (Py_ssize_t)0);
    Target tg = {0};
    if (setup(&tg, collector) < 0) return NULL;
    if (tg.unusable) return Py_BuildValue("(nn)", pos, (Py_ssize_t)0);
    if (threads < 1 || !tg.has_base) threads = 1;
    if (threads > TBPROF_MAX_PARTS) threads = TBPROF_MAX_PARTS;
    /* A few parts per thread: on a busy machine a thread not given a core holds up only a
     * small part, the others take the rest from the queue. */
    int wanted = threads == 1 ? 1 : PARTS_PER_THREAD * threads > TBPROF_MAX_PARTS ? TBPROF_MAX_PARTS
                                                                                 : PARTS_PER_THREAD * threads;
    Part *pt = calloc(wanted, sizeof(Part));
    if (!pt) return PyErr_NoMemory();
    PyObject *result = NULL;
    const char *data = (const char *)PyUnicode_DATA(text), *end = data + length;
    int parts = 1;
    pt[0].start = data + pos;
    for (int k = 1; k < wanted; k++) {
        const char *from = data + pos + (length - pos) / wanted * k;
        if (from <= pt[parts - 1].start) from = pt[parts - 1].start + 1;
        const char *guess = guess_start(data + pos, from, end);
        if (!guess) break;
        pt[parts - 1].stop = guess;
        pt[parts++].start = guess;
    }
    for (int k = 0; k < parts; k++) {
        pt[k].caches = tg.caches;
        pt[k].end = end;
        pt[k].max_chars = max_chars;
        pt[k].end_ps = tg.end_ps;
        pt[k].base = tg.base;
        pt[k].has_base = tg.has_base;
    }
    Py_BEGIN_ALLOW_THREADS
    run_parts(scan_part, pt, parts, threads);
    Py_END_ALLOW_THREADS
    const char *consumed = data + pos;
    Py_ssize_t count = 0;
    for (int k = 0; k < parts; k++) {
        if (pt[k].failed) { PyErr_NoMemory(); goto done; }
        if (join_part(&tg, &pt[k]) < 0) goto done;
        if (pt[k].count) consumed = pt[k].consumed;
        count += pt[k].count;
        if (!pt[k].reached) break;
    }
    if (set_int(collector, "end_ps", tg.end_ps) < 0) goto done;
    if (tg.has_base && set_int(collector, "base_us", tg.base) < 0) goto done;
    result = Py_BuildValue("(nn)", (Py_ssize_t)(consumed - data), count);
done:
    for (int k = 0; k < wanted; k++) {
        for (int i = 0; i < N_COLS; i++) free(pt[k].col[i].data);
        for (int w = 0; w < N_TABLES; w++) local_free(&pt[k].local[w]);
    }
    free(pt);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Consumes the Chrome-trace events this scanner handles."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_collect", NULL, -1, methods};

PyMODINIT_FUNC PyInit__collect(void) {
#ifndef _WIN32
    c_numbers = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (!c_numbers) return PyErr_NoMemory();
#endif
    return PyModule_Create(&module);
}
