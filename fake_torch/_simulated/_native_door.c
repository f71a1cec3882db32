/* fake_torch._simulated._native, part four: the door's eager branch as native code.
 *
 * What it mirrors, step for step, is the first branch of fake_torch/_simulated/_dispatch.py
 * `launch` (an eager kernel on the simulated cuda device, nobody watching) and what it calls:
 *   _counter.count_launch      (op, kind) onto the launch counter's queue, folded at FOLD_AT
 *   _cost.kernel_ns            a light kernel's roofline: max(bytes / HBM bandwidth,
 *                              output elements / FP32 peak, MIN_KERNEL_NS); a heavy one's
 *                              (matmul, convolution, attention) by calling kernel_ns itself
 *   _timeline.launch_kernel    under the timeline's lock: the correlation id, the host clock
 *     and _place / _queue_call   advanced by the launch's CPU cost, the stream's clock and the
 *                              busy time advanced by the kernel, the kernel run now (the device
 *                              is idle for it) or queued (Timeline._wait_call)
 * `Door(launch)` is a callable with `launch`'s signature. It takes that branch only when every
 * rare case is ruled out first (another mode, a fused block, observers, input checks, a
 * per-thread tally, a profiler listening, queued work, torch.cuda._sleep, an empty output,
 * arguments of an unusual type, the timeline's lock held by another thread); otherwise it calls
 * `launch`, the pure Python, which stays the oracle (tests/test_native_launch.py runs random
 * launch sequences through both and compares counts and simulated times exactly).
 *
 * All state stays where the Python keeps it (the Timeline's attributes, the counter's queue,
 * the modules' globals), so the Python that reads or swaps it (a fresh machine, a new GPU spec,
 * a test's constants) sees one representation whichever core runs. What may change between
 * launches is read at each (the machine in use, the cost figures, the clocks, the current
 * device and stream); what a machine or a thread sets once is found once per machine or thread
 * (see Door). The float arithmetic is the Python's, operation by operation, in C doubles.
 *
 * The timeline's lock, when this core is in use, is the allocator's native RLock
 * (_native_lock.c): the step takes it inline, where calling threading.RLock's methods was a
 * third of its time.
 */
#include "_native.h"

#define COUNT_FOLD_AT 4096   /* _counter._FOLD_AT */
#define MAX_ARGS 32    /* a launch with more buffers than this takes the Python path */

/* interned names, made once at import */
static PyObject *s_MACHINE, *s_timeline,
    *s_devices, *s_thread, *s_index, *s_current, *s_handle, *s_dict, *s_modes, *s_fused,
    *s_correlation, *s_host_ns, *s_busy_ns, *s_ready, *s_heap, *s_seq, *s_listeners, *s_lock,
    *s_acquire, *s_release, *s_nbytes, *s_size, *s_gpus_current, *s_hbm, *s_fp32, *s_EAGER_NS,
    *s_GAP_NS, *s_MIN_NS, *s_HEAVY, *s_sleep, *s_kernel, *s_on_cuda, *s_kind, *s_source,
    *s_params, *s_queued, *s_per_thread, *s_fold, *s_wait_call, *s_kernel_ns;

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *launch;        /* the pure-Python door: every case this one does not take */
    /* _dispatch's registries and thread state, and the counter's queue: objects the Python
     * mutates in place and never rebinds */
    PyObject *local, *eager, *input_checks, *observers, *counter, *queued;
    /* module __dict__s read on every call (a fresh machine, a chosen GPU, a test's figures) */
    PyObject *machine, *cost, *gpus;
    /* the exact classes whose instances' __dict__ this reads (a subclass: Python) */
    PyObject *machine_type, *device_type, *timeline_type, *ndarray;
    PyObject *spec;          /* the GPU spec the two figures below were read from */
    double hbm, fp32;
    int spec_ok;
    PyObject *count_key;     /* the last (op, "kernel") queued: reused while the op repeats */
    PyObject *dict;          /* __dict__ (__doc__, __wrapped__, ...) */
    /* What the step reads of the machine in use, found once per machine: a Machine sets its
     * timeline, devices and thread-local `thread`, a device its thread-local `_current`, a
     * Timeline its lock, listeners, _heap, ready and _seq once, when made, and never rebinds
     * them. Valid while `machine_ref` (a weak reference) still reaches the machine in use;
     * borrowed from it, but for `currents`. */
    PyObject *machine_ref;
    PyObject *timeline, *tdict, *thread, *lock, *listeners, *heap, *ready, *seq;
    PyObject *currents;      /* each device's `_current` (a tuple) */
    /* The per-thread attribute dicts of the thread-locals the step reads (_dispatch._local,
     * the machine's `thread`, the current device's `_current`), for the thread that launched
     * last (its thread state's id, never reused; 0: none): a thread-local's dict for a thread
     * is made once and lives as long as the thread and the local, so these are borrowed. */
    unsigned long long thread_id;
    PyObject *local_dict, *thread_dict, *current_dict;
    Py_ssize_t current_index;  /* the device whose `_current` dict that is; -1: none */
} Door;

