/* info.c: `kiln info`, what kiln finds on this machine, for bug reports.
 *
 * It reports what `numba -s` does for Numba: kiln's version, the machine, the
 * Python that `kiln precompile` and `kiln compile` would run (and whether it can
 * import kiln), the C compiler of the CPU target with its version and whether
 * OpenMP works (a one-line OpenMP program is compiled and run), NVRTC,
 * nvJitLink and the CUDA driver with their versions and paths or why they
 * cannot be used, the GPUs, the cache's tiers, and the environment variables
 * that steer kiln (secrets masked).  Every probe that runs a program has a
 * deadline (INFO_PROBE_TIMEOUT_MS): a compiler that hangs makes a line say so,
 * not `kiln info` hang.
 *
 * NVRTC and the driver are loaded through the core's API (kiln_nvrtc_open,
 * kiln_cuda_open), so what is reported is what kiln itself would load.  The
 * API has no call for a library's path, a device's memory or nvJitLink: the
 * paths come from the dynamic linker (the library the core loaded, asked for
 * again with RTLD_NOLOAD), the memory from the already loaded driver's
 * cuDeviceTotalMem_v2, and nvJitLink, which kiln does not use, is looked for
 * here by its usual names.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

extern char **environ;

enum {
    INFO_PROBE_TIMEOUT_MS = 10000, /* each program `kiln info` runs: compiler, test, Python */
    INFO_MAX_CC_WORDS = 32,        /* words of $KILN_CC */
    INFO_MAX_ENV = 256             /* KILN_ variables listed */
};

/* Environment variables besides KILN_* that change what kiln does. */
static const char *const related_vars[] = {"CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS",
                                           "OMP_PROC_BIND", "LD_LIBRARY_PATH", "TMPDIR",
                                           "XDG_CACHE_HOME"};

static const cli_opt info_opts[] = {
    {"--json", 0, NULL, "print JSON instead of text (docs/cli.md has its shape)"},
    {"--no-probe", 0, NULL, "run no program (compiler, OpenMP test, Python)"},
    {0},
};

const cli_cmd cli_info_cmd = {
    "info", "", "Show what kiln finds here: versions, compilers, CUDA, GPUs, the cache.",
    "Reports what `numba -s` does for Numba: kiln's version, the machine, the\n"
    "Python that compile and precompile run (and whether it imports kiln), the C\n"
    "compiler with its version and whether OpenMP works (a one-line OpenMP program\n"
    "is built and run), NVRTC, nvJitLink and the CUDA driver (versions and paths, or\n"
    "why not), the GPUs, the cache's tiers, and every KILN_ environment variable\n"
    "(secrets masked).  Paste it into bug reports.  Each program it runs is stopped\n"
    "after 10 s.\n",
    info_opts, 0, 0};

/* ---- output: one shape for text and JSON --------------------------------------------- */

typedef struct Out {
    bool json;
    json_out j;
} Out;

static void section(Out *o, const char *key, const char *title) {
    if (o->json) json_obj(&o->j, key);
    else printf("%s__%s__\n", strcmp(key, "kiln") == 0 ? "" : "\n", title);
}

static void end_section(Out *o) {
    if (o->json) json_close(&o->j, '}');
}

static void field(Out *o, const char *key, const char *label, const char *v) {
    if (o->json) json_str(&o->j, key, v);
    else if (v) printf("%-28s %s\n", label, v);
}

static void field_int(Out *o, const char *key, const char *label, int64_t v) {
    if (o->json) json_int(&o->j, key, v);
    else printf("%-28s %lld\n", label, (long long)v);
}

static void field_bool(Out *o, const char *key, const char *label, bool v, const char *yes,
                       const char *no) {
    if (o->json) json_bool(&o->j, key, v);
    else printf("%-28s %s\n", label, v ? yes : no);
}

