/* emit.h: from the typed IR to target source.
 *
 * One emitter writes both targets: CUDA C++ and C with OpenMP are the same
 * language for everything a kernel body does, and the differences (thread
 * coordinates, atomics, shared memory, the entry point) live in the target
 * preludes (rt_cpu.h, rt_cuda.h) and in the entry function written here.
 * Every statement is preceded by a #line marker pointing at the user's .py
 * file, so a C compiler's message, a debugger or a profiler shows Python lines.
 */
#ifndef KILN_EMIT_H
#define KILN_EMIT_H

#include "sema/sema.h"

/* The generated source's first line carries the C compiler flags the CPU
 * build adds (fastmath), after this marker. */
#define KILN_CFLAGS_MARKER "// kiln-cflags:"

/* Parameter packing: each parameter takes slots of 8 bytes in the launch's
 * parameter buffer: a scalar one slot (its value in the low bytes), an array
 * 1 + 2 * ndim slots (data pointer, shape, element strides). */
int emit_param_slots(const Type *t);

/* Emits the program for r.  Returns 0 with the source in *out and the names
 * of the source files that runtime errors refer to in *files (arena
 * strings), or -1 after reporting an error.  On the CPU, *vec (when not NULL)
 * gets tier 0's vector entry (kiln_ventry, emit_tier0.c), to be compiled
 * after the source, or stays empty for a kernel it does not cover. */
int emit_program(Compiler *C, const SemaResult *r, Buf *out, PtrVec *files, Buf *vec);

#endif
