/* tsan_race.c: a data race on purpose, the check that `make test-tsan` can see one.
 *
 * `make test-tsan` runs the thread tests in an uninstrumented interpreter with
 * libtsan preloaded and kiln built with -fsanitize=thread.  That set-up fails
 * silently if the runtime is not the one the code was built against or the
 * preload does not take: every test then passes and proves nothing.  So before
 * the tests, the same interpreter loads this library (built only in a
 * -Db_sanitize=thread build) through ctypes and calls kiln_tsan_race(): two
 * threads increment one int without a lock, and the run must end in a
 * ThreadSanitizer report.
 */
#include <pthread.h>

int kiln_tsan_race(void);

static int counter; /* unguarded on purpose */

static void *bump(void *arg) {
    (void)arg;
    for (int i = 0; i < 1000; i++) counter++;
    return NULL;
}

int kiln_tsan_race(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, bump, NULL);
    pthread_create(&b, NULL, bump, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    return counter;
}
