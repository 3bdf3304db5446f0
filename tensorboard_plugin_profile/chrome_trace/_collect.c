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
#include <string.h>

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
        char *d = PyMem_Realloc(c->data, cap);
        if (!d) { PyErr_NoMemory(); return -1; }
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
        Table g = {PyMem_Calloc(t->cap ? t->cap * 2 : 1024, sizeof(Entry)), t->cap ? t->cap * 2 : 1024, 0};
        if (!g.e) { PyErr_NoMemory(); return -1; }
        for (Py_ssize_t i = 0; i < t->cap; i++)
            if (t->e[i].hash) { *table_find(&g, t->e[i].key, t->e[i].len, t->e[i].hash) = t->e[i]; g.used++; }
        PyMem_Free(t->e);
        *t = g;
    }
    Entry *e = table_find(t, s, n, h);
    e->key = PyMem_Malloc(n ? n : 1);
    if (!e->key) { PyErr_NoMemory(); return -1; }
    memcpy(e->key, s, n);
    e->hash = h; e->len = n; e->id = id;
    t->used++;
    return 0;
}

static void table_free(Table *t) {
    for (Py_ssize_t i = 0; i < t->cap; i++) if (t->e[i].hash) PyMem_Free(t->e[i].key);
    PyMem_Free(t->e);
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

typedef struct { Table *t; PyObject *ids, *values; } Interner;

/* Id of a text (latin-1 code points) as a str in the Interner. */
static int64_t intern_text(Interner *in, const char *s, Py_ssize_t n) {
    uint64_t h = hash_of(s, n);
    Entry *e = table_find(in->t, s, n, h);
    if (e && e->hash) return e->id;
    PyObject *str = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, s, n);
    if (!str) return -1;
    int64_t id = intern_object(in->ids, in->values, str);
    Py_DECREF(str);
    if (id < 0 || table_add(in->t, s, n, h, id) < 0) return -1;
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
        v->d = PyOS_string_to_double(buf, NULL, NULL);
        if (v->d == -1.0 && PyErr_Occurred()) { PyErr_Clear(); return 0; }
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

typedef struct { Table strings, keys, lines, flows; } Caches; /* kept on the Collector */

typedef struct {
    Interner strings, keys;
    PyObject *lines_ids, *lines_values, *flow_ids, *flow_values;
    Caches *caches;
    Col col[N_COLS];
    int64_t rows, end_ps, base;
    int has_base, unusable;
    char key[2200];
} Scan;

static void caches_free(PyObject *capsule) {
    Caches *c = PyCapsule_GetPointer(capsule, "chrome_trace._collect.caches");
    if (!c) return;
    table_free(&c->strings); table_free(&c->keys); table_free(&c->lines); table_free(&c->flows);
    PyMem_Free(c);
}

/* A pid or tid as the Python value Collector.add would use (None when absent). */
static PyObject *py_id(const Value *v, int has) {
    if (!has || v->type == V_NULL) Py_RETURN_NONE;
    if (v->type == V_INT) return PyLong_FromLongLong(v->i);
    return PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, v->text.s, v->text.n);
}

static int id_ok(const Value *v, int has) {
    return !has || v->type == V_NULL || v->type == V_INT || (v->type == V_STR && v->text.n < 1000);
}

static Py_ssize_t put_key_part(char *out, const Value *v, int has) {
    char tag = (!has || v->type == V_NULL) ? 'n' : v->type == V_INT ? 'i' : 's';
    const char *s = tag == 'i' ? (const char *)&v->i : tag == 's' ? v->text.s : "";
    Py_ssize_t n = tag == 'i' ? 8 : tag == 's' ? v->text.n : 0;
    out[0] = tag;
    memcpy(out + 1, &n, sizeof(n));
    memcpy(out + 1 + sizeof(n), s, n);
    return 1 + sizeof(n) + n;
}

