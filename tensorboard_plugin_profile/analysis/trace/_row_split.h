/* Laying out one large trace row on several threads (included by _layout.c, after the
 * Layout type; kernels/_threads.h runs the parts).
 *
 * Why: one row (a profile's main Python thread) can hold 95% of the events, and the
 * row's depth pass is sequential, so splitting by rows leaves the other cores idle. But
 * the pass can start afresh before any event that no earlier event of the row is still
 * open at (a top-level event: every earlier end <= its begin), where its stack and heap
 * are empty; a real row has thousands of them. As grouping's line_forest does, each cut
 * is guessed from the LAYOUT_WINDOW events before it (its begin reaches every end of the
 * window) and checked afterwards against the whole part before it (every end of that
 * part <= the cut's begin). When a check fails or an event is damaged, the row is laid
 * out again on one thread, the code path it takes without threads, so the result is the
 * same bytes for any thread count.
 *
 * Passes of run_parts, as on one thread: each part counts its events per depth; when two
 * events of one depth overlap in any part (the row is not well nested: the main Python
 * thread of a JAX profile is), every part counts again by first-free lanes, which also
 * start afresh at a cut, since every lane is free there. The row's counts are the parts'
 * sums, and part k puts its events of depth d from the row's start of d plus the counts
 * of d in the parts before it (the stable counting sort of one pass, since the parts are
 * in row order). A last pass copies the sorted scratch back by ranges. */
#ifndef TBPROF_ROW_SPLIT_H
#define TBPROF_ROW_SPLIT_H

#include "../../kernels/_threads.h"

#define LAYOUT_WINDOW 65536

typedef struct {
    const Layout *L;
    int32_t *order; /* the row's range of source */
    Py_ssize_t m, window;
    int parts, pass; /* pass: COUNT_DEPTHS .. PLACE_LANES (row_part) */
    Py_ssize_t start[TBPROF_MAX_PARTS + 1]; /* part k holds row positions [start[k], start[k + 1]) */
    int status[TBPROF_MAX_PARTS];
    int64_t latest[TBPROF_MAX_PARTS]; /* the latest end of part k's events */
    int64_t *mem[TBPROF_MAX_PARTS];   /* part k's work arrays (NULL: not allocated) */
    DepthWork w[TBPROF_MAX_PARTS];
    int64_t *next[TBPROF_MAX_PARTS];
} RowSplit;

static inline int event_ok(const Layout *L, int32_t s) { return s >= 0 && s < L->n; }

/* A row position at or after t whose begin reaches every end of the window of events
 * before it (likely a top-level event), or -1 if none within the window after t. */
static Py_ssize_t guess_cut(const RowSplit *S, Py_ssize_t t) {
    const Layout *L = S->L;
    Py_ssize_t from = t > S->window ? t - S->window : 0;
    Py_ssize_t limit = t + S->window < S->m ? t + S->window : S->m;
    int64_t latest = INT64_MIN;
    for (Py_ssize_t i = from; i < limit; i++) {
        int32_t s = S->order[i];
        if (!event_ok(L, s)) return -1;
        int64_t b = L->begin[s], e = (int64_t)((uint64_t)b + (uint64_t)L->duration[s]);
        if (i >= t && i > 0 && b >= latest) return i;
        if (e > latest) latest = e;
    }
    return -1;
}

/* Part k in one of four passes: depths counted (then its latest end noted), lanes
 * counted, or its events placed by depth or by lane (as lay_out_row on one thread). */
enum { COUNT_DEPTHS, COUNT_LANES, PLACE_DEPTHS, PLACE_LANES };

static void row_part(void *arg, int k, int parts) {
    RowSplit *S = arg;
    const Layout *L = S->L;
    (void)parts;
    RowEvents row = {S->order + S->start[k], L->begin, L->duration, S->start[k + 1] - S->start[k], L->n};
    DepthSink sink = {NULL, NULL};
    if (S->pass >= PLACE_DEPTHS) sink = (DepthSink){L->sorted, S->next[k]};
    if (S->pass == COUNT_LANES || S->pass == PLACE_LANES) {
        first_free_lanes(&row, &sink, &S->w[k]);
        return;
    }
    int status = nesting_depths(&row, &sink, &S->w[k]);
    if (S->pass == COUNT_DEPTHS) S->status[k] = status, S->latest[k] = S->w[k].latest;
}

