/* Splitting one compiled pass across threads (included by the analysis extensions that
 * do; one compilation unit each). The pattern of xspace/_decode.c: POSIX threads where
 * there are any, the caller's thread running part 0, every part joined before the call
 * returns; elsewhere (Windows) the parts run one after another in the caller.
 *
 * A pass splits its work into `parts` pieces that write disjoint ranges of its outputs
 * and read nothing another part writes, so its result is the same bytes for any number
 * of parts. The caller holds no GIL (Py_BEGIN_ALLOW_THREADS around run_parts), and the
 * Python side decides how many parts (kernels/compiled.py `pass_threads`: one below a
 * size threshold). A thread that cannot be started leaves its part to the caller. */
#ifndef TBPROF_THREADS_H
#define TBPROF_THREADS_H

#ifndef _WIN32
#include <pthread.h>
#define TBPROF_HAVE_THREADS 1
#endif

#define TBPROF_MAX_PARTS 16

typedef void (*part_fn)(void *ctx, int part, int parts);

typedef struct {
    part_fn fn;
    void *ctx;
    int part, parts;
} PartJob;

#ifdef TBPROF_HAVE_THREADS
static void *run_part_job(void *arg) {
    PartJob *job = arg;
    job->fn(job->ctx, job->part, job->parts);
    return NULL;
}
#endif

/* fn(ctx, k, parts) for every k in [0, parts), parts clamped to [1, TBPROF_MAX_PARTS]. */
static void run_parts(part_fn fn, void *ctx, int parts) {
    if (parts < 1) parts = 1;
    if (parts > TBPROF_MAX_PARTS) parts = TBPROF_MAX_PARTS;
#ifdef TBPROF_HAVE_THREADS
    PartJob jobs[TBPROF_MAX_PARTS];
    pthread_t ids[TBPROF_MAX_PARTS];
    int started[TBPROF_MAX_PARTS] = {0};
    for (int k = 1; k < parts; k++) {
        jobs[k] = (PartJob){fn, ctx, k, parts};
        started[k] = pthread_create(&ids[k], NULL, run_part_job, &jobs[k]) == 0;
    }
    fn(ctx, 0, parts);
    for (int k = 1; k < parts; k++) {
        if (started[k])
            pthread_join(ids[k], NULL);
        else
            fn(ctx, k, parts);
    }
#else
    for (int k = 0; k < parts; k++) fn(ctx, k, parts);
#endif
}

/* The start of part k of `count` items split into `parts` nearly equal ranges. */
static inline Py_ssize_t part_start(Py_ssize_t count, int part, int parts) {
    Py_ssize_t each = count / parts, extra = count % parts;
    return each * part + (part < extra ? part : extra);
}

#endif
