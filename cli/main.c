/* main.c: the `kiln` command: its table of commands, and the commands that
 * work on a kernel file (compile, precompile).
 *
 *   kiln --version | version              the version
 *   kiln info [--json]                    what kiln finds on this machine (info.c)
 *   kiln compile FILE KERNEL SIG [...]    a kernel's generated code or types
 *   kiln cache SUBCOMMAND [...]           the kernel cache (cache_cmd.c)
 *   kiln metrics [--json]                 compile times and hits per kernel (cache_cmd.c)
 *   kiln precompile MODULE.py [--target T]...  build kernels with explicit signatures
 *   kiln report TRACE [-o FILE]           a trace as an HTML page (python -m kiln report)
 *   kiln help [COMMAND]                   the same as COMMAND --help
 *
 * Every command parses its arguments with args.c's table-driven parser: --help
 * on each, exit 2 with the usage on stderr for a command line it cannot take.
 *
 * A kernel's globals (constants, device functions, imported modules) are
 * whatever its module's code made them, so `compile` and `precompile` run
 * Python: `python -m kiln compile|precompile ...` (python/kiln/__main__.py)
 * imports the file as a module and asks the kernel's dispatcher, as a call
 * would.  The interpreter is a child, not exec'd in our place, so that its
 * failure can be told apart from the command's: kiln's Python side writes a
 * line to the pipe named by KILN_CLI_FD when it starts, and an interpreter
 * that ends without writing it (not Python, no kiln installed, killed) is
 * reported here with what it did.  `compile --no-python` keeps the C-only
 * path: names are resolved as a file that imports math, numpy and kiln
 * conventionally would (math, numpy/np, kiln/cuda, builtins), and any other
 * global is reported as undefined.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

enum {
    ARCH_DEFAULT = 90, /* --target cuda without --arch and without a GPU */
    FIND_DEF_PATTERN_MAX = 256 /* "def NAME(" searched for by --no-python */
};

/* ---- the commands' tables ---------------------------------------------------------- */

static const cli_opt compile_opts[] = {
    {"--target", 't', "T", "cpu (C with OpenMP, the default) or cuda (CUDA C)"},
    {"--arch", 0, "N", "CUDA architecture: 90 or sm_90 (default: the first GPU's, else 90)"},
    {"--types", 0, NULL, "print each variable's type (inspect_types) instead of the code"},
    {"--build", 0, NULL, "also build it (cc or NVRTC, through the cache) and report the result"},
    {"--fastmath", 0, NULL, "compile as with @kiln.jit(fastmath=True)"},
    {"--debug", 0, NULL, "compile as with @kiln.jit(debug=True): bounds checks, assert"},
    {"--no-python", 0, NULL, "do not run Python: resolve only math, numpy, kiln and builtins"},
    {0},
};

static const cli_cmd compile_cmd = {
    "compile", "FILE KERNEL SIGNATURE",
    "Print a kernel's generated C or CUDA C, or its types.",
    "KERNEL is a @kiln.jit function (or a plain one) of FILE, by name; SIGNATURE is\n"
    "in Numba's syntax: \"void(float32[::1], float32)\".  FILE is imported as a\n"
    "module by Python ($KILN_PYTHON, else the python3 beside kiln, else python3 on\n"
    "the PATH), so the kernel's globals, device functions and imported modules\n"
    "resolve exactly as when it is called; kernels with explicit signatures are not\n"
    "built at import.  Exit status 1 when the kernel does not compile (the errors\n"
    "are on stderr), 2 for a command line kiln cannot take.\n",
    compile_opts, 3, 3};

static const cli_opt precompile_opts[] = {
    {"--target", 't', "T", "cpu, or cuda:sm_80,sm_90 (repeatable; default: cpu, and the "
                           "local GPU's architecture when there is one)"},
    {0},
};

static const cli_cmd precompile_cmd = {
    "precompile", "MODULE.py",
    "Build a module's kernels with explicit signatures into the cache.",
    "Builds every kernel of MODULE.py that has explicit signatures, for each target\n"
    "(CUDA targets need NVRTC, not a GPU), by running `python -m kiln precompile`\n"
    "with the Python `kiln compile` uses; `kiln cache export` then moves the\n"
    "entries to other machines.\n",
    precompile_opts, 1, 1};

static const cli_opt report_opts[] = {
    {"--output", 'o', "FILE", "the page to write (default: TRACE with .html for .json)"},
    {0},
};

