/* Nesting depth of the events of one trace row, read in row order through `order`
 * (included by _layout.c; the numpy fallback is analysis/trace/depths.py).
 *
 * depth = how many earlier events of the row are still open at the event's begin. Open
 * ends live on a stack while they nest (ends never increase from bottom to top, so the
 * top is the smallest) and in a min-heap when an event outlives the one it opened in;
 * the open count is the sum of both. When two events of one depth overlap (the row is
 * not well nested), the row is re-laid by greedy first-free lanes (the smallest lane
 * whose last event ended by the begin), as passes.first_free_levels.
 *
 * Depths are not stored: a first pass only counts the events per depth, and a second
 * one (the same algorithm again) puts each event at the next position of its depth, a
 * stable counting sort (`DepthSink`). Work arrays hold one slot per event of the row.
 *
 * Times: begin[s], end = begin + duration (wrapping as numpy does). Depths are below
 * 2**31 (a row holds under 2**31 events). */
#ifndef TBPROF_ROW_DEPTHS_H
#define TBPROF_ROW_DEPTHS_H

#include <stdint.h>

#include "../../kernels/_lane_heap.h"

/* One row's events: row positions i = 0 .. n - 1 are events order[i]. */
typedef struct {
    const int32_t *order;
    const int64_t *begin, *duration;
    Py_ssize_t n, num_events; /* events in the row; event numbers are below num_events */
} RowEvents;

static inline int64_t row_end(const RowEvents *r, int32_t s) {
    return (int64_t)((uint64_t)r->begin[s] + (uint64_t)r->duration[s]);
}

/* Where each event's depth d goes: nowhere (sorted NULL: a pass that only counts), or
 * its event number to sorted[next[d]++]. */
typedef struct {
    int32_t *sorted;
    int64_t *next;
} DepthSink;

static inline void sink_put(const DepthSink *k, const RowEvents *r, Py_ssize_t i, int64_t d) {
    if (k->sorted) k->sorted[k->next[d]++] = r->order[i];
}

/* Work arrays, n slots each (n = the largest row): stack, heap (two), last end and event
 * count per depth. After a row: count[d] = its events at depth d, for d < depths; after
 * nesting_depths, latest = the latest end of its events (where a part of a row that is
 * cut may end, _row_split.h). */
typedef struct {
    int64_t *stack, *last_end, *count, depths;
    LaneHeap a, b;
    int64_t latest;
} DepthWork;

/* Depths of one row into `sink`; 1 when every depth holds disjoint events, 0 when not,
 * -1 when the row is not sorted by begin or an event ends before it begins, -2 when an
 * event number is out of range. */
static int nesting_depths(const RowEvents *r, const DepthSink *sink, DepthWork *w) {
    int disjoint = 1;
    int64_t seen = 0, top = 0, previous = INT64_MIN, latest = INT64_MIN;
    LaneHeap *outliving = &w->a;
    outliving->size = 0;
    for (Py_ssize_t i = 0; i < r->n; i++) {
        int32_t s = r->order[i];
        if (s < 0 || s >= r->num_events) return -2;
        int64_t b = r->begin[s], e = row_end(r, s);
        if (e < b || b < previous) return -1;
        previous = b;
        latest = e > latest ? e : latest;
        while (top > 0 && w->stack[top - 1] <= b) top--;
        while (outliving->size > 0 && outliving->key[0] <= b) lane_heap_pop(outliving);
        int64_t d = top + (int64_t)outliving->size;
        sink_put(sink, r, i, d);
        if (d < seen) {
            if (b < w->last_end[d]) disjoint = 0;
        } else { /* the open count grows by one at a time: d == seen */
            seen = d + 1;
            w->count[d] = 0;
        }
        w->count[d]++;
        w->last_end[d] = e;
        if (top == 0 || e <= w->stack[top - 1])
            w->stack[top++] = e;
        else
            lane_heap_push(outliving, e, 0);
    }
    w->depths = seen;
    w->latest = latest;
    return disjoint;
}

/* Greedy first-free lanes of one row into `sink`. With few lanes a scan of their last
 * ends finds the smallest free one; past MAX_SCANNED_LANES two heaps take over (busy
 * lanes by end, free lanes by number), giving the same lanes. */
#define MAX_SCANNED_LANES 64
static void first_free_lanes(const RowEvents *r, const DepthSink *sink, DepthWork *w) {
    int64_t lane_end[MAX_SCANNED_LANES], lanes = 0;
    Py_ssize_t i = 0;
    for (; i < r->n; i++) {
        int32_t s = r->order[i];
        int64_t b = r->begin[s], lane = 0;
        while (lane < lanes && lane_end[lane] > b) lane++;
        if (lane == lanes) {
            if (lanes == MAX_SCANNED_LANES) break;
            w->count[lanes++] = 0;
        }
        lane_end[lane] = row_end(r, s);
        sink_put(sink, r, i, lane);
        w->count[lane]++;
    }
    LaneHeap *busy = &w->a, *free_lanes = &w->b;
    busy->size = free_lanes->size = 0;
    if (i < r->n)
        for (int64_t k = 0; k < lanes; k++) lane_heap_push(busy, lane_end[k], k);
    for (; i < r->n; i++) {
        int32_t s = r->order[i];
        int64_t b = r->begin[s], lane;
        while (busy->size > 0 && busy->key[0] <= b) {
            lane_heap_push(free_lanes, busy->lane[0], busy->lane[0]);
            lane_heap_pop(busy);
        }
        if (free_lanes->size > 0) {
            lane = free_lanes->key[0];
            lane_heap_pop(free_lanes);
        } else {
            lane = lanes++;
            w->count[lane] = 0;
        }
        sink_put(sink, r, i, lane);
        w->count[lane]++;
        lane_heap_push(busy, row_end(r, s), lane);
    }
    w->depths = lanes;
}

#endif
