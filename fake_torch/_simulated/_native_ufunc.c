/* fake_torch._simulated._native, part six: a ufunc kernel called with numpy's warnings off.
 *
 * Mirrors the kernels fake_torch/_kernels/_elementwise.py `ufunc_kernel_of` makes in Python
 * (which stay the oracle: tests/test_native_core.py calls both on the same arrays):
 *     def kernel(out, x, y):
 *         token = enter_quiet()          # numpy's error state: "ignore" (a context variable)
 *         try: fn(x, y, out=out)
 *         finally: exit_quiet(token)
 * Every elementwise op's launch runs one; as native code it has no Python frame and sets the
 * context variable through its C API (a third of the kernel's cost was the frame and the
 * call of the variable's methods).
 */
#include "_native.h"

#define MAX_UFUNC_ARGS 8

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;      /* the ufunc */
    PyObject *var;     /* numpy's error-state context variable */
    PyObject *quiet;   /* the error state that ignores everything */
    Py_ssize_t nin;    /* the inputs a call passes after `out` */
} QuietUfunc;

static PyObject *s_out_kwnames; /* ("out",) */

/* kernel(out, *inputs) -> None: fn(*inputs, out=out) with numpy's warnings off */
static PyObject *QuietUfunc_vectorcall(QuietUfunc *self, PyObject *const *args, size_t nargsf,
                                       PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames)) {
        PyErr_SetString(PyExc_TypeError, "a ufunc kernel takes its arrays by position");
        return NULL;
    }
    if (nargs != self->nin + 1) {
        PyErr_Format(PyExc_TypeError, "a ufunc kernel takes out and %zd inputs (%zd given)",
                     self->nin, nargs);
        return NULL;
    }
    PyObject *stack[MAX_UFUNC_ARGS + 1];
    for (Py_ssize_t i = 0; i < self->nin; i++)
        stack[i] = args[i + 1];
    stack[self->nin] = args[0];
    PyObject *token = PyContextVar_Set(self->var, self->quiet);
    if (token == NULL)
        return NULL;
    PyObject *r = PyObject_Vectorcall(self->fn, stack, self->nin, s_out_kwnames);
    /* (reset whatever happened: the error state is the caller's again) */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    int reset = PyContextVar_Reset(self->var, token);
    Py_DECREF(token);
    if (reset < 0) {
        Py_XDECREF(r);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
    if (r == NULL)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_NONE;
}

static PyObject *QuietUfunc_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"fn", "var", "quiet", "nin", NULL};
    PyObject *fn, *var, *quiet;
    Py_ssize_t nin;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO!On:QuietUfunc", kwlist, &fn,
                                     &PyContextVar_Type, &var, &quiet, &nin))
        return NULL;
    if (nin < 1 || nin > MAX_UFUNC_ARGS) {
        PyErr_Format(PyExc_ValueError, "a ufunc kernel takes 1 to %d inputs, not %zd",
                     MAX_UFUNC_ARGS, nin);
        return NULL;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "QuietUfunc's fn must be callable, got %R", fn);
        return NULL;
    }
    QuietUfunc *self = (QuietUfunc *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)QuietUfunc_vectorcall;
    self->fn = Py_NewRef(fn);
    self->var = Py_NewRef(var);
    self->quiet = Py_NewRef(quiet);
    self->nin = nin;
    return (PyObject *)self;
}

static int QuietUfunc_traverse(QuietUfunc *self, visitproc visit, void *arg) {
    Py_VISIT(self->fn);
    Py_VISIT(self->var);
    Py_VISIT(self->quiet);
    return 0;
}

static int QuietUfunc_clear(QuietUfunc *self) {
    Py_CLEAR(self->fn);
    Py_CLEAR(self->var);
    Py_CLEAR(self->quiet);
    return 0;
}

static void QuietUfunc_dealloc(QuietUfunc *self) {
    PyObject_GC_UnTrack(self);
    QuietUfunc_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *QuietUfunc_repr(QuietUfunc *self) {
    return PyUnicode_FromFormat("<quiet ufunc kernel of %R>", self->fn);
}

static PyObject *QuietUfunc_get_fn(QuietUfunc *self, void *Py_UNUSED(closure)) {
    return Py_NewRef(self->fn);
}

static PyGetSetDef QuietUfunc_getset[] = {
    {"fn", (getter)QuietUfunc_get_fn, NULL, "the ufunc", NULL},
    {NULL}};

static PyTypeObject QuietUfuncType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.QuietUfunc",
    .tp_doc = "QuietUfunc(fn, var, quiet, nin): the kernel `out <- fn(*inputs)` run with "
              "numpy's error state `quiet` (var: numpy's error-state context variable).",
    .tp_basicsize = sizeof(QuietUfunc),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = QuietUfunc_new,
    .tp_dealloc = (destructor)QuietUfunc_dealloc,
    .tp_traverse = (traverseproc)QuietUfunc_traverse,
    .tp_clear = (inquiry)QuietUfunc_clear,
    .tp_repr = (reprfunc)QuietUfunc_repr,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(QuietUfunc, vectorcall),
    .tp_getset = QuietUfunc_getset,
};

int add_ufunc_type(PyObject *m) {
    if ((s_out_kwnames = Py_BuildValue("(s)", "out")) == NULL)
        return -1;
    return add_type(m, "QuietUfunc", &QuietUfuncType);
}
