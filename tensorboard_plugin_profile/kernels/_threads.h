/* Splitting one compiled pass across threads (included by the analysis extensions that
 * do; one compilation unit each). The pattern of xspace/_decode.c: POSIX threads where
 * there are any, the caller's thread among them, taking parts from one queue, every
 * thread joined before the call returns; elsewhere (Windows) the caller runs every part.
 *
 * A pass splits its work into `parts` pieces that write disjoint ranges of its outputs
 * and read nothing another part writes, so its result is the same bytes for any number
 * of parts or threads. The caller holds no GIL (Py_BEGIN_ALLOW_THREADS around run_parts),
 * and the Python side decides how many threads (kernels/compiled.py `pass_threads`: one
 * below a size threshold). A thread that cannot be started leaves its parts to the
 * others. */
#ifndef TBPROF_THREADS_H
#define TBPROF_THREADS_H

#ifndef _WIN32
#include <pthread.h>
#define TBPROF_HAVE_THREADS 1
#endif

#define TBPROF_MAX_PARTS 16

typedef void (*part_fn)(void *ctx, int part, int parts);

/* Parts handed out in turn, under a lock, to whichever thread asks next (the decoder's
 * chunk queue): on a busy machine a helper thread that is not given a core takes few
 * parts or none, and the caller does the rest instead of waiting for it. */
typedef struct {
    part_fn fn;
    void *ctx;
    int parts, next;
#ifdef TBPROF_HAVE_THREADS
    pthread_mutex_t lock;
#endif
} PartQueue;

static void *drain_parts(void *arg) {
    PartQueue *q = arg;
    for (;;) {
        int k;
#ifdef TBPROF_HAVE_THREADS
        pthread_mutex_lock(&q->lock);
        k = q->next++;
        pthread_mutex_unlock(&q->lock);
#else
        k = q->next++;
#endif
        if (k >= q->parts) return NULL;
        q->fn(q->ctx, k, q->parts);
    }
}

/* fn(ctx, k, parts) for every k in [0, parts), on up to `threads` threads (the caller's
 * among them; threads clamped to [1, TBPROF_MAX_PARTS]). */
static void run_parts(part_fn fn, void *ctx, int parts, int threads) {
    PartQueue q = {fn, ctx, parts, 0};
    if (threads > TBPROF_MAX_PARTS) threads = TBPROF_MAX_PARTS;
    if (threads > parts) threads = parts;
#ifdef TBPROF_HAVE_THREADS
    if (threads > 1) {
        pthread_t ids[TBPROF_MAX_PARTS];
        int started = 0;
        pthread_mutex_init(&q.lock, NULL);
        for (int i = 1; i < threads; i++)
            if (pthread_create(&ids[started], NULL, drain_parts, &q) == 0) started++;
        drain_parts(&q);
        for (int i = 0; i < started; i++) pthread_join(ids[i], NULL);
        pthread_mutex_destroy(&q.lock);
        return;
    }
#endif
    (void)threads;
    drain_parts(&q);
}

/* How many parts `threads` threads share for `count` rows: one for one thread, else about
 * one per TBPROF_PART_ROWS rows, at least one and at most eight per thread (at most `cap`). */
#define TBPROF_PART_ROWS (1 << 18)
static int part_count(Py_ssize_t count, int threads, int cap) {
    if (threads <= 1) return 1;
    if (threads > TBPROF_MAX_PARTS) threads = TBPROF_MAX_PARTS;
    Py_ssize_t parts = count / TBPROF_PART_ROWS;
    if (parts > 8 * threads) parts = 8 * threads;
    if (parts < threads) parts = threads;
    return parts > cap ? cap : (int)parts;
}

/* The start of part k of `count` items split into `parts` nearly equal ranges. */
static inline Py_ssize_t part_start(Py_ssize_t count, int part, int parts) {
    Py_ssize_t each = count / parts, extra = count % parts;
    return each * part + (part < extra ? part : extra);
}

#endif