/* The RLock's own C functions, found once per lock type: acquire(False) and release() called
 * without the method lookup and call machinery (a third of this step's cost otherwise). */
static PyTypeObject *lock_type;
static PyCFunctionWithKeywords lock_acquire;
static PyCFunction lock_release;
static PyObject *args_false;  /* (False,) */

/* A float the Python keeps (an exact float, so C doubles do the Python's arithmetic); -1 and
 * no exception when it is something else (the Python path then handles it). */
static int as_double(PyObject *o, double *out) {
    if (o == NULL || !PyFloat_CheckExact(o))
        return -1;
    *out = PyFloat_AS_DOUBLE(o);
    return 0;
}

static PyObject *get_item(PyObject *dict, PyObject *key) {  /* borrowed, NULL: absent */
    return PyDict_GetItemWithError(dict, key);
}

/* The spec's bandwidth and FP32 peak, read once per spec object (a frozen dataclass); -1 when
 * they are not floats (the Python path then computes). */
static int spec_figures(Door *self, PyObject *spec) {
    if (spec != self->spec) {
        PyObject *hbm = PyObject_GetAttr(spec, s_hbm), *fp32 = PyObject_GetAttr(spec, s_fp32);
        self->spec_ok = hbm != NULL && fp32 != NULL && as_double(hbm, &self->hbm) == 0
                        && as_double(fp32, &self->fp32) == 0;
        Py_XDECREF(hbm);
        Py_XDECREF(fp32);
        PyErr_Clear();
        Py_XSETREF(self->spec, Py_NewRef(spec));
    }
    return self->spec_ok ? 0 : -1;
}

/* An int attribute of an array (nbytes, size) as long long; -1 when it is not one. */
static long long array_int(PyObject *a, PyObject *name) {
    PyObject *v = PyObject_GetAttr(a, name);
    if (v == NULL) {
        PyErr_Clear();
        return -1;
    }
    long long n = PyLong_CheckExact(v) ? PyLong_AsLongLong(v) : -1;
    Py_DECREF(v);
    if (n < 0 || n > (1LL << 53))  /* beyond a double's exact ints: the Python computes it */
        PyErr_Clear(), n = -1;
    return n;
}

/* _cost.kernel_ns for a light kernel; -1 when the op needs the Python's (heavy, _sleep, a list
 * of arrays among the inputs, an output that is not an array). */
static double light_ns(Door *self, PyObject *op, PyObject *outs, PyObject *inputs,
                       double min_ns, PyObject *heavy, long long n_out) {
    int r = PySet_Contains(heavy, op);
    if (r != 0) {  /* heavy: cached or by FLOPs, in Python (see heavy_ns) */
        PyErr_Clear();
        return r > 0 ? -2 : -1;
    }
    if (op == s_sleep || (PyUnicode_GET_LENGTH(op) == 6 && PyUnicode_Compare(op, s_sleep) == 0))
        return -1;  /* torch.cuda._sleep: cycles over the clock */
    long long nbytes = 0, n;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(outs); i++) {  /* every buffer read or written */
        PyObject *a = PyTuple_GET_ITEM(outs, i);
        if (!PyObject_TypeCheck(a, (PyTypeObject *)self->ndarray)
            || (n = array_int(a, s_nbytes)) < 0)
            return -1;
        nbytes += n;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(inputs); i++) {
        PyObject *x = PyTuple_GET_ITEM(inputs, i);
        if (PyObject_TypeCheck(x, (PyTypeObject *)self->ndarray)) {
            if ((n = array_int(x, s_nbytes)) < 0)
                return -1;
            nbytes += n;
        } else if (PyList_Check(x) || PyTuple_Check(x)) {  /* arrays in a list: Python */
            return -1;
        }  /* a scalar moves nothing */
    }
    if (nbytes > (1LL << 53))
        return -1;
    /* memory_ns = nbytes / hbm * 1e9; one operation per output element; the floor */
    double memory_ns = (double)nbytes / self->hbm;
    memory_ns = memory_ns * 1e9;
    double compute_ns = (double)n_out / self->fp32;
    compute_ns = compute_ns * 1e9;
    double ns = memory_ns;  /* max(a, b, c): the first of the largest */
    if (compute_ns > ns)
        ns = compute_ns;
    if (min_ns > ns)
        ns = min_ns;
    return ns;
}

