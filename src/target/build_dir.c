/* build_dir.c: see build_dir.h. */
#include "target/build_dir.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void build_dir_remove(const char *dir) {
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            char p[4096];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* Whether name is kiln-PID-XXXXXX of a process that has ended. */
static bool of_an_ended_process(const char *name) {
    if (strncmp(name, "kiln-", 5) != 0) return false;
    char *end;
    errno = 0;
    long pid = strtol(name + 5, &end, 10);
    if (errno || pid <= 0 || *end != '-' || strlen(end + 1) != 6) return false;
    return pid != (long)getpid() && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes the stale build directories of ended processes of this user under tmp. */
static void sweep(const char *tmp) {
    DIR *d = opendir(tmp);
    if (!d) return;
    time_t now = time(NULL);
    uid_t me = getuid();
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!of_an_ended_process(e->d_name)) continue;
        char p[4096];
        struct stat st;
        int w = snprintf(p, sizeof p, "%s/%s", tmp, e->d_name);
        if (w <= 0 || (size_t)w >= sizeof p || lstat(p, &st) != 0 || !S_ISDIR(st.st_mode) ||
            st.st_uid != me || now - st.st_mtime < BUILD_DIR_STALE_S)
            continue;
        build_dir_remove(p);
    }
    closedir(d);
}

int build_dir_make(char *dir, size_t n, const char *tmp) {
    sweep(tmp);
    /* mkdtemp's template: six X characters it replaces */
    static const char six_x[] = {'X', 'X', 'X', 'X', 'X', 'X', 0};
    int w = snprintf(dir, n, "%s/kiln-%ld-%s", tmp, (long)getpid(), six_x);
    if (w <= 0 || (size_t)w >= n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return mkdtemp(dir) ? 0 : -1;
}
