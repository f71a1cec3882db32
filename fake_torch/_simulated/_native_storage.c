/* fake_torch._simulated._native, part two: an op output's allocation and free without Python.
 *
 * Mirrors, step for step, these pure-Python functions (which stay the oracle, and run whenever
 * a case is not the common one; tests/test_native_core.py runs both on the same sequences):
 *   Storage                      _allocator_blocks.Storage: block, root, hazard, view, span()
 *   Storage's finalizer          Storage.__del__ -> CachingAllocator._release -> _release_parts
 *                                (-> the common branch of _free)
 *   FastPath.allocate_array      CachingAllocator.allocate_array -> _allocate (shape given)
 * A FastPath belongs to one CachingAllocator (it is its storages' `_on_death`). Its common
 * case: a request of some bytes from the default pool, the settings parsed and not rounding
 * up by power-of-two divisions, no memory fraction, no capture underway, no free waiting for
 * other streams' events, and a free block that serves it (no new segment); a free of a block
 * no other stream used, not oversize, of a pool the allocator still has. Everything else (a
 * new segment, OOM, captures, record_stream, a death inside an allocator call) goes to the
 * Python methods, which find the allocator as they left it: a fast path changes nothing
 * before it knows it can finish.
 *
 * The lock: each fast step takes the allocator's lock (a native RLock, _native_lock.c) when
 * no thread holds it, and leaves the step to the Python path when one does. Holding the GIL
 * alone would not do: another thread may hold the lock in the middle of a Python-level
 * allocator call (the GIL passes between threads during it), and the cyclic collector may run
 * a Storage's finalizer at any allocation of an object here; with the lock held, such a death
 * is put in `_late` (by the Python _release) and freed as the step ends, exactly as in an
 * allocator call.
 */
#include "_native.h"

#include <structmember.h>

#define KEPT_LIMIT 4096 /* _allocator._KEPT_LIMIT */

static PyObject *s_config, *s_captures_underway, *s_pending, *s_deferred, *s_memory_fraction,
    *s_rounds_up, *s_max_split_size, *s_rounding, *s_free_small, *s_free_large,
    *s_mem, *s_base, *s_shape, *s_dtype, *s_kwnames_buffer, *s_array_interface, *s_data,
    *s_nbytes, *s_handle, *s_dict;

/* --- Storage ------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    PyObject *block;     /* Block or None (a zero-byte request has none) */
    PyObject *root;      /* (nbytes,) uint8 over the block's memory */
    PyObject *hazard;    /* str or None: set by the sanitizer */
    PyObject *view;      /* the typed array an op's output was made as, or None */
    PyObject *on_death;  /* a FastPath, another callable, or None */
    PyObject *weakreflist;
} Storage;

typedef struct {
    PyObject_HEAD
    PyObject *allocator;
    PyObject *state;                         /* its instance dict */
    PyObject *lock;                          /* the allocator's RLock (_native_lock.c) */
    PyObject *late;                          /* _allocator._late */
    PyObject *free_late;                     /* _allocator._free_late */
    PyObject *slow_allocate_array;           /* the Python CachingAllocator.allocate_array */
    PyObject *slow_release;                  /* ... and _release */
    PyObject *current_stream;                /* the allocator's current_stream callable */
    PyObject *stream_local;                  /* ... or the thread-local it reads, or None */
    /* the allocator's containers (never rebound: the allocator only mutates them) */
    PyObject *pools, *by_root, *kept, *stats, *events;
    PyObject *default_pool;                  /* DEFAULT_POOL, (0, 0) */
    PyObject *frombuffer, *uint8, *ndarray;  /* numpy's */
    /* stream_local's attribute dict for the thread that allocated last (its thread state's
     * id, never reused; 0: none): made once per thread, living as long as the thread and the
     * local (which this holds), so borrowed; read where a getattr of the thread-local costs
     * ~500 instructions */
    unsigned long long thread_id;
    PyObject *stream_dict;
} FastPath;

static PyTypeObject StorageType, FastPathType;

