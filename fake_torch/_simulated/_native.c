/* fake_torch._simulated._native: the caching allocator's block book as native code.
 *
 * The same operations, on the same objects, as the pure-Python book in
 * fake_torch/_simulated/_allocator_book.py (which stays the oracle: tests/test_native_core.py runs both on
 * the same event sequences and compares addresses and statistics):
 *   Block            a piece of a segment (the attributes of _allocator_blocks.Block)
 *   take             the best-fitting free block of a stream (c10's get_free_block)
 *   push_free        a block onto its segment's free list, in (stream, size, address) order
 *   remove_free      ... and off it
 *   hand_out         c10's alloc_found_block: split off the rest, queue the statistics row
 *   free_block       c10's free_block: merge with free neighbours, back on the free list
 *   apply_rows       the statistics fold: queued rows applied in order
 * (The module's other sources: _native_storage.c, an op output's allocation and free with the
 * Storage type; _native_lock.c, the allocator's and the timeline's lock; _native_door.c, the
 * door's eager cuda launch. _native.h: what they share.)
 * Free lists stay Python lists of (stream, size, address, block) tuples and statistics rows
 * stay tuples on DeviceStats.events, so the Python code that reads them (snapshots, empty_cache,
 * garbage collection, the fold) sees one representation whichever book runs.
 *
 * Sizes and addresses are C long long (a user-space address and any simulated device fit);
 * the limits from the allocator settings may be SIZE_MAX, so they are unsigned long long.
 */
#include "_native.h"

#include <structmember.h>

#define FOLD_AT 4096            /* _allocator_stats.FOLD_AT */

static PyObject *s_free, *s_stream, *s_is_small, *s_head, *s_pool, *s_id, *s_searches, *s_events,
    *s_fold;

/* --- the Block type ------------------------------------------------------------------------ */

static int Block_traverse(Block *self, visitproc visit, void *arg) {
    Py_VISIT(self->segment);
    Py_VISIT(self->prev);
    Py_VISIT(self->next);
    Py_VISIT(self->stream_uses);
    Py_VISIT(self->seg_free);
    Py_VISIT(self->seg_pool);
    Py_VISIT(self->seg_pool_id);
    return 0;
}

static int Block_clear(Block *self) {
    Py_CLEAR(self->segment);
    Py_CLEAR(self->prev);
    Py_CLEAR(self->next);
    Py_CLEAR(self->stream_uses);
    Py_CLEAR(self->seg_free);
    Py_CLEAR(self->seg_pool);
    Py_CLEAR(self->seg_pool_id);
    return 0;
}

static void Block_dealloc(Block *self) {
    PyObject_GC_UnTrack(self);
    Block_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Block_init(Block *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"segment", "address", "size", "allocated", "requested", "prev",
                             "next", "stream_uses", "pending", "gc_base", NULL};
    PyObject *segment, *prev = Py_None, *next = Py_None, *uses = Py_None;
    long long address, size, requested = 0, gc_base = 0;
    int allocated = 0, pending = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OLL|pLOOOpL", kwlist, &segment, &address,
                                     &size, &allocated, &requested, &prev, &next, &uses,
                                     &pending, &gc_base))
        return -1;
    Py_INCREF(segment);
    Py_XSETREF(self->segment, segment);
    Py_CLEAR(self->seg_free); /* (read from the new segment at first need) */
    Py_INCREF(prev);
    Py_XSETREF(self->prev, prev);
    Py_INCREF(next);
    Py_XSETREF(self->next, next);
    Py_INCREF(uses);
    Py_XSETREF(self->stream_uses, uses);
    self->address = address;
    self->size = size;
    self->allocated = (char)allocated;
    self->requested = requested;
    self->pending = (char)pending;
    self->gc_base = gc_base;
    return 0;
}

/* A new free block of `of`'s segment (the tail a split cuts off), linked between prev and
 * next. */
static Block *new_block(Block *of, long long address, long long size, PyObject *prev,
                        PyObject *next) {
    Block *b = PyObject_GC_New(Block, &BlockType);
    if (b == NULL)
        return NULL;
    Py_INCREF(of->segment);
    b->segment = of->segment;
    Py_XINCREF(of->seg_free);
    b->seg_free = of->seg_free;
    Py_XINCREF(of->seg_pool);
    b->seg_pool = of->seg_pool;
    Py_XINCREF(of->seg_pool_id);
    b->seg_pool_id = of->seg_pool_id;
    b->seg_stream = of->seg_stream;
    b->seg_small = of->seg_small;
    b->address = address;
    b->size = size;
    b->allocated = 0;
    b->requested = 0;
    Py_INCREF(prev);
    b->prev = prev;
    Py_INCREF(next);
    b->next = next;
    Py_INCREF(Py_None);
    b->stream_uses = Py_None;
    b->pending = 0;
    b->gc_base = 0;
    PyObject_GC_Track(b);
    return b;
}

