/* A numpy data allocator that hands large freed buffers to the next large allocation.
 *
 * A cold conversion allocates several times its peak memory in short-lived event-sized
 * arrays. Each is a fresh mapping that the kernel faults in and zeroes page by page; at
 * 10 M events that kernel work was about half of the conversion's CPU time. Inside
 * `blockpool.reusing()`, numpy buffers of `min_block` bytes (1 MiB) or more are mappings of our own.
 * A freed one is kept, and the next uninitialised allocation (np.empty and the like) is
 * made of kept blocks: the smallest one that covers it, split, else the largest ones
 * moved side by side into one new mapping with mremap (page tables move; nothing is
 * copied or zeroed), the rest fresh. So the process only grows when nothing is kept, and
 * pooling never raises the peak. Zeroed buffers (np.zeros) are always fresh mappings, so
 * pages nobody writes stay unmapped zero pages (memsize.sparse_rows relies on that); as
 * many kept bytes are unmapped first. Leaving the outermost `reusing()` unmaps all kept
 * blocks. A kept block that 16 large allocations in a row did not take is unmapped too:
 * blocks the next passes do not reuse would only sit beside the process's peak. Smaller
 * buffers go to the C allocator.
 *
 * No huge-page advice (numpy gives it to its own buffers of 4 MiB or more): moving page
 * tables of blocks that are not 2 MiB aligned splits huge pages, and measured at 11 M
 * events, pooling with 4 KiB pages spent half the kernel time of pooling with huge pages.
 *
 * numpy keeps, per array, the handler that allocated it and frees through it, so arrays
 * that outlive the block (kept profiles, cached results) are unmapped when freed. The
 * handler is set through numpy's C API table (PyDataMem_SetHandler, numpy >= 1.22); the
 * setting is context-local, so only the thread computing inside `reusing()` uses it.
 * Linux only (mremap); elsewhere `available()` is False and nothing changes. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/mman.h>
#include <unistd.h>
#define POOL_SUPPORTED 1
#else
#define POOL_SUPPORTED 0
#endif

/* numpy's handler layout (ndarraytypes.h, version 1; stable since numpy 1.22). */
typedef struct {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
} DataAllocator;

typedef struct {
    char name[127];
    uint8_t version;
    DataAllocator allocator;
} DataHandler;

#define API_SET_HANDLER 304 /* PyArray_API index of PyDataMem_SetHandler */
#define HANDLER_NAME "tbprof_blockpool"

/* Every buffer is preceded by a header; big blocks put it at the end of their first
 * 64 bytes so the data stays 64-byte aligned. */
typedef struct {
    uint64_t magic;
    uint64_t mapped; /* bytes mapped from the block's base (0: a malloc'd small buffer) */
    uint64_t size;   /* bytes asked for */
    uint64_t pad;
} Header;

#define MAGIC 0x74627066706f6f6cULL
#define BIG_OFFSET 64
#define MAX_KEPT 32

typedef struct {
    char *base;
    size_t mapped;
    unsigned long long born; /* `served` when it was freed */
} Block;

static Block kept[MAX_KEPT];
static int n_kept = 0;
static size_t kept_bytes = 0;
static size_t keep_limit = (size_t)1 << 30;
static size_t min_block = (size_t)1 << 20; /* smaller buffers: malloc */
static size_t grain = 4096;                  /* the page size, set at import */
static long active = 0;
static PyThread_type_lock lock = NULL;
/* Counters for tests and benchmarks: blocks reused, fresh maps, bytes kept at most. */
static unsigned long long n_reused = 0, n_fresh = 0, fresh_bytes = 0, reused_bytes = 0,
                          zeroed_bytes = 0;
static size_t most_kept = 0;
static unsigned long long served = 0; /* big allocations made so far */
/* A kept block that this many big allocations in a row did not take is unmapped (0: no
 * limit): blocks the next passes do not reuse would sit beside the process's peak. */
static unsigned long long max_age = 16;

static Header *header_of(void *ptr) { return (Header *)((char *)ptr - sizeof(Header)); }

static size_t round_up(size_t n) { return (n + grain - 1) / grain * grain; }