static const cli_cmd report_cmd = {
    "report", "TRACE",
    "Render a trace (kiln.profile, KILN_TRACE) as one HTML page.",
    "The page has a timeline of compiles, cache look-ups, launches, copies and\n"
    "synchronisations, one row per host thread and per GPU stream, and a table per\n"
    "kernel: builds, compile ms by stage, cache hits, launches, mean launch cost,\n"
    "device time and GB/s against the device's copy ceiling.  It is drawn with Plotly\n"
    "(pip install 'kiln[report]'), whose JavaScript goes into the page, so it opens\n"
    "offline.  Runs `python -m kiln report` with the Python `kiln compile` uses.\n"
    "Exit status 1 for a trace it cannot read (the reason is on stderr).\n",
    report_opts, 1, 1};

static const cli_cmd version_cmd = {"version", "", "Print kiln's version.", NULL, NULL, 0, 0};

static const cli_cmd help_cmd = {"help", "[COMMAND [SUBCOMMAND]]",
                                 "Show the help of a command (or this list).", NULL, NULL, 0, 2};

static int cmd_compile(int argc, char **argv);
static int cmd_precompile(int argc, char **argv);
static int cmd_report(int argc, char **argv);
static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct {
    const cli_cmd *cmd;
    int (*run)(int argc, char **argv);
} commands[] = {
    {&cli_info_cmd, cmd_info},
    {&compile_cmd, cmd_compile},
    {NULL, cmd_cache}, /* a group: cache_cmd.c parses its subcommands */
    {&cli_metrics_cmd, cmd_metrics},
    {&precompile_cmd, cmd_precompile},
    {&report_cmd, cmd_report},
    {&version_cmd, cmd_version},
    {&help_cmd, cmd_help},
};
#define NCOMMANDS (int)(sizeof commands / sizeof *commands)

static const char *command_name(int i) { return commands[i].cmd ? commands[i].cmd->name : "cache"; }

static void top_help(FILE *f) {
    fprintf(f, "usage: kiln [--version] [--help] COMMAND [ARGS]\n\n"
               "kiln compiles Python kernel functions to C with OpenMP or CUDA C.\n\n"
               "commands:\n");
    for (int i = 0; i < NCOMMANDS; i++) {
        const char *summary = commands[i].cmd ? commands[i].cmd->summary
                                              : "The kernel cache: stats, ls, verify, clear, "
                                                "prune, export, import.";
        fprintf(f, "  %-11s %s\n", command_name(i), summary);
    }
    fprintf(f, "\nkiln COMMAND --help says more about each; docs/cli.md has them all.\n");
}

