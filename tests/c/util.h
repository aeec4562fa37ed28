/* util.h: helpers shared by the C tests: translate a kernel from a string
 * with a resolver that knows math, numpy, kiln and the builtins, and collect
 * the diagnostics as text. */
#ifndef KILN_TEST_UTIL_H
#define KILN_TEST_UTIL_H

#include "kiln.h"

typedef struct TResult {
    kiln_program *prog; /* NULL on error */
    char diags[8192];   /* all diagnostics, formatted, newline separated */
    int nerrors;
} TResult;

/* Translates the first function of `src` for the signature `sig`. */
TResult *tr(const char *src, const char *sig, kiln_target target);
void tr_free(TResult *r);

#endif
