/* cpu.c: the CPU target: compile generated C with the system compiler, load
 * the shared object from memory, launch its entry.
 *
 * The compiler is $KILN_CC (default "cc", split on spaces so "ccache gcc"
 * works), run with -O3 -march=native -fopenmp -shared -fPIC, plus -fwrapv
 * (integers wrap in kernels, they do not overflow into undefined behaviour),
 * -fno-math-errno (libm calls are const and vectorise through libmvec),
 * -fno-trapping-math (kernels never rely on FP traps, and without it GCC will
 * not if-convert a guarded float operation, so the thread loop would not
 * vectorise) and -funroll-loops (data-dependent while loops, as in
 * mandelbrot, run about 10% faster unrolled) and -fno-strict-aliasing (two arguments
 * may be one buffer seen as two dtypes, `a` and `a.view(np.float32)`: kernels are
 * sequential code over memory, as on a GPU, and a store through one must be seen by
 * a load through the other; hunt33).
 * It runs in a private temporary directory that is removed afterwards; the
 * caller releases the GIL around the whole call.  The wait for it polls:
 * Ctrl-C (kiln_ctx_interrupted) or KILN_CC_TIMEOUT_S ends it (run_capture).  When it fails, a one-line
 * file compiled with the same command tells a broken compiler (named, with its
 * command line, status and output) from one that rejects kiln's code (kiln's
 * bug); an exit status of 0 must come with an ELF shared object.
 *
 * Loading uses memfd_create and dlopen("/proc/self/fd/N"), so no file is left
 * behind.  The memfd stays open while the module is loaded: glibc finds
 * already-loaded objects by path name, and an open descriptor's number cannot
 * be handed to another module meanwhile.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "compiler.h"
#include "emit/emit.h"
#include "target/build_dir.h"
#include "target/cpu_module.h"
#include "util/spawn.h"

extern char **environ;

static const char *cc_command(kiln_ctx *ctx) {
    if (!ctx->cc) {
        const char *env = getenv("KILN_CC");
        ctx->cc = strdup(env && *env ? env : "cc");
    }
    return ctx->cc;
}

const char *kiln_cpu_compiler(kiln_ctx *ctx) { return cc_command(ctx); }

/* Splits s on spaces into argv (at most max-1 words); the words live in buf. */
static int split_words(char *buf, char **argv, int max) {
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t", &save); w && n < max - 1; w = strtok_r(NULL, " \t", &save))
        argv[n++] = w;
    argv[n] = NULL;
    return n;
}

#if defined(__x86_64__)
#define CPU_NAME "x86_64"
#elif defined(__aarch64__)
#define CPU_NAME "aarch64"
#elif defined(__powerpc64__)
#define CPU_NAME "ppc64"
#elif defined(__riscv)
#define CPU_NAME "riscv64"
#else
#define CPU_NAME "other"
#endif

const char *kiln_cpu_target_name(void) { return "cpu:" CPU_NAME; }

static const char *const fixed[] = {"-O3",           "-march=native",      "-fopenmp",
                                    "-shared",       "-fPIC",              "-fwrapv",
                                    "-fno-math-errno", "-fno-trapping-math", "-funroll-loops",
                                    "-fno-strict-aliasing", "-w", "-std=gnu11"};

/* Appends what identifies the program `word` runs: its resolved path, size,
 * modification time and inode (an upgraded compiler is a new file). */
static void describe_program(Buf *b, const char *word) {
    char found[4096] = "";
    if (strchr(word, '/')) {
        snprintf(found, sizeof found, "%s", word);
    } else {
        const char *path = getenv("PATH");
        if (!path) path = "/usr/bin:/bin";
        while (*path && !*found) {
            size_t n = strcspn(path, ":");
            char cand[4096];
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? path : ".", word);
            if (access(cand, X_OK) == 0) snprintf(found, sizeof found, "%s", cand);
            path += n + (path[n] == ':');
        }
    }
    char real[4096];
    struct stat st;
    if (*found && realpath(found, real) && stat(real, &st) == 0)
        buf_printf(b, " %s=%s:%lld:%lld.%09ld:%llu", word, real, (long long)st.st_size,
                   (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
                   (unsigned long long)st.st_ino);
    else
        buf_printf(b, " %s=?", word);
}

