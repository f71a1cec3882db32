/* fake_torch._simulated._native, part three: RLock, the allocator's reentrant lock.
 *
 * The same lock as threading.RLock (acquire(blocking, timeout), release, _is_owned, `with`),
 * whose state C can read: the storage fast path (_native_storage.c) takes it in a few
 * instructions where calling threading.RLock's methods costs more than the rest of a free,
 * and sees at once whether any thread holds it (then it leaves the step to the Python path,
 * which waits for the lock or, on the holding thread, defers the free to `_late`).
 *
 * `owner` and `count` change only with the GIL held, so a thread holding the GIL reads them
 * consistently; the OS lock is what a waiting thread blocks on (with the GIL released). A
 * thread holds the OS lock exactly while count > 0, except for the moment between a waiter
 * getting it and retaking the GIL: then count is 0 but a try of the OS lock fails.
 */
#include "_native.h"

static PyObject *RLock_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    if (PyTuple_GET_SIZE(args) != 0 || (kwds != NULL && PyDict_GET_SIZE(kwds) != 0)) {
        PyErr_SetString(PyExc_TypeError, "RLock() takes no arguments");
        return NULL;
    }
    RLock *self = (RLock *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    self->lock = PyThread_allocate_lock();
    if (self->lock == NULL) {
        Py_DECREF(self);
        PyErr_SetString(PyExc_MemoryError, "cannot allocate a lock");
        return NULL;
    }
    return (PyObject *)self;
}

static void RLock_dealloc(RLock *self) {
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    if (self->lock != NULL) {
        if (self->count > 0) /* (a lock freed while held: release the OS lock first) */
            PyThread_release_lock(self->lock);
        PyThread_free_lock(self->lock);
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

int rlock_take_free(RLock *l) {
    if (l->count > 0 || !PyThread_acquire_lock(l->lock, NOWAIT_LOCK))
        return 0;
    l->owner = PyThread_get_thread_ident();
    l->count = 1;
    return 1;
}

int rlock_try(RLock *l) {
    if (l->count > 0 && l->owner == PyThread_get_thread_ident()) {
        if (l->count == ULONG_MAX)
            return 0;  /* (the Python path raises the overflow) */
        l->count++;
        return 1;
    }
    return rlock_take_free(l);
}

void rlock_give_back(RLock *l) {
    if (--l->count == 0) {
        l->owner = 0;
        PyThread_release_lock(l->lock);
    }
}

/* acquire(blocking=True, timeout=-1): threading.RLock's. */
static PyObject *RLock_acquire(RLock *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"blocking", "timeout", NULL};
    int blocking = 1;
    double timeout = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "|pd:acquire", kwlist, &blocking, &timeout))
        return NULL;
    if (!blocking && timeout != -1) {
        PyErr_SetString(PyExc_ValueError, "can't specify a timeout for a non-blocking call");
        return NULL;
    }
    if (timeout < 0 && timeout != -1) {
        PyErr_SetString(PyExc_ValueError, "timeout value must be a non-negative number");
        return NULL;
    }
    unsigned long me = PyThread_get_thread_ident();
    if (self->count > 0 && self->owner == me) { /* reentrant */
        if (self->count == ULONG_MAX) {
            PyErr_SetString(PyExc_OverflowError, "Internal lock count overflowed");
            return NULL;
        }
        self->count++;
        Py_RETURN_TRUE;
    }
    if (!PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) {
        if (!blocking)
            Py_RETURN_FALSE;
        if (timeout * 1e6 >= (double)PY_TIMEOUT_MAX) {
            PyErr_SetString(PyExc_OverflowError, "timeout value is too large");
            return NULL;
        }
        PY_TIMEOUT_T us = timeout < 0 ? -1 : (PY_TIMEOUT_T)(timeout * 1e6);
        PyLockStatus got;
        Py_BEGIN_ALLOW_THREADS /* (another thread holds it: wait without the GIL) */
        got = PyThread_acquire_lock_timed(self->lock, us, 0);
        Py_END_ALLOW_THREADS
        if (got != PY_LOCK_ACQUIRED)
            Py_RETURN_FALSE;
    }
    self->owner = me;
    self->count = 1;
    Py_RETURN_TRUE;
}

static PyObject *RLock_release(RLock *self, PyObject *Py_UNUSED(ignored)) {
    if (self->count == 0 || self->owner != PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "cannot release un-acquired lock");
        return NULL;
    }
    if (--self->count == 0) {
        self->owner = 0;
        PyThread_release_lock(self->lock);
    }
    Py_RETURN_NONE;
}

static PyObject *RLock_exit(RLock *self, PyObject *args) {
    return RLock_release(self, NULL);
}

static PyObject *RLock_is_owned(RLock *self, PyObject *Py_UNUSED(ignored)) {
    return PyBool_FromLong(self->count > 0 && self->owner == PyThread_get_thread_ident());
}

static PyObject *RLock_repr(RLock *self) {
    return PyUnicode_FromFormat("<%s %s object owner=%lu count=%lu at %p>",
                                self->count ? "locked" : "unlocked", Py_TYPE(self)->tp_name,
                                self->owner, self->count, self);
}

static PyMethodDef RLock_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))RLock_acquire, METH_VARARGS | METH_KEYWORDS,
     "acquire(blocking=True, timeout=-1) -> bool"},
    {"release", (PyCFunction)RLock_release, METH_NOARGS, "release() -> None"},
    {"_is_owned", (PyCFunction)RLock_is_owned, METH_NOARGS,
     "Whether the calling thread holds the lock."},
    {"__enter__", (PyCFunction)(void (*)(void))RLock_acquire, METH_VARARGS | METH_KEYWORDS,
     "acquire()"},
    {"__exit__", (PyCFunction)RLock_exit, METH_VARARGS, "release()"},
    {NULL}};

PyTypeObject RLockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.RLock",
    .tp_doc = "threading.RLock's interface, its state readable from C (the allocator's lock).",
    .tp_basicsize = sizeof(RLock),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = RLock_new,
    .tp_dealloc = (destructor)RLock_dealloc,
    .tp_repr = (reprfunc)RLock_repr,
    .tp_weaklistoffset = offsetof(RLock, weakreflist),
    .tp_methods = RLock_methods,
};

int add_lock_type(PyObject *m) {
    return add_type(m, "RLock", &RLockType);
}
