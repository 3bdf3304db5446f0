/*
 * Wire-format primitives of the compiled XSpace reader: varints, fields, groups,
 * UTF-8 checks, growable buffers and byte-string interning. Included once, by
 * _decode.c (one compilation unit: the helpers stay static and inlinable).
 * None of these touch Python objects, so they run without the GIL.
 */
#ifndef TBPROF_WIRE_H
#define TBPROF_WIRE_H
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* Blocks holding an intern table's own copies of its strings (pointers stay put). */
typedef struct Arena {
    struct Arena *next;
    size_t used, cap;
    uint8_t data[];
} Arena;

typedef struct {
    int32_t *slots; /* -1 empty, else index into keys */
    size_t mask;
    StrKey *keys;
    size_t n, cap;
    /* Keys are copied into the arena unless `borrow` (their bytes outlive the table):
     * the reader may hand the file's pages back before the tables are merged. */
    Arena *arena;
    int borrow;
} Intern;

static const uint8_t *arena_copy(Arena **a, const uint8_t *p, size_t len) {
    if (!*a || (*a)->cap - (*a)->used < len) {
        size_t cap = *a ? (*a)->cap * 2 : 1024; /* a chunk holds few distinct strings */
        if (cap > 65536) cap = 65536;
        if (cap < len) cap = len;
        Arena *block = malloc(sizeof(Arena) + cap);
        if (!block) return NULL;
        block->next = *a;
        block->used = 0;
        block->cap = cap;
        *a = block;
    }
    uint8_t *out = (*a)->data + (*a)->used;
    if (len) memcpy(out, p, len);
    (*a)->used += len;
    return out;
}

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
    if (!t->borrow && !(p = arena_copy(&t->arena, p, len))) return -1;
    t->keys[t->n] = (StrKey){p, (uint32_t)len, kind, hash};
    t->slots[at] = (int32_t)t->n;
    return (int32_t)t->n++;
}

static void intern_free(Intern *t) {
    while (t->arena) {
        Arena *next = t->arena->next;
        free(t->arena);
        t->arena = next;
    }
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
#endif
