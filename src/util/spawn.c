/* spawn.c: see spawn.h. */
#include "util/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The supervisor of a compiler in a group of its own, run as
 * `sh -c SUPERVISE kiln-cc DIR PRELOAD PATH ARGS...`: on SIGTERM (its
 * parent-death signal, or spawn_stop's) it passes the signal to the whole
 * group, the compiler's cc1 and as included (they outlive a killed driver),
 * waits for them and removes DIR, the build's directory, which a killed kiln
 * leaves.  The shell runs without LD_PRELOAD (a preloaded sanitizer runtime
 * crashes dash) and gives the compiler PRELOAD back. */
static const char SUPERVISE[] =
    "d=$1; p=$2; shift 2\n"
    "if [ -n \"$p\" ]; then LD_PRELOAD=$p; export LD_PRELOAD; fi\n"
    "trap 'trap \"\" TERM; kill -TERM 0; wait; [ -z \"$d\" ] || rm -rf -- \"$d\"; exit 143' TERM\n"
    "\"$@\" &\n"
    "wait $!\n";
static const char SHELL[] = "/bin/sh";

typedef struct ChildArg {
    char **argv;
    char **envp;
    int out_fd;
    bool own_group;
    pid_t parent;
    volatile int err; /* why the child could not exec (it shares our memory) */
} ChildArg;

/* The kernel's struct sigaction (not libc's): the child calls the kernel
 * directly. */
typedef struct KSigaction {
    void (*handler)(int);
    unsigned long flags;
    void (*restorer)(void);
    uint64_t mask;
} KSigaction;

/* Runs in the vfork child, which shares the parent's memory and stack until it execs: raw
 * system calls only (a sanitizer's interceptor would write its own state,
 * which the parent shares), no allocation, nothing instrumented. */
__attribute__((no_sanitize("address", "undefined", "thread"), noreturn)) static void child_main(ChildArg *a) {
    long r;
    /* the parent's handlers are not to run here: their defaults (the child has
     * a copy of the table, it does not share it) */
    for (int s = 1; s <= 64; s++) {
        KSigaction old, dfl = {SIG_DFL, 0, NULL, 0};
        if (s == SIGKILL || s == SIGSTOP ||
            syscall(SYS_rt_sigaction, s, NULL, &old, sizeof old.mask) != 0)
            continue;
        if (old.handler != SIG_IGN && old.handler != SIG_DFL)
            syscall(SYS_rt_sigaction, s, &dfl, NULL, sizeof dfl.mask);
    }
    if (a->own_group && (r = syscall(SYS_setpgid, 0, 0)) != 0) goto fail;
    if ((r = syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0)) != 0) goto fail;
    if (syscall(SYS_getppid) != a->parent) { /* the parent ended before the line above */
        a->err = ESRCH;
        syscall(SYS_exit_group, 127);
    }
    /* the output pipe above the standard descriptors first: a process that
     * closed them gets them back from pipe() */
    long out = syscall(SYS_fcntl, a->out_fd, F_DUPFD, 3);
    if ((r = out) < 0) goto fail;
    long nul = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
    if ((r = nul) < 0 || (nul != 0 && (r = syscall(SYS_dup3, nul, 0, 0)) < 0)) goto fail;
    if ((r = syscall(SYS_dup3, out, 1, 0)) < 0 || (r = syscall(SYS_dup3, out, 2, 0)) < 0)
        goto fail;
    uint64_t none = 0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof none);
    r = syscall(SYS_execve, a->argv[0], a->argv, a->envp);
fail:
    a->err = errno ? errno : EINVAL;
    syscall(SYS_exit_group, 127);
    __builtin_unreachable();
}

/* Where execvp would find word: 0 and *path set (malloc'd), or an errno value. */
static int resolve(const char *word, char **path) {
    if (!*word) return ENOENT;
    if (strchr(word, '/')) {
        if (access(word, X_OK) != 0) return errno;
        *path = strdup(word);
        return *path ? 0 : ENOMEM;
    }
    const char *dirs = getenv("PATH");
    if (!dirs) dirs = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    for (;;) {
        size_t n = strcspn(dirs, ":");
        char cand[PATH_MAX];
        struct stat st;
        int w = snprintf(cand, sizeof cand, "%.*s%s%s", (int)n, n ? dirs : ".",
                         n && dirs[n - 1] == '/' ? "" : "/", word);
        if (w > 0 && (size_t)w < sizeof cand && stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(cand, X_OK) == 0) {
                *path = strdup(cand);
                return *path ? 0 : ENOMEM;
            }
            err = EACCES;
        }
        if (!dirs[n]) return err;
        dirs += n + 1;
    }
}

int spawn_start(char **argv, int out_fd, bool own_group, const char *dir, pid_t *pid) {
    char *path = NULL;
    int err = resolve(argv[0], &path);
    if (err) return err;
    int argc = 0;
    while (argv[argc]) argc++;
    /* the supervising shell's words, then the compiler's */
    char **words = calloc((size_t)argc + 7, sizeof *words);
    if (!words) {
        free(path);
        return ENOMEM;
    }
    int k = 0, nenv = 0;
    while (environ[nenv]) nenv++;
    char **envp = environ, **shenv = NULL;
    if (own_group && access(SHELL, X_OK) == 0 && (shenv = calloc((size_t)nenv + 1, sizeof *shenv))) {
        const char *preload = getenv("LD_PRELOAD");
        for (int i = 0, j = 0; i < nenv; i++)
            if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0) shenv[j++] = environ[i];
        envp = shenv;
        words[k++] = (char *)SHELL;
        words[k++] = (char *)"-c";
        words[k++] = (char *)SUPERVISE;
        words[k++] = (char *)"kiln-cc";
        words[k++] = (char *)(dir ? dir : "");
        words[k++] = (char *)(preload ? preload : "");
    }
    words[k++] = path;
    for (int i = 1; i < argc; i++) words[k++] = argv[i];
    words[k] = NULL;
    ChildArg a = {words, envp, out_fd, own_group, getpid(), 0};
    /* no signal handler may run in the child before it resets them */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid_t p = vfork();
    if (p == 0) child_main(&a); /* never returns */
    err = p < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    free(shenv);
    free(words);
    free(path);
    if (p < 0) return err;
    if (a.err) { /* the child is gone: reap it */
        int st;
        while (waitpid(p, &st, 0) < 0 && errno == EINTR) {}
        return a.err;
    }
    *pid = p;
    return 0;
}

void spawn_stop(pid_t pid, bool own_group, int *status) {
    pid_t target = own_group ? -pid : pid;
    kill(target, SIGTERM);
    for (int waited = 0; waited < SPAWN_GRACE_MS; waited += 5) {
        siginfo_t si;
        si.si_pid = 0;
        /* exited but not reaped: its process group id cannot be reused yet */
        if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid)
            break;
        struct timespec d = {0, 5 * 1000000L};
        nanosleep(&d, NULL);
    }
    kill(target, SIGKILL); /* what is left of it: a hung one, or its cc1 and as */
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) {}
}
