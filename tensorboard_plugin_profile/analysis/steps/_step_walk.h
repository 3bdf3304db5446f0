/* The state of the host step walk (_keys.c): kept spans, the per-group time table,
 * marker rows; and the packing of the kept spans into pack_boundaries' keys. Included by
 * _keys.c only (one compilation unit). */
#ifndef TBPROF_STEP_WALK_H
#define TBPROF_STEP_WALK_H

typedef struct {
    int64_t group, begin, end;
    int64_t type;
} Span;

typedef struct {
    /* inputs */
    const void *line, *name, *step; /* step: NULL = no step codes */
    Py_ssize_t name_size, step_size, n, lines, names, stages, skips, nw;
    const uint8_t *line_ok, *mask;
    const int64_t *group, *begin, *duration, *stage, *skip;
    const int32_t *group32; /* int32 group ids instead of `group` (or NULL) */
    const int64_t *wb, *we; /* windows (or NULL): an event's group is the one it starts in */
    const int8_t *span_type, *stage_type;
    int64_t num_types;
    /* results of the walk */
    Span *kept;
    int64_t *markers, *tmin, *tmax; /* tmin/tmax: groups lo .. lo + cap - 1 */
    Py_ssize_t n_kept, kept_cap, n_markers, markers_cap, work;
    int64_t lo, cap, gmin, gmax;
    const char *error; /* set when the walk failed */
    int sparse;
} Walk;

static int grow(void **buf, Py_ssize_t *cap, Py_ssize_t need, size_t item) {
    if (need <= *cap) return 0;
    Py_ssize_t next = *cap ? 2 * *cap : 1024;
    while (next < need) next *= 2;
    void *p = PyMem_RawRealloc(*buf, (size_t)next * item);
    if (!p) return -1;
    *buf = p;
    *cap = next;
    return 0;
}

/* Widens the per-group time table to hold group g (doubling; new slots empty). */
static int cover_group(Walk *w, int64_t g) {
    if (w->cap && g >= w->lo && g - w->lo < w->cap) return 0;
    int64_t lo = w->cap ? (g < w->lo ? g : w->lo) : g;
    int64_t hi = w->cap ? (g > w->lo + w->cap - 1 ? g : w->lo + w->cap - 1) : g;
    uint64_t need = (uint64_t)hi - (uint64_t)lo + 1;
    if (need > 4 * (uint64_t)w->n + 1024) { /* sparser than pack_boundaries accepts */
        w->sparse = 1;
        return -1;
    }
    int64_t cap = w->cap ? 2 * w->cap : 64;
    while ((uint64_t)cap < need) cap *= 2;
    if (g < w->lo && w->cap) lo = hi - cap + 1; /* grow downwards, keep the top */
    int64_t *tmin = PyMem_RawMalloc((size_t)cap * sizeof(int64_t));
    int64_t *tmax = PyMem_RawMalloc((size_t)cap * sizeof(int64_t));
    if (!tmin || !tmax) {
        PyMem_RawFree(tmin);
        PyMem_RawFree(tmax);
        w->error = "out of memory";
        return -1;
    }
    for (int64_t i = 0; i < cap; i++) {
        tmin[i] = INT64_MAX;
        tmax[i] = INT64_MIN;
    }
    if (w->cap) {
        memcpy(tmin + (w->lo - lo), w->tmin, (size_t)w->cap * sizeof(int64_t));
        memcpy(tmax + (w->lo - lo), w->tmax, (size_t)w->cap * sizeof(int64_t));
    }
    PyMem_RawFree(w->tmin);
    PyMem_RawFree(w->tmax);
    w->tmin = tmin;
    w->tmax = tmax;
    w->lo = lo;
    w->cap = cap;
    return 0;
}

/* One span, kept unless `cover` (the last kept span not inside an earlier one) covers
 * it with the same group and type: then its group's time range is the cover's already. */
static inline int add_span(Walk *w, Span *cover, int64_t g, int64_t b, int64_t e, int64_t t) {
    w->work++;
    int inside = cover->begin <= b && e <= cover->end && b < cover->end && e > cover->begin;
    if (inside && b <= e && cover->group == g && cover->type == t) return 0;
    if (cover_group(w, g) < 0) return -1;
    int64_t slot = g - w->lo, low = b < e ? b : e, high = b < e ? e : b;
    if (low < w->tmin[slot]) w->tmin[slot] = low;
    if (high > w->tmax[slot]) w->tmax[slot] = high;
    w->gmin = g < w->gmin ? g : w->gmin;
    w->gmax = g > w->gmax ? g : w->gmax;
    if (grow((void **)&w->kept, &w->kept_cap, w->n_kept + 1, sizeof(Span)) < 0) {
        w->error = "out of memory";
        return -1;
    }
    Span s = {g, b, e, t};
    w->kept[w->n_kept++] = s;
    if (!inside && b <= e) *cover = s;
    return 0;
}