static int cmd_version(int argc, char **argv) {
    cli_args a;
    int prc = cli_parse(&version_cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    printf("kiln %s\n", kiln_version());
    return 0;
}

static int cmd_help(int argc, char **argv) {
    cli_args a;
    int prc = cli_parse(&help_cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    if (a.npos == 0) {
        top_help(stdout);
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(a.pos[0], command_name(i)) == 0) {
            char *args[3] = {(char *)a.pos[1], (char *)"--help", NULL};
            if (a.npos == 2) return commands[i].run(2, args);
            return commands[i].run(1, args + 1);
        }
    return cli_usage_error(&help_cmd, "no command '%s'", a.pos[0]);
}

/* ---- running Python ---------------------------------------------------------------- */

/* Runs `PY -m kiln COMMAND ARGS...` and returns its exit status, or reports (and
 * returns 1) when the interpreter failed before kiln's code started. */
static int run_python(const char *command, const char *const *args, int nargs) {
    char beside[PATH_MAX + 16];
    const char *how;
    const char *py = find_python(beside, sizeof beside, &how);
    char named[64] = "";
    if (strcmp(how, "KILN_PYTHON") == 0) snprintf(named, sizeof named, " (KILN_PYTHON)");
    char **argv = calloc((size_t)nargs + 5, sizeof *argv);
    int pfd[2];
    if (!argv || pipe2(pfd, O_CLOEXEC) != 0) {
        fprintf(stderr, "kiln: cannot start %s: %s\n", py, strerror(errno));
        free(argv);
        return 1;
    }
    int n = 0;
    argv[n++] = (char *)py;
    argv[n++] = (char *)"-m";
    argv[n++] = (char *)"kiln";
    argv[n++] = (char *)command;
    for (int i = 0; i < nargs; i++) argv[n++] = (char *)args[i];
    argv[n] = NULL;
    /* Ctrl-C reaches the interpreter too (same process group); this process waits
     * for its end and exits with its status */
    struct sigaction ign = {0}, old_int, old_quit;
    ign.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ign, &old_int);
    sigaction(SIGQUIT, &ign, &old_quit);
    pid_t pid = fork();
    if (pid == 0) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGQUIT, &old_quit, NULL);
        char fd[16];
        snprintf(fd, sizeof fd, "%d", pfd[1]);
        fcntl(pfd[1], F_SETFD, 0); /* the write end crosses exec */
        setenv("KILN_CLI_FD", fd, 1);
        execvp(py, argv);
        dprintf(pfd[1], "exec %d\n", errno);
        _exit(127);
    }
    int fork_errno = errno;
    close(pfd[1]);
    char said[64] = {0};
    size_t got = 0;
    while (pid > 0 && got < sizeof said - 1) {
        ssize_t r = read(pfd[0], said + got, sizeof said - 1 - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(pfd[0]);
    int status = 0, rc = 1;
    while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGQUIT, &old_quit, NULL);
    free(argv);
    static const char hint[] = "hint: set KILN_PYTHON to a Python that has kiln installed";
    char expect[64];
    snprintf(expect, sizeof expect, "kiln %s\n", command);
    bool ran = strncmp(said, expect, strlen(expect)) == 0;
    if (pid < 0) {
        fprintf(stderr, "kiln: cannot start %s%s: %s\n", py, named, strerror(fork_errno));
    } else if (strncmp(said, "exec ", 5) == 0) {
        fprintf(stderr, "kiln: cannot run %s%s for %s: %s\n%s%s\n", py, named, command,
                strerror(atoi(said + 5)), hint,
                strcmp(command, "compile") == 0 ? ", or pass --no-python" : "");
    } else if (WIFSIGNALED(status)) {
        fprintf(stderr, "kiln: the Python interpreter %s%s was killed by signal %d (%s)\n", py,
                named, WTERMSIG(status), strsignal(WTERMSIG(status)));
        rc = 128 + WTERMSIG(status);
    } else if (!ran) {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
        fprintf(stderr, "kiln: the Python interpreter %s%s exited with status %d before running "
                        "kiln's %s\n%s%s\n", py, named, code, command, hint,
                strcmp(command, "compile") == 0 ? ", or pass --no-python" : "");
        rc = code ? code : 1;
    } else {
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1; /* it said what went wrong */
    }
    return rc;
}

/* Whether a --target of precompile is cpu or cuda:ARCH[,ARCH...], as __main__.py reads it
 * (checked here too, so a bad one is a usage error before any Python starts). */
static bool precompile_target_ok(const char *t) {
    if (strcmp(t, "cpu") == 0) return true;
    if (strncmp(t, "cuda:", 5) != 0 || !t[5]) return false;
    char buf[256];
    if (snprintf(buf, sizeof buf, "%s", t + 5) >= (int)sizeof buf) return false;
    if (buf[0] == ',' || buf[strlen(buf) - 1] == ',' || strstr(buf, ",,")) return false;
    char *save = NULL;
    for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save))
        if (parse_arch(w) < 0) return false;
    return true;
}

