/* What the two sources of fake_torch._simulated._native share: the Block type and the block
 * book's operations as C functions (_native.c), used by the storage fast path
 * (_native_storage.c) without going through Python calls. */
#ifndef FAKE_TORCH_NATIVE_H
#define FAKE_TORCH_NATIVE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>

#define MIN_BLOCK 512LL         /* kMinBlockSize */
#define SMALL_SIZE (1LL << 20)  /* kSmallSize */

/* A piece of a segment: the attributes of _allocator_blocks.Block. */
typedef struct {
    PyObject_HEAD
    PyObject *segment;
    long long address;
    long long size;
    char allocated;
    long long requested;
    PyObject *prev;          /* Block or None (NULL reads as None) */
    PyObject *next;
    PyObject *stream_uses;   /* set or None */
    char pending;
    long long gc_base;
    /* the segment's free list, stream and pool type, read from it at first need (a segment
     * never changes them; every allocation and free needs them) */
    PyObject *seg_free;      /* NULL until read */
    PyObject *seg_pool;      /* ... its pool, and the pool's id */
    PyObject *seg_pool_id;
    long long seg_stream;
    char seg_small;
} Block;

extern PyTypeObject BlockType;

#define IS_NONE(o) ((o) == NULL || (o) == Py_None)
#define AS_BLOCK(o) ((Block *)(o))

/* The book's operations (see _allocator_book.py for each one's rules). Each returns -1 with an
 * exception set on error. `limit`, `rounding`: max_split_size, max_non_split_rounding_size. */

/* The block's segment's facts (seg_free, seg_pool, ...), read at first need. */
int segment_facts(Block *b);

/* `events`: stats.events when the caller has it at hand, else NULL (then it is read). */

/* take: *found is a new reference to the block taken off `free`, or NULL when none serves. */
int book_take(PyObject *free, long long size, long long stream, unsigned long long limit,
              unsigned long long rounding, PyObject **found);
int book_hand_out(Block *b, long long size, long long nbytes, unsigned long long limit,
                  int track_age, PyObject *stats, PyObject *events);
int book_free_block(Block *b, int freed, int track_age, PyObject *stats, PyObject *events);

/* The type made ready and added to the module under `name`: 0, or -1 with an error. */
int add_type(PyObject *module, const char *name, PyTypeObject *type);

/* A tuple of n ints, then `tail` when not NULL. */
PyObject *int_tuple(const long long *values, int n, PyObject *tail);

/* _native_rows.c: the statistics' queued block events, ROW_WIDTH integers a row (the pool
 * type's offset, then the changes of the seven statistics a block event changes). */
#define ROW_WIDTH 8
#define NSTATS 81 /* nine statistics, nine numbers each */
extern PyTypeObject RowsType;
int rows_push(PyObject *rows, const long long row[ROW_WIDTH]);
Py_ssize_t rows_count(PyObject *rows);
/* v: the NSTATS numbers; st: the seven statistics' offsets in v (EVENT_STATS) */
void apply_row(long long *v, const long long *st, const long long *row);
int read_stats(PyObject *v_list, PyObject *event_stats, long long *v, long long *st);
int write_stats(PyObject *v_list, const long long *v);
/* a row from Python (a tuple of 8 ints, the first 0 or 4) */
int row_of(PyObject *tuple, long long *row);
int add_rows_type(PyObject *module);

/* _native_storage.c: adds Storage and FastPath to the module. */
int add_storage_types(PyObject *module);

/* _native_lock.c: threading.RLock's interface over state C can read. */
typedef struct {
    PyObject_HEAD
    PyThread_type_lock lock;  /* held by a thread exactly while count > 0 (see the file) */
    unsigned long owner;      /* the holding thread's ident; 0: none */
    unsigned long count;      /* its holds */
    PyObject *weakreflist;
} RLock;

extern PyTypeObject RLockType;

/* Take the lock when no thread holds it (1), else 0 without waiting. */
int rlock_take_free(RLock *l);
/* ... or when the calling thread holds it already (one hold more). */
int rlock_try(RLock *l);
/* Release one hold of the calling thread's. */
void rlock_give_back(RLock *l);
int add_lock_type(PyObject *module);

/* _native_ufunc.c: adds QuietUfunc (a ufunc kernel run with numpy's warnings off). */
int add_ufunc_type(PyObject *module);

/* _native_tensor.c: adds TensorMaker (an op output's Tensor made without a Python frame). */
int add_tensor_type(PyObject *module);

/* _native_door.c: adds Door (the door's eager cuda branch) to the module. */
int add_door_type(PyObject *module);

#endif
