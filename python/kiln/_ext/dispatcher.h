/* dispatcher.h: the Dispatcher, base of every kiln kernel (dispatcher.c). */
#ifndef KILN_EXT_DISPATCHER_H
#define KILN_EXT_DISPATCHER_H

#include "state.h"

/* Creates kiln._kiln.DispatcherBase. */
int ext_dispatcher_init(PyObject *module, ModState *st);

#endif
