/* A binary min-heap of (key, lane) pairs, for greedy first-free lanes and open ends
 * (included by _passes.c, analysis/trace/_depths.c and analysis/trace/_row_depths.h;
 * one compilation unit each). */
#ifndef TBPROF_LANE_HEAP_H
#define TBPROF_LANE_HEAP_H

#include <stdint.h>

/* A binary min-heap of (key, lane) pairs ordered by key, then lane. */
typedef struct {
    int64_t *key, *lane;
    Py_ssize_t size;
} LaneHeap;

static int lane_heap_less(const LaneHeap *h, Py_ssize_t a, Py_ssize_t b) {
    return h->key[a] < h->key[b] || (h->key[a] == h->key[b] && h->lane[a] < h->lane[b]);
}

static void lane_heap_swap(LaneHeap *h, Py_ssize_t a, Py_ssize_t b) {
    int64_t k = h->key[a], l = h->lane[a];
    h->key[a] = h->key[b];
    h->lane[a] = h->lane[b];
    h->key[b] = k;
    h->lane[b] = l;
}

static void lane_heap_push(LaneHeap *h, int64_t key, int64_t lane) {
    Py_ssize_t i = h->size++;
    h->key[i] = key;
    h->lane[i] = lane;
    for (; i > 0 && lane_heap_less(h, i, (i - 1) / 2); i = (i - 1) / 2) lane_heap_swap(h, i, (i - 1) / 2);
}

static void lane_heap_pop(LaneHeap *h) {
    h->size--;
    h->key[0] = h->key[h->size];
    h->lane[0] = h->lane[h->size];
    for (Py_ssize_t i = 0;;) {
        Py_ssize_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->size && lane_heap_less(h, l, m)) m = l;
        if (r < h->size && lane_heap_less(h, r, m)) m = r;
        if (m == i) break;
        lane_heap_swap(h, i, m);
        i = m;
    }
}

#endif