/* What -march=native sees: the processor's identification and feature bits. */
static void describe_isa(Buf *b) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned r[4], max = __get_cpuid_max(0, NULL), xmax = __get_cpuid_max(0x80000000u, NULL);
    static const unsigned leaves[] = {0, 1, 7, 0xd, 0x80000001u, 0x80000002u, 0x80000003u,
                                      0x80000004u};
    buf_printf(b, " isa=x86");
    for (size_t i = 0; i < COUNTOF(leaves); i++) {
        unsigned leaf = leaves[i];
        if (leaf < 0x80000000u ? leaf > max : leaf > xmax) continue;
        __cpuid_count(leaf, 0, r[0], r[1], r[2], r[3]);
        if (leaf == 1) r[1] &= 0x0000ffffu; /* drop the APIC id and processor count */
        buf_printf(b, ":%x.%x.%x.%x", r[0], r[1], r[2], r[3]);
    }
#else
    /* elsewhere the kernel's description of the first processor */
    int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
    char text[4096];
    ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
    if (fd >= 0) close(fd);
    text[n > 0 ? n : 0] = 0;
    char *end = strstr(text, "\n\n");
    if (end) *end = 0;
    for (char *p = text; *p; p++)
        if (*p == '\n') *p = ';';
    buf_printf(b, " isa=%s", text);
#endif
}

const char *kiln_cpu_target(kiln_ctx *ctx) {
    if (ctx->cc_id) return ctx->cc_id;
    Buf b;
    buf_init(&b);
    buf_printf(&b, "cpu:%s kiln=%s cc=%s", CPU_NAME, kiln_version(), cc_command(ctx));
    char words[1024];
    snprintf(words, sizeof words, "%s", cc_command(ctx));
    char *argv[32];
    int n = split_words(words, argv, 32);
    for (int i = 0; i < n; i++)
        if (argv[i][0] != '-') describe_program(&b, argv[i]);
    describe_isa(&b);
    buf_printf(&b, " flags=");
    for (size_t i = 0; i < COUNTOF(fixed); i++) buf_printf(&b, "%s ", fixed[i]);
    ctx->cc_id = b.p ? strdup(b.p) : NULL;
    buf_free(&b);
    return ctx->cc_id ? ctx->cc_id : "cpu";
}

static int write_all(int fd, const void *p, size_t n) {
    const char *s = p;
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The largest shared object kiln takes from the compiler: a kernel's is tens of KiB;
 * one past this is a broken compiler's (a sparse file of gigabytes), not read. */
enum { KILN_MAX_KERNEL_SO_BYTES = 256 << 20 };

/* Reads a file whole (at most KILN_MAX_KERNEL_SO_BYTES): 0, or -1. */
static int read_file(const char *path, void **data, size_t *len) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || st.st_size <= 0 || st.st_size > KILN_MAX_KERNEL_SO_BYTES) {
        close(fd);
        return -1;
    }
    char *p = malloc((size_t)st.st_size);
    if (!p) {
        close(fd);
        return -1;
    }
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) {
            free(p);
            close(fd);
            return -1;
        }
        got += (size_t)r;
    }
    close(fd);
    *data = p;
    *len = got;
    return 0;
}

/* How long one run of the C compiler may take before kiln stops it, in
 * seconds: a compiler that never returns must not hang the first call of a
 * kernel.  KILN_CC_TIMEOUT (seconds) overrides it. */
enum { KILN_CC_TIMEOUT_S = 600 };
/* the least KILN_CC_TIMEOUT kiln takes: a millisecond */
#define KILN_CC_TIMEOUT_MIN_S 0.001
/* How much of a broken compiler's output an error quotes (its end). */
enum { KILN_CC_OUTPUT_TAIL = 1500 };
/* How much of the compiler's output is kept at all. */
enum { KILN_CC_OUTPUT_MAX = 64 * 1024 };