static int cmd_precompile(int argc, char **argv) {
    cli_args a;
    int prc = cli_parse(&precompile_cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    for (int i = 0; i < a.ngiven; i++)
        if (!precompile_target_ok(a.given[i].value))
            return cli_usage_error(&precompile_cmd,
                                   "bad target '%s' (write cpu or cuda:sm_80,sm_90; sm_%d to "
                                   "sm_%d)", a.given[i].value, ARCH_MIN, ARCH_MAX);
    const char *args[2 * CLI_MAX_ARGS + 2];
    int n = 0;
    for (int i = 0; i < a.ngiven; i++) {
        args[n++] = "--target";
        args[n++] = a.given[i].value;
    }
    args[n++] = "--";
    args[n++] = a.pos[0];
    return run_python("precompile", args, n);
}

static int cmd_report(int argc, char **argv) {
    cli_args a;
    int prc = cli_parse(&report_cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    const char *args[4];
    int n = 0;
    const char *out = cli_value(&report_cmd, &a, "--output");
    if (out) {
        args[n++] = "--output";
        args[n++] = out;
    }
    args[n++] = "--";
    args[n++] = a.pos[0];
    return run_python("report", args, n);
}

/* ---- compile --no-python ----------------------------------------------------------- */

/* The names a kernel file conventionally imports; scope is unused (one file). */
static int resolve(void *ud, void *scope, const char *name, kiln_value *out) {
    static const char *const builtins[] = {"abs", "min", "max", "int", "float", "bool",
                                           "round", "range", "len"};
    static const char *const dotted[] = {"builtins.abs", "builtins.min", "builtins.max",
                                         "builtins.int", "builtins.float", "builtins.bool",
                                         "builtins.round", "builtins.range", "builtins.len"};
    (void)ud;
    (void)scope;
    memset(out, 0, sizeof *out);
    out->kind = KILN_VAL_MISSING;
    if (strcmp(name, "math") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "math";
    } else if (strcmp(name, "np") == 0 || strcmp(name, "numpy") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "numpy";
    } else if (strcmp(name, "kiln") == 0 || strcmp(name, "cuda") == 0) {
        out->kind = KILN_VAL_NAMESPACE;
        out->name = "kiln";
    } else {
        for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++)
            if (strcmp(name, builtins[i]) == 0) {
                out->kind = KILN_VAL_NAMESPACE;
                out->name = dotted[i];
            }
    }
    return 0;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *p = NULL;
    long n;
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) goto fail;
    p = malloc((size_t)n + 1);
    if (!p || fread(p, 1, (size_t)n, f) != (size_t)n) goto fail;
    p[n] = 0;
    fclose(f);
    *len = (size_t)n;
    return p;
fail:
    free(p);
    fclose(f);
    return NULL;
}

/* Finds the line of `def func(` and moves up over its decorators. */
static const char *find_def(const char *text, const char *func, int *line) {
    char pat[FIND_DEF_PATTERN_MAX];
    if (snprintf(pat, sizeof pat, "def %s(", func) >= (int)sizeof pat) return NULL;
    int ln = 1;
    const char *hit = NULL;
    int hit_line = 0;
    for (const char *p = text; *p; p++) {
        if (p == text || p[-1] == '\n') {
            const char *q = p;
            while (*q == ' ' || *q == '\t') q++;
            if (strncmp(q, pat, strlen(pat)) == 0) {
                hit = p;
                hit_line = ln;
                break;
            }
        }
        if (*p == '\n') ln++;
    }
    if (!hit) return NULL;
    const char *start = hit; /* walk back over decorator lines */
    int sl = hit_line;
    while (start > text) {
        const char *prev = start - 1;
        while (prev > text && prev[-1] != '\n') prev--;
        const char *q = prev;
        while (*q == ' ' || *q == '\t') q++;
        if (*q != '@') break;
        start = prev;
        sl--;
    }
    *line = sl;
    return start;
}

static int compile_in_c(const char *path, const char *func, const char *sig,
                        const kiln_options *o, bool show_types, bool build) {
    size_t len;
    char *text = slurp(path, &len);
    if (!text) {
        fprintf(stderr, "kiln compile: cannot read %s: %s\n", path, strerror(errno));
        return 1;
    }
    int line, rc = 1, nerrors = 0;
    const char *start = find_def(text, func, &line);
    if (!start) {
        fprintf(stderr, "kiln compile: no function '%s' in %s\n", func, path);
        free(text);
        return 1;
    }
    kiln_ctx *ctx = kiln_ctx_new();
    kiln_program *p = NULL;
    if (!ctx) goto done;
    kiln_ctx_set_diag(ctx, cli_on_diag, &nerrors);
    kiln_argtype ret, args[KILN_MAX_PARAMS];
    int n = kiln_parse_signature(ctx, sig, &ret, args, KILN_MAX_PARAMS);
    if (n < 0) goto done;
    kiln_source src = {start, len - (size_t)(start - text), path, line, NULL};
    p = kiln_translate(ctx, &src, args, n, o, resolve, NULL);
    if (!p) goto done;
    size_t slen;
    const char *code = kiln_program_source(p, &slen);
    if (show_types) fputs(kiln_program_types(p), stdout);
    else fwrite(code, 1, slen, stdout);
    rc = 0;
    if (build) {
        void *blob = NULL;
        size_t blen = 0;
        int is_ptx = 0;
        if (o->target == KILN_TARGET_CPU) {
            rc = kiln_cpu_build(ctx, code, slen, &blob, &blen) == 0 ? 0 : 1;
        } else {
            kiln_nvrtc *nv = kiln_nvrtc_open(ctx);
            rc = nv && kiln_nvrtc_compile(ctx, nv, code, slen, o, o->cuda_arch, &blob, &blen,
                                          &is_ptx) == 0 ? 0 : 1;
            if (nv) kiln_nvrtc_close(nv);
        }
        if (rc == 0)
            fprintf(stderr, "kiln compile: built %zu bytes of %s\n", blen,
                    o->target == KILN_TARGET_CPU ? "machine code" : is_ptx ? "PTX" : "cubin");
        free(blob);
    }
done:
    if (p) kiln_program_free(p);
    if (ctx) kiln_ctx_free(ctx);
    free(text);
    return rc;
}

