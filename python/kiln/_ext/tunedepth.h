/* tunedepth.h: the thread's max-autotune depth (tunedepth.c). */
#ifndef KILN_EXT_TUNEDEPTH_H
#define KILN_EXT_TUNEDEPTH_H

#include "state.h"

/* tune_call, tuning */
extern PyMethodDef ext_tunedepth_functions[];

#endif
