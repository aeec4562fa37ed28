/* test.h: a minimal test harness for kiln's C core.
 *
 * TEST(name) defines a test; CHECK(cond) records a failure with its place and
 * goes on.  Tests register themselves in a table built by test_main.c. */
#ifndef KILN_TEST_H
#define KILN_TEST_H

#include <stdio.h>
#include <string.h>

extern int test_failures;
void test_fail(const char *file, int line, const char *what);

#define CHECK(c)                                                   \
    do {                                                           \
        if (!(c)) test_fail(__FILE__, __LINE__, #c);               \
    } while (0)
#define CHECK_STR(a, b)                                                    \
    do {                                                                   \
        const char *a_ = (a), *b_ = (b);                                   \
        if (!a_ || !b_ || strcmp(a_, b_) != 0) {                           \
            test_fail(__FILE__, __LINE__, #a " == " #b);                   \
            fprintf(stderr, "    got: %s\n    want: %s\n", a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
        }                                                                  \
    } while (0)
#define CHECK_CONTAINS(hay, needle)                                                \
    do {                                                                           \
        const char *h_ = (hay), *n_ = (needle);                                    \
        if (!h_ || !strstr(h_, n_)) {                                              \
            test_fail(__FILE__, __LINE__, #hay " contains " #needle);              \
            fprintf(stderr, "    text: %s\n    missing: %s\n", h_ ? h_ : "(null)", n_); \
        }                                                                          \
    } while (0)

typedef void (*test_fn)(void);
#define TEST(name)            \
    void test_##name(void); \
    void test_##name(void)

#endif