static void *small_alloc(size_t size, int zero) {
    if (size > SIZE_MAX - sizeof(Header)) return NULL;
    char *base = zero ? calloc(1, size + sizeof(Header)) : malloc(size + sizeof(Header));
    if (base == NULL) return NULL;
    Header *h = (Header *)base;
    h->magic = MAGIC;
    h->mapped = 0;
    h->size = size;
    return base + sizeof(Header);
}

#if POOL_SUPPORTED
static void *finish_big(char *base, size_t mapped, size_t size) {
    Header *h = (Header *)(base + BIG_OFFSET - sizeof(Header));
    h->magic = MAGIC;
    h->mapped = mapped;
    h->size = size;
    return base + BIG_OFFSET;
}

static char *fresh_map(size_t mapped) {
    void *base = mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return base == MAP_FAILED ? NULL : (char *)base;
}

/* Under the lock: the kept block at i leaves the list (keeping the others' age order). */
static void drop_kept(int i) {
    kept_bytes -= kept[i].mapped;
    memmove(kept + i, kept + i + 1, (size_t)(n_kept - i - 1) * sizeof(Block));
    n_kept--;
}

/* Under the lock: kept address ranges covering up to `need` bytes, moved into `parts`:
 * the smallest kept block that covers it alone, else the largest ones first. A block
 * larger than what is still needed is split; its tail stays kept. */
static int take_parts(size_t need, Block *parts) {
    int n = 0, fit = -1;
    for (int i = 0; i < n_kept; i++)
        if (kept[i].mapped >= need && (fit < 0 || kept[i].mapped < kept[fit].mapped)) fit = i;
    for (size_t covered = 0; covered < need && n_kept > 0; n++) {
        int i = fit;
        if (i < 0) {
            i = 0;
            for (int j = 1; j < n_kept; j++)
                if (kept[j].mapped > kept[i].mapped) i = j;
        }
        fit = -1;
        size_t want = need - covered;
        parts[n] = kept[i];
        if (kept[i].mapped > want) {
            parts[n].mapped = want;
            kept[i].base += want;
            kept[i].mapped -= want;
            kept_bytes -= want;
        } else {
            drop_kept(i);
        }
        covered += parts[n].mapped;
    }
    return n;
}

/* A new mapping of `need` bytes whose start is made of the kept `parts`, moved in by
 * their page tables (no copy, no zeroing); the rest is fresh. */
static char *stitched(Block *parts, int n, size_t need, size_t *moved_bytes) {
    char *base = fresh_map(need);
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        int moved = base != NULL &&
                    mremap(parts[k].base, parts[k].mapped, parts[k].mapped,
                           MREMAP_MAYMOVE | MREMAP_FIXED, base + at) != MAP_FAILED;
        if (moved) *moved_bytes += parts[k].mapped;
        else munmap(parts[k].base, parts[k].mapped);
        at += parts[k].mapped;
    }
    return base;
}

static void count(int reused, size_t moved, size_t fresh, size_t zeroed) {
    PyThread_acquire_lock(lock, WAIT_LOCK);
    if (reused) n_reused++;
    else n_fresh++;
    reused_bytes += moved;
    fresh_bytes += fresh;
    zeroed_bytes += zeroed;
    PyThread_release_lock(lock);
}

/* The kept parts for a new block of `need` bytes (none outside `reusing()`). */
static int take_for(size_t need, Block *parts) {
    if (active <= 0) return 0;
    Block old[MAX_KEPT];
    int n_old = 0;
    PyThread_acquire_lock(lock, WAIT_LOCK);
    int n = take_parts(need, parts);
    served++;
    for (int i = 0; max_age && i < n_kept;)
        if (served - kept[i].born > max_age) {
            old[n_old++] = kept[i];
            drop_kept(i);
        } else {
            i++;
        }
    PyThread_release_lock(lock);
    for (int i = 0; i < n_old; i++) munmap(old[i].base, old[i].mapped);
    return n;
}

/* Bytes mapped for a buffer of `size` (0: too large). */
static size_t mapped_for(size_t size) {
    return size > SIZE_MAX - BIG_OFFSET - grain ? 0 : round_up(size + BIG_OFFSET);
}

static void *big_alloc(size_t size) {
    size_t need = mapped_for(size), moved = 0;
    if (need == 0) return NULL;
    Block parts[MAX_KEPT];
    int n = take_for(need, parts);
    char *base;
    if (n == 1 && parts[0].mapped == need) {
        base = parts[0].base; /* one kept block, split to size: nothing to move */
        moved = need;
    } else {
        base = stitched(parts, n, need, &moved);
    }
    if (base == NULL) return NULL;
    count(n > 0, moved, need - moved, 0);
    return finish_big(base, need, size);
}