static Storage *storage_new(PyObject *block, PyObject *root, PyObject *on_death) {
    Storage *s = PyObject_GC_New(Storage, &StorageType);
    if (s == NULL)
        return NULL;
    Py_INCREF(block);
    s->block = block;
    Py_INCREF(root);
    s->root = root;
    Py_INCREF(Py_None);
    s->hazard = Py_None;
    Py_INCREF(Py_None);
    s->view = Py_None;
    Py_INCREF(on_death);
    s->on_death = on_death;
    s->weakreflist = NULL;
    PyObject_GC_Track(s);
    return s;
}

static PyObject *Storage_new(PyTypeObject *type, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"block", "root", "on_death", NULL};
    PyObject *block, *root, *on_death = Py_None;
    if (type != &StorageType) {
        PyErr_SetString(PyExc_TypeError, "fake_torch's native Storage is not subclassable");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO|O", kwlist, &block, &root, &on_death))
        return NULL;
    return (PyObject *)storage_new(block, root, on_death);
}

static int Storage_traverse(Storage *self, visitproc visit, void *arg) {
    Py_VISIT(self->block);
    Py_VISIT(self->root);
    Py_VISIT(self->hazard);
    Py_VISIT(self->view);
    Py_VISIT(self->on_death);
    return 0;
}

static int Storage_clear(Storage *self) {
    Py_CLEAR(self->block);
    Py_CLEAR(self->root);
    Py_CLEAR(self->hazard);
    Py_CLEAR(self->view);
    Py_CLEAR(self->on_death);
    return 0;
}

static int fast_release(FastPath *fp, Storage *s);

/* Storage.__del__: the last tensor or view holding this storage is gone; the allocator takes
 * its block back (tp_finalize, so that in a garbage cycle it runs before anything is cleared,
 * as a Python __del__ does). */
static void Storage_finalize(Storage *self) {
    PyObject *on_death = self->on_death;
    if (IS_NONE(on_death))
        return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    Py_INCREF(on_death);
    int done = 0;
    PyObject *slow = on_death;
    if (Py_IS_TYPE(on_death, &FastPathType)) {
        slow = ((FastPath *)on_death)->slow_release;
        /* (NULL: the collector cleared its allocator's cycle at exit; nothing to free into) */
        done = slow == NULL ? 1 : fast_release((FastPath *)on_death, self);
    }
    if (done == 0) {
        PyObject *r = PyObject_CallOneArg(slow, (PyObject *)self);
        done = r == NULL ? -1 : 1;
        Py_XDECREF(r);
    }
    if (done < 0)
        PyErr_WriteUnraisable((PyObject *)self);
    Py_DECREF(on_death);
    PyErr_Restore(type, value, tb);
}