static PyObject *fall_back(Door *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    return PyObject_Vectorcall(self->launch, args, nargsf, kwnames);
}

/* A heavy kernel's time (a matmul's, a convolution's, attention's): _cost.kernel_ns itself,
 * the Python's lookup by shapes and dtypes (or its FLOPs), called before anything is counted;
 * -1 and no exception when it raises (the Python path then counts and raises the same). */
static double heavy_ns(PyObject *cost, PyObject *op, PyObject *outs, PyObject *inputs,
                       PyObject *params) {
    PyObject *fn = get_item(cost, s_kernel_ns);
    if (fn == NULL) {
        PyErr_Clear();
        return -1;
    }
    PyObject *p = params != NULL ? Py_NewRef(params) : PyDict_New();
    if (p == NULL) {
        PyErr_Clear();
        return -1;
    }
    PyObject *argv[] = {op, s_kernel, outs, inputs, p};
    PyObject *r = PyObject_Vectorcall(fn, argv, 5, NULL);
    Py_DECREF(p);
    double ns;
    if (r == NULL || as_double(r, &ns) < 0 || !(ns >= 0)) {
        Py_XDECREF(r);
        PyErr_Clear();
        return -1;
    }
    Py_DECREF(r);
    return ns;
}

/* The lock of the timeline, taken without blocking (1), or held by another thread (0). */
static int try_lock(PyObject *lock) {
    if (Py_IS_TYPE(lock, &RLockType))  /* this core's own lock: taken inline */
        return rlock_try((RLock *)lock);
    if (Py_TYPE(lock) != lock_type) {  /* a new lock type: its methods, if they are C's */
        PyObject *a = _PyType_Lookup(Py_TYPE(lock), s_acquire);
        PyObject *r = _PyType_Lookup(Py_TYPE(lock), s_release);
        lock_type = Py_TYPE(lock);
        lock_acquire = NULL;
        lock_release = NULL;
        if (a != NULL && r != NULL && Py_IS_TYPE(a, &PyMethodDescr_Type)
            && Py_IS_TYPE(r, &PyMethodDescr_Type)
            && ((PyMethodDescrObject *)a)->d_method->ml_flags == (METH_VARARGS | METH_KEYWORDS)
            && ((PyMethodDescrObject *)r)->d_method->ml_flags == METH_NOARGS) {
            lock_acquire = (PyCFunctionWithKeywords)(void (*)(void))
                ((PyMethodDescrObject *)a)->d_method->ml_meth;
            lock_release = ((PyMethodDescrObject *)r)->d_method->ml_meth;
        }
    }
    PyObject *got = lock_acquire ? lock_acquire(lock, args_false, NULL)
                                 : PyObject_CallMethodOneArg(lock, s_acquire, Py_False);
    if (got == NULL)
        return -1;
    int r = got == Py_True;
    Py_DECREF(got);
    return r;
}

static void unlock(PyObject *lock) {  /* keeps a pending exception */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (Py_IS_TYPE(lock, &RLockType)) {  /* (held by this thread: it cannot fail) */
        rlock_give_back((RLock *)lock);
        PyErr_Restore(type, value, tb);
        return;
    }
    PyObject *r = lock_release && Py_TYPE(lock) == lock_type ? lock_release(lock, NULL)
                                                               : PyObject_CallMethodNoArgs(lock, s_release);
    Py_XDECREF(r);
    if (type != NULL) {
        PyErr_Clear();
        PyErr_Restore(type, value, tb);
    }
}