/* Zeroed buffers are always fresh (untouched pages stay unmapped zero pages); as many
 * kept bytes are unmapped first, so the process grows only when nothing is kept. */
static void *big_zeroed(size_t size) {
    size_t need = mapped_for(size);
    if (need == 0) return NULL;
    Block parts[MAX_KEPT];
    int n = take_for(need, parts);
    for (int k = 0; k < n; k++) munmap(parts[k].base, parts[k].mapped);
    char *base = fresh_map(need);
    if (base == NULL) return NULL;
    count(0, 0, 0, need);
    return finish_big(base, need, size);
}

static void big_free(char *base, size_t mapped) {
    Block evicted[MAX_KEPT];
    int n_evicted = 0, keep = 0;
    PyThread_acquire_lock(lock, WAIT_LOCK);
    if (active > 0 && mapped <= keep_limit) {
        /* Oldest first out, until the new block fits the limit and the list. */
        while (n_kept > 0 && (n_kept == MAX_KEPT || kept_bytes + mapped > keep_limit)) {
            evicted[n_evicted++] = kept[0];
            kept_bytes -= kept[0].mapped;
            memmove(kept, kept + 1, (size_t)(n_kept - 1) * sizeof(Block));
            n_kept--;
        }
        kept[n_kept].base = base;
        kept[n_kept].mapped = mapped;
        kept[n_kept].born = served;
        n_kept++;
        kept_bytes += mapped;
        if (kept_bytes > most_kept) most_kept = kept_bytes;
        keep = 1;
    }
    PyThread_release_lock(lock);
    for (int i = 0; i < n_evicted; i++) munmap(evicted[i].base, evicted[i].mapped);
    if (!keep) munmap(base, mapped);
}

static void release_kept(void) {
    Block all[MAX_KEPT];
    PyThread_acquire_lock(lock, WAIT_LOCK);
    int n = n_kept;
    memcpy(all, kept, (size_t)n * sizeof(Block));
    n_kept = 0;
    kept_bytes = 0;
    PyThread_release_lock(lock);
    for (int i = 0; i < n; i++) munmap(all[i].base, all[i].mapped);
}
#endif

static void *pool_malloc(void *ctx, size_t size) {
    (void)ctx;
#if POOL_SUPPORTED
    if (size >= min_block) return big_alloc(size);
#endif
    return small_alloc(size, 0);
}

static void *pool_calloc(void *ctx, size_t nelem, size_t elsize) {
    (void)ctx;
    if (elsize != 0 && nelem > SIZE_MAX / elsize) return NULL;
#if POOL_SUPPORTED
    if (nelem * elsize >= min_block) return big_zeroed(nelem * elsize);
#endif
    return small_alloc(nelem * elsize, 1);
}

static void pool_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size; /* the header knows */
    if (ptr == NULL) return;
    Header *h = header_of(ptr);
#if POOL_SUPPORTED
    if (h->mapped != 0) {
        big_free((char *)ptr - BIG_OFFSET, (size_t)h->mapped);
        return;
    }
#endif
    free(h);
}

static void *pool_realloc(void *ctx, void *ptr, size_t new_size) {
    if (ptr == NULL) return pool_malloc(ctx, new_size);
    Header *h = header_of(ptr);
    if (h->mapped == 0 && new_size < min_block) {
        if (new_size > SIZE_MAX - sizeof(Header)) return NULL;
        Header *moved = realloc(h, new_size + sizeof(Header));
        if (moved == NULL) return NULL;
        moved->size = new_size;
        return (char *)moved + sizeof(Header);
    }
    /* Across kinds or between big blocks: a new buffer and one copy (numpy reallocs
     * rarely: ndarray.resize, and shrinking of a few results). */
    void *fresh = pool_malloc(ctx, new_size);
    if (fresh == NULL) return NULL;
    size_t old = (size_t)h->size;
    memcpy(fresh, ptr, old < new_size ? old : new_size);
    pool_free(ctx, ptr, old);
    return fresh;
}

static DataHandler handler = {
    HANDLER_NAME, 1, {NULL, pool_malloc, pool_calloc, pool_realloc, pool_free}};