/* What run_capture saw. */
enum { RUN_CANNOT = -1, RUN_INTERRUPTED = -2, RUN_TIMED_OUT = -3 };

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The time limit in seconds: KILN_CC_TIMEOUT or KILN_CC_TIMEOUT_S; -1 after
 * reporting a malformed value. */
static double cc_timeout(kiln_ctx *ctx) {
    const char *env = getenv("KILN_CC_TIMEOUT");
    if (!env || !*env) return KILN_CC_TIMEOUT_S;
    /* decimal digits with at most one point: no hex, exponent, inf or sign, which
     * strtod would take (0x10 for 16 s, 1e-300 for no time at all) */
    size_t digits = strspn(env, "0123456789."), dots = 0;
    for (const char *p = env; *p; p++) dots += *p == '.';
    char *end;
    double v = strtod(env, &end);
    if (digits != strlen(env) || dots > 1 || end == env || *end || !(v >= KILN_CC_TIMEOUT_MIN_S) ||
        v > 1e9) {
        diag_plain(ctx, KILN_ERROR, "set it to a number of seconds, e.g. KILN_CC_TIMEOUT=600",
                   "KILN_CC_TIMEOUT=%s is not a positive number of seconds (decimal, at least "
                   "0.001)", env);
        return -1;
    }
    return v;
}

/* Runs argv, collecting stdout and stderr into out.  The wait polls: every
 * KILN_POLL_MS it asks kiln_ctx_interrupted, and past timeout_s it gives up;
 * either way it stops the compiler (spawn_stop: SIGTERM, then SIGKILL) and
 * reaps it; the compiler itself gets SIGTERM if kiln's process ends first
 * (spawn.h).  When ctx has an interrupt
 * function the compiler runs in a process group of its own: the terminal's
 * Ctrl-C reaches kiln, which decides (a compile on another thread goes on), and
 * kill(-pid) reaches everything it started (a driver's cc1 and as).  Without
 * one (the CLI) it stays in the caller's group, so Ctrl-C ends both as before.
 * Returns the exit status (128 + the signal for a killed compiler), or
 * RUN_CANNOT (errno set), RUN_INTERRUPTED or RUN_TIMED_OUT.  dir is the
 * build's directory, which the compiler's supervisor removes if kiln's
 * process ends first. */
static int run_capture(kiln_ctx *ctx, char **argv, const char *dir, double timeout_s, Buf *out) {
    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) < 0) return RUN_CANNOT;
    const bool own_group = ctx && ctx->interrupt;
    pid_t pid;
    int rc = spawn_start(argv, pipefd[1], own_group, dir, &pid);
    close(pipefd[1]);
    if (rc != 0) {
        close(pipefd[0]);
        errno = rc;
        return RUN_CANNOT;
    }
    int fl = fcntl(pipefd[0], F_GETFL);
    if (fl >= 0) fcntl(pipefd[0], F_SETFL, fl | O_NONBLOCK);
    const double deadline = now_s() + timeout_s;
    bool eof = false, exited = false;
    int status = 0, result = 0, nap_ms = 1;
    char buf[4096];
    for (;;) {
        if (!eof) {
            struct pollfd pfd = {pipefd[0], POLLIN, 0};
            int pr = poll(&pfd, 1, exited ? 0 : KILN_POLL_MS);
            if (pr > 0) {
                ssize_t r = read(pipefd[0], buf, sizeof buf);
                if (r > 0) {
                    if (out->len < KILN_CC_OUTPUT_MAX) buf_put(out, buf, (size_t)r);
                    continue;
                }
                if (r == 0 || (errno != EINTR && errno != EAGAIN)) eof = true;
            } else if (pr == 0 && exited) {
                eof = true; /* the compiler is gone; whatever still holds the pipe is not it */
            }
        } else if (!exited) {
            /* the output closed first: wait for the exit in short naps */
            struct timespec ts = {0, (long)nap_ms * 1000000L};
            nanosleep(&ts, NULL);
            nap_ms = nap_ms * 2 > KILN_POLL_MS ? KILN_POLL_MS : nap_ms * 2;
        }
        if (!exited) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) exited = true;
            else if (w < 0 && errno != EINTR) {
                result = RUN_CANNOT;
                break;
            }
        }
        if (exited && eof) break;
        if (exited) continue; /* drain what is already in the pipe */
        if (kiln_ctx_interrupted(ctx)) {
            result = RUN_INTERRUPTED;
            break;
        }
        if (now_s() >= deadline) {
            result = RUN_TIMED_OUT;
            break;
        }
    }
    close(pipefd[0]);
    if (!exited) {
        spawn_stop(pid, own_group, &status);
        return result;
    }
    if (result != 0) return result;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* What the environment lacks, when a compiler's output says it ran out of something (disk,
 * descriptors, processes, memory): the hint, or NULL when the output says nothing such. */