/* An instance's attribute dict when it is of exactly `type` (a new reference), else NULL and
 * no exception. Its plain attributes are that dict's items: reading them there skips the
 * attribute machinery. */
static PyObject *dict_of(PyObject *obj, PyObject *type) {
    if (obj == NULL || (PyObject *)Py_TYPE(obj) != type)
        return NULL;
    PyObject *d = PyObject_GenericGetDict(obj, NULL);
    if (d == NULL || !PyDict_CheckExact(d)) {
        PyErr_Clear();
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

/* The machine's part of the step, found anew (a fresh machine); -1 (no exception) when it is
 * not of the shape the step knows (a subclass, ...): the Python path then runs. */
static int find_machine(Door *self, PyObject *machine) {
    Py_CLEAR(self->machine_ref);
    Py_CLEAR(self->currents);
    self->thread_dict = NULL;  /* (its thread-locals are the new machine's) */
    self->current_index = -1;
    PyObject *mdict = dict_of(machine, self->machine_type), *tdict = NULL, *currents = NULL;
    if (mdict == NULL)
        return -1;
    PyObject *timeline = get_item(mdict, s_timeline), *devices = get_item(mdict, s_devices);
    PyObject *thread = get_item(mdict, s_thread);
    if (timeline == NULL || thread == NULL || devices == NULL || !PyTuple_CheckExact(devices)
        || (tdict = dict_of(timeline, self->timeline_type)) == NULL)
        goto fail;
    PyObject *listeners = get_item(tdict, s_listeners), *heap = get_item(tdict, s_heap);
    PyObject *ready = get_item(tdict, s_ready), *seq = get_item(tdict, s_seq);
    PyObject *lock = get_item(tdict, s_lock);
    if (listeners == NULL || !PyList_CheckExact(listeners) || heap == NULL
        || !PyList_CheckExact(heap) || ready == NULL || !PyDict_CheckExact(ready) || seq == NULL
        || lock == NULL || (currents = PyTuple_New(PyTuple_GET_SIZE(devices))) == NULL)
        goto fail;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(devices); i++) {
        PyObject *ddict = dict_of(PyTuple_GET_ITEM(devices, i), self->device_type);
        PyObject *current = ddict ? get_item(ddict, s_current) : NULL;
        Py_XDECREF(ddict);
        if (current == NULL)
            goto fail;
        PyTuple_SET_ITEM(currents, i, Py_NewRef(current));
    }
    if ((self->machine_ref = PyWeakref_NewRef(machine, NULL)) == NULL)
        goto fail;
    self->timeline = timeline, self->tdict = tdict, self->thread = thread, self->lock = lock;
    self->listeners = listeners, self->heap = heap, self->ready = ready, self->seq = seq;
    self->currents = currents;
    Py_DECREF(tdict);  /* (the timeline holds it) */
    Py_DECREF(mdict);
    return 0;
fail:
    PyErr_Clear();
    Py_XDECREF(currents);
    Py_XDECREF(tdict);
    Py_DECREF(mdict);
    return -1;
}

/* A thread-local's attribute dict for the calling thread (borrowed: see Door.thread_id). */
static PyObject *thread_dict_of(PyObject *local) {
    PyObject *d = PyObject_GetAttr(local, s_dict);
    if (d == NULL || !PyDict_CheckExact(d)) {
        PyErr_Clear();
        Py_XDECREF(d);
        return NULL;
    }
    Py_DECREF(d);  /* (the thread's state holds it) */
    return d;
}

/* The eager step. 1: done; 0: not taken, nothing changed (the Python path runs); -1: error. */
static int eager_step(Door *self, PyObject *op, PyObject *kernel, PyObject *outs,
                      PyObject *inputs, PyObject *params) {
    /* --- the door's conditions (_dispatch.launch's first `if`): nobody watching */
    if (!PyList_CheckExact(self->input_checks) || PyList_GET_SIZE(self->input_checks)
        || !PyList_CheckExact(self->observers) || PyList_GET_SIZE(self->observers))
        return 0;  /* (an input check or an observer sees every launch: Python) */
    unsigned long long thread_id = PyThreadState_GetID(PyThreadState_Get());
    if (thread_id != self->thread_id) {  /* another thread than the last to launch */
        self->thread_id = 0;
        self->current_index = -1;
        if ((self->local_dict = thread_dict_of(self->local)) == NULL)
            return 0;
        self->thread_dict = NULL;  /* (found with the machine, below) */
        self->thread_id = thread_id;
    }
    PyObject *ldict = self->local_dict;  /* this thread's door state */
    int result = 0;
    PyObject *handle = NULL, *lock = NULL, *correlation = NULL;
    PyObject *modes = get_item(ldict, s_modes), *fused = get_item(ldict, s_fused);
    if (modes == NULL || !PyList_CheckExact(modes) || PyList_GET_SIZE(modes) == 0
        || PyList_GET_ITEM(modes, PyList_GET_SIZE(modes) - 1) != self->eager
        || fused == NULL || !PyList_CheckExact(fused) || PyList_GET_SIZE(fused))
        goto done;  /* another mode (capture, trace) or inside a fused kernel */

    /* --- the counter: a per-thread tally is counted in Python */
    PyObject *per_thread = get_item(((PyTypeObject *)self->counter)->tp_dict, s_per_thread);
    if (per_thread != Py_False || !PyList_CheckExact(self->queued))
        goto done;

    /* --- an empty output launches nothing: Python decides which */
    long long n_out = 0;
    if (PyTuple_GET_SIZE(outs)) {
        if ((n_out = array_int(PyTuple_GET_ITEM(outs, 0), s_size)) <= 0)
            goto done;
    }
    if (PyTuple_GET_SIZE(outs) + PyTuple_GET_SIZE(inputs) > MAX_ARGS)
        goto done;

    /* --- the cost model's figures (module globals: a test may set them) */
    double eager_ns, gap_ns, min_ns;
    PyObject *c = self->cost, *spec = get_item(self->gpus, s_gpus_current);
    PyObject *heavy = get_item(c, s_HEAVY);
    if (as_double(get_item(c, s_EAGER_NS), &eager_ns) || as_double(get_item(c, s_GAP_NS), &gap_ns)
        || as_double(get_item(c, s_MIN_NS), &min_ns) || heavy == NULL || spec == NULL
        || spec == Py_None || spec_figures(self, spec))
        goto done;  /* (no spec chosen yet: _gpus.current() chooses it, in Python) */
    double ns = light_ns(self, op, outs, inputs, min_ns, heavy, n_out);
    if (ns == -2 && (ns = heavy_ns(c, op, outs, inputs, params)) < 0)
        goto done;
    if (ns < 0)
        goto done;

    /* --- the machine: the timeline and the current stream (devices[thread.index]._current) */
    PyObject *machine = get_item(self->machine, s_MACHINE);
    if (machine == NULL)
        goto done;
    if ((self->machine_ref == NULL || PyWeakref_GET_OBJECT(self->machine_ref) != machine)
        && find_machine(self, machine) < 0)
        goto done;
    /* this thread's current device, and its current stream there (thread-locals) */
    if (self->thread_dict == NULL && (self->thread_dict = thread_dict_of(self->thread)) == NULL)
        goto done;
    PyObject *index = get_item(self->thread_dict, s_index);
    if (index == NULL) {  /* never set on this thread: the class's default (a plain int) */
        index = _PyType_Lookup(Py_TYPE(self->thread), s_index);
        if (index == NULL || Py_TYPE(index)->tp_descr_get != NULL)
            goto done;
    }
    Py_ssize_t i = PyLong_CheckExact(index) ? PyLong_AsSsize_t(index) : -1;
    if (i < 0 || i >= PyTuple_GET_SIZE(self->currents)) {
        PyErr_Clear();
        goto done;  /* (the Python raises what is wrong) */
    }
    if (i != self->current_index) {
        self->current_index = -1;
        self->current_dict = thread_dict_of(PyTuple_GET_ITEM(self->currents, i));
        if (self->current_dict == NULL)
            goto done;
        self->current_index = i;
    }
    handle = get_item(self->current_dict, s_handle);
    if (handle == NULL) {
        PyErr_Clear();
        goto done;
    }
    Py_INCREF(handle);
    PyObject *tdict = self->tdict, *ready = self->ready, *seq = self->seq;

    /* --- the timeline's lock: a Python-level timeline call on another thread holds it */
    lock = Py_NewRef(self->lock);
    int locked = try_lock(lock);
    if (locked < 0) {
        PyErr_Clear();
        goto done;
    }
    if (!locked)
        goto done;  /* the Python path waits for it */

    /* under the lock: a profiler listening, or queued work to drain first, is Python's */
    double host, busy, ready_t = 0.0;
    PyObject *ready_o = get_item(ready, handle);
    if (!(!PyList_GET_SIZE(self->listeners) && !PyList_GET_SIZE(self->heap)
          && as_double(get_item(tdict, s_host_ns), &host) == 0
          && as_double(get_item(tdict, s_busy_ns), &busy) == 0
          && (ready_o == NULL || as_double(ready_o, &ready_t) == 0))) {
        PyErr_Clear();
        unlock(lock);
        goto done;
    }
    int had_ready = ready_o != NULL;
    Py_INCREF(ready);
    Py_INCREF(seq);

    /* --- from here on the launch happens: count it (count_launch's queue) */
    PyObject *key = self->count_key;
    if (key == NULL || PyTuple_GET_ITEM(key, 0) != op) {  /* (a new op: a new key) */
        key = PyTuple_Pack(2, op, s_kernel);
        if (key == NULL)
            goto fail;
        Py_XSETREF(self->count_key, key);
    }
    if (PyList_Append(self->queued, key) < 0)
        goto fail;

    /* the host call: its correlation id, the host clock past the launch's CPU cost */
    correlation = PyIter_Next(seq);
    if (correlation == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "the timeline's sequence ended");
        goto fail;
    }
    host = host + eager_ns;
    /* _place: the kernel starts when the host call ends, or the stream's work before it ends
     * (plus the queue gap); the stream is busy until it ends; the device's busy time */
    double start = host;
    if (had_ready) {
        double after = ready_t + gap_ns;
        if (!(after <= host))
            start = after;
    }
    double end = start + ns;
    busy = busy + ns;
    PyObject *v;
    if ((v = PyFloat_FromDouble(host)) == NULL || PyDict_SetItem(tdict, s_host_ns, v) < 0)
        goto fail_v;
    Py_DECREF(v);
    if ((v = PyFloat_FromDouble(end)) == NULL || PyDict_SetItem(ready, handle, v) < 0)
        goto fail_v;
    Py_DECREF(v);
    if ((v = PyFloat_FromDouble(busy)) == NULL || PyDict_SetItem(tdict, s_busy_ns, v) < 0)
        goto fail_v;
    Py_DECREF(v);

    /* the kernel: now when the device is idle for it and nothing is queued (it changes
     * nothing), else queued behind the stream's work (_queue_call's else, in Python) */
    PyObject *argv[MAX_ARGS];
    Py_ssize_t n = 0;
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(outs); k++)
        argv[n++] = PyTuple_GET_ITEM(outs, k);
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(inputs); k++)
        argv[n++] = PyTuple_GET_ITEM(inputs, k);
    PyObject *r;
    if (start <= host) {
        if (params == NULL || PyDict_GET_SIZE(params) == 0)
            r = PyObject_Vectorcall(kernel, argv, n, NULL);
        else
            r = PyObject_VectorcallDict(kernel, argv, n, params);
    } else {
        PyObject *call_args = PyTuple_New(n);
        PyObject *p = params != NULL ? Py_NewRef(params) : PyDict_New();
        PyObject *ns_o = PyFloat_FromDouble(ns);
        PyObject *timeline = self->timeline;
        r = NULL;
        if (call_args != NULL && p != NULL && ns_o != NULL) {
            for (Py_ssize_t k = 0; k < n; k++)
                PyTuple_SET_ITEM(call_args, k, Py_NewRef(argv[k]));
            PyObject *wargs[] = {timeline, op, s_kernel, kernel, call_args, p, ns_o, handle};
            Py_INCREF(timeline);  /* (held while its Python runs) */
            r = PyObject_VectorcallMethod(s_wait_call, wargs, 8, NULL);
            Py_DECREF(timeline);
        }
        Py_XDECREF(call_args);
        Py_XDECREF(p);
        Py_XDECREF(ns_o);
    }
    if (r == NULL)
        goto fail;
    Py_DECREF(r);
    unlock(lock);
    Py_DECREF(ready);
    Py_DECREF(seq);

    /* the launch underway's correlation id, for this thread (local.correlation) */
    if (PyDict_SetItem(ldict, s_correlation, correlation) < 0) {
        result = -1;
        goto done;
    }
    /* the counter's queue folded in when it grows (after the timeline's lock: the fold takes
     * the counter's) */
    if (PyList_GET_SIZE(self->queued) >= COUNT_FOLD_AT) {
        PyObject *f = PyObject_CallMethodNoArgs(self->counter, s_fold);
        if (f == NULL) {
            result = -1;
            goto done;
        }
        Py_DECREF(f);
    }
    result = 1;
    goto done;

