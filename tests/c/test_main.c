/* test_main.c: runs every C test; the list is kept here by hand so that a
 * test that is written but not listed is a compile warning
 * (-Wmissing-prototypes), not a silent skip. */
#include <stdlib.h>

#include "test.h"

int test_failures;

void test_fail(const char *file, int line, const char *what) {
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, what);
    test_failures++;
}

#define T(name) void test_##name(void);
#include "tests.def"
#undef T

static const struct {
    const char *name;
    test_fn fn;
} tests[] = {
#define T(name) {#name, test_##name},
#include "tests.def"
#undef T
};

int cache_writer(const char *dir); /* test_cache.c */

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--cache-writer") == 0) return cache_writer(argv[2]);
    int run = 0;
    for (size_t i = 0; i < sizeof tests / sizeof *tests; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        int before = test_failures;
        tests[i].fn();
        run++;
        if (test_failures > before) fprintf(stderr, "  in test %s\n", tests[i].name);
    }
    printf("%d tests, %d failures\n", run, test_failures);
    return test_failures ? 1 : 0;
}