static void copy_part(void *arg, int k, int parts) {
    RowSplit *S = arg;
    Py_ssize_t lo = part_start(S->m, k, parts), hi = part_start(S->m, k + 1, parts);
    memcpy(S->order + lo, S->L->sorted + lo, (size_t)(hi - lo) * sizeof(int32_t));
}

/* Work arrays of part k: n slots each of stack, last end, count, two heaps (two each),
 * next; only the first slots of each are written (lay_out_work). */
static int part_work(RowSplit *S, int k) {
    size_t cells = (size_t)(S->start[k + 1] - S->start[k]);
    int64_t *mem = S->mem[k] = PyMem_RawMalloc(cells * 8 * sizeof(int64_t));
    if (!mem) return -1;
    S->w[k] = (DepthWork){mem, mem + cells, mem + 2 * cells, 0, {mem + 3 * cells, mem + 4 * cells, 0},
                          {mem + 5 * cells, mem + 6 * cells, 0}};
    S->next[k] = mem + 7 * cells;
    return 0;
}

/* Whether the counted parts join into the one-thread pass: each sorted and in range, and
 * every part's events ended by the next part's first begin (then the lanes of the row's
 * first-free pass, too, are all free there: that pass also starts afresh at each cut). */
static int parts_join(const RowSplit *S) {
    for (int k = 0; k < S->parts; k++) {
        if (S->status[k] < 0) return 0;
        if (k + 1 < S->parts) {
            int32_t s = S->order[S->start[k + 1]];
            if (!event_ok(S->L, s) || S->L->begin[s] < S->latest[k]) return 0;
        }
    }
    return 1;
}

/* The counts of the joined parts appended to L (as lay_out_row does), each part's next
 * position per depth set; -3 when out of memory. */
static int join_counts(Layout *L, Py_ssize_t r, RowSplit *S) {
    int64_t keys = 1;
    for (int k = 0; k < S->parts; k++) keys = S->w[k].depths > keys ? S->w[k].depths : keys;
    Py_ssize_t first = L->num_counts;
    if (grow_counts(L, keys) < 0) return -3;
    int64_t *counts = L->counts + first;
    for (int k = 0; k < S->parts; k++)
        for (int64_t d = 0; d < S->w[k].depths; d++) counts[d] += S->w[k].count[d];
    L->keys_per_row[r] = keys;
    for (int64_t d = 0, at = 0; d < keys; d++) { /* part k starts after the parts before it */
        for (int k = 0; k < S->parts; k++)
            if (d < S->w[k].depths) S->next[k][d] = at, at += S->w[k].count[d];
    }
    return 0;
}

/* Row r on up to `threads` threads: 1 when laid out in parts, 0 when the caller must lay
 * it out on one thread (a cut or a part failed its check, or one cut only), -3 when out
 * of memory. A row with overlapping events of one depth in any part is re-laid by lanes
 * in every part, as on one thread (*relaid counts it). */
static int lay_out_row_split(Layout *L, Py_ssize_t r, int threads, Py_ssize_t window, int *relaid) {
    RowSplit S;
    memset(&S, 0, sizeof(S));
    S.L = L, S.window = window, S.m = L->bounds[r + 1] - L->bounds[r];
    S.order = L->source + L->bounds[r];
    int wanted = part_count(S.m, threads, TBPROF_MAX_PARTS), ok = 0;
    for (int k = 1; k < wanted; k++) {
        Py_ssize_t s = guess_cut(&S, part_start(S.m, k, wanted));
        if (s > S.start[S.parts]) S.start[++S.parts] = s;
    }
    S.start[++S.parts] = S.m;
    if (S.parts < 2) return 0;
    for (int k = 0; k < S.parts; k++)
        if (part_work(&S, k) < 0) ok = -3;
    if (ok == 0) {
        S.pass = COUNT_DEPTHS;
        run_parts(row_part, &S, S.parts, threads);
        if (parts_join(&S)) {
            int disjoint = 1;
            for (int k = 0; k < S.parts; k++) disjoint &= S.status[k] == 1;
            if (!disjoint) {
                S.pass = COUNT_LANES;
                run_parts(row_part, &S, S.parts, threads);
                ++*relaid;
            }
            ok = join_counts(L, r, &S);
            if (ok == 0) {
                S.pass = disjoint ? PLACE_DEPTHS : PLACE_LANES;
                run_parts(row_part, &S, S.parts, threads);
                run_parts(copy_part, &S, S.parts, threads);
                ok = 1;
            }
        }
    }
    for (int k = 0; k < S.parts; k++) PyMem_RawFree(S.mem[k]);
    return ok;
}

#endif
