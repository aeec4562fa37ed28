/* args.h: call arguments, classified into 4-byte types and values (args.c). */
#ifndef KILN_EXT_ARGS_H
#define KILN_EXT_ARGS_H

#include "interop.h"
#include "table.h"

typedef union {
    int64_t i;
    uint64_t u;
    double f;
} Scalar;

/* One classified argument. */
typedef struct {
    kiln_argtype t;
    Scalar v;          /* scalars: the value (i for bool and signed, u, f; a complex's real part) */
    double im;         /* complex scalars: the imaginary part */
    Py_buffer view;    /* host arrays: the buffer, released after the launch */
    bool has_view;
    int64_t shape[KILN_MAX_NDIM];
    int64_t strides[KILN_MAX_NDIM]; /* in elements */
    /* GPU */
    bool on_gpu;       /* a device array: dptr is the address of element 0 */
    uint64_t dptr;
    int device;
    bool readonly;
    bool misaligned;   /* a host array whose address its elements' alignment does not divide:
                        * a GPU launch stages it (an aligned copy), and so does the CPU target
                        * (ext_pack, into stage; ext_unstage_cpu copies the elements back) */
    void *stage;       /* CPU launch with a misaligned host array: the copy's allocation */
    char *stage0;      /* ... and its element 0, aligned */
    ForeignArray fa;   /* a foreign array's borrowed reference (DLPack) */
    bool has_foreign;
    uint64_t tmp;      /* GPU launch with a host array: the device copy */
    int64_t tmp_lo;    /* byte offset of the copy's start from element 0 (<= 0) */
    size_t tmp_size;
    int time;          /* datetime64/timedelta64 taken as int64: the unit code, else 0 */
} Arg;

/* Argument i is a datetime64 or timedelta64 (a[i].time): -1 with a TypeError when an
 * earlier one (a[0..i-1]) has another unit, else 0. */
int ext_time_clash(const Arg *a, int i, PyObject *const *args, PyObject *names,
                   PyObject *kname);
/* NumPy's name of a kiln dtype ("float32"), "?" out of range. */
const char *ext_dtype_name(int d);
/* Formats "argument 'x' of kernel 'k'" into buf (names: the parameter names). */
void ext_arg_desc(char *buf, size_t n, PyObject *names, PyObject *kname, int i);
/* The TypeError of a launch given n arguments for nparams parameters (a hint when the
 * first parameter is a method's unbound self). */
void ext_arg_count_error(PyObject *names, PyObject *kname, int nparams, Py_ssize_t n);
/* Classifies argument i (o) into a.  0, or -1 with an exception set; a's
 * resources are released by ext_release_arg either way.  stream: the launch's,
 * for foreign arrays' stream synchronisation. */
int ext_classify(ModState *st, PyObject *o, Arg *a, PyObject *names, PyObject *kname, int i,
                 void *stream);
/* Inline: it runs for every argument of every launch. */
static inline void ext_release_arg(Arg *a) {
    if (a->stage) free(a->stage);
    a->stage = NULL;
    if (a->has_view) PyBuffer_Release(&a->view);
    a->has_view = false;
    if (a->has_foreign) ext_foreign_release(&a->fa);
    a->has_foreign = false;
}
/* After a CPU launch (whether it failed or not): the elements of every staged array the
 * kernel writes are copied back into the caller's array, one by one (the bytes between
 * them are not the kernel's), and the copies freed. */
void ext_unstage_cpu(const EntryObject *e, Arg *a, int n);
/* Packs classified arguments into the 8-byte slots of entry e (docs/abi.md):
 * arrays as data pointer (a device address for a GPU launch), shape and
 * element strides; scalars converted to the compiled dtype; a misaligned host array on
 * the CPU as an aligned copy (MemoryError when none can be made).  Sets the slot
 * offset of each parameter in off.  -1 with an exception (a read-only array
 * the kernel writes, a scalar that does not fit: OverflowError). */
int ext_pack(const EntryObject *e, Arg *a, int n, PyObject *names, PyObject *kname,
             int64_t *slots, int *off, bool gpu);

/* key_of */
extern PyMethodDef ext_args_functions[];

#endif
