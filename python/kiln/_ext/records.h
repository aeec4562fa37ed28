/* records.h: NumPy structured dtypes as kiln record layouts (records.c). */
#ifndef KILN_EXT_RECORDS_H
#define KILN_EXT_RECORDS_H

#include "state.h"

/* The record id (the argtype dtype is KILN_RECORD0 + id) of a structured NumPy dtype,
 * registering its layout at the first sight; -1 with a TypeError for a dtype kernels
 * cannot take (a nested record, an object field...). */
int ext_record_id(PyObject *dtype);
/* A registered record's itemsize, and the alignment its naturally aligned fields need. */
int64_t ext_record_size(int id);
int ext_record_align(int id);
/* A registered datetime64/timedelta64 dtype's unit code (kiln/_records.py), else 0: such an
 * id names no record but the dtype of a device array, which kernels take as int64. */
int ext_record_time(int id);
/* Every registered layout, indexed by id (kiln_options.records). */
const kiln_record *ext_records(int *n);

/* record_id(dtype) -> int; record_dtype(id) -> dtype */
extern PyMethodDef ext_records_functions[];

#endif