static PyObject *Block_is_split(Block *self, PyObject *Py_UNUSED(ignored)) {
    return PyBool_FromLong(!IS_NONE(self->prev) || !IS_NONE(self->next));
}

static PyObject *Block_repr(Block *self) {
    return PyUnicode_FromFormat("Block(address=%lld, size=%lld, allocated=%s, requested=%lld)",
                                self->address, self->size, self->allocated ? "True" : "False",
                                self->requested);
}

static PyMethodDef Block_methods[] = {
    {"is_split", (PyCFunction)Block_is_split, METH_NOARGS,
     "Whether the block is a piece of a split segment (it has a neighbour)."},
    {NULL}};

static PyObject *Block_get_segment(Block *self, void *closure) {
    PyObject *seg = IS_NONE(self->segment) ? Py_None : self->segment;
    Py_INCREF(seg);
    return seg;
}

static int Block_set_segment(Block *self, PyObject *value, void *closure) {
    if (value == NULL) {
        PyErr_SetString(PyExc_AttributeError, "a Block's segment cannot be deleted");
        return -1;
    }
    Py_INCREF(value);
    Py_XSETREF(self->segment, value);
    Py_CLEAR(self->seg_free); /* (read from the new segment at first need) */
    return 0;
}

static PyGetSetDef Block_getset[] = {
    {"segment", (getter)Block_get_segment, (setter)Block_set_segment, NULL, NULL},
    {NULL}};

static PyMemberDef Block_members[] = {
    {"address", T_LONGLONG, offsetof(Block, address), 0, NULL},
    {"size", T_LONGLONG, offsetof(Block, size), 0, NULL},
    {"allocated", T_BOOL, offsetof(Block, allocated), 0, NULL},
    {"requested", T_LONGLONG, offsetof(Block, requested), 0, NULL},
    {"prev", T_OBJECT, offsetof(Block, prev), 0, NULL},
    {"next", T_OBJECT, offsetof(Block, next), 0, NULL},
    {"stream_uses", T_OBJECT, offsetof(Block, stream_uses), 0, NULL},
    {"pending", T_BOOL, offsetof(Block, pending), 0, NULL},
    {"gc_base", T_LONGLONG, offsetof(Block, gc_base), 0, NULL},
    {NULL}};

PyTypeObject BlockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "fake_torch._simulated._native.Block",
    .tp_doc = "A piece of a segment; a segment's blocks tile it as a list linked in address "
              "order (c10's Block::prev / Block::next).",
    .tp_basicsize = sizeof(Block),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Block_init,
    .tp_dealloc = (destructor)Block_dealloc,
    .tp_traverse = (traverseproc)Block_traverse,
    .tp_clear = (inquiry)Block_clear,
    .tp_repr = (reprfunc)Block_repr,
    .tp_methods = Block_methods,
    .tp_members = Block_members,
    .tp_getset = Block_getset,
};