fail_v:
    Py_XDECREF(v);
fail:
    unlock(lock);
    Py_DECREF(ready);
    Py_DECREF(seq);
    result = -1;
done:
    Py_XDECREF(correlation);
    Py_XDECREF(lock);
    Py_XDECREF(handle);
    return result;
}

/* Door(...)(op, kernel, outs, inputs, params=None, *, on_cuda, kind="kernel", source=None) */
static PyObject *Door_vectorcall(Door *self, PyObject *const *args, size_t nargsf,
                                 PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 4 || nargs > 5)
        return fall_back(self, args, nargsf, kwnames);
    PyObject *params = nargs == 5 ? args[4] : NULL, *on_cuda = NULL, *kind = NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
        if (name == s_on_cuda)
            on_cuda = value;
        else if (name == s_kind)
            kind = value;
        else if (name == s_params && params == NULL)
            params = value;
        else if (name != s_source)  /* (what a graph replays: not this branch's business) */
            return fall_back(self, args, nargsf, kwnames);
    }
    PyObject *op = args[0], *outs = args[2], *inputs = args[3];
    if (on_cuda != Py_True || (kind != NULL && (!PyUnicode_CheckExact(kind)
                                                 || PyUnicode_Compare(kind, s_kernel) != 0))
        || !PyUnicode_CheckExact(op) || !PyTuple_CheckExact(outs) || !PyTuple_CheckExact(inputs)
        || (params != NULL && params != Py_None && !PyDict_CheckExact(params)))
        return fall_back(self, args, nargsf, kwnames);
    int r = eager_step(self, op, args[1], outs, inputs, params == Py_None ? NULL : params);
    if (r < 0)
        return NULL;
    if (r == 0)
        return fall_back(self, args, nargsf, kwnames);
    Py_RETURN_NONE;
}

