/* fake_torch._simulated._native, part five: the allocator statistics' queued block events.
 *
 * Mirrors _allocator_stats.Rows (a list of 8-int tuples, the pure core's and the oracle):
 * every allocation and free appends one row of changes, and DeviceStats folds the rows into
 * its numbers when anything reads them (or every FOLD_AT rows). Here a row is 8 C integers
 * in a growing array: appending costs no Python object, where a tuple of eight ints cost
 * ~1.2k instructions, twice per op output. The fold applies the rows in order with the same
 * arithmetic as _allocator_stats.apply_rows (tests/test_native_core.py compares them).
 */
#include "_native.h"

#include <string.h>

typedef struct {
    PyObject_HEAD
    long long (*rows)[ROW_WIDTH];
    Py_ssize_t n, capacity;
} Rows;

int rows_push(PyObject *self, const long long row[ROW_WIDTH]) {
    Rows *q = (Rows *)self;
    if (q->n == q->capacity) {
        Py_ssize_t capacity = q->capacity ? 2 * q->capacity : 64;
        void *grown = PyMem_Realloc(q->rows, (size_t)capacity * sizeof(*q->rows));
        if (grown == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        q->rows = grown;
        q->capacity = capacity;
    }
    memcpy(q->rows[q->n++], row, sizeof(*q->rows));
    return 0;
}

Py_ssize_t rows_count(PyObject *self) { return ((Rows *)self)->n; }

/* One row into v: a rise adds to current and allocated and may raise the peaks (this pool
 * type's, and all pools'), a fall takes from current and adds to freed (_change). `st`: the
 * seven statistics' offsets in v; row[0] the pool type's offset, 0 small or 4 large. */
void apply_row(long long *v, const long long *st, const long long *row) {
    long long k = row[0];
    for (int j = 0; j < 7; j++) {
        long long c = row[j + 1], s = st[j], i = s + k;
        if (c > 0) {
            v[i] += c;
            v[i + 2] += c;
            if (v[i] > v[i + 1])
                v[i + 1] = v[i];
            if (v[s] + v[s + 4] > v[s + 8])
                v[s + 8] = v[s] + v[s + 4];
        } else if (c < 0) {
            v[i] += c;
            v[i + 3] -= c;
        }
    }
}

/* v (a list of NSTATS ints) and event_stats (7 offsets) as C numbers: 0, or -1 with an error */
int read_stats(PyObject *vl, PyObject *stats_t, long long *v, long long *st) {
    if (!PyList_Check(vl) || !PyTuple_Check(stats_t) || PyList_GET_SIZE(vl) != NSTATS ||
        PyTuple_GET_SIZE(stats_t) != 7) {
        PyErr_SetString(PyExc_ValueError, "a fold takes a list of 81 numbers and 7 statistics");
        return -1;
    }
    for (Py_ssize_t i = 0; i < NSTATS; i++) {
        v[i] = PyLong_AsLongLong(PyList_GET_ITEM(vl, i));
        if (v[i] == -1 && PyErr_Occurred())
            return -1;
    }
    for (Py_ssize_t j = 0; j < 7; j++) {
        st[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(stats_t, j));
        if (st[j] < 0 || st[j] + 8 >= NSTATS) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "a statistic out of range");
            return -1;
        }
    }
    return 0;
}

/* v's C numbers back into the list */
int write_stats(PyObject *vl, const long long *v) {
    for (Py_ssize_t i = 0; i < NSTATS; i++) {
        PyObject *o = PyLong_FromLongLong(v[i]);
        if (o == NULL)
            return -1;
        PyList_SetItem(vl, i, o); /* (steals o) */
    }
    return 0;
}

/* A row from Python: a tuple of 8 ints, the first 0 or 4 */
int row_of(PyObject *t, long long *row) {
    if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != ROW_WIDTH) {
        PyErr_Format(PyExc_TypeError, "a statistics row is a tuple of 8 ints, got %R", t);
        return -1;
    }
    for (int j = 0; j < ROW_WIDTH; j++) {
        row[j] = PyLong_AsLongLong(PyTuple_GET_ITEM(t, j));
        if (row[j] == -1 && PyErr_Occurred())
            return -1;
    }
    if (row[0] != 0 && row[0] != 4) {
        PyErr_SetString(PyExc_ValueError, "a row's pool type is 0 or 4");
        return -1;
    }
    return 0;
}

static PyObject *Rows_append(Rows *self, PyObject *t) {
    long long row[ROW_WIDTH];
    if (row_of(t, row) < 0 || rows_push((PyObject *)self, row) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* fold_into(v, event_stats): every row applied to v in order, then the queue emptied. One C
 * call under the GIL: no append can come between the rows applied and the queue emptied. */
static PyObject *Rows_fold_into(Rows *self, PyObject *args) {
    PyObject *vl, *stats_t;
    long long v[NSTATS], st[7];
    if (!PyArg_ParseTuple(args, "OO", &vl, &stats_t) || read_stats(vl, stats_t, v, st) < 0)
        return NULL;
    if (self->n == 0)
        Py_RETURN_NONE;
    for (Py_ssize_t r = 0; r < self->n; r++)
        apply_row(v, st, self->rows[r]);
    self->n = 0;
    if (write_stats(vl, v) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* tolist(): the queued rows as tuples (what the pure Rows holds), for tests and debugging */
static PyObject *Rows_tolist(Rows *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *out = PyList_New(self->n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t r = 0; r < self->n; r++) {
        PyObject *t = int_tuple(self->rows[r], ROW_WIDTH, NULL);
        if (t == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        PyList_SET_ITEM(out, r, t);
    }
    return out;
}

static Py_ssize_t Rows_len(Rows *self) { return self->n; }

static void Rows_dealloc(Rows *self) {
    PyMem_Free(self->rows);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Rows_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "Rows() takes no arguments");
        return NULL;
    }
    Rows *self = (Rows *)type->tp_alloc(type, 0);
    if (self != NULL) {
        self->rows = NULL;
        self->n = self->capacity = 0;
    }
    return (PyObject *)self;
}

static PyMethodDef Rows_methods[] = {
    {"append", (PyCFunction)Rows_append, METH_O, "append(row): queue one block event row"},
    {"fold_into", (PyCFunction)Rows_fold_into, METH_VARARGS,
     "fold_into(v, event_stats): apply every queued row to v in order, then forget them"},
    {"tolist", (PyCFunction)Rows_tolist, METH_NOARGS, "tolist() -> the queued rows as tuples"},
    {NULL}};

static PySequenceMethods Rows_as_sequence = {.sq_length = (lenfunc)Rows_len};

PyTypeObject RowsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.Rows",
    .tp_doc = "The statistics' queued block events (_allocator_stats.Rows): 8 integers a row.",
    .tp_basicsize = sizeof(Rows),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = Rows_new,
    .tp_dealloc = (destructor)Rows_dealloc,
    .tp_methods = Rows_methods,
    .tp_as_sequence = &Rows_as_sequence,
};

int add_rows_type(PyObject *m) {
    return add_type(m, "Rows", &RowsType);
}
