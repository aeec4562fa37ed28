/* util.c: pieces several `kiln` commands share.
 *
 * The JSON writer exists because --json output must stay valid whatever bytes a
 * path holds: cache directories and kernel names are bytes on Linux, not text.
 * Valid UTF-8 passes through; a byte that is not part of a valid sequence is
 * written as the lone surrogate \udcXX, which is how Python's surrogateescape
 * (the file-system encoding's error handler) represents it, so a Python reader
 * gets the original bytes back with os.fsencode.
 *
 * run_bounded runs the probes of `kiln info` (the compiler's version, an OpenMP
 * test program, Python) with a deadline: a compiler that hangs must not hang
 * `kiln info`.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* ---- JSON ----------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when s[0] does
 * not start one: overlong forms, surrogates and code points past U+10FFFF are
 * invalid, as for Python's decoder. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned c = s[0];
    size_t len;
    unsigned min, cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) len = 2, min = 0x80, cp = c & 0x1f;
    else if (c >= 0xe0 && c <= 0xef) len = 3, min = 0x800, cp = c & 0x0f;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, min = 0x10000, cp = c & 0x07;
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

void json_write_string(FILE *f, const char *str, size_t len) {
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
            i++;
        } else if (c == '\n') {
            fputs("\\n", f);
            i++;
        } else if (c == '\t') {
            fputs("\\t", f);
            i++;
        } else if (c < 0x20 || c == 0x7f) {
            fprintf(f, "\\u%04x", c);
            i++;
        } else {
            size_t n = utf8_len(s + i, len - i);
            if (n == 0) { /* surrogateescape */
                fprintf(f, "\\udc%02x", c);
                i++;
            } else {
                fwrite(s + i, 1, n, f);
                i += n;
            }
        }
    }
    fputc('"', f);
}

void json_begin(json_out *j, FILE *f) {
    memset(j, 0, sizeof *j);
    j->f = f;
    j->first[0] = true;
}

void json_end(json_out *j) { fputc('\n', j->f); }

/* The comma, indentation and key before a value. */
static void json_key(json_out *j, const char *key) {
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth]) fputc(',', j->f);
    j->first[j->depth] = false;
    if (j->depth > 0) fprintf(j->f, "\n%*s", 2 * j->depth, "");
    if (key) {
        json_write_string(j->f, key, strlen(key));
        fputs(": ", j->f);
    }
}

static void json_open(json_out *j, const char *key, char bracket) {
    json_key(j, key);
    fputc(bracket, j->f);
    if (j->depth + 1 < JSON_MAX_DEPTH) j->depth++;
    j->first[j->depth] = true;
}

void json_obj(json_out *j, const char *key) { json_open(j, key, '{'); }
void json_arr(json_out *j, const char *key) { json_open(j, key, '['); }

void json_close(json_out *j, char bracket) {
    bool empty = j->first[j->depth];
    if (j->depth > 0) j->depth--;
    if (!empty) fprintf(j->f, "\n%*s", 2 * j->depth, "");
    fputc(bracket, j->f);
}

void json_str(json_out *j, const char *key, const char *s) {
    json_key(j, key);
    if (s) json_write_string(j->f, s, strlen(s));
    else fputs("null", j->f);
}

void json_int(json_out *j, const char *key, int64_t v) {
    json_key(j, key);
    fprintf(j->f, "%lld", (long long)v);
}

void json_num(json_out *j, const char *key, double v) {
    json_key(j, key);
    if (v == v && v - v == 0) fprintf(j->f, "%.17g", v); /* JSON has no NaN or infinity */
    else fputs("null", j->f);
}

void json_bool(json_out *j, const char *key, bool v) {
    json_key(j, key);
    fputs(v ? "true" : "false", j->f);
}

void json_null(json_out *j, const char *key) {
    json_key(j, key);
    fputs("null", j->f);
}

/* ---- secrets ------------------------------------------------------------------------ */

bool is_secret_var(const char *name) {
    static const char *const words[] = {"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD"};
    size_t n = strlen(name);
    /* KILN_BUNDLE_KEY_FILE names a file; the file holds the secret */
    if (n >= 5 && strcmp(name + n - 5, "_FILE") == 0) return false;
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (strstr(name, words[i])) return true;
    return false;
}

const char *mask_url(const char *value, char *buf, size_t size) {
    /* every "scheme://user:password@host" in value: a diagnostic may quote one in a sentence */
    size_t w = 0;
    const char *p = value;
    buf[0] = 0;
    while (*p && w + 1 < size) {
        const char *scheme = strstr(p, "://");
        if (!scheme) break;
        const char *auth = scheme + 3;
        size_t alen = strcspn(auth, "/ \t\n'\")");
        const char *at = memchr(auth, '@', alen);
        if (at) {
            while (memchr(at + 1, '@', alen - (size_t)(at + 1 - auth))) /* the last '@' */
                at = memchr(at + 1, '@', alen - (size_t)(at + 1 - auth));
            /* redis://user:pw@host keeps the user; redis://pw@host (no colon) is all password */
            const char *colon = memchr(auth, ':', (size_t)(at - auth));
            const char *keep_end = colon ? colon + 1 : auth;
            int n = snprintf(buf + w, size - w, "%.*s%s", (int)(keep_end - p), p, MASKED);
            if (n < 0 || (size_t)n >= size - w) return buf;
            w += (size_t)n;
            p = at;
        } else {
            int n = snprintf(buf + w, size - w, "%.*s", (int)(auth - p), p);
            if (n < 0 || (size_t)n >= size - w) return buf;
            w += (size_t)n;
            p = auth;
        }
    }
    snprintf(buf + w, size - w, "%s", p);
    return buf;
}