/* The line id of (pid, tid), as Collector.lines((pid, tid)). */
static int64_t line_of(Scan *sc, const Event *ev) {
    Py_ssize_t n = put_key_part(sc->key, &ev->pid, ev->has_pid);
    n += put_key_part(sc->key + n, &ev->tid, ev->has_tid);
    uint64_t h = hash_of(sc->key, n);
    Entry *e = table_find(&sc->caches->lines, sc->key, n, h);
    if (e && e->hash) return e->id;
    PyObject *pid = py_id(&ev->pid, ev->has_pid), *tid = pid ? py_id(&ev->tid, ev->has_tid) : NULL;
    PyObject *pair = tid ? PyTuple_Pack(2, pid, tid) : NULL;
    Py_XDECREF(pid); Py_XDECREF(tid);
    if (!pair) return -1;
    int64_t id = intern_object(sc->lines_ids, sc->lines_values, pair);
    Py_DECREF(pair);
    if (id < 0 || table_add(&sc->caches->lines, sc->key, n, h, id) < 0) return -1;
    return id;
}

/* The id of (cat, str(id)) in Collector.flow_keys. */
static int64_t flow_key_of(Scan *sc, Span cat, Span id) {
    if (cat.n + id.n + 8 > (Py_ssize_t)sizeof(sc->key)) return -2;
    memcpy(sc->key, &cat.n, sizeof(cat.n));
    memcpy(sc->key + sizeof(cat.n), cat.s, cat.n);
    memcpy(sc->key + sizeof(cat.n) + cat.n, id.s, id.n);
    Py_ssize_t n = sizeof(cat.n) + cat.n + id.n;
    uint64_t h = hash_of(sc->key, n);
    Entry *e = table_find(&sc->caches->flows, sc->key, n, h);
    if (e && e->hash) return e->id;
    PyObject *a = PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, cat.s, cat.n);
    PyObject *b = a ? PyUnicode_FromKindAndData(PyUnicode_1BYTE_KIND, id.s, id.n) : NULL;
    PyObject *pair = b ? PyTuple_Pack(2, a, b) : NULL;
    Py_XDECREF(a); Py_XDECREF(b);
    if (!pair) return -1;
    int64_t got = intern_object(sc->flow_ids, sc->flow_values, pair);
    Py_DECREF(pair);
    if (got < 0 || table_add(&sc->caches->flows, sc->key, n, h, got) < 0) return -1;
    return got;
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
static int to_ps(Scan *sc, const Value *ts, int64_t *base, int *has_base, int64_t *out) {
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

static int add_stat(Scan *sc, int64_t row, Span key, const Value *v) {
    int64_t k = intern_text(&sc->keys, key.s, key.n), iv = 0;
    double fv = 0.0;
    int8_t kind = KIND_INT64;
    if (k < 0) return -1;
    switch (v->type) {
    case V_INT: iv = v->i; break;
    case V_TRUE: iv = 1; break;
    case V_FALSE: break;
    case V_FLOAT: kind = KIND_DOUBLE; fv = v->d; break;
    default: /* strings, null (as JSON "null") and nested arrays (their compact JSON) */
        kind = KIND_STR;
        iv = v->type == V_NULL ? intern_text(&sc->strings, "null", 4)
                               : intern_text(&sc->strings, v->text.s, v->text.n);
        if (iv < 0) return -1;
    }
    PUT64(&sc->col[C_ST_EVENT], row);
    PUT64(&sc->col[C_ST_KEY], k);
    if (col_put(&sc->col[C_ST_KIND], &kind, 1) < 0) return -1;
    PUT64(&sc->col[C_ST_INT], iv);
    return col_put(&sc->col[C_ST_FLOAT], &fv, 8);
}

/* Adds one parsed event as Collector.add would: 1 done, 0 not handled here, -1 error. */
static int commit(Scan *sc, const Event *ev) {
    if (ev->ph.n != 1 || !ev->has_ts || !id_ok(&ev->pid, ev->has_pid) || !id_ok(&ev->tid, ev->has_tid))
        return 0;
    char ph = ev->ph.s[0];
    int flow = ph == 's' ? 0 : ph == 't' ? 1 : ph == 'f' ? 2 : -1;
    int instant = ph == 'i' || ph == 'I' || ph == 'R';
    if (flow < 0 && !instant && ph != 'X') return 0;
    int64_t base = sc->base, begin, dur = 0;
    int has_base = sc->has_base;
    if (!to_ps(sc, &ev->ts, &base, &has_base, &begin)) return 0;
    if (ph == 'X' && !dur_ps(ev, &dur)) return 0;
    if (flow >= 0) {
        const Value *id = ev->has_id ? &ev->id : ev->has_bind_id ? &ev->bind_id : NULL;
        if (!id || (id->type != V_INT && id->type != V_STR)) return 0;
        if (ev->cat.n + id->text.n + 8 > (Py_ssize_t)sizeof(sc->key)) return 0;
        int64_t line = line_of(sc, ev);
        if (line < 0) return -1;
        sc->base = base; sc->has_base = has_base;
        Span cat = ev->has_cat ? ev->cat : (Span){"", 0};
        int64_t key = flow_key_of(sc, cat, id->text);
        if (key < 0) return -1;
        int8_t phase = (int8_t)flow;
        PUT64(&sc->col[C_FLOW_LINE], line);
        PUT64(&sc->col[C_FLOW_TS], begin);
        PUT64(&sc->col[C_FLOW_KEY], key);
        return col_put(&sc->col[C_FLOW_PHASE], &phase, 1) < 0 ? -1 : 1;
    }
    sc->base = base; sc->has_base = has_base;
    int64_t line = line_of(sc, ev);
    int64_t name = line < 0 ? -1 : intern_text(&sc->strings, ev->has_name ? ev->name.s : "", ev->name.n);
    int64_t cat = name < 0 ? -1 : intern_text(&sc->strings, ev->has_cat ? ev->cat.s : "", ev->cat.n);
    if (cat < 0) return -1;
    int64_t row = sc->rows++;
    PUT64(&sc->col[C_LINE], line);
    PUT64(&sc->col[C_NAME], name);
    PUT64(&sc->col[C_CAT], cat);
    PUT64(&sc->col[C_BEGIN], begin);
    PUT64(&sc->col[C_DUR], dur);
    if (begin + dur > sc->end_ps) sc->end_ps = begin + dur;
    for (int i = 0; i < ev->nargs; i++)
        if (add_stat(sc, row, ev->keys[i], &ev->vals[i]) < 0) return -1;
    return 1;
}

/* --- scan() ------------------------------------------------------------------------- */
static int setup(Scan *sc, PyObject *collector) {
    PyObject *capsule = PyObject_GetAttrString(collector, "_scan_caches");
    if (!capsule) {
        PyErr_Clear();
        Caches *c = PyMem_Calloc(1, sizeof(Caches));
        if (!c) { PyErr_NoMemory(); return -1; }
        capsule = PyCapsule_New(c, "chrome_trace._collect.caches", caches_free);
        if (!capsule) { PyMem_Free(c); return -1; }
        if (PyObject_SetAttrString(collector, "_scan_caches", capsule) < 0) { Py_DECREF(capsule); return -1; }
    }
    sc->caches = PyCapsule_GetPointer(capsule, "chrome_trace._collect.caches");
    Py_DECREF(capsule);
    if (!sc->caches) return -1;
    struct { const char *attr; PyObject **ids, **values; } interners[] = {
        {"strings", &sc->strings.ids, &sc->strings.values},
        {"stat_keys", &sc->keys.ids, &sc->keys.values},
        {"lines", &sc->lines_ids, &sc->lines_values},
        {"flow_keys", &sc->flow_ids, &sc->flow_values},
    };
    for (int i = 0; i < 4; i++) { /* borrowed: the Collector keeps them alive */
        PyObject *in = PyObject_GetAttrString(collector, interners[i].attr);
        if (!in) return -1;
        PyObject *ids = PyObject_GetAttrString(in, "ids"), *values = PyObject_GetAttrString(in, "values");
        Py_DECREF(in);
        Py_XDECREF(ids); Py_XDECREF(values);
        if (!ids || !values || !PyDict_Check(ids) || !PyList_Check(values)) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "collector interners");
            return -1;
        }
        *interners[i].ids = ids; *interners[i].values = values;
    }
    sc->strings.t = &sc->caches->strings;
    sc->keys.t = &sc->caches->keys;
    PyObject *begins = PyObject_GetAttrString(collector, "ev_begin");
    PyObject *base = PyObject_GetAttrString(collector, "base_us");
    PyObject *end = PyObject_GetAttrString(collector, "end_ps");
    int ok = begins && base && end;
    if (ok) {
        sc->rows = PyObject_Length(begins);
        sc->end_ps = PyLong_AsLongLong(end);
        sc->has_base = base != Py_None;
        sc->base = sc->has_base ? PyLong_AsLongLong(base) : 0;
        if (sc->has_base && sc->base == -1 && PyErr_Occurred() &&
            PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear(); /* a base beyond int64 (a garbage first ts): Python reads it all */
            sc->unusable = 1;
        }
    }
    Py_XDECREF(begins); Py_XDECREF(base); Py_XDECREF(end);
    return ok && !PyErr_Occurred() && sc->rows >= 0 ? 0 : -1;
}