static const char *env_shortage(const Buf *out) {
    static const struct {
        const char *says, *hint;
    } causes[] = {
        {"No space left on device",
         "the disk of TMPDIR (or /tmp) is full: free space there, or point TMPDIR at another "
         "disk; the compiler is not at fault"},
        {"Disk quota exceeded", "the disk quota of TMPDIR (or /tmp) is used up: free space there, "
                                "or point TMPDIR at another disk"},
        {"Too many open files", "the process ran out of file descriptors: raise the limit "
                                "(ulimit -n); the compiler is not at fault"},
        {"out of file descriptors", "the process ran out of file descriptors: raise the limit "
                                    "(ulimit -n); the compiler is not at fault"},
        {"Resource temporarily unavailable", "the process limit (ulimit -u) or the memory is "
                                             "used up; the compiler is not at fault"},
        {"Cannot allocate memory", "the machine or the process (ulimit -v) is out of memory; the "
                                   "compiler is not at fault"},
        {"out of memory", "the machine or the process (ulimit -v) is out of memory; the "
                          "compiler is not at fault"},
        {"virtual memory exhausted", "the machine or the process (ulimit -v) is out of memory; "
                                     "the compiler is not at fault"},
        {"File too large", "the file size limit (ulimit -f) stopped the compiler's output; "
                           "the compiler is not at fault"},
    };
    for (size_t i = 0; out->p && i < COUNTOF(causes); i++)
        if (strstr(out->p, causes[i].says)) return causes[i].hint;
    return NULL;
}

/* Whether the compiler's first error is in a file of the user's (a link= source, or a
 * header it includes: .cu, .cuh, .h, .c...), not in the generated code (the build's own
 * file, `<kiln entry>`, or a kernel's .py line). */
static bool linked_source_error(const Buf *out, const char *cpath) {
    const char *e = out->p ? strstr(out->p, "error:") : NULL;
    if (!e) return false;
    const char *line = e;
    while (line > out->p && line[-1] != '\n') line--;
    const char *colon = memchr(line, ':', (size_t)(e - line));
    if (!colon || colon == line) return false;
    size_t n = (size_t)(colon - line);
    const char *base = strrchr(cpath, '/');
    base = base ? base + 1 : cpath;
    size_t bn = strlen(base); /* the build's own file, by its path or its name */
    if (n >= bn && memcmp(colon - bn, base, bn) == 0 && (n == bn || colon[-(long)bn - 1] == '/'))
        return false;
    if (n >= 5 && memcmp(line, "<kiln", 5) == 0) return false; /* <kiln entry>, <kiln program> */
    if (line[0] == '<') return true;  /* a CUSource's name: <CUSource> unless it was given one */
    if (n > 3 && memcmp(colon - 3, ".py", 3) == 0) return false;
    static const char *const exts[] = {".cu", ".cuh", ".h", ".hpp", ".c", ".cc", ".cpp", ".inc"};
    for (size_t i = 0; i < COUNTOF(exts); i++) {
        size_t k = strlen(exts[i]);
        if (n > k && memcmp(colon - k, exts[i], k) == 0) return true;
    }
    return false;
}

