/* dispatcher.h: the Dispatcher, base of every kiln kernel (dispatcher.c). */
#ifndef KILN_EXT_DISPATCHER_H
#define KILN_EXT_DISPATCHER_H

#include "state.h"

/* disp[blocks, threads] on the default stream, as C: the Launcher (new reference),
 * or NULL with an exception set (not a kernel's dispatcher, dimensions out of range,
 * or the low-occupancy warning turned into an error). */
PyObject *ext_disp_launcher(ModState *st, PyObject *disp, int64_t blocks, int64_t threads);

/* Creates kiln._kiln.DispatcherBase. */
int ext_dispatcher_init(PyObject *module, ModState *st);

#endif
