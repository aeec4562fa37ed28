/* layoutsig.h: the signatures that pick a kiln.fuse call's plan (layoutsig.c). */
#ifndef KILN_EXT_LAYOUTSIG_H
#define KILN_EXT_LAYOUTSIG_H

#include "state.h"

/* layout_sig, call_sig */
extern PyMethodDef ext_layoutsig_functions[];

#endif