static PyObject *handler_capsule = NULL;
static PyObject *(*set_handler)(PyObject *) = NULL;

/* numpy's PyDataMem_SetHandler, from its C API table (what import_array reads). */
static int find_set_handler(void) {
    if (set_handler != NULL) return 0;
    PyObject *mod = PyImport_ImportModule("numpy._core._multiarray_umath");
    if (mod == NULL) {
        PyErr_Clear();
        mod = PyImport_ImportModule("numpy.core._multiarray_umath");
    }
    if (mod == NULL) return -1;
    PyObject *api = PyObject_GetAttrString(mod, "_ARRAY_API");
    Py_DECREF(mod);
    if (api == NULL) return -1;
    void **table = (void **)PyCapsule_GetPointer(api, NULL);
    Py_DECREF(api);
    if (table == NULL) return -1;
    set_handler = (PyObject * (*)(PyObject *)) table[API_SET_HANDLER];
    return 0;
}

/* enter() -> the previous handler (to give to leave()); from here on, this context's
 * numpy buffers come from the pool. */
static PyObject *py_enter(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    if (!POOL_SUPPORTED) return PyErr_Format(PyExc_RuntimeError, "block pool: Linux only");
    if (find_set_handler() < 0) return NULL;
    if (handler_capsule == NULL) {
        handler_capsule = PyCapsule_New(&handler, "mem_handler", NULL);
        if (handler_capsule == NULL) return NULL;
    }
    PyObject *previous = set_handler(handler_capsule);
    if (previous == NULL) return NULL;
    PyThread_acquire_lock(lock, WAIT_LOCK);
    active++;
    PyThread_release_lock(lock);
    return previous;
}

/* leave(previous): restores the handler; the last one out unmaps the kept blocks. */
static PyObject *py_leave(PyObject *self, PyObject *previous) {
    (void)self;
    PyObject *ours = set_handler != NULL ? set_handler(previous) : NULL;
    if (ours == NULL) return NULL;
    Py_DECREF(ours);
    PyThread_acquire_lock(lock, WAIT_LOCK);
    long now = --active;
    PyThread_release_lock(lock);
#if POOL_SUPPORTED
    if (now == 0) release_kept();
#endif
    Py_RETURN_NONE;
}

static PyObject *py_configure(PyObject *self, PyObject *args) {
    (void)self;
    unsigned long long limit, smallest, age = max_age;
    if (!PyArg_ParseTuple(args, "KK|K", &limit, &smallest, &age)) return NULL;
    keep_limit = (size_t)limit;
    max_age = age;
    min_block = smallest > 0 ? (size_t)smallest : 1;
    Py_RETURN_NONE;
}

static PyObject *py_stats(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    return Py_BuildValue("{sKsKsKsKsKsnsnsi}", "reused", n_reused, "fresh", n_fresh, "fresh_bytes",
                         fresh_bytes, "reused_bytes", reused_bytes, "zeroed_bytes", zeroed_bytes,
                         "kept_bytes",
                         (Py_ssize_t)kept_bytes, "most_kept", (Py_ssize_t)most_kept, "kept",
                         n_kept);
}

static PyObject *py_available(PyObject *self, PyObject *noargs) {
    (void)self;
    (void)noargs;
    return PyBool_FromLong(POOL_SUPPORTED);
}

static PyMethodDef methods[] = {
    {"enter", py_enter, METH_NOARGS, "Use the pool for this context's numpy buffers."},
    {"leave", py_leave, METH_O, "Restore the previous handler; the last one out unmaps."},
    {"configure", py_configure, METH_VARARGS,
     "configure(keep_limit_bytes, min_block_bytes[, max_age])."},
    {"stats", py_stats, METH_NOARGS, "Counters: reused, fresh, kept_bytes, most_kept, kept."},
    {"available", py_available, METH_NOARGS, "Whether this platform pools (Linux)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_blockpool", NULL, -1, methods};

PyMODINIT_FUNC PyInit__blockpool(void) {
#if POOL_SUPPORTED
    long page = sysconf(_SC_PAGESIZE);
    if (page > 0) grain = (size_t)page;
#endif
    lock = PyThread_allocate_lock();
    if (lock == NULL) return PyErr_NoMemory();
    return PyModule_Create(&module);
}