static int flush(Scan *sc, PyObject *collector, int had_base) {
    for (int i = 0; i < N_COLS; i++) {
        if (!sc->col[i].len) continue;
        PyObject *column = PyObject_GetAttrString(collector, COLUMN_NAMES[i]);
        PyObject *r = column ? PyObject_CallMethod(column, "frombytes", "y#", sc->col[i].data, sc->col[i].len) : NULL;
        Py_XDECREF(column);
        if (!r) return -1;
        Py_DECREF(r);
    }
    PyObject *end = PyLong_FromLongLong(sc->end_ps);
    if (!end || PyObject_SetAttrString(collector, "end_ps", end) < 0) { Py_XDECREF(end); return -1; }
    Py_DECREF(end);
    if (sc->has_base && !had_base) {
        PyObject *base = PyLong_FromLongLong(sc->base);
        if (!base || PyObject_SetAttrString(collector, "base_us", base) < 0) { Py_XDECREF(base); return -1; }
        Py_DECREF(base);
    }
    return 0;
}

static PyObject *scan(PyObject *self, PyObject *args) {
    PyObject *text, *collector;
    Py_ssize_t pos, max_chars = PY_SSIZE_T_MAX;
    if (!PyArg_ParseTuple(args, "UnO|n", &text, &pos, &collector, &max_chars)) return NULL;
    Py_ssize_t length = PyUnicode_GET_LENGTH(text);
    if (PyUnicode_KIND(text) != PyUnicode_1BYTE_KIND || pos < 0 || pos >= length)
        return Py_BuildValue("(nn)", pos, (Py_ssize_t)0);
    Scan *sc = PyMem_Calloc(1, sizeof(Scan));
    Parser *ps = PyMem_Malloc(sizeof(Parser));
    Event *ev = PyMem_Malloc(sizeof(Event));
    PyObject *result = NULL;
    if (!sc || !ps || !ev) { PyErr_NoMemory(); goto done; }
    if (setup(sc, collector) < 0) goto done;
    int had_base = sc->has_base;
    if (sc->unusable) { result = Py_BuildValue("(nn)", pos, (Py_ssize_t)0); goto done; }
    const char *data = (const char *)PyUnicode_DATA(text);
    ps->end = data + length;
    const char *consumed = data + pos;
    Py_ssize_t count = 0;
    for (;;) {
        ps->p = consumed;
        if (count) {
            ws(ps);
            if (ps->p >= ps->end || *ps->p != ',') break;
            ps->p++;
        }
        ws(ps);
        const char *start = ps->p;
        if (ps->p >= ps->end || *ps->p != '{' || !event(ps, ev)) break;
        if (ps->p - start > max_chars) break; /* too long: the stream skips it */
        int done = commit(sc, ev);
        if (done < 0) goto done;
        if (!done) break;
        consumed = ps->p;
        count++;
    }
    if (flush(sc, collector, had_base) < 0) goto done;
    result = Py_BuildValue("(nn)", (Py_ssize_t)(consumed - data), count);
done:
    if (sc) for (int i = 0; i < N_COLS; i++) PyMem_Free(sc->col[i].data);
    PyMem_Free(sc); PyMem_Free(ps); PyMem_Free(ev);
    return result;
}

static PyMethodDef methods[] = {
    {"scan", scan, METH_VARARGS, "Consumes the Chrome-trace events this scanner handles."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_collect", NULL, -1, methods};

PyMODINIT_FUNC PyInit__collect(void) { return PyModule_Create(&module); }