/* Names the compiler for messages: which command, and where it came from. */
static void put_cc(Buf *b, kiln_ctx *ctx) {
    const char *env = getenv("KILN_CC");
    if (env && *env) buf_printf(b, "the C compiler named by KILN_CC (%s)", cc_command(ctx));
    else buf_printf(b, "the C compiler '%s' (the default; KILN_CC names another)", cc_command(ctx));
}

/* The command line, words joined by spaces, for messages. */
static void put_command(Buf *b, char **argv) {
    for (int i = 0; argv[i]; i++) buf_printf(b, "%s%s", i ? " " : "", argv[i]);
}

/* How a run ended, for messages: "exited with status 1". */
static void put_status(Buf *b, int rc) {
    if (rc > 128) buf_printf(b, "was killed by signal %d", rc - 128);
    else buf_printf(b, "exited with status %d", rc);
}

/* The last KILN_CC_OUTPUT_TAIL bytes of the output, from a line start. */
static void put_tail(Buf *b, const Buf *out) {
    if (!out->p || out->len == 0) {
        buf_puts(b, "(it printed nothing)");
        return;
    }
    const char *s = out->p;
    size_t n = out->len;
    if (n > KILN_CC_OUTPUT_TAIL) {
        const char *cut = s + n - KILN_CC_OUTPUT_TAIL;
        const char *nl = memchr(cut, '\n', (size_t)(s + n - cut));
        s = nl && nl + 1 < out->p + n ? nl + 1 : cut;
        buf_puts(b, "...\n");
        n = (size_t)(out->p + n - s);
    }
    buf_put(b, s, n);
}

/* Whether the compiler builds a one-line C file with the same command: the
 * test that tells a broken compiler from one that rejects kiln's code.  1
 * yes, 0 no, -1 interrupted or timed out (reported by the caller's path). */
static int compiler_works(kiln_ctx *ctx, char **argv, int n, const char *dir,
                          const char *kernel_c, const char *kernel_so, double timeout_s) {
    char cpath[4200], sopath[4200];
    snprintf(cpath, sizeof cpath, "%s/probe.c", dir);
    snprintf(sopath, sizeof sopath, "%s/probe.so", dir);
    static const char probe[] = "int kiln_probe(int x) { return x + 1; }\n";
    int fd = open(cpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write_all(fd, probe, sizeof probe - 1) < 0) {
        if (fd >= 0) close(fd);
        return 1; /* cannot tell: do not blame the compiler */
    }
    close(fd);
    /* the same words, with the input and output replaced */
    char *pv[96];
    for (int i = 0; i < n; i++)
        pv[i] = argv[i] == kernel_c ? cpath : argv[i] == kernel_so ? sopath : argv[i];
    pv[n] = NULL;
    Buf out;
    buf_init(&out);
    int rc = run_capture(ctx, pv, dir, timeout_s, &out);
    buf_free(&out);
    if (rc == RUN_INTERRUPTED || rc == RUN_TIMED_OUT) return -1;
    struct stat st;
    return rc == 0 && stat(sopath, &st) == 0 && st.st_size > 0;
}

/* Whether the bytes start as an ELF shared object's. */
/* Reads an n-byte unsigned field at off of an ELF file in its byte order (b[5]: 1
 * little-endian, 2 big-endian). */
static uint64_t elf_field(const unsigned char *b, size_t off, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) {
        int k = b[5] == 2 ? i : n - 1 - i;
        v = v << 8 | b[off + (size_t)k];
    }
    return v;
}

/* Whether p is a whole ELF shared object of this machine's class: a dynamic object
 * (e_type 3) whose program headers, and every segment's bytes in the file, lie within
 * its len bytes (1, else 0).  A truncated object (a compiler killed mid-write, a damaged cache
 * entry or bundle) would otherwise be mapped by dlopen past the end of its file, and
 * the first touch of those pages kills the process with SIGBUS. */
