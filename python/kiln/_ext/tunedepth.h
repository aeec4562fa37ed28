/* tunedepth.h: the thread's max-autotune depth (tunedepth.c). */
#ifndef KILN_EXT_TUNEDEPTH_H
#define KILN_EXT_TUNEDEPTH_H

#include "state.h"

/* Whether this thread is inside a max-autotune step (tuning()). */
bool ext_tuning(void);

/* Creates kiln._kiln.StepBase, the C half of kiln.compile's objects. */
int ext_tunedepth_init(PyObject *module);

/* tune_call, tuning */
extern PyMethodDef ext_tunedepth_functions[];

#endif