static void Storage_dealloc(Storage *self) {
    if (PyObject_CallFinalizerFromDealloc((PyObject *)self) < 0)
        return; /* resurrected by its finalizer */
    PyObject_GC_UnTrack(self);
    if (self->weakreflist != NULL)
        PyObject_ClearWeakRefs((PyObject *)self);
    Storage_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* span(): [start, end) addresses of the bytes this storage owns (its root's). */
static PyObject *Storage_span(Storage *self, PyObject *Py_UNUSED(ignored)) {
    PyObject *iface = PyObject_GetAttr(self->root, s_array_interface), *data, *n;
    if (iface == NULL)
        return NULL;
    data = PyObject_GetItem(iface, s_data);
    Py_DECREF(iface);
    if (data == NULL)
        return NULL;
    if (!PyTuple_Check(data) || PyTuple_GET_SIZE(data) < 1) {
        Py_DECREF(data);
        PyErr_SetString(PyExc_TypeError, "__array_interface__['data'] is (address, read-only)");
        return NULL;
    }
    long long start = PyLong_AsLongLong(PyTuple_GET_ITEM(data, 0));
    Py_DECREF(data);
    if (start == -1 && PyErr_Occurred())
        return NULL;
    n = PyObject_GetAttr(self->root, s_nbytes);
    if (n == NULL)
        return NULL;
    long long nbytes = PyLong_AsLongLong(n);
    Py_DECREF(n);
    if (nbytes == -1 && PyErr_Occurred())
        return NULL;
    return Py_BuildValue("(LL)", start, start + nbytes);
}

static PyMethodDef Storage_methods[] = {
    {"span", (PyCFunction)Storage_span, METH_NOARGS,
     "[start, end) addresses of the bytes this storage owns."},
    {NULL}};

static PyMemberDef Storage_members[] = {
    {"block", T_OBJECT, offsetof(Storage, block), 0, NULL},
    {"root", T_OBJECT, offsetof(Storage, root), 0, NULL},
    {"hazard", T_OBJECT, offsetof(Storage, hazard), 0, NULL},
    {"view", T_OBJECT, offsetof(Storage, view), 0, NULL},
    {"_on_death", T_OBJECT, offsetof(Storage, on_death), 0, NULL},
    {NULL}};

static PyTypeObject StorageType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.Storage",
    .tp_doc = "The owner of one block (_allocator_blocks.Storage): tensors and views hold it; "
              "its death frees the block.",
    .tp_basicsize = sizeof(Storage),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = Storage_new,
    .tp_dealloc = (destructor)Storage_dealloc,
    .tp_finalize = (destructor)Storage_finalize,
    .tp_traverse = (traverseproc)Storage_traverse,
    .tp_clear = (inquiry)Storage_clear,
    .tp_weaklistoffset = offsetof(Storage, weakreflist),
    .tp_methods = Storage_methods,
    .tp_members = Storage_members,
};

/* --- small helpers ------------------------------------------------------------------------- */

static int call_none(PyObject *callable) {
    PyObject *r = PyObject_CallNoArgs(callable);
    if (r == NULL)
        return -1;
    Py_DECREF(r);
    return 0;
}

#define LOCK(fp) ((RLock *)(fp)->lock)

/* The allocator's and its settings' state is read from their instance dicts (a dict lookup;
 * a generic attribute read costs four times more and two steps read nine). A missing entry
 * reads as "not the common case" (the Python path then reads it its own way). */

/* dict[name]: 1 (*out borrowed), 0 missing, -1 error */
static int item(PyObject *dict, PyObject *name, PyObject **out) {
    *out = PyDict_GetItemWithError(dict, name);
    return *out != NULL ? 1 : PyErr_Occurred() ? -1 : 0;
}

/* dict[name] is falsy (0, an empty list, False): 1, 0 when not (or missing), -1 error */
static int item_unset(PyObject *dict, PyObject *name) {
    PyObject *v;
    int r = item(dict, name, &v);
    if (r <= 0)
        return r;
    return (r = PyObject_IsTrue(v)) < 0 ? -1 : !r;
}

static int item_ull(PyObject *dict, PyObject *name, unsigned long long *out) {
    PyObject *v;
    int r = item(dict, name, &v);
    if (r <= 0)
        return r;
    *out = PyLong_AsUnsignedLongLong(v);
    return *out == (unsigned long long)-1 && PyErr_Occurred() ? -1 : 1;
}

/* dict.pop(key): 1 (*out a new reference), 0 missing, -1 error (one search, where a get then
 * a del hash the key and search twice; Python 3.13 made the call public) */
static int dict_pop(PyObject *dict, PyObject *key, PyObject **out) {
#if PY_VERSION_HEX >= 0x030D0000
    return PyDict_Pop(dict, key, out);
#else
    *out = _PyDict_Pop(dict, key, Py_Ellipsis); /* (no value here is Ellipsis) */
    if (*out == NULL)
        return -1;
    if (*out == Py_Ellipsis) {
        Py_CLEAR(*out);
        return 0;
    }
    return 1;
#endif
}

static int attr_ll(PyObject *obj, PyObject *name, long long *out) {
    PyObject *v = PyObject_GetAttr(obj, name);
    if (v == NULL)
        return -1;
    *out = PyLong_AsLongLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The free's one setting: 1 with max_split_size when the settings are parsed, else 0. */
static int split_limit(FastPath *fp, unsigned long long *limit) {
    PyObject *config;
    int r = item(fp->state, s_config, &config);
    if (r <= 0 || config == Py_None)
        return r < 0 ? -1 : 0;
    PyObject *fields = PyObject_GenericGetDict(config, NULL);
    if (fields == NULL)
        return -1;
    r = PyDict_Check(fields) ? item_ull(fields, s_max_split_size, limit) : 0;
    Py_DECREF(fields);
    return r;
}

/* The settings the fast steps read: 1 with max_split_size and max_non_split_rounding_size
 * when they are parsed and do not round requests up by divisions, else 0 (-1: error). */
static int common_config(FastPath *fp, unsigned long long *limit, unsigned long long *rounding) {
    PyObject *config;
    int r = item(fp->state, s_config, &config);
    if (r <= 0 || config == Py_None) /* (None: not read from the environment yet) */
        return r < 0 ? -1 : 0;
    PyObject *fields = PyObject_GenericGetDict(config, NULL);
    if (fields == NULL)
        return -1;
    if (!PyDict_Check(fields))
        r = 0;
    else if ((r = item_unset(fields, s_rounds_up)) > 0 &&
             (r = item_ull(fields, s_max_split_size, limit)) > 0)
        r = item_ull(fields, s_rounding, rounding);
    Py_DECREF(fields);
    return r;
}

/* --- the free -------------------------------------------------------------------------------- */

/* _release and _release_parts with the lock held: 1 done, 0 not the common case (nothing
 * changed), -1 error. */
static int release_locked(FastPath *fp, Storage *s, Block *b) {
    int r;
    /* _release_parts' `self._free(block)` cases stay Python: other streams used the block
     * (record_stream: it waits for their events), or it is oversize (its own statistic) */
    if (!IS_NONE(b->stream_uses) && (r = PyObject_IsTrue(b->stream_uses)) != 0)
        return r < 0 ? -1 : 0;
    unsigned long long limit;
    if ((r = split_limit(fp, &limit)) <= 0)
        return r;
    if ((unsigned long long)b->size >= limit)
        return 0;
    /* a block of a pool the allocator no longer has (a released graph pool) is not freed */
    if (segment_facts(b) < 0)
        return -1;
    PyObject *found = PyDict_GetItemWithError(fp->pools, b->seg_pool_id); /* (borrowed) */
    if (found != b->seg_pool)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *fraction;
    if ((r = item(fp->state, s_memory_fraction, &fraction)) <= 0)
        return r;
    int track_age = fraction != Py_None;
    long long address = b->address; /* (before a merge moves it) */

    /* forget the root (its id), unless a newer live storage took that id */
    PyObject *key = PyLong_FromVoidPtr(s->root);
    if (key == NULL)
        return -1;
    PyObject *ref;
    r = dict_pop(fp->by_root, key, &ref);
    if (r > 0) {
        PyObject *who = PyWeakref_GetObject(ref); /* (still us within our finalizer) */
        if (who == NULL || (who != Py_None && who != (PyObject *)s &&
                            PyDict_SetItem(fp->by_root, key, ref) < 0)) /* (put back) */
            r = -1;
        Py_DECREF(ref);
    }
    Py_DECREF(key);
    if (r < 0)
        return -1;

    /* _free's common branch: no longer allocated, merged and back on its free list */
    b->allocated = 0;
    if (book_free_block(b, 1, track_age, fp->stats, fp->events) < 0)
        return -1;

    /* an output's arrays that only this storage holds (the view: its slot; the root: its
     * slot and the view's base) are kept with the block if it is free for reuse now */
    PyObject *view = s->view, *root = s->root;
    if (!IS_NONE(view) && Py_REFCNT(view) == 1 && Py_REFCNT(root) == 2 && !b->allocated &&
        !b->pending) {
        if (PyDict_GET_SIZE(fp->kept) >= KEPT_LIMIT)
            PyDict_Clear(fp->kept);
        Py_ssize_t nbytes = PyObject_Size(root); /* (a 1-d uint8 array: its nbytes) */
        if (nbytes < 0)
            return -1;
        long long kv[2] = {address, nbytes};
        PyObject *k = int_tuple(kv, 2, NULL);
        PyObject *v = k == NULL ? NULL : PyTuple_Pack(2, root, view);
        r = v == NULL ? -1 : PyDict_SetItem(fp->kept, k, v);
        Py_XDECREF(k);
        Py_XDECREF(v);
        if (r < 0)
            return -1;
    }
    return 1;
}

/* CachingAllocator._release in C when it is the common case: 1 done, 0 not (the Python
 * _release is to run), -1 error. */
static int fast_release(FastPath *fp, Storage *s) {
    if (s->block == NULL || s->root == NULL || !PyObject_TypeCheck(s->block, &BlockType))
        /* (a zero-byte storage: no block) */
        return 0;
    /* held: a death inside an allocator call of this thread waits for the call's end (the
     * Python _release puts it in `_late`), one while another thread's call is underway waits
     * for the lock (the Python _release waits) */
    if (!rlock_take_free(LOCK(fp)))
        return 0;
    int r;
    Py_INCREF(s->block); /* (the block stays ours while a merge rearranges its neighbours) */
    PyObject *block = s->block;
    r = release_locked(fp, s, AS_BLOCK(block));
    Py_DECREF(block);
    if (r > 0 && PyList_GET_SIZE(fp->late) > 0 && call_none(fp->free_late) < 0)
        r = -1;
    rlock_give_back(LOCK(fp));
    return r;
}

/* --- the allocation -------------------------------------------------------------------------- */

/* The arrays over a block just handed out and the Storage that owns it: the end of _allocate
 * (the kept arrays when the block was last handed out for the same bytes, shape and dtype and
 * nobody else held them; else a root and a typed view over the block's bytes). */
static PyObject *make_output(FastPath *fp, Block *b, PyObject *shape, PyObject *dtype,
                             long long nbytes) {
    PyObject *root = NULL, *view = NULL, *result = NULL;
    Storage *s = NULL;
    long long kv[2] = {b->address, nbytes};
    PyObject *key = int_tuple(kv, 2, NULL);
    if (key == NULL)
        return NULL;
    PyObject *kept;
    int found = dict_pop(fp->kept, key, &kept);
    if (found < 0)
        goto done;
    if (found) { /* popped: used now or never (its arrays are another shape) */
        if (!PyTuple_Check(kept) || PyTuple_GET_SIZE(kept) != 2) {
            PyErr_SetString(PyExc_TypeError, "a kept entry is (root, view)");
            Py_DECREF(kept);
            goto done;
        }
        PyObject *v = PyTuple_GET_ITEM(kept, 1);
        PyObject *v_shape = PyObject_GetAttr(v, s_shape), *v_dtype = NULL;
        int same = v_shape == NULL ? -1 : PyObject_RichCompareBool(v_shape, shape, Py_EQ);
        if (same > 0) {
            v_dtype = PyObject_GetAttr(v, s_dtype);
            same = v_dtype == NULL ? -1 : v_dtype == dtype;
        }
        Py_XDECREF(v_shape);
        Py_XDECREF(v_dtype);
        if (same > 0) { /* (as made: nobody held it) */
            root = PyTuple_GET_ITEM(kept, 0);
            view = v;
            Py_INCREF(root);
            Py_INCREF(view);
        }
        Py_DECREF(kept);
        if (same < 0)
            goto done;
    }
    if (root == NULL) { /* np.frombuffer(seg.mem, np.uint8, nbytes, block.address - seg.base) */
        long long base;
        PyObject *mem = PyObject_GetAttr(b->segment, s_mem);
        if (mem == NULL || attr_ll(b->segment, s_base, &base) < 0) {
            Py_XDECREF(mem);
            goto done;
        }
        PyObject *count = PyLong_FromLongLong(nbytes);
        PyObject *offset = PyLong_FromLongLong(b->address - base);
        if (count != NULL && offset != NULL) {
            PyObject *args[4] = {mem, fp->uint8, count, offset};
            root = PyObject_Vectorcall(fp->frombuffer, args, 4, NULL);
        }
        Py_XDECREF(count);
        Py_XDECREF(offset);
        Py_DECREF(mem);
        if (root == NULL)
            goto done;
    }
    s = storage_new((PyObject *)b, root, (PyObject *)fp);
    if (s == NULL)
        goto done;
    /* registered by its root's id, weakly, for storage_of (`_register`) */
    PyObject *id = PyLong_FromVoidPtr(root);
    PyObject *ref = id == NULL ? NULL : PyWeakref_NewRef((PyObject *)s, NULL);
    int r = ref == NULL ? -1 : PyDict_SetItem(fp->by_root, id, ref);
    Py_XDECREF(id);
    Py_XDECREF(ref);
    if (r < 0)
        goto done;
    if (view == NULL) { /* np.ndarray(shape, np_dtype, buffer=root) */
        PyObject *args[3] = {shape, dtype, root};
        view = PyObject_Vectorcall(fp->ndarray, args, 2, s_kwnames_buffer);
        if (view == NULL)
            goto done;
    }
    Py_INCREF(view);
    Py_SETREF(s->view, view);
    result = PyTuple_Pack(2, view, (PyObject *)s);
done:
    Py_DECREF(key);
    Py_XDECREF(root);
    Py_XDECREF(view);
    Py_XDECREF(s); /* (on error its death frees the block: a late free, the lock is ours) */
    return result;
}

/* The calling thread's current stream handle, stream_local.handle (a new reference). */
static PyObject *stream_handle(FastPath *fp) {
    unsigned long long tid = PyThreadState_GetID(PyThreadState_Get());
    if (tid != fp->thread_id) {
        fp->thread_id = 0;
        PyObject *d = PyObject_GetAttr(fp->stream_local, s_dict);
        if (d == NULL)
            return NULL;
        int plain = PyDict_CheckExact(d);
        Py_DECREF(d); /* (the thread's state holds it) */
        if (!plain)
            return PyObject_GetAttr(fp->stream_local, s_handle);
        fp->stream_dict = d;
        fp->thread_id = tid;
    }
    PyObject *h = PyDict_GetItemWithError(fp->stream_dict, s_handle);
    if (h != NULL)
        return Py_NewRef(h);
    return PyErr_Occurred() ? NULL : PyObject_GetAttr(fp->stream_local, s_handle);
}

/* allocate_array's _allocate with the lock held: 1 done (*out set), 0 not the common case
 * (nothing changed), -1 error. */
static int allocate_locked(FastPath *fp, PyObject *shape, PyObject *dtype, long long nbytes,
                           PyObject **out) {
    unsigned long long limit, rounding;
    int r;
    /* the Python path's rare cases: settings not parsed yet or rounding by divisions; a
     * memory fraction (the pool's search count, free blocks' ages); a capture underway (free
     * markers); frees waiting for other streams' events */
    if ((r = common_config(fp, &limit, &rounding)) <= 0)
        return r;
    PyObject *state = fp->state, *fraction;
    if ((r = item(state, s_memory_fraction, &fraction)) <= 0)
        return r;
    if (fraction != Py_None)
        return 0;
    if ((r = item_unset(state, s_captures_underway)) <= 0 ||
        (r = item_unset(state, s_pending)) <= 0 || (r = item_unset(state, s_deferred)) <= 0)
        return r;
    PyObject *st = fp->stream_local == Py_None ? PyObject_CallNoArgs(fp->current_stream)
                                                : stream_handle(fp);
    if (st == NULL)
        return -1;
    long long stream = PyLong_AsLongLong(st);
    Py_DECREF(st);
    if (stream == -1 && PyErr_Occurred())
        return -1;
    PyObject *pool = PyDict_GetItemWithError(fp->pools, fp->default_pool); /* (borrowed) */
    if (pool == NULL)
        return PyErr_Occurred() ? -1 : 0;
    long long size = (nbytes + MIN_BLOCK - 1) / MIN_BLOCK * MIN_BLOCK; /* round_size */
    PyObject *free = PyObject_GetAttr(pool, size <= SMALL_SIZE ? s_free_small : s_free_large);
    if (free == NULL)
        return -1;
    if (!PyList_Check(free)) {
        Py_DECREF(free);
        PyErr_SetString(PyExc_TypeError, "a pool's free list is a list");
        return -1;
    }
    /* the smallest free block of this stream that fits (c10's get_free_block); none: a new
     * segment is the Python path's (_alloc_block) */
    PyObject *block;
    r = book_take(free, size, stream, limit, rounding, &block);
    Py_DECREF(free);
    if (r < 0 || block == NULL)
        return r;
    /* from here on the allocation happens: c10's alloc_found_block, then the arrays */
    if (book_hand_out(AS_BLOCK(block), size, nbytes, limit, 0, fp->stats, fp->events) < 0) {
        Py_DECREF(block);
        return -1;
    }
    *out = make_output(fp, AS_BLOCK(block), shape, dtype, nbytes);
    Py_DECREF(block);
    return *out == NULL ? -1 : 1;
}

/* allocate_array(shape, np_dtype, nbytes) -> (view, storage): CachingAllocator.allocate_array,
 * natively in the common case, else the Python method. */
static PyObject *FastPath_allocate_array(FastPath *fp, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "allocate_array() takes 3 arguments (%zd given)", nargs);
        return NULL;
    }
    long long nbytes = PyLong_AsLongLong(args[2]);
    if (nbytes == -1 && PyErr_Occurred())
        return NULL;
    if (nbytes > 0) { /* (zero bytes: a null pointer, no block: Python's) */
        PyObject *out = NULL;
        int r = 0;
        /* held: by another thread (the Python path waits for it) or by an allocator call
         * underway on this one (the Python path, as it always did) */
        if (rlock_take_free(LOCK(fp))) {
            r = allocate_locked(fp, args[0], args[1], nbytes, &out);
            /* storages that died meanwhile (the cyclic collector) are freed as the call ends */
            if (r > 0 && PyList_GET_SIZE(fp->late) > 0 && call_none(fp->free_late) < 0)
                r = -1;
            rlock_give_back(LOCK(fp));
        }
        if (r != 0) {
            if (r < 0)
                Py_CLEAR(out);
            return out;
        }
    }
    return PyObject_Vectorcall(fp->slow_allocate_array, args, nargs, NULL);
}