int kiln_cpu_blob_ok(const void *p, size_t len) {
    const unsigned char *b = p;
    const int wide = sizeof(void *) == 8; /* ELFCLASS64 (2) on a 64-bit host */
    if (len < 64 || memcmp(b, "\177ELF", 4) != 0 || b[4] != (wide ? 2 : 1) ||
        (b[5] != 1 && b[5] != 2) || elf_field(b, 16, 2) != 3)
        return false;
    uint64_t phoff = elf_field(b, wide ? 32 : 28, wide ? 8 : 4);
    uint64_t phentsize = elf_field(b, wide ? 54 : 42, 2);
    uint64_t phnum = elf_field(b, wide ? 56 : 44, 2);
    if (phentsize < (wide ? 56u : 32u) || phnum == 0 || phoff > len ||
        phnum * phentsize > len - phoff)
        return false;
    /* the section headers, which compilers write last: a cut anywhere shows there */
    uint64_t shoff = elf_field(b, wide ? 40 : 32, wide ? 8 : 4);
    uint64_t shentsize = elf_field(b, wide ? 58 : 46, 2);
    uint64_t shnum = elf_field(b, wide ? 60 : 48, 2);
    if (shoff > len || shnum * shentsize > len - shoff) return false;
    for (uint64_t i = 0; i < phnum; i++) {
        size_t h = (size_t)(phoff + i * phentsize);
        uint64_t off = elf_field(b, h + (wide ? 8 : 4), wide ? 8 : 4);
        uint64_t filesz = elf_field(b, h + (wide ? 32 : 16), wide ? 8 : 4);
        if (elf_field(b, h, 4) != 0 && (off > len || filesz > len - off)) return false;
    }
    return true;
}