static int bit_length(uint64_t v) {
    int bits = 0;
    for (; v; v >>= 1) bits++;
    return bits;
}

/* A run of consecutive groups whose boundaries share one key layout (pack_boundaries'
 * fields with group_min = gmin + first and groups = groups). */
typedef struct {
    int64_t first, groups, spans;
    int time_bits;
} Chunk;

/* Time span of group slot g (from gmin on): its earliest time and width (0, 0 if empty). */
static inline uint64_t group_width(const Walk *w, int64_t g, int64_t *earliest) {
    int64_t slot = w->gmin - w->lo + g;
    if (w->tmin[slot] > w->tmax[slot]) {
        *earliest = 0;
        return 0;
    }
    *earliest = w->tmin[slot];
    return (uint64_t)w->tmax[slot] - (uint64_t)w->tmin[slot];
}

/* Cuts the groups gmin .. gmax into runs whose keys fit in 62 bits (group | time | tail
 * as pack_boundaries packs them, times from the group's earliest), each run as long as
 * it can be. A run's time bits grow with its widest group, not with the profile's: one
 * group spanning the whole profile widens only its own run. Where all groups fit
 * together this is one run with pack_boundaries' layout, so its keys are the same.
 * Returns the number of runs (in *out, PyMem_Raw), 0 when one group alone is too wide
 * (more than 2^56 ps: 20 hours), -1 when out of memory. */
static Py_ssize_t plan_chunks(const Walk *w, int tail_bits, Chunk **out) {
    int64_t groups = w->gmax - w->gmin + 1, earliest;
    Chunk *chunks = NULL;
    Py_ssize_t n = 0, cap = 0;
    uint64_t widest = 0;
    for (int64_t g = 0; g < groups; g++) {
        uint64_t width = group_width(w, g, &earliest);
        if (n) {
            Chunk *last = &chunks[n - 1];
            uint64_t wide = width > widest ? width : widest;
            /* last->groups is the largest group index of the run with g in it */
            if (bit_length((uint64_t)last->groups) + bit_length(wide) + tail_bits <= 62) {
                last->groups++;
                last->time_bits = bit_length(wide);
                widest = wide;
                continue;
            }
        }
        if (bit_length(width) + tail_bits > 62 ||
            grow((void **)&chunks, &cap, n + 1, sizeof(Chunk)) < 0) {
            PyMem_RawFree(chunks);
            return bit_length(width) + tail_bits > 62 ? 0 : -1;
        }
        Chunk c = {g, 1, 0, bit_length(width)};
        chunks[n++] = c;
        widest = width;
    }
    *out = chunks;
    return n;
}

/* Run c's layout: [num_types, time_bits, tail_bits, group_min, groups, earliest time of
 * each group...], as pack_boundaries writes it. */
static void fill_layout(const Walk *w, const Chunk *c, int tail_bits, int64_t *layout) {
    layout[0] = w->num_types;
    layout[1] = c->time_bits;
    layout[2] = tail_bits;
    layout[3] = w->gmin + c->first;
    layout[4] = c->groups;
    for (int64_t g = 0; g < c->groups; g++) group_width(w, c->first + g, &layout[5 + g]);
}

/* The kept spans' keys, run by run: run c's spans at key[2 * start_c ..), start_c the
 * spans of the runs before it (a counting placement; within a run, span order does not
 * matter, the caller sorts). `run_of`: per group slot, its run. */
static void pack(const Walk *w, const Chunk *chunks, Py_ssize_t nc, const int32_t *run_of,
                 int64_t *next, int tail_bits, int64_t *key) {
    const int64_t nt = w->num_types;
    for (Py_ssize_t c = 0, start = 0; c < nc; c++) {
        next[c] = start;
        start += chunks[c].spans;
    }
    for (Py_ssize_t i = 0; i < w->n_kept; i++) {
        const Span *s = &w->kept[i];
        int64_t g = s->group - w->gmin, earliest;
        const Chunk *c = &chunks[run_of[g]];
        group_width(w, g, &earliest);
        uint64_t base = (uint64_t)earliest, time_bits = (uint64_t)c->time_bits;
        uint64_t high = (uint64_t)(g - c->first) << (time_bits + tail_bits);
        uint64_t tail = (uint64_t)(nt - 1 - s->type);
        int64_t at = 2 * next[run_of[g]]++;
        key[at] = (int64_t)(high | ((uint64_t)s->begin - base) << tail_bits | (tail + nt));
        key[at + 1] = (int64_t)(high | ((uint64_t)s->end - base) << tail_bits | tail);
    }
}

static void walk_free(Walk *w) {
    PyMem_RawFree(w->kept);
    PyMem_RawFree(w->markers);
    PyMem_RawFree(w->tmin);
    PyMem_RawFree(w->tmax);
}

#endif
