/* chars.h: NumPy fixed-width strings (bytes 'S', unicode 'U') as kernels write them.
 *
 * A string field of a record, or the element of an array of a string dtype (a record of
 * one unnamed field: kiln/_records.py), is a subarray of its code units (uint8 for 'S',
 * uint32 UCS-4 for 'U') marked kiln_field.chars.  Kernels store string constants into
 * them, as Numba does: the characters cut at the width and padded with zeros, as NumPy
 * stores a string into such an element. */
#ifndef KILN_CHARS_H
#define KILN_CHARS_H

#include "types.h"

/* The string field that a value of type t is (a chars subarray field r.y, or a string
 * dtype's element a[i]), or NULL. */
const kiln_field *chars_field(const Type *t);
/* Bytes of the field: its code units times their size. */
int64_t chars_width(const kiln_field *f);
/* The bytes string literal n, or the string constant a name of type t holds (strings.c),
 * stores into field f (its whole width, zero-padded) into out (chars_width(f) bytes; NULL
 * only checks); NULL, or a message saying why it cannot be stored (escapes, non-ASCII
 * bytes, bad UTF-8, not a constant). */
const char *chars_encode(const Node *n, const Type *t, const kiln_field *f, unsigned char *out);

#endif
