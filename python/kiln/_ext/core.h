/* core.h: the bridge to the C core: translate, build, load (core.c). */
#ifndef KILN_EXT_CORE_H
#define KILN_EXT_CORE_H

#include "state.h"

/* Creates kiln._kiln.Program and adds translate, infer_return, cpu_build,
 * cpu_entry, cuda_entry, parse_signature, argtype_str and cpu_compiler. */
int ext_core_init(PyObject *module, ModState *st);

#endif
