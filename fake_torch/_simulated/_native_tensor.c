/* fake_torch._simulated._native, part seven: an op output's Tensor object made without a
 * Python frame.
 *
 * Mirrors Tensor._make and Tensor._set (fake_torch/_tensor.py), which stay the oracle
 * (tests/test_native_core.py compares the two objects' attributes, in order):
 *     t = object.__new__(Tensor)
 *     t._a, t._dtype, t._device, t._storage = a, dt, dev, storage
 *     t._requires_grad, t.grad = False, None
 * for the common case only: the dtype known, the storage given, and no watcher set (the
 * sanitizer's `_watch`, read from the tensor module at each call). Otherwise the Python
 * `_make` runs. The attributes are set in `_set`'s order: a Tensor's values are freed in
 * that order, which the allocator's kept views rely on (the array before its storage).
 */
#include "_native.h"

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *cls;      /* Tensor */
    PyObject *globals;  /* the tensor module's __dict__ (its `_watch`) */
    PyObject *make;     /* the Python Tensor._make: every other case */
} TensorMaker;

static PyObject *s_a, *s_dtype, *s_device, *s_storage, *s_requires_grad, *s_grad, *s_watch,
    *empty_tuple;

/* maker(a, dev, storage, dt) -> Tensor */
static PyObject *TensorMaker_vectorcall(TensorMaker *self, PyObject *const *args,
                                        size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *watch = PyDict_GetItemWithError(self->globals, s_watch);
    if (nargs != 4 || kwnames != NULL || IS_NONE(args[2]) || IS_NONE(args[3]) ||
        (watch != NULL && watch != Py_None) || PyErr_Occurred())
        return PyErr_Occurred() ? NULL : PyObject_Vectorcall(self->make, args, nargsf, kwnames);
    PyTypeObject *cls = (PyTypeObject *)self->cls;
    PyObject *t = PyBaseObject_Type.tp_new(cls, empty_tuple, NULL); /* object.__new__(cls) */
    if (t == NULL)
        return NULL;
    if (PyObject_SetAttr(t, s_a, args[0]) < 0 || PyObject_SetAttr(t, s_dtype, args[3]) < 0 ||
        PyObject_SetAttr(t, s_device, args[1]) < 0 ||
        PyObject_SetAttr(t, s_storage, args[2]) < 0 ||
        PyObject_SetAttr(t, s_requires_grad, Py_False) < 0 ||
        PyObject_SetAttr(t, s_grad, Py_None) < 0) {
        Py_DECREF(t);
        return NULL;
    }
    return t;
}

static PyObject *TensorMaker_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"cls", "globals", "make", NULL};
    PyObject *cls, *globals, *make;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!O!O:TensorMaker", kwlist, &PyType_Type,
                                     &cls, &PyDict_Type, &globals, &make))
        return NULL;
    TensorMaker *self = (TensorMaker *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->vectorcall = (vectorcallfunc)TensorMaker_vectorcall;
    self->cls = Py_NewRef(cls);
    self->globals = Py_NewRef(globals);
    self->make = Py_NewRef(make);
    return (PyObject *)self;
}

static int TensorMaker_traverse(TensorMaker *self, visitproc visit, void *arg) {
    Py_VISIT(self->cls);
    Py_VISIT(self->globals);
    Py_VISIT(self->make);
    return 0;
}

static int TensorMaker_clear(TensorMaker *self) {
    Py_CLEAR(self->cls);
    Py_CLEAR(self->globals);
    Py_CLEAR(self->make);
    return 0;
}

static void TensorMaker_dealloc(TensorMaker *self) {
    PyObject_GC_UnTrack(self);
    TensorMaker_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject TensorMakerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.TensorMaker",
    .tp_doc = "TensorMaker(cls, globals, make): maker(a, dev, storage, dt) is "
              "make(a, dev, storage, dt) (Tensor._make) without a Python frame.",
    .tp_basicsize = sizeof(TensorMaker),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_new = TensorMaker_new,
    .tp_dealloc = (destructor)TensorMaker_dealloc,
    .tp_traverse = (traverseproc)TensorMaker_traverse,
    .tp_clear = (inquiry)TensorMaker_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(TensorMaker, vectorcall),
};

int add_tensor_type(PyObject *m) {
#define INTERN(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return -1;
    INTERN(s_a, "_a")
    INTERN(s_dtype, "_dtype")
    INTERN(s_device, "_device")
    INTERN(s_storage, "_storage")
    INTERN(s_requires_grad, "_requires_grad")
    INTERN(s_grad, "grad")
    INTERN(s_watch, "_watch")
    if ((empty_tuple = PyTuple_New(0)) == NULL)
        return -1;
    return add_type(m, "TensorMaker", &TensorMakerType);
}
