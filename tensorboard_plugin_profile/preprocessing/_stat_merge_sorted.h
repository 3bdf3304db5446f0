/* merge_rows of _stat_merge.c (included once, after its helpers): the merged table written
 * in order when every part's (moved) events ascend, as PlaneEdit's parts do (old rows sorted
 * by event with old rows kept in order, group ids set on ascending rows): no per-event counts
 * and one sequential write of each column.
 *
 * merge_rows(parts, outs, int_columns, n, threads=1) -> bool
 *     parts: a tuple of place_rows' parts; outs: place_rows' with counts None; n events.
 *     False, with nothing written, when some part's events do not ascend (then count_rows
 *     and place_rows do it). Rows of one event: the parts in order, each part's in order
 *     (the stable sort by event of the parts one after the other). threads > 1 splits
 *     the merge by ranges of events (kernels/_threads.h): the scan that checks the order
 *     (itself split by rows) also finds where each range starts in each part, and each
 *     range writes its own rows.
 */

typedef struct {
    Rows rows;
    Fields fields;
    Py_ssize_t at, next_float; /* the next kept row; the first listed double not before it */
    int64_t key;               /* its event, INT64_MAX when the part is done */
} Head;

static inline void advance(Head *h, int64_t n) {
    const Rows *r = &h->rows;
    while (h->at < r->m && r->keep && !r->keep[h->at]) h->at++;
    h->key = h->at < r->m ? event_of(r, h->at, n) : INT64_MAX;
}

/* Where each of `ranges` event ranges (range b: events from part_start(n, b, ranges))
 * starts in a part: its first row there and the kept rows before it. */
typedef struct {
    Py_ssize_t row, before;
} Cut;

/* The order check, split too: each part's rows cut into `chunks` pieces, each scanned on its
 * own (ascending? events in range? kept rows, first and last event, and where each range
 * starts in it: row -1 when none of its rows reaches that range), then joined in order. */
typedef struct {
    int status; /* 1 ascends, 0 does not, -1 an event out of range */
    Py_ssize_t kept;
    int64_t first, last; /* events of its first and last kept row */
} Chunk;

typedef struct {
    const Head *heads;
    int64_t n;
    int ranges, chunks;
    Chunk *chunk; /* k * chunks */
    Cut *cut;     /* (k * chunks) * (ranges + 1) */
} Scan;

static void scan_chunk(void *arg, int item, int items) {
    const Scan *s = arg;
    (void)items;
    const Rows *r = &s->heads[item / s->chunks].rows;
    int q = item % s->chunks, b = 0;
    Chunk *ch = &s->chunk[item];
    Cut *c = s->cut + (Py_ssize_t)item * (s->ranges + 1);
    Py_ssize_t end = part_start(r->m, q + 1, s->chunks), kept = 0;
    int64_t last = -1;
    *ch = (Chunk){1, 0, -1, -1};
    for (Py_ssize_t i = part_start(r->m, q, s->chunks); i < end; i++) {
        if (r->keep && !r->keep[i]) continue;
        int64_t e = event_of(r, i, s->n);
        if (e < 0) {
            ch->status = -1; /* wins over a descent, wherever either is */
            return;
        }
        if (ch->status == 0) continue; /* only the range check is left */
        if (e < last) {
            ch->status = 0;
            continue;
        }
        if (!kept) ch->first = e;
        last = e;
        while (b <= s->ranges && e >= part_start(s->n, b, s->ranges)) c[b++] = (Cut){i, kept};
        kept++;
    }
    for (; b <= s->ranges; b++) c[b] = (Cut){-1, kept};
    ch->kept = kept;
    ch->last = last;
}

/* 1 if every part ascends (and its events are in range: else -1, whatever the order);
 * counts kept rows; cut[p * (ranges + 1) + b]: where range b starts in part p. */