const char *shown_value(const char *name, const char *value, char *buf, size_t size) {
    if (is_secret_var(name)) snprintf(buf, size, "%s", MASKED);
    else mask_url(value, buf, size);
    return buf;
}

int parse_arch(const char *s) {
    if (strncmp(s, "sm_", 3) == 0) s += 3;
    if (!*s || strlen(s) > 3) return -1;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return -1;
    int v = atoi(s);
    return v >= ARCH_MIN && v <= ARCH_MAX ? v : -1;
}

void human_bytes(char *buf, size_t size, double bytes) {
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, size, u ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* ---- processes ------------------------------------------------------------------------ */

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The probe running now, in a process group of its own (so that a timeout can end
 * what it started): the terminal's Ctrl-C does not reach it, so this program's
 * handler ends it, then dies of the signal as it would have.  A static because a
 * signal handler has no other way to find it; one probe runs at a time. */
static volatile sig_atomic_t probe_pid;

static void end_probe(int sig) {
    if (probe_pid > 0) kill(-(pid_t)probe_pid, SIGKILL);
    signal(sig, SIG_DFL);
    raise(sig);
}

int run_bounded(char *const argv[], int timeout_ms, char *out, size_t size, int *status) {
    int fd[2];
    size_t got = 0;
    out[0] = 0;
    if (pipe2(fd, O_CLOEXEC) != 0) {
        snprintf(out, size, "cannot make a pipe: %s", strerror(errno));
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(out, size, "cannot start %s: %s", argv[0], strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        setpgid(0, 0); /* its own group: a timeout kills what it started too */
        int devnull = open("/dev/null", O_RDONLY);
        if (devnull >= 0) dup2(devnull, 0);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        execvp(argv[0], argv);
        dprintf(1, "cannot run %s: %s", argv[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid);
    close(fd[1]);
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    struct sigaction sa = {0}, old[4];
    sa.sa_handler = end_probe;
    probe_pid = pid;
    for (int i = 0; i < 4; i++) { /* a signal ignored (nohup, a shell's &) stays ignored */
        sigaction(sigs[i], NULL, &old[i]);
        if (old[i].sa_handler != SIG_IGN) sigaction(sigs[i], &sa, NULL);
    }
    int64_t deadline = now_ms() + timeout_ms;
    bool timed_out = false;
    for (;;) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            timed_out = true;
            break;
        }
        struct pollfd p = {fd[0], POLLIN, 0};
        int r = poll(&p, 1, (int)left);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue;
        char tmp[4096];
        ssize_t n = read(fd[0], tmp, sizeof tmp);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        size_t keep = got + 1 < size ? size - 1 - got : 0;
        if ((size_t)n < keep) keep = (size_t)n;
        memcpy(out + got, tmp, keep);
        got += keep;
        out[got] = 0;
    }
    close(fd[0]);
    if (timed_out) {
        kill(-pid, SIGKILL);
        kill(pid, SIGKILL);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    probe_pid = 0;
    for (int i = 0; i < 4; i++) sigaction(sigs[i], &old[i], NULL);
    if (timed_out) {
        snprintf(out, size, "%s did not finish in %d s (killed)", argv[0], timeout_ms / 1000);
        return -1;
    }
    *status = st;
    return 0;
}

const char *self_path(char *buf, size_t size) {
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    buf[n > 0 ? n : 0] = 0;
    return buf;
}

const char *find_python(char *buf, size_t size, const char **how) {
    const char *py = getenv("KILN_PYTHON");
    if (py && *py) {
        *how = "KILN_PYTHON";
        return py;
    }
    char self[PATH_MAX];
    self_path(self, sizeof self);
    char *slash = strrchr(self, '/');
    if (slash) {
        *slash = 0;
        snprintf(buf, size, "%s/python3", self);
        if (access(buf, X_OK) == 0) {
            *how = "beside kiln";
            return buf;
        }
    }
    *how = "PATH";
    return "python3";
}

void cli_on_diag(void *ud, const kiln_diag *d) {
    /* the core's warnings quote KILN_REMOTE_CACHE as it is, password and all */
    char *masked = NULL;
    size_t size = strlen(d->formatted) + 64;
    if (strstr(d->formatted, "://") && (masked = malloc(size)))
        mask_url(d->formatted, masked, size);
    fprintf(stderr, "%s\n", masked ? masked : d->formatted);
    free(masked);
    if (d->severity == KILN_ERROR && ud) ++*(int *)ud;
}