static PyObject *Door_call(Door *self, PyObject *args, PyObject *kwargs) {
    return PyVectorcall_Call((PyObject *)self, args, kwargs);
}

#define DOOR_FIELDS(X) X(launch) X(local) X(eager) X(input_checks) X(observers) X(counter) \
    X(queued) X(machine) X(cost) X(gpus) X(machine_type) X(device_type) X(timeline_type) \
    X(ndarray) X(spec) X(count_key) X(dict) X(machine_ref) X(currents)

static int Door_init(Door *self, PyObject *args, PyObject *kwds) {
    static char *names[] = {"launch", "local", "eager", "input_checks", "observers", "counter",
                            "machine", "cost", "gpus", "machine_type", "device_type",
                            "timeline_type", "ndarray", NULL};
    PyObject *launch, *local, *eager, *input_checks, *observers, *counter, *machine, *cost,
        *gpus, *machine_type, *device_type, *timeline_type, *ndarray;
    if (!PyArg_ParseTupleAndKeywords(
            args, kwds, "OOOO!O!O!O!O!O!O!O!O!O!:Door", names, &launch, &local, &eager,
            &PyList_Type, &input_checks, &PyList_Type, &observers, &PyType_Type, &counter,
            &PyDict_Type, &machine, &PyDict_Type, &cost, &PyDict_Type, &gpus,
            &PyType_Type, &machine_type, &PyType_Type, &device_type,
            &PyType_Type, &timeline_type, &PyType_Type, &ndarray))
        return -1;
    PyObject *queued = PyObject_GetAttr(counter, s_queued);
    if (queued == NULL)
        return -1;
    Py_XSETREF(self->queued, queued);
#define SET(f) Py_XSETREF(self->f, Py_NewRef(f));
    SET(launch) SET(local) SET(eager) SET(input_checks) SET(observers) SET(counter)
    SET(machine) SET(cost) SET(gpus) SET(machine_type) SET(device_type) SET(timeline_type)
    SET(ndarray)
#undef SET
    Py_CLEAR(self->spec);
    self->vectorcall = (vectorcallfunc)Door_vectorcall;
    return 0;
}