static int parts_ascend(const Head *heads, Py_ssize_t k, Py_ssize_t *total, Cut *cut,
                        int ranges, const Scan *s) {
    Py_ssize_t items = k * s->chunks;
    int status = 1;
    for (Py_ssize_t t = 0; t < items; t++) {
        if (s->chunk[t].status < 0) return -1;
        if (s->chunk[t].status == 0) status = 0;
    }
    if (!status) return 0;
    *total = 0;
    for (Py_ssize_t p = 0; p < k; p++) {
        Cut *c = cut + p * (ranges + 1);
        Py_ssize_t before = 0;
        int64_t last = -1;
        for (int b = 0; b <= ranges; b++) c[b].row = -1;
        for (int q = 0; q < s->chunks; q++) {
            const Chunk *ch = &s->chunk[p * s->chunks + q];
            const Cut *local = s->cut + (p * s->chunks + q) * (ranges + 1);
            if (!ch->kept) continue;
            if (ch->first < last) return 0; /* a descent where two chunks meet */
            last = ch->last;
            for (int b = 0; b <= ranges; b++)
                if (c[b].row < 0 && local[b].row >= 0)
                    c[b] = (Cut){local[b].row, before + local[b].before};
            before += ch->kept;
        }
        for (int b = 0; b <= ranges; b++)
            if (c[b].row < 0) c[b] = (Cut){heads[p].rows.m, before};
        *total += before;
    }
    return 1;
}

/* The merge: the part with the least (event, part) writes rows while it stays least. */
static int merge(Head *heads, Py_ssize_t k, int64_t d, const Outs *out, const IntColumns *ic) {
    for (Py_ssize_t p = 0; p < k; p++) advance(&heads[p], out->n);
    for (;;) {
        Py_ssize_t best = 0;
        for (Py_ssize_t p = 1; p < k; p++)
            if (heads[p].key < heads[best].key) best = p;
        Head *h = &heads[best];
        if (h->key == INT64_MAX) break;
        int64_t before = INT64_MAX, upto = INT64_MAX; /* earlier parts: <; later: <= */
        for (Py_ssize_t p = 0; p < k; p++) {
            if (p < best && heads[p].key < before) before = heads[p].key;
            if (p > best && heads[p].key < upto) upto = heads[p].key;
        }
        /* The run in locals: the column writes cannot then alias the head. */
        const Rows r = h->rows;
        const Fields f = h->fields;
        Py_ssize_t at = h->at, next_float = h->next_float;
        int64_t key = h->key, last = before - 1 < upto ? before - 1 : upto;
        while (key <= last) {
            if (!put_row(&f, at, key, d++, float_at(&f, &next_float, at), out, ic)) return 0;
            for (at++; at < r.m && r.keep && !r.keep[at]; at++) {
            }
            key = at < r.m ? event_of(&r, at, out->n) : INT64_MAX;
        }
        h->at = at;
        h->next_float = next_float;
        h->key = key;
    }
    return 1;
}

/* One event range of the merge: the heads cut to its rows, written from the output row
 * that the kept rows before it in every part give; ranges write disjoint rows (and, in the
 * int columns, disjoint events), so the table is the same bytes for any thread count. */
typedef struct {
    const Head *heads; /* the whole parts */
    Head *work;        /* k heads per range */
    const Cut *cut;
    Py_ssize_t k;
    const Outs *out;
    const IntColumns *ic;
    int *ok; /* per range */
} Ranges;

static void merge_range(void *arg, int b, int ranges) {
    const Ranges *w = arg;
    Head *heads = w->work + (Py_ssize_t)b * w->k;
    int64_t d = 0;
    for (Py_ssize_t p = 0; p < w->k; p++) {
        const Cut *c = w->cut + p * (ranges + 1);
        Head *h = &heads[p];
        *h = w->heads[p];
        h->rows.m = c[b + 1].row;
        h->at = c[b].row;
        const Fields *f = &h->fields; /* the first listed double not before the range */
        Py_ssize_t lo = 0, hi = f->num_floats;
        while (lo < hi) {
            Py_ssize_t mid = lo + (hi - lo) / 2;
            if (f->float_rows[mid] < h->at)
                lo = mid + 1;
            else
                hi = mid;
        }
        h->next_float = lo;
        d += c[b].before;
    }
    w->ok[b] = merge(heads, w->k, d, w->out, w->ic);
}

