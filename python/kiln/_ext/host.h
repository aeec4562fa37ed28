/* host.h: events, page-locked host memory, device attributes (host.c). */
#ifndef KILN_EXT_HOST_H
#define KILN_EXT_HOST_H

#include "devarray.h"

int ext_host_types(PyObject *module, ModState *st);
extern PyMethodDef ext_host_functions[];

#endif