int kiln_cpu_build(kiln_ctx *ctx, const char *src, size_t len, void **blob, size_t *blob_len) {
    *blob = NULL;
    *blob_len = 0;
    const double timeout_s = cc_timeout(ctx);
    if (timeout_s < 0) return -1;
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    char dir[4096];
    if (build_dir_make(dir, sizeof dir, tmp) != 0) {
        diag_plain(ctx, KILN_ERROR, "set TMPDIR to a writable directory",
                   "cannot create a temporary directory in %s: %s", tmp, strerror(errno));
        return -1;
    }
    char cpath[4200], sopath[4200];
    snprintf(cpath, sizeof cpath, "%s/kernel.c", dir);
    snprintf(sopath, sizeof sopath, "%s/kernel.so", dir);
    int fd = open(cpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write_all(fd, src, len) < 0) {
        diag_plain(ctx, KILN_ERROR, NULL, "cannot write %s: %s", cpath, strerror(errno));
        if (fd >= 0) close(fd);
        build_dir_remove(dir);
        return -1;
    }
    close(fd);

    /* the command: $KILN_CC, the fixed flags, the source's own flags */
    char ccbuf[1024], flagbuf[256] = "";
    snprintf(ccbuf, sizeof ccbuf, "%s", cc_command(ctx));
    size_t mlen = strlen(KILN_CFLAGS_MARKER);
    if (len > mlen && memcmp(src, KILN_CFLAGS_MARKER, mlen) == 0) {
        const char *e = memchr(src, '\n', len);
        size_t n = e ? (size_t)(e - src) - mlen : 0;
        if (n >= sizeof flagbuf) n = sizeof flagbuf - 1;
        memcpy(flagbuf, src + mlen, n);
        flagbuf[n] = 0;
    }
    char *argv[96];
    int n = split_words(ccbuf, argv, 32);
    if (n == 0) {
        diag_plain(ctx, KILN_ERROR, "set KILN_CC to a C compiler, e.g. gcc", "KILN_CC is empty");
        build_dir_remove(dir);
        return -1;
    }
    for (size_t i = 0; i < COUNTOF(fixed); i++) argv[n++] = (char *)fixed[i];
    n += split_words(flagbuf, argv + n, 16);
    argv[n++] = (char *)"-o";
    argv[n++] = sopath;
    argv[n++] = cpath;
    argv[n++] = (char *)"-lm";
    argv[n] = NULL;

    Buf out, msg;
    buf_init(&out);
    buf_init(&msg);
    int rc = run_capture(ctx, argv, dir, timeout_s, &out);
    const char *hint = NULL;
    if (rc == RUN_CANNOT) {
        buf_puts(&msg, "cannot run ");
        put_cc(&msg, ctx);
        int err = errno;
        buf_printf(&msg, ": '%s': %s", argv[0], strerror(err));
        hint = err == EAGAIN || err == ENOMEM
                   ? "the process limit (ulimit -u) or the memory is used up: no new process "
                     "can start; the compiler is not at fault"
                   : err == EMFILE || err == ENFILE
                   ? "the process ran out of file descriptors: raise the limit (ulimit -n)"
                   : "install a C compiler with OpenMP (gcc) or point KILN_CC at one";
    } else if (rc == RUN_INTERRUPTED) {
        buf_puts(&msg, "interrupted while the C compiler ran");
    } else if (rc == RUN_TIMED_OUT) {
        put_cc(&msg, ctx);
        buf_printf(&msg, " did not finish in %g s; kiln stopped it:\n  ", timeout_s);
        put_command(&msg, argv);
        hint = "a compiler that never returns is broken; if your kernels need longer, "
               "raise KILN_CC_TIMEOUT (seconds)";
    } else if (rc > 128 || (rc != 0 && out.p && (strstr(out.p, "terminated program") ||
                                                  strstr(out.p, "Killed signal")))) {
        /* the compiler (or its cc1) died of a signal: the OOM killer, kill, a crash */
        put_cc(&msg, ctx);
        buf_puts(&msg, " was killed while compiling the kernel (");
        put_status(&msg, rc);
        buf_puts(&msg, "):\n");
        put_tail(&msg, &out);
        int sig = rc > 128 ? rc - 128 : 9;
        hint = sig == 9 || sig == 15
                   ? "the machine may be out of memory (the kernel's C is large?): free memory "
                     "and call again; a kernel with huge tuples or unrolled loops needs less"
                   : "the C compiler crashed: check KILN_CC and the compiler's installation "
                     "(`cc --version`), and report the kernel if the compiler is sound";
    } else if (rc != 0) {
        /* a kernel needs more memory and disk than the one-line probe: a shortage the
         * compiler reports is one whether or not the probe compiles */
        int works = env_shortage(&out) ? 0 : compiler_works(ctx, argv, n, dir, cpath, sopath,
                                                            timeout_s);
        if (works > 0 && linked_source_error(&out, cpath)) {
            buf_printf(&msg, "the C compiler '%s' rejected a source linked into the kernel "
                       "(exit %d):\n%s", argv[0], rc, out.p ? out.p : "");
            hint = "the error is in that file (a link= source or a header it includes): fix "
                   "it there; its #include \"...\" files are looked for beside it";
        } else if (works > 0) {
            buf_printf(&msg, "the C compiler '%s' rejected the generated code (exit %d):\n%s",
                       argv[0], rc, out.p ? out.p : "");
            hint = "this is a bug in kiln's code generation; please report it with the kernel";
        } else if (works == 0 && env_shortage(&out)) {
            put_cc(&msg, ctx);
            buf_puts(&msg, " failed for want of a resource, not for kiln's code:\n  ");
            put_command(&msg, argv);
            buf_puts(&msg, "\n");
            put_status(&msg, rc);
            buf_puts(&msg, "; its output:\n");
            put_tail(&msg, &out);
            hint = env_shortage(&out);
        } else if (works == 0) {
            put_cc(&msg, ctx);
            buf_puts(&msg, " failed, and it fails on a one-line C file too: the compiler is "
                           "broken, not kiln's code.\n  ");
            put_command(&msg, argv);
            buf_puts(&msg, "\n");
            put_status(&msg, rc);
            buf_puts(&msg, "; its output:\n");
            put_tail(&msg, &out);
            hint = "repair the compiler (a complete install, with OpenMP) or point KILN_CC at "
                   "a working one";
        } else {
            buf_puts(&msg, "interrupted while the C compiler ran");
        }
    } else if (read_file(sopath, blob, blob_len) < 0 || !kiln_cpu_blob_ok(*blob, *blob_len)) {
        struct stat st;
        bool none = stat(sopath, &st) != 0;
        put_cc(&msg, ctx);
        if (!none && st.st_size > KILN_MAX_KERNEL_SO_BYTES)
            buf_printf(&msg, " exited with status 0 but its output is %lld bytes, past the %d MiB "
                       "a kernel's shared object may have (KILN_MAX_KERNEL_SO_BYTES): %s:\n  ",
                       (long long)st.st_size, KILN_MAX_KERNEL_SO_BYTES >> 20, sopath);
        else
            buf_printf(&msg, " exited with status 0 but %s %s:\n  ",
                       none ? "wrote no output file"
                            : "its output is not a whole shared object (truncated?):", sopath);
        put_command(&msg, argv);
        buf_puts(&msg, "\nits output:\n");
        put_tail(&msg, &out);
        hint = "KILN_CC must name a C compiler that accepts -shared -fopenmp -o FILE";
        free(*blob);
        *blob = NULL;
        *blob_len = 0;
    }
    if (msg.len) diag_plain(ctx, KILN_ERROR, hint, "%s", msg.p);
    buf_free(&msg);
    buf_free(&out);
    build_dir_remove(dir);
    return *blob ? 0 : -1;
}