int add_type(PyObject *m, const char *name, PyTypeObject *type) {
    if (PyType_Ready(type) < 0)
        return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

/* A tuple of n ints, then `tail` when not NULL (what Py_BuildValue makes, at a fifth of the
 * cost: free list entries and statistics rows are made at every allocation and free). */
PyObject *int_tuple(const long long *values, int n, PyObject *tail) {
    PyObject *t = PyTuple_New(n + (tail != NULL));
    if (t == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        PyObject *o = PyLong_FromLongLong(values[i]);
        if (o == NULL) {
            Py_DECREF(t);
            return NULL;
        }
        PyTuple_SET_ITEM(t, i, o);
    }
    if (tail != NULL) {
        Py_INCREF(tail);
        PyTuple_SET_ITEM(t, n, tail);
    }
    return t;
}

/* --- free lists: sorted lists of (stream, size, address, block) ------------------------------ */

/* An entry's key; -1 with an exception set when it is not such a tuple. */
static int entry_key(PyObject *entry, long long key[3]) {
    if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 4) {
        PyErr_SetString(PyExc_TypeError, "a free list entry is a (stream, size, address, block)");
        return -1;
    }
    for (int k = 0; k < 3; k++) {
        key[k] = PyLong_AsLongLong(PyTuple_GET_ITEM(entry, k));
        if (key[k] == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

static int key_less(const long long a[3], const long long b[3]) {
    for (int k = 0; k < 3; k++)
        if (a[k] != b[k])
            return a[k] < b[k];
    return 0;
}

/* The first index whose entry's key is not less than `key` (bisect_left); -1 on error. */
static Py_ssize_t lower_bound(PyObject *list, const long long key[3]) {
    Py_ssize_t lo = 0, hi = PyList_GET_SIZE(list);
    long long k[3];
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (entry_key(PyList_GET_ITEM(list, mid), k) < 0)
            return -1;
        if (key_less(k, key))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The block's segment's free list, stream, pool type, pool and pool id, read into the block
 * at first need; -1 on error. */
int segment_facts(Block *b) {
    if (b->seg_free != NULL)
        return 0;
    PyObject *seg = b->segment == NULL ? Py_None : b->segment;
    PyObject *s = PyObject_GetAttr(seg, s_stream), *small = NULL, *list = NULL, *pool, *id;
    if (s == NULL)
        return -1;
    b->seg_stream = PyLong_AsLongLong(s);
    Py_DECREF(s);
    if ((b->seg_stream == -1 && PyErr_Occurred()) ||
        (small = PyObject_GetAttr(seg, s_is_small)) == NULL)
        return -1;
    int r = PyObject_IsTrue(small);
    Py_DECREF(small);
    if (r < 0 || (list = PyObject_GetAttr(seg, s_free)) == NULL)
        return -1;
    if (!PyList_Check(list)) {
        Py_DECREF(list);
        PyErr_SetString(PyExc_TypeError, "a segment's free list is a list");
        return -1;
    }
    if ((pool = PyObject_GetAttr(seg, s_pool)) == NULL) {
        Py_DECREF(list);
        return -1;
    }
    if ((id = PyObject_GetAttr(pool, s_id)) == NULL) {
        Py_DECREF(list);
        Py_DECREF(pool);
        return -1;
    }
    b->seg_small = (char)r;
    Py_XSETREF(b->seg_pool, pool);
    Py_XSETREF(b->seg_pool_id, id);
    b->seg_free = list; /* (last: it marks the facts read) */
    return 0;
}

static int push_free(Block *b, int track_age) {
    PyObject *list, *entry;
    if (segment_facts(b) < 0)
        return -1;
    list = b->seg_free;
    Py_INCREF(list);
    long long stream = b->seg_stream;
    if (track_age) { /* only garbage collection reads the ages */
        PyObject *pool = PyObject_GetAttr(b->segment, s_pool), *n = NULL;
        if (pool != NULL) {
            n = PyObject_GetAttr(pool, s_searches);
            Py_DECREF(pool);
        }
        if (n == NULL)
            goto fail;
        b->gc_base = PyLong_AsLongLong(n);
        Py_DECREF(n);
        if (b->gc_base == -1 && PyErr_Occurred())
            goto fail;
    }
    long long key[3] = {stream, b->size, b->address}, k[3];
    /* bisect.insort (insort_right): after every entry not greater than the key */
    Py_ssize_t lo = 0, hi = PyList_GET_SIZE(list);
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (entry_key(PyList_GET_ITEM(list, mid), k) < 0)
            goto fail;
        if (key_less(key, k))
            hi = mid;
        else
            lo = mid + 1;
    }
    entry = int_tuple(key, 3, (PyObject *)b);
    if (entry == NULL || PyList_Insert(list, lo, entry) < 0) {
        Py_XDECREF(entry);
        goto fail;
    }
    Py_DECREF(entry);
    Py_DECREF(list);
    return 0;
fail:
    Py_DECREF(list);
    return -1;
}

static int remove_free(Block *b) {
    if (segment_facts(b) < 0)
        return -1;
    PyObject *list = b->seg_free;
    Py_INCREF(list);
    long long key[3] = {b->seg_stream, b->size, b->address};
    Py_ssize_t i = lower_bound(list, key);
    if (i < 0)
        goto fail;
    if (i >= PyList_GET_SIZE(list) ||
        PyTuple_GET_ITEM(PyList_GET_ITEM(list, i), 3) != (PyObject *)b) {
        PyErr_SetString(PyExc_AssertionError, "a free block is not on its free list");
        goto fail;
    }
    if (PyList_SetSlice(list, i, i + 1, NULL) < 0)
        goto fail;
    Py_DECREF(list);
    return 0;
fail:
    Py_DECREF(list);
    return -1;
}

static int check_block(PyObject *o) {
    if (!PyObject_TypeCheck(o, &BlockType)) {
        PyErr_Format(PyExc_TypeError, "expected a fake_torch._simulated._native.Block, got %s",
                     Py_TYPE(o)->tp_name);
        return -1;
    }
    return 0;
}

static PyObject *py_push_free(PyObject *m, PyObject *args) {
    PyObject *b;
    int track_age;
    if (!PyArg_ParseTuple(args, "O!p", &BlockType, &b, &track_age) ||
        push_free(AS_BLOCK(b), track_age) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *py_remove_free(PyObject *m, PyObject *b) {
    if (check_block(b) < 0 || remove_free(AS_BLOCK(b)) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* take(free, size, stream, max_split_size, max_non_split_rounding_size): the smallest free
 * block of `stream` that fits, the lowest address among equals, off the list; none when there
 * is none or max_split_size rules it out. */
int book_take(PyObject *list, long long size, long long stream, unsigned long long limit,
              unsigned long long rounding, PyObject **found) {
    *found = NULL;
    long long key[3] = {stream, size, -1}, k[3];
    Py_ssize_t i = lower_bound(list, key);
    if (i < 0)
        return -1;
    if (i == PyList_GET_SIZE(list))
        return 0;
    PyObject *entry = PyList_GET_ITEM(list, i);
    if (entry_key(entry, k) < 0)
        return -1;
    if (k[0] != stream)
        return 0;
    PyObject *b = PyTuple_GET_ITEM(entry, 3);
    if (check_block(b) < 0)
        return -1;
    unsigned long long want = (unsigned long long)size, have = (unsigned long long)AS_BLOCK(b)->size;
    if (want < limit && limit <= have) /* an oversize block never serves a small request */
        return 0;
    if (want >= limit && have - want >= rounding) /* ... nor a large one it would waste */
        return 0;
    Py_INCREF(b);
    if (PyList_SetSlice(list, i, i + 1, NULL) < 0) {
        Py_DECREF(b);
        return -1;
    }
    *found = b;
    return 0;
}

static PyObject *py_take(PyObject *m, PyObject *args) {
    PyObject *list, *found;
    long long size, stream;
    unsigned long long limit, rounding;
    if (!PyArg_ParseTuple(args, "O!LLKK", &PyList_Type, &list, &size, &stream, &limit,
                          &rounding) ||
        book_take(list, size, stream, limit, rounding, &found) < 0)
        return NULL;
    if (found == NULL)
        Py_RETURN_NONE;
    return found;
}

/* --- statistics rows ------------------------------------------------------------------------ */

/* Append one block event row to stats.events (a native Rows, or the pure core's list of
 * tuples); fold them in past FOLD_AT. */
static int queue_row(PyObject *stats, PyObject *events, int small, long long allocs, long long active,
                     long long alloc_bytes, long long active_bytes, long long requested,
                     long long splits, long long split_bytes) {
    if (events != NULL)
        Py_INCREF(events);
    else if ((events = PyObject_GetAttr(stats, s_events)) == NULL)
        return -1;
    long long values[ROW_WIDTH] = {small ? 0 : 4, allocs, active, alloc_bytes, active_bytes,
                                   requested, splits, split_bytes};
    int r;
    Py_ssize_t n;
    if (Py_IS_TYPE(events, &RowsType)) {
        r = rows_push(events, values);
        n = rows_count(events);
    } else if (PyList_Check(events)) {
        PyObject *row = int_tuple(values, ROW_WIDTH, NULL);
        r = row == NULL ? -1 : PyList_Append(events, row);
        Py_XDECREF(row);
        n = PyList_GET_SIZE(events);
    } else {
        Py_DECREF(events);
        PyErr_SetString(PyExc_TypeError, "DeviceStats.events is a Rows or a list");
        return -1;
    }
    if (r == 0 && n >= FOLD_AT) {
        PyObject *res = PyObject_CallMethodNoArgs(stats, s_fold);
        r = res == NULL ? -1 : 0;
        Py_XDECREF(res);
    }
    Py_DECREF(events);
    return r;
}

/* hand_out(block, size, nbytes, max_split_size, track_age, stats): c10's alloc_found_block. */
int book_hand_out(Block *b, long long size, long long nbytes, unsigned long long limit,
                  int track_age, PyObject *stats, PyObject *events) {
    PyObject *bo = (PyObject *)b;
    if (segment_facts(b) < 0)
        return -1;
    int small = b->seg_small;
    int already_split = !IS_NONE(b->prev) || !IS_NONE(b->next);
    long long rest = b->size - size, splits = 0, split_bytes = 0;
    int split = small ? rest >= MIN_BLOCK
                      : ((unsigned long long)size < limit && rest > SMALL_SIZE);
    if (split) {
        PyObject *after = b->next == NULL ? Py_None : b->next;
        if (after != Py_None && check_block(after) < 0)
            return -1;
        Block *tail = new_block(b, b->address + size, rest, bo, after);
        if (tail == NULL)
            return -1;
        if (after != Py_None) {
            Py_INCREF(tail);
            Py_XSETREF(AS_BLOCK(after)->prev, (PyObject *)tail);
        }
        Py_XSETREF(b->next, (PyObject *)tail); /* (takes new_block's reference) */
        b->size = size;
        if (push_free(tail, track_age) < 0)
            return -1;
        if (already_split) /* a free piece of a split segment shrinks by `size` */
            split_bytes = -size;
        else { /* the segment is split from now on: its free rest is an inactive split */
            splits = 1;
            split_bytes = rest;
        }
    } else if (already_split) { /* a free piece of a split segment becomes active, whole */
        splits = -1;
        split_bytes = -b->size;
    }
    b->allocated = 1;
    b->requested = nbytes;
    size = b->size;
    /* one more allocation and active block, their bytes, the requested bytes */
    if (queue_row(stats, events, small, 1, 1, size, size, nbytes, splits, split_bytes) < 0)
        return -1;
    if ((unsigned long long)size >= limit) {
        PyObject *r = PyObject_CallMethod(stats, "add_oversize", "ii", 0, 1);
        if (r == NULL)
            return -1;
        Py_DECREF(r);
    }
    return 0;
}

static PyObject *py_hand_out(PyObject *m, PyObject *args) {
    PyObject *bo, *stats;
    long long size, nbytes;
    unsigned long long limit;
    int track_age;
    if (!PyArg_ParseTuple(args, "O!LLKpO", &BlockType, &bo, &size, &nbytes, &limit,
                          &track_age, &stats) ||
        book_hand_out(AS_BLOCK(bo), size, nbytes, limit, track_age, stats, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* Whether a neighbour is a free block to merge with: 1 yes, 0 no, -1 not a Block. */
static int absorbable(PyObject *o) {
    if (IS_NONE(o))
        return 0;
    if (check_block(o) < 0)
        return -1;
    return !AS_BLOCK(o)->allocated && !AS_BLOCK(o)->pending;
}

/* free_block(block, freed, track_age, stats): c10's free_block (see the pure book). */
int book_free_block(Block *b, int freed, int track_age, PyObject *stats, PyObject *events) {
    PyObject *bo = (PyObject *)b;
    if (segment_facts(b) < 0)
        return -1;
    int small = b->seg_small;
    long long size = b->size, requested = b->requested, net_blocks = 0, net_bytes = 0;
    int merge = absorbable(b->next);
    if (merge < 0)
        return -1;
    if (merge) { /* the block absorbs its free neighbours */
        Block *after = AS_BLOCK(b->next);
        if (remove_free(after) < 0)
            return -1;
        long long after_size = after->size;
        b->size += after_size;
        PyObject *beyond = IS_NONE(after->next) ? Py_None : after->next;
        Py_INCREF(beyond);
        Py_SETREF(b->next, beyond); /* (drops the last reference to `after` but its list's) */
        if (beyond != Py_None) {
            if (check_block(beyond) < 0)
                return -1;
            Py_INCREF(bo);
            Py_XSETREF(AS_BLOCK(beyond)->prev, bo);
        }
        net_blocks -= 1;
        net_bytes -= after_size;
    }
    merge = absorbable(b->prev);
    if (merge < 0)
        return -1;
    if (merge) {
        Block *before = AS_BLOCK(b->prev);
        Py_INCREF(before); /* (kept alive until its fields are read) */
        if (remove_free(before) < 0) {
            Py_DECREF(before);
            return -1;
        }
        b->address = before->address;
        b->size += before->size;
        PyObject *first = IS_NONE(before->prev) ? Py_None : before->prev;
        Py_INCREF(first);
        Py_SETREF(b->prev, first);
        if (first != Py_None) {
            if (check_block(first) < 0) {
                Py_DECREF(before);
                return -1;
            }
            Py_INCREF(bo);
            Py_XSETREF(AS_BLOCK(first)->next, bo);
        } else if (PyObject_SetAttr(b->segment, s_head, bo) < 0) {
            Py_DECREF(before);
            return -1;
        }
        net_blocks -= 1;
        net_bytes -= before->size;
        Py_DECREF(before);
    }
    b->pending = 0;
    if (push_free(b, track_age) < 0)
        return -1;
    if (!IS_NONE(b->prev) || !IS_NONE(b->next)) {
        net_blocks += 1;
        net_bytes += b->size;
    }
    /* one active block fewer (and, when `freed`, one allocation), their bytes, the requested
     * bytes; the inactive splits' change */
    if (queue_row(stats, events, small, freed ? -1 : 0, -1, freed ? -size : 0, -size, -requested,
                  net_blocks, net_bytes) < 0)
        return -1;
    return 0;
}

static PyObject *py_free_block(PyObject *m, PyObject *args) {
    PyObject *bo, *stats;
    int freed, track_age;
    if (!PyArg_ParseTuple(args, "O!ppO", &BlockType, &bo, &freed, &track_age, &stats) ||
        book_free_block(AS_BLOCK(bo), freed, track_age, stats, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* apply_rows(v, rows, event_stats): fold statistics rows into v, in order (the pure book's
 * _apply_each: a rise adds to current and allocated and may raise the peaks, this pool type's
 * and all pools'; a fall takes from current and adds to freed). */
static PyObject *py_apply_rows(PyObject *m, PyObject *args) {
    PyObject *vl, *rows, *stats_t;
    long long v[NSTATS], st[7], row[ROW_WIDTH];
    if (!PyArg_ParseTuple(args, "O!O!O!", &PyList_Type, &vl, &PyList_Type, &rows,
                          &PyTuple_Type, &stats_t) ||
        read_stats(vl, stats_t, v, st) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(rows);
    for (Py_ssize_t r = 0; r < n; r++) {
        if (row_of(PyList_GET_ITEM(rows, r), row) < 0)
            return NULL;
        apply_row(v, st, row);
    }
    if (write_stats(vl, v) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef module_methods[] = {
    {"take", py_take, METH_VARARGS,
     "take(free, size, stream, max_split_size, max_non_split_rounding_size) -> Block | None"},
    {"push_free", py_push_free, METH_VARARGS, "push_free(block, track_age) -> None"},
    {"remove_free", py_remove_free, METH_O, "remove_free(block) -> None"},
    {"hand_out", py_hand_out, METH_VARARGS,
     "hand_out(block, size, nbytes, max_split_size, track_age, stats) -> None"},
    {"free_block", py_free_block, METH_VARARGS,
     "free_block(block, freed, track_age, stats) -> None"},
    {"apply_rows", py_apply_rows, METH_VARARGS, "apply_rows(v, rows, event_stats) -> None"},
    {NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "fake_torch._simulated._native",
                                    "The caching allocator's block book, native.", -1,
                                    module_methods};

PyMODINIT_FUNC PyInit__native(void) {
    if (PyType_Ready(&BlockType) < 0)
        return NULL;
#define INTERN(var, text) \
    if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL;
    INTERN(s_free, "free")
    INTERN(s_stream, "stream")
    INTERN(s_is_small, "is_small")
    INTERN(s_head, "head")
    INTERN(s_pool, "pool")
    INTERN(s_id, "id")
    INTERN(s_searches, "searches")
    INTERN(s_events, "events")
    INTERN(s_fold, "fold")
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&BlockType);
    if (PyModule_AddObject(m, "Block", (PyObject *)&BlockType) < 0 ||
        PyModule_AddIntConstant(m, "FOLD_AT", FOLD_AT) < 0 ||
        PyModule_AddIntConstant(m, "MIN_BLOCK", MIN_BLOCK) < 0 ||
        PyModule_AddIntConstant(m, "SMALL_SIZE", SMALL_SIZE) < 0 || add_storage_types(m) < 0 ||
        add_lock_type(m) < 0 || add_door_type(m) < 0 || add_rows_type(m) < 0 ||
        add_ufunc_type(m) < 0 || add_tensor_type(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