static void field_bytes(Out *o, const char *key, const char *label, int64_t v) {
    char h[32];
    human_bytes(h, sizeof h, (double)v);
    if (o->json) json_int(&o->j, key, v);
    else printf("%-28s %s\n", label, h);
}

/* ---- probes --------------------------------------------------------------------------- */

/* First line of s, trimmed, into buf. */
static const char *first_line(const char *s, char *buf, size_t size) {
    while (*s == ' ' || *s == '\n' || *s == '\r' || *s == '\t') s++;
    size_t n = strcspn(s, "\r\n");
    while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    snprintf(buf, size, "%.*s", (int)n, s);
    return buf;
}

/* The path the dynamic linker gave the library `handle`, into buf. */
static const char *lib_path(void *handle, char *buf, size_t size) {
    struct link_map *lm = NULL;
    buf[0] = 0;
    if (handle && dlinfo(handle, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name)
        snprintf(buf, size, "%s", lm->l_name);
    return buf;
}

typedef struct Found {
    const char *prefix; /* "libnvrtc.so" */
    char *path;
    size_t size;
} Found;

static int find_loaded(struct dl_phdr_info *info, size_t sz, void *ud) {
    (void)sz;
    Found *f = ud;
    const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    base = base ? base + 1 : info->dlpi_name;
    if (base && strncmp(base, f->prefix, strlen(f->prefix)) == 0) {
        snprintf(f->path, f->size, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

/* The path of a loaded library whose file name starts with prefix, into buf. */
static const char *loaded_path(const char *prefix, char *buf, size_t size) {
    Found f = {prefix, buf, size};
    buf[0] = 0;
    dl_iterate_phdr(find_loaded, &f);
    return buf;
}

/* The program the first word of a command runs: searched on the PATH, links
 * resolved. */
static const char *which(const char *word, char *buf, size_t size) {
    char cand[PATH_MAX], real[PATH_MAX];
    buf[0] = 0;
    if (strchr(word, '/')) {
        snprintf(cand, sizeof cand, "%s", word);
    } else {
        const char *path = getenv("PATH");
        if (!path) path = "/usr/bin:/bin";
        cand[0] = 0;
        while (*path) {
            size_t n = strcspn(path, ":");
            snprintf(cand, sizeof cand, "%.*s/%s", (int)n, n ? path : ".", word);
            if (access(cand, X_OK) == 0) break;
            cand[0] = 0;
            path += n + (path[n] == ':');
        }
    }
    if (*cand && realpath(cand, real)) snprintf(buf, size, "%s", real);
    return buf;
}

/* Captures the first error reported through a context. */
typedef struct Why {
    char text[512];
} Why;

static void capture(void *ud, const kiln_diag *d) {
    Why *w = ud;
    if (d->severity != KILN_ERROR || w->text[0]) return;
    if (d->hint) snprintf(w->text, sizeof w->text, "%s (hint: %s)", d->message, d->hint);
    else snprintf(w->text, sizeof w->text, "%s", d->message);
}

static void version_text(int v, char *buf, size_t size) {
    snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* ---- sections ---------------------------------------------------------------------------- */

static void report_system(Out *o) {
    struct utsname u;
    char os[512] = "", cpu[256] = "", buf[512];
    if (uname(&u) == 0) snprintf(os, sizeof os, "%s %s", u.sysname, u.release);
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(buf, sizeof buf, f))
        if (strncmp(buf, "model name", 10) == 0 && strchr(buf, ':')) {
            first_line(strchr(buf, ':') + 1, cpu, sizeof cpu);
            break;
        }
    if (f) fclose(f);
    section(o, "system", "Hardware and OS");
    field(o, "os", "OS:", *os ? os : NULL);
    field(o, "machine", "machine:", uname(&u) == 0 ? u.machine : NULL);
    field(o, "cpu", "CPU:", *cpu ? cpu : NULL);
    field_int(o, "cpus", "CPUs online:", sysconf(_SC_NPROCESSORS_ONLN));
    end_section(o);
}

/* Runs the Python that `kiln compile` and `kiln precompile` would run and asks it
 * for its version and kiln's. */
static void report_python(Out *o, bool probe) {
    static const char code[] =
        "import sys\n"
        "r = [sys.executable, sys.version.split()[0]]\n"
        "try:\n"
        "    import os, kiln\n"
        "    r += [kiln.__version__, os.path.dirname(kiln.__file__), '']\n"
        "except BaseException as e:\n"
        "    r += ['', '', type(e).__name__ + ': ' + str(e)]\n"
        "print('kiln-info\\t' + '\\t'.join(' '.join(str(x).split()) for x in r))\n";
    char beside[PATH_MAX + 16], out[8192];
    const char *how;
    const char *py = find_python(beside, sizeof beside, &how);
    char *fields[5] = {0};
    char why[600] = "";
    if (probe) {
        char *argv[] = {(char *)py, (char *)"-c", (char *)code, NULL};
        int status;
        if (run_bounded(argv, INFO_PROBE_TIMEOUT_MS, out, sizeof out, &status) != 0) {
            snprintf(why, sizeof why, "%.500s", out);
        } else {
            char *line = strstr(out, "kiln-info\t");
            if (line && (line == out || line[-1] == '\n')) {
                line[strcspn(line, "\n")] = 0;
                char *rest = line + strlen("kiln-info\t");
                for (int i = 0; i < 5 && rest; i++) fields[i] = strsep(&rest, "\t");
                for (int i = 0; i < 5; i++)
                    if (fields[i] && !*fields[i]) fields[i] = NULL;
            } else {
                char l[400];
                snprintf(why, sizeof why, "it did not run: %s", first_line(out, l, sizeof l));
            }
        }
    }
    section(o, "python", "Python");
    field(o, "command", "command:", py);
    field(o, "found_by", "found by:", how);
    field(o, "executable", "executable:", fields[0]);
    field(o, "version", "version:", fields[1]);
    field(o, "kiln_version", "kiln in it:", fields[2]);
    field(o, "kiln_path", "kiln from:", fields[3]);
    if (!probe) field(o, "error", "error:", "not run (--no-probe)");
    else if (*why) field(o, "error", "error:", why);
    else field(o, "error", "cannot import kiln:", fields[4]);
    end_section(o);
}

/* Splits the compiler command into words in buf (at most INFO_MAX_CC_WORDS). */
static int cc_words(const char *cmd, char *buf, size_t size, char **words) {
    snprintf(buf, size, "%s", cmd);
    int n = 0;
    char *save = NULL;
    for (char *w = strtok_r(buf, " \t", &save); w && n < INFO_MAX_CC_WORDS - 6;
         w = strtok_r(NULL, " \t", &save))
        words[n++] = w;
    words[n] = NULL;
    return n;
}

/* Compiles and runs a one-line OpenMP program.  *threads gets what it printed. */
static bool openmp_works(char **cc, int n, char *why, size_t size, int *threads) {
    static const char prog[] =
        "#include <omp.h>\n#include <stdio.h>\n"
        "int main(void) { int n = 0;\n#pragma omp parallel reduction(+ : n)\n n += 1;\n"
        " printf(\"%d\\n\", n); return n > 0 ? 0 : 1; }\n";
    const char *tmp = getenv("TMPDIR");
    char dir[PATH_MAX], src[PATH_MAX + 16], exe[PATH_MAX + 16], out[4096];
    bool ok = false;
    snprintf(dir, sizeof dir, "%s/kiln-info-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        snprintf(why, size, "cannot make a temporary directory in %s: %s",
                 tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return false;
    }
    snprintf(src, sizeof src, "%s/omp.c", dir);
    snprintf(exe, sizeof exe, "%s/omp", dir);
    FILE *f = fopen(src, "w");
    if (!f || fputs(prog, f) < 0 || fclose(f) != 0) {
        snprintf(why, size, "cannot write %.400s", src);
        goto done;
    }
    char *argv[INFO_MAX_CC_WORDS];
    int k = 0;
    for (int i = 0; i < n; i++) argv[k++] = cc[i];
    argv[k++] = (char *)"-fopenmp";
    argv[k++] = (char *)"-o";
    argv[k++] = exe;
    argv[k++] = src;
    argv[k] = NULL;
    int status;
    char l[400];
    if (run_bounded(argv, INFO_PROBE_TIMEOUT_MS, out, sizeof out, &status) != 0) {
        snprintf(why, size, "%.500s", out);
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        snprintf(why, size, "%s -fopenmp failed: %s", cc[0], *out ? first_line(out, l, sizeof l)
                                                                   : "no message");
    } else {
        char *run[] = {exe, NULL};
        if (run_bounded(run, INFO_PROBE_TIMEOUT_MS, out, sizeof out, &status) != 0) {
            snprintf(why, size, "the test program: %.400s", out);
        } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            snprintf(why, size, "the test program failed: %s",
                     *out ? first_line(out, l, sizeof l) : "no message");
        } else {
            *threads = atoi(out);
            ok = true;
        }
    }
done:
    unlink(src);
    unlink(exe);
    rmdir(dir);
    return ok;
}

static void report_compiler(Out *o, kiln_ctx *ctx, bool probe) {
    const char *cmd = kiln_cpu_compiler(ctx);
    char buf[4096], path[PATH_MAX], out[4096], version[400] = "", why[600] = "";
    char *words[INFO_MAX_CC_WORDS];
    int n = cc_words(cmd, buf, sizeof buf, words);
    int threads = 0;
    bool omp = false;
    if (n > 0) which(words[0], path, sizeof path);
    else path[0] = 0;
    if (probe && n > 0) {
        char *argv[INFO_MAX_CC_WORDS];
        int k = 0, status;
        for (int i = 0; i < n; i++) argv[k++] = words[i];
        argv[k++] = (char *)"--version";
        argv[k] = NULL;
        if (run_bounded(argv, INFO_PROBE_TIMEOUT_MS, out, sizeof out, &status) == 0) {
            first_line(out, version, sizeof version);
            omp = openmp_works(words, n, why, sizeof why, &threads);
        } else { /* a compiler that hangs on --version is not given another 10 s */
            snprintf(version, sizeof version, "unknown: %.300s", out);
            snprintf(why, sizeof why, "not tried: %.300s", out);
        }
    }
    section(o, "c_compiler", "C compiler (CPU target)");
    field(o, "command", "command (KILN_CC):", cmd);
    field(o, "path", "path:", *path ? path : NULL);
    field(o, "version", "version:", *version ? version : NULL);
    field(o, "target", "target:", kiln_cpu_target_name());
    if (!probe) {
        field(o, "openmp_error", "OpenMP:", "not tried (--no-probe)");
    } else if (o->json) {
        json_bool(&o->j, "openmp", omp);
        if (omp) json_int(&o->j, "openmp_threads", threads);
        json_str(&o->j, "openmp_error", omp ? NULL : why);
    } else if (omp) {
        printf("%-28s works (%d threads)\n", "OpenMP:", threads);
    } else {
        printf("%-28s does not work: %s\n", "OpenMP:", why);
    }
    end_section(o);
}

/* Tier 0: whether this kiln has libtcc, where its runtime is, whether it compiles a
 * function here, and what KILN_TIERS asks for. */
static void report_tier0(Out *o, bool probe) {
    Why why = {{0}};
    const char *dir = kiln_cpu_quick_dir();
    char lib[PATH_MAX] = "";
    if (dir) snprintf(lib, sizeof lib, "%s/libtcc1.a", dir);
    bool works = false;
    if (probe && kiln_cpu_quick_available()) {
        kiln_ctx *ctx = kiln_ctx_new();
        if (ctx) {
            static const char src[] = "void kiln_info_probe(void) {}\n";
            kiln_ctx_set_diag(ctx, capture, &why);
            kiln_cpu_module *m = kiln_cpu_quick_load(ctx, src, sizeof src - 1, "kiln_info_probe");
            works = m != NULL;
            if (m) kiln_cpu_unload(m);
            kiln_ctx_free(ctx);
        }
    }
    const char *tiers = getenv("KILN_TIERS");
    section(o, "tier0", "Tier 0 (a CPU kernel's first calls, libtcc)");
    field_bool(o, "built_with_libtcc", "built with libtcc:", kiln_cpu_quick_available(), "yes",
               "no (install libtcc-dev and tcc, build again)");
    field(o, "runtime", "runtime (KILN_TCC_DIR):", *lib ? lib : NULL);
    if (!probe)
        field(o, "error", "compiles:", "not tried (--no-probe)");
    else if (kiln_cpu_quick_available()) {
        field_bool(o, "works", "compiles:", works, "yes", "no");
        field(o, "error", "why not:", works ? NULL : why.text);
    }
    field(o, "kiln_tiers", "KILN_TIERS:",
          tiers && *tiers ? tiers : "1 (default: tier 0, then the optimising build)");
    end_section(o);
}

static void report_nvrtc(Out *o) {
    Why why = {{0}};
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) return;
    kiln_ctx_set_diag(ctx, capture, &why);
    kiln_nvrtc *n = kiln_nvrtc_open(ctx);
    char version[32] = "", path[PATH_MAX] = "";
    if (n) {
        version_text(kiln_nvrtc_version(n), version, sizeof version);
        const char *env = getenv("KILN_NVRTC");
        if (env && *env) lib_path(dlopen(env, RTLD_LAZY | RTLD_NOLOAD), path, sizeof path);
        if (!*path) loaded_path("libnvrtc.so", path, sizeof path);
    }
    section(o, "nvrtc", "NVRTC (compiles CUDA C; no GPU needed)");
    field_bool(o, "found", "found:", n != NULL, "yes", "no");
    field(o, "version", "version:", n ? version : NULL);
    field(o, "path", "path:", *path ? path : NULL);
    field(o, "error", "why not:", n ? NULL : why.text);
    end_section(o);
    if (n) kiln_nvrtc_close(n);
    kiln_ctx_free(ctx);
}

/* kiln does not load nvJitLink; it is reported because CUDA set-ups that lack it
 * or mix its version with NVRTC's are a common source of trouble. */
static void report_nvjitlink(Out *o) {
    static const char *const names[] = {"libnvJitLink.so", "libnvJitLink.so.13",
                                        "libnvJitLink.so.12",
                                        "/usr/local/cuda/lib64/libnvJitLink.so"};
    void *lib = NULL;
    for (size_t i = 0; !lib && i < sizeof names / sizeof *names; i++)
        lib = dlopen(names[i], RTLD_LAZY | RTLD_LOCAL);
    char version[32] = "", path[PATH_MAX] = "";
    if (lib) {
        lib_path(lib, path, sizeof path);
        int (*ver)(unsigned *, unsigned *);
        void *p = dlsym(lib, "nvJitLinkVersion"); /* CUDA 12.3 and later */
        memcpy(&ver, &p, sizeof ver);
        unsigned ma = 0, mi = 0;
        if (ver && ver(&ma, &mi) == 0) snprintf(version, sizeof version, "%u.%u", ma, mi);
    }
    section(o, "nvjitlink", "nvJitLink (not used by kiln)");
    field_bool(o, "found", "found:", lib != NULL, "yes", "no");
    field(o, "version", "version:", *version ? version : NULL);
    field(o, "path", "path:", *path ? path : NULL);
    field(o, "error", "why not:", lib ? NULL : "libnvJitLink.so was not found on the library path");
    end_section(o);
    /* left loaded: a C++ library that is unloaded leaves its static allocations behind */
}

static void report_driver(Out *o) {
    const char *why = NULL;
    kiln_cuda *c = kiln_cuda_open(&why);
    char version[32] = "", path[PATH_MAX] = "";
    void *lib = NULL;
    if (c) {
        version_text(kiln_cuda_driver_version(c), version, sizeof version);
        const char *env = getenv("KILN_CUDA_DRIVER");
        lib = dlopen(env && *env ? env : "libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        lib_path(lib, path, sizeof path);
    }
    section(o, "driver", "CUDA driver");
    field_bool(o, "found", "found:", c != NULL, "yes", "no");
    field(o, "version", "version (CUDA):", c ? version : NULL);
    field(o, "path", "path:", *path ? path : NULL);
    field(o, "error", "why not:", c ? NULL : why);
    end_section(o);

    /* the devices; memory from the driver kiln loaded, which the API does not expose */
    int (*dev_get)(int *, int) = NULL;
    int (*total_mem)(size_t *, int) = NULL;
    if (lib) {
        void *p = dlsym(lib, "cuDeviceGet"), *q = dlsym(lib, "cuDeviceTotalMem_v2");
        memcpy(&dev_get, &p, sizeof p);
        memcpy(&total_mem, &q, sizeof q);
    }
    int ndev = c ? kiln_cuda_device_count(c) : 0;
    if (o->json) json_arr(&o->j, "devices");
    else printf("\n__GPUs__\n%s", ndev ? "" : "none\n");
    for (int d = 0; d < ndev; d++) {
        char name[256] = "?", cc[16] = "?", arch[16] = "?";
        int a = kiln_cuda_arch(c, d), sms = -1, dev;
        size_t mem = 0;
        bool has_mem = dev_get && total_mem && dev_get(&dev, d) == 0 && total_mem(&mem, dev) == 0;
        kiln_cuda_device_name(c, d, name, sizeof name);
        if (a > 0) {
            snprintf(cc, sizeof cc, "%d.%d", a / 10, a % 10);
            snprintf(arch, sizeof arch, "sm_%d", a);
        }
        if (kiln_cuda_device_attribute(c, d, 16 /* multiprocessors */, &sms) != 0) sms = -1;
        if (o->json) {
            json_obj(&o->j, NULL);
            json_int(&o->j, "index", d);
            json_str(&o->j, "name", name);
            json_str(&o->j, "compute_capability", cc);
            json_str(&o->j, "arch", arch);
            if (has_mem) json_int(&o->j, "memory_bytes", (int64_t)mem);
            else json_null(&o->j, "memory_bytes");
            if (sms >= 0) json_int(&o->j, "multiprocessors", sms);
            else json_null(&o->j, "multiprocessors");
            json_close(&o->j, '}');
        } else {
            char m[32] = "memory unknown";
            if (has_mem) human_bytes(m, sizeof m, (double)mem);
            printf("[%d] %s: compute capability %s (%s), %s, %d multiprocessors\n", d, name, cc,
                   arch, m, sms);
        }
    }
    if (o->json) json_close(&o->j, ']');
    if (lib) dlclose(lib); /* the reference RTLD_NOLOAD took */
    if (c) kiln_cuda_close(c);
}

static void report_cache(Out *o, kiln_ctx *ctx) {
    kiln_cache *c = kiln_cache_open(ctx, NULL);
    if (!c) return;
    kiln_cache_stats st;
    kiln_cache_get_stats(c, &st);
    const char *path = kiln_cache_path(c), *remote = kiln_cache_remote(c);
    const char *want = getenv("KILN_REMOTE_CACHE");
    char masked[1024];
    section(o, "cache", "Cache");
    field(o, "path", "disk tier:", path ? path : (o->json ? NULL : "off (memory only)"));
    if (path) {
        field_int(o, "entries", "entries:", st.entries);
        field_bytes(o, "bytes", "size:", st.bytes);
        field_bytes(o, "max_bytes", "size limit:", st.max_bytes);
    }
    bool connected = remote != NULL;
    if (!remote && want && *want) remote = want; /* configured, but it failed */
    if (remote) mask_url(remote, masked, sizeof masked);
    if (o->json) {
        if (remote) {
            json_obj(&o->j, "remote");
            json_str(&o->j, "address", masked);
            json_bool(&o->j, "connected", connected);
            json_close(&o->j, '}');
        } else {
            json_null(&o->j, "remote");
        }
    } else if (!remote) {
        printf("%-28s off (set KILN_REMOTE_CACHE)\n", "remote tier:");
    } else if (connected) {
        printf("%-28s %s\n", "remote tier:", masked);
    } else {
        printf("%-28s off: %s could not be used (see the warning)\n", "remote tier:", masked);
    }
    if (o->json) {
        json_arr(&o->j, "tiers");
        json_str(&o->j, NULL, "memory");
        if (path) json_str(&o->j, NULL, "disk");
        if (connected) json_str(&o->j, NULL, "remote");
        json_close(&o->j, ']');
    } else {
        printf("%-28s memory%s%s\n", "tiers:", path ? ", disk" : "", connected ? ", remote" : "");
    }
    end_section(o);
    kiln_cache_close(c);
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void report_env(Out *o) {
    char *vars[INFO_MAX_ENV];
    int n = 0;
    for (char **e = environ; *e && n < INFO_MAX_ENV; e++)
        if (strncmp(*e, "KILN_", 5) == 0) vars[n++] = *e;
    for (size_t i = 0; i < sizeof related_vars / sizeof *related_vars && n < INFO_MAX_ENV; i++)
        for (char **e = environ; *e; e++) {
            size_t k = strlen(related_vars[i]);
            if (strncmp(*e, related_vars[i], k) == 0 && (*e)[k] == '=') {
                vars[n++] = *e;
                break;
            }
        }
    qsort(vars, (size_t)n, sizeof *vars, by_name);
    if (o->json) json_obj(&o->j, "environment");
    else printf("\n__Environment__\n%s", n ? "" : "no KILN_ variables set\n");
    for (int i = 0; i < n; i++) {
        char name[256], shown[4096];
        size_t k = strcspn(vars[i], "=");
        snprintf(name, sizeof name, "%.*s", (int)k, vars[i]);
        shown_value(name, vars[i] + k + 1, shown, sizeof shown);
        if (o->json) json_str(&o->j, name, shown);
        else printf("%-28s %s\n", name, shown);
    }
    if (o->json) json_close(&o->j, '}');
}

int cmd_info(int argc, char **argv) {
    cli_args a;
    int prc = cli_parse(&cli_info_cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    Out o = {.json = cli_flag(&cli_info_cmd, &a, "--json")};
    bool probe = !cli_flag(&cli_info_cmd, &a, "--no-probe");
    kiln_ctx *ctx = kiln_ctx_new();
    if (!ctx) {
        fprintf(stderr, "kiln: out of memory\n");
        return 1;
    }
    kiln_ctx_set_diag(ctx, cli_on_diag, NULL); /* the cache's warnings, to stderr */
    char self[PATH_MAX];
    self_path(self, sizeof self);
    if (o.json) {
        json_begin(&o.j, stdout);
        json_obj(&o.j, NULL);
    }
    section(&o, "kiln", "kiln");
    field(&o, "version", "version:", kiln_version());
    field(&o, "program", "program:", *self ? self : NULL);
    end_section(&o);
    report_system(&o);
    report_python(&o, probe);
    report_compiler(&o, ctx, probe);
    report_tier0(&o, probe);
    report_nvrtc(&o);
    report_nvjitlink(&o);
    report_driver(&o);
    report_cache(&o, ctx);
    report_env(&o);
    if (o.json) {
        json_close(&o.j, '}');
        json_end(&o.j);
    }
    kiln_ctx_free(ctx);
    return 0;
}