kiln_cpu_module *kiln_cpu_load(kiln_ctx *ctx, const void *blob, size_t len, const char *entry) {
    if (!kiln_cpu_blob_ok(blob, len)) {
        diag_plain(ctx, KILN_ERROR, "run `kiln cache verify`, or `kiln cache clear`",
                   "cannot load the compiled kernel: its %zu bytes are not a whole shared "
                   "object (a damaged cache entry or bundle?)", len);
        return NULL;
    }
    int fd = memfd_create("kiln-kernel", MFD_CLOEXEC);
    if (fd < 0) {
        diag_plain(ctx, KILN_ERROR, NULL, "memfd_create failed: %s", strerror(errno));
        return NULL;
    }
    if (write_all(fd, blob, len) < 0) {
        diag_plain(ctx, KILN_ERROR, NULL, "cannot write the kernel to memory: %s", strerror(errno));
        close(fd);
        return NULL;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    /* A kernel built with -ffast-math (fastmath=True) carries the C compiler's
     * crtfastmath, whose constructor turns on flush-to-zero and denormals-are-zero for
     * the thread that loads it: the caller's own arithmetic (NumPy's, after the first
     * call of a fastmath kernel) would then flush subnormals.  The floating-point
     * environment is put back as it was. */
    fenv_t fenv;
    bool fenv_saved = fegetenv(&fenv) == 0;
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (fenv_saved) fesetenv(&fenv);
    if (!h) {
        const char *e = dlerror();
        diag_plain(ctx, KILN_ERROR, NULL, "cannot load the compiled kernel: %s", e ? e : "?");
        close(fd);
        return NULL;
    }
    void *sym = dlsym(h, entry);
    if (!sym) {
        diag_plain(ctx, KILN_ERROR, NULL, "the compiled kernel has no symbol '%s'", entry);
        dlclose(h);
        close(fd);
        return NULL;
    }
    kiln_cpu_module *m = calloc(1, sizeof *m);
    if (!m) {
        dlclose(h);
        close(fd);
        return NULL;
    }
    m->handle = h;
    m->fd = fd;
    /* dlsym returns an object pointer; POSIX guarantees it converts to a function pointer */
    memcpy(&m->entry, &sym, sizeof sym);
    return m;
}

void kiln_cpu_unload(kiln_cpu_module *m) {
    if (!m) return;
    if (m->handle) dlclose(m->handle);
    if (m->fd >= 0) close(m->fd);
    if (m->code) munmap(m->code, m->code_len); /* tier 0's (tcc.c) */
    free(m);
}

void kiln_cpu_launch_kernel(kiln_cpu_module *m, const kiln_cpu_launch *launch,
                            const int64_t *params) {
    /* a recursion's bound on each thread that runs the kernel (stack.c, rt_cpu.h) */
    if (launch->err) launch->err->stack_floor = kiln_cpu_stack_floor;
    if (m->code) kiln_cpu_quick_run(m, launch, params); /* tier 0's (tcc.c) */
    else m->entry(launch, params);
}
