/* exectext.h: the text given to exec and compile, kept by an audit hook (exectext.c). */
#ifndef KILN_EXT_EXECTEXT_H
#define KILN_EXT_EXECTEXT_H

#include "state.h"

/* Installs the hook once per process (audit hooks cannot be removed); 0 or -1. */
int ext_exectext_init(void);

/* exec_texts */
extern PyMethodDef ext_exectext_functions[];

#endif