/* --- the FastPath type ------------------------------------------------------------------------ */

/* (slow_release first: tp_clear drops it before anything whose release could free the
 * allocator, so a storage dying meanwhile finds it NULL and leaves everything alone) */
#define FASTPATH_FIELDS(X)                                                                     \
    X(slow_release) X(allocator) X(state) X(lock) X(late) X(free_late) X(slow_allocate_array) \
    X(current_stream) X(stream_local) X(pools) X(by_root) X(kept) X(stats) X(events)         \
    X(default_pool) X(frombuffer) X(uint8) X(ndarray)

static int FastPath_traverse(FastPath *self, visitproc visit, void *arg) {
#define VISIT(f) Py_VISIT(self->f);
    FASTPATH_FIELDS(VISIT)
    return 0;
}

static int FastPath_clear(FastPath *self) {
#define CLEAR(f) Py_CLEAR(self->f);
    FASTPATH_FIELDS(CLEAR)
    return 0;
}

static void FastPath_dealloc(FastPath *self) {
    PyObject_GC_UnTrack(self);
    FastPath_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* FastPath(allocator, lock, late, free_late, allocate_array, release): the native steps of
 * one CachingAllocator (its lock, the module's late-death list and its drain, and the Python
 * methods each step falls back to). */
static int FastPath_init(FastPath *self, PyObject *args, PyObject *kwds) {
    PyObject *allocator, *lock, *late, *free_late, *slow_alloc, *slow_release;
    if (!PyArg_ParseTuple(args, "OO!O!OOO:FastPath", &allocator, &RLockType, &lock,
                          &PyList_Type, &late, &free_late, &slow_alloc, &slow_release))
        return -1;
    FastPath_clear(self);
    self->thread_id = 0;
    self->stream_dict = NULL;
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL)
        return -1;
#define SET(field, expr) \
    if ((self->field = (expr)) == NULL) goto fail;
#define KEEP(field, obj) Py_INCREF(obj); self->field = (obj);
    KEEP(allocator, allocator)
    KEEP(lock, lock)
    KEEP(late, late)
    KEEP(free_late, free_late)
    KEEP(slow_allocate_array, slow_alloc)
    KEEP(slow_release, slow_release)
    SET(state, PyObject_GenericGetDict(allocator, NULL))
    SET(current_stream, PyObject_GetAttrString(allocator, "current_stream"))
    SET(pools, PyObject_GetAttrString(allocator, "pools"))
    SET(by_root, PyObject_GetAttrString(allocator, "_by_root"))
    SET(kept, PyObject_GetAttrString(allocator, "_kept"))
    SET(stats, PyObject_GetAttrString(allocator, "stats"))
    SET(events, PyObject_GetAttrString(self->stats, "events"))
    SET(stream_local, PyObject_GetAttrString(allocator, "_stream_local"))
    SET(default_pool, Py_BuildValue("(ii)", 0, 0))
    SET(frombuffer, PyObject_GetAttrString(numpy, "frombuffer"))
    SET(uint8, PyObject_GetAttrString(numpy, "uint8"))
    SET(ndarray, PyObject_GetAttrString(numpy, "ndarray"))
    Py_DECREF(numpy);
    if (!(PyList_Check(self->events) || Py_IS_TYPE(self->events, &RowsType)) ||
        !PyDict_Check(self->state) || !PyDict_Check(self->pools) ||
        !PyDict_Check(self->by_root) || !PyDict_Check(self->kept)) {
        PyErr_SetString(PyExc_TypeError, "FastPath: the allocator's __dict__, pools, _by_root "
                                         "and _kept are dicts, its stats.events a Rows or a list");
        return -1;
    }
    return 0;
fail:
    Py_DECREF(numpy);
    return -1;
}