static PyObject *merge_rows(PyObject *self, PyObject *py_args) {
    PyObject *o_parts, *o_outs, *o_cols;
    long long n;
    int threads = 1;
    if (!PyArg_ParseTuple(py_args, "O!OO!L|i", &PyTuple_Type, &o_parts, &o_outs, &PyTuple_Type,
                          &o_cols, &n, &threads))
        return NULL;
    Py_ssize_t k = PyTuple_GET_SIZE(o_parts), num_cols = PyTuple_GET_SIZE(o_cols);
    /* Ranges of events, not of rows (the rows of one event stay in one range). */
    int ranges = part_count(n > 0 ? (Py_ssize_t)n : 1, threads, TBPROF_MAX_PARTS * 8);
    if (n < ranges) ranges = n > 1 ? (int)n : 1;
    Arg *args = PyMem_Calloc((size_t)(9 * k + 8 + 2 * num_cols + 1), sizeof(Arg));
    Head *heads = PyMem_Calloc((size_t)k + 1, sizeof(Head));
    Head *work = PyMem_Calloc((size_t)(k * ranges) + 1, sizeof(Head));
    Cut *cut = PyMem_Calloc((size_t)(k * (ranges + 1)) + 1, sizeof(Cut));
    int *range_ok = PyMem_Calloc((size_t)ranges, sizeof(int));
    Chunk *chunk = NULL;
    Cut *local = NULL;
    IntColumns ic = {NULL, NULL, NULL};
    PyObject *result = NULL;
    Outs outs;
    if (!args || !heads || !work || !cut || !range_ok) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t p = 0; p < k; p++)
        if (parse_part(PyTuple_GET_ITEM(o_parts, p), args + 9 * p, &heads[p].rows,
                       &heads[p].fields) < 0)
            goto done;
    if (parse_outs(o_outs, args + 9 * k, &outs, n) < 0 ||
        parse_int_columns(o_cols, args + 9 * k + 8, &outs, &ic) < 0)
        goto done;
    Py_ssize_t longest = 0, total = 0;
    for (Py_ssize_t p = 0; p < k; p++)
        if (heads[p].rows.m > longest) longest = heads[p].rows.m;
    int chunks = part_count(longest, threads, TBPROF_MAX_PARTS * 8);
    chunk = PyMem_Calloc((size_t)(k * chunks) + 1, sizeof(Chunk));
    local = PyMem_Calloc((size_t)(k * chunks * (ranges + 1)) + 1, sizeof(Cut));
    if (!chunk || !local) {
        PyErr_NoMemory();
        goto done;
    }
    int ascend, ok = 1;
    Py_BEGIN_ALLOW_THREADS
    Scan scan = {heads, outs.n, ranges, chunks, chunk, local};
    run_parts(scan_chunk, &scan, (int)(k * chunks), threads);
    ascend = parts_ascend(heads, k, &total, cut, ranges, &scan);
    if (ascend == 1 && total == outs.total) {
        Ranges w = {heads, work, cut, k, &outs, &ic, range_ok};
        run_parts(merge_range, &w, ranges, threads);
        for (int b = 0; b < ranges; b++) ok = ok && range_ok[b];
    }
    Py_END_ALLOW_THREADS
    if (ascend < 0 || !ok || (ascend == 1 && total != outs.total)) {
        PyErr_SetString(PyExc_ValueError, "merge_rows: event or code out of range, or wrong total");
        goto done;
    }
    result = PyBool_FromLong(ascend);
done:
    if (args) release(args, (int)(9 * k + 8 + 2 * num_cols));
    PyMem_Free(args);
    PyMem_Free(heads);
    PyMem_Free(work);
    PyMem_Free(cut);
    PyMem_Free(range_ok);
    PyMem_Free(chunk);
    PyMem_Free(local);
    PyMem_Free(ic.column_of);
    PyMem_Free(ic.data);
    PyMem_Free(ic.missing);
    return result;
}