static int Door_traverse(Door *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    DOOR_FIELDS(VISIT)
#undef VISIT
    return 0;
}

static int Door_clear(Door *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    DOOR_FIELDS(CLEAR)
#undef CLEAR
    return 0;
}

static void Door_dealloc(Door *self) {
    PyObject_GC_UnTrack(self);
    Door_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Door_get(PyObject *self, PyObject *obj, PyObject *type) {
    return Py_NewRef(self);  /* a plain function's place in a class: not bound (not needed) */
}

static PyObject *Door_launch(Door *self, void *closure) {
    return Py_NewRef(self->launch ? self->launch : Py_None);
}

static PyGetSetDef Door_getset[] = {
    {"__wrapped__", (getter)Door_launch, NULL, "the pure-Python door this one stands for", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyTypeObject DoorType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.Door",
    .tp_basicsize = sizeof(Door),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "Door(launch, ...): `launch` (the pure-Python door) with its eager cuda branch "
              "native; the other arguments are where it reads the state (see "
              "fake_torch/_simulated/_dispatch.py).",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Door_init,
    .tp_dealloc = (destructor)Door_dealloc,
    .tp_traverse = (traverseproc)Door_traverse,
    .tp_clear = (inquiry)Door_clear,
    .tp_vectorcall_offset = offsetof(Door, vectorcall),
    .tp_call = (ternaryfunc)Door_call,
    .tp_descr_get = Door_get,
    .tp_dictoffset = offsetof(Door, dict),
    .tp_getset = Door_getset,
};

#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return -1

/* Adds Door and COUNT_FOLD_AT to the module (_native.c's init). */
int add_door_type(PyObject *m) {
    INTERN(s_MACHINE, "MACHINE");
    INTERN(s_timeline, "timeline"); INTERN(s_devices, "devices"); INTERN(s_thread, "thread");
    INTERN(s_index, "index"); INTERN(s_current, "_current"); INTERN(s_handle, "handle");
    INTERN(s_dict, "__dict__"); INTERN(s_modes, "modes"); INTERN(s_fused, "fused");
    INTERN(s_correlation, "correlation"); INTERN(s_host_ns, "host_ns");
    INTERN(s_busy_ns, "busy_ns"); INTERN(s_ready, "ready"); INTERN(s_heap, "_heap");
    INTERN(s_seq, "_seq"); INTERN(s_listeners, "listeners"); INTERN(s_lock, "lock");
    INTERN(s_acquire, "acquire"); INTERN(s_release, "release"); INTERN(s_nbytes, "nbytes");
    INTERN(s_size, "size"); INTERN(s_gpus_current, "_current");
    INTERN(s_hbm, "hbm_bytes_per_s"); INTERN(s_fp32, "fp32_flops");
    INTERN(s_EAGER_NS, "EAGER_LAUNCH_NS"); INTERN(s_GAP_NS, "STREAM_QUEUE_GAP_NS");
    INTERN(s_MIN_NS, "MIN_KERNEL_NS"); INTERN(s_HEAVY, "_HEAVY"); INTERN(s_sleep, "_sleep");
    INTERN(s_kernel, "kernel"); INTERN(s_on_cuda, "on_cuda"); INTERN(s_kind, "kind");
    INTERN(s_source, "source"); INTERN(s_params, "params"); INTERN(s_queued, "_queued");
    INTERN(s_per_thread, "_per_thread"); INTERN(s_fold, "_fold");
    INTERN(s_wait_call, "_wait_call"); INTERN(s_kernel_ns, "kernel_ns");
    if ((args_false = PyTuple_Pack(1, Py_False)) == NULL || add_type(m, "Door", &DoorType) < 0)
        return -1;
    return PyModule_AddIntConstant(m, "COUNT_FOLD_AT", COUNT_FOLD_AT);
}
#undef INTERN