static PyMethodDef FastPath_methods[] = {
    {"allocate_array", (PyCFunction)(void (*)(void))FastPath_allocate_array, METH_FASTCALL,
     "allocate_array(shape, np_dtype, nbytes) -> (view, storage)"},
    {NULL}};

static PyTypeObject FastPathType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.FastPath",
    .tp_doc = "One CachingAllocator's native allocate_array and storage free (its storages' "
              "_on_death).",
    .tp_basicsize = sizeof(FastPath),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)FastPath_init,
    .tp_dealloc = (destructor)FastPath_dealloc,
    .tp_traverse = (traverseproc)FastPath_traverse,
    .tp_clear = (inquiry)FastPath_clear,
    .tp_methods = FastPath_methods,
};

int add_storage_types(PyObject *m) {
#define INTERN(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return -1;
    INTERN(s_config, "_config")
    INTERN(s_captures_underway, "captures_underway")
    INTERN(s_pending, "_pending")
    INTERN(s_deferred, "_deferred")
    INTERN(s_memory_fraction, "memory_fraction")
    INTERN(s_rounds_up, "rounds_up")
    INTERN(s_max_split_size, "max_split_size")
    INTERN(s_rounding, "max_non_split_rounding_size")
    INTERN(s_free_small, "free_small")
    INTERN(s_free_large, "free_large")
    INTERN(s_mem, "mem")
    INTERN(s_base, "base")
    INTERN(s_shape, "shape")
    INTERN(s_dtype, "dtype")
    INTERN(s_array_interface, "__array_interface__")
    INTERN(s_data, "data")
    INTERN(s_nbytes, "nbytes")
    INTERN(s_handle, "handle")
    INTERN(s_dict, "__dict__")
    if ((s_kwnames_buffer = Py_BuildValue("(s)", "buffer")) == NULL)
        return -1;
    return add_type(m, "Storage", &StorageType) < 0 ? -1 : add_type(m, "FastPath", &FastPathType);
}
