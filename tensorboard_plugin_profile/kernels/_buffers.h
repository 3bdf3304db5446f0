/* Buffer arguments of the analysis extensions (in kernels/, preprocessing/, analysis/):
 * a held Py_buffer, checked for item size and count, and released in bulk on every exit
 * path. Included by each (one compilation unit each). */
#ifndef TBPROF_ANALYSIS_BUFFERS_H
#define TBPROF_ANALYSIS_BUFFERS_H

typedef struct {
    Py_buffer view;
    int held;
} Arg;

/* A C-contiguous buffer of n items of `size` bytes (n < 0: any count; size <= 0: any item). */
static int get_buffer(PyObject *obj, Arg *arg, int writable, Py_ssize_t size, Py_ssize_t n,
                      const char *what) {
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (writable ? PyBUF_WRITABLE : 0);
    if (PyObject_GetBuffer(obj, &arg->view, flags) < 0) return -1;
    arg->held = 1;
    if (size > 0 && (arg->view.itemsize != size || (n >= 0 && arg->view.len != n * size))) {
        PyErr_Format(PyExc_ValueError, "%s: expected %zd values of %zd bytes", what, n, size);
        return -1;
    }
    return 0;
}

static void release(Arg *args, int count) {
    for (int i = 0; i < count; i++) {
        if (args[i].held) PyBuffer_Release(&args[i].view);
        args[i].held = 0;
    }
}

#endif