/* The first GPU's architecture, else ARCH_DEFAULT. */
static int local_arch(void) {
    const char *why;
    kiln_cuda *c = kiln_cuda_open(&why);
    int arch = c ? kiln_cuda_arch(c, 0) : -1;
    if (c) kiln_cuda_close(c);
    return arch > 0 ? arch : ARCH_DEFAULT;
}

static int cmd_compile(int argc, char **argv) {
    const cli_cmd *cmd = &compile_cmd;
    cli_args a;
    int prc = cli_parse(cmd, argc, argv, &a);
    if (prc != 0) return CLI_PARSED_EXIT(prc);
    kiln_options o;
    memset(&o, 0, sizeof o);
    o.target = KILN_TARGET_CPU;
    const char *target = cli_value(cmd, &a, "--target"), *arch = cli_value(cmd, &a, "--arch");
    if (target && strcmp(target, "cuda") == 0) o.target = KILN_TARGET_CUDA;
    else if (target && strcmp(target, "cpu") != 0)
        return cli_usage_error(cmd, "unknown target '%s' (cpu or cuda)", target);
    if (arch && (o.cuda_arch = parse_arch(arch)) < 0)
        return cli_usage_error(cmd, "'%s' is not a CUDA architecture (write 90 or sm_90, from "
                               "sm_%d to sm_%d)", arch, ARCH_MIN, ARCH_MAX);
    bool types = cli_flag(cmd, &a, "--types"), build = cli_flag(cmd, &a, "--build");
    o.fastmath = cli_flag(cmd, &a, "--fastmath");
    o.debug = cli_flag(cmd, &a, "--debug");
    if (cli_flag(cmd, &a, "--no-python")) {
        if (o.target == KILN_TARGET_CUDA && !arch) o.cuda_arch = local_arch();
        return compile_in_c(a.pos[0], a.pos[1], a.pos[2], &o, types, build);
    }
    /* the options checked here go on to Python as they were given */
    const char *args[2 * CLI_MAX_ARGS + 4];
    int n = 0;
    char archbuf[16];
    if (target) {
        args[n++] = "--target";
        args[n++] = target;
    }
    if (arch) {
        snprintf(archbuf, sizeof archbuf, "%d", o.cuda_arch);
        args[n++] = "--arch";
        args[n++] = archbuf;
    }
    if (types) args[n++] = "--types";
    if (build) args[n++] = "--build";
    if (o.fastmath) args[n++] = "--fastmath";
    if (o.debug) args[n++] = "--debug";
    args[n++] = "--";
    for (int i = 0; i < 3; i++) args[n++] = a.pos[i];
    return run_python("compile", args, n);
}

/* ---- main ------------------------------------------------------------------------------ */

int main(int argc, char **argv) {
    /* past a file size limit (ulimit -f) a write fails with EFBIG, which kiln reports as
     * it reports a full disk, instead of the default SIGXFSZ ending the program (Python
     * ignores the signal too) */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        fprintf(stderr, "kiln: missing command\n");
        top_help(stderr);
        return EXIT_USAGE;
    }
    const char *first = argv[1];
    if (strcmp(first, "-h") == 0 || strcmp(first, "--help") == 0) {
        top_help(stdout);
        return 0;
    }
    if (strcmp(first, "--version") == 0 || strcmp(first, "-V") == 0) {
        printf("kiln %s\n", kiln_version());
        return 0;
    }
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(first, command_name(i)) == 0) return commands[i].run(argc - 2, argv + 2);
    if (first[0] == '-') fprintf(stderr, "kiln: unknown option '%s'\n", first);
    else fprintf(stderr, "kiln: unknown command '%s'\n", first);
    top_help(stderr);
    return EXIT_USAGE;
}
