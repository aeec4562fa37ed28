/* cli.h: what the files of the `kiln` command share.
 *
 * main.c holds the command table and the commands that run kernels' files
 * (compile, precompile); info.c and cache_cmd.c one command each; args.c the
 * option parser every command uses; util.c the small pieces several need (a
 * JSON writer, masking of secrets, running a child with a deadline, finding
 * Python).  Output goes to stdout, errors to stderr; a command returns the
 * process's exit status (EXIT_USAGE for a command line it cannot take).
 */
#ifndef KILN_CLI_H
#define KILN_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "kiln.h"

enum {
    EXIT_USAGE = 2,    /* a command line the command cannot take (as getopt tools, git, pip) */
    CLI_MAX_ARGS = 64, /* positional arguments and options of one command line */
    /* CUDA architectures the CLI takes (sm_XY, XY = compute capability x 10): a
     * sanity bound, so "-5" or "100000" is an error here; NVRTC says which of
     * these it can compile for.  python/kiln/__main__.py has the same bounds. */
    ARCH_MIN = 10,
    ARCH_MAX = 199
};

/* ---- args.c: the one option parser -------------------------------------------------- */

/* One option of a command: "--name" (and "-c" when short is not 0), taking a value
 * when metavar is not NULL ("--target cpu" or "--target=cpu"). */
typedef struct cli_opt {
    const char *name;    /* "--target" */
    char short_name;     /* 't', or 0 for none */
    const char *metavar; /* "T" for an option with a value, NULL for a flag */
    const char *help;    /* one line for --help */
} cli_opt;

/* One command ("cache export"): its usage line, what it does, its options. */
typedef struct cli_cmd {
    const char *name;      /* "cache export": what usage lines print after "kiln " */
    const char *args;      /* the positional part of the usage line: "FILE [--target T]..." */
    const char *summary;   /* one line */
    const char *details;   /* more lines for --help, or NULL */
    const cli_opt *opts;   /* ends with an entry whose name is NULL; NULL for none */
    int min_pos, max_pos;  /* positional arguments it takes */
} cli_cmd;

/* A parsed command line: positional arguments in order, and each option given, in
 * order, as its index in cmd->opts with its value (NULL for a flag). */
typedef struct cli_args {
    const char *pos[CLI_MAX_ARGS];
    int npos;
    struct {
        int opt;
        const char *value;
    } given[CLI_MAX_ARGS];
    int ngiven;
} cli_args;

/* Parses argv (the words after the command's name).  Returns -1 when it printed the
 * help to stdout (--help, -h: the caller exits 0), EXIT_USAGE after printing the
 * error and the usage to stderr, 0 when *out holds the command line.  "--" ends the
 * options; "-" alone is a positional argument. */
int cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *out);
/* The parser's answer as an exit status: -1 (help printed) -> 0. */
#define CLI_PARSED_EXIT(rc) ((rc) < 0 ? 0 : (rc))
/* The value of the last --name given, or NULL; cli_flag: whether it was given. */
const char *cli_value(const cli_cmd *cmd, const cli_args *a, const char *name);
bool cli_flag(const cli_cmd *cmd, const cli_args *a, const char *name);
void cli_usage(const cli_cmd *cmd, FILE *f);
void cli_help(const cli_cmd *cmd, FILE *f);
/* Reports a usage error found after parsing ("bad target 'x'..."): the message and
 * the usage line on stderr; returns EXIT_USAGE. */
int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* ---- util.c ----------------------------------------------------------------------- */

/* A JSON writer to a FILE: objects and arrays nest, commas come by themselves.
 * Strings are bytes: valid UTF-8 passes through, each byte of an invalid
 * sequence becomes \udcXX (Python's surrogateescape, PEP 383), so
 * os.fsencode(json.loads(text)) gives a path's bytes back exactly. */
enum { JSON_MAX_DEPTH = 16 };
typedef struct json_out {
    FILE *f;
    int depth;
    bool first[JSON_MAX_DEPTH]; /* nothing written yet at this level */
    bool after_key;             /* a key was written: the value follows without a comma */
} json_out;

void json_begin(json_out *j, FILE *f);
void json_end(json_out *j); /* the final newline */
void json_obj(json_out *j, const char *key);   /* key is NULL inside an array or at the top */
void json_arr(json_out *j, const char *key);
void json_close(json_out *j, char bracket);    /* '}' or ']' */
void json_str(json_out *j, const char *key, const char *s); /* s NULL: null */
void json_int(json_out *j, const char *key, int64_t v);
void json_num(json_out *j, const char *key, double v);
void json_bool(json_out *j, const char *key, bool v);
void json_null(json_out *j, const char *key);
/* Writes s (len bytes) as a JSON string literal. */
void json_write_string(FILE *f, const char *s, size_t len);

/* Whether the value of environment variable `name` is a secret (KILN_BUNDLE_KEY,
 * KILN_REMOTE_KEY, ...): shown as MASKED. */
#define MASKED "********"
bool is_secret_var(const char *name);
/* value with the password of a URL (redis://:pw@host, redis://user:pw@host) replaced
 * by MASKED, into buf. */
const char *mask_url(const char *value, char *buf, size_t size);
/* What `kiln info` shows for KILN_ variable name=value, into buf. */
const char *shown_value(const char *name, const char *value, char *buf, size_t size);

/* "90" or "sm_90" -> 90; -1 when it is neither, or out of bounds. */
int parse_arch(const char *s);

/* "1.5 GiB" */
void human_bytes(char *buf, size_t size, double bytes);

/* Runs argv[0] (found on the PATH) with stdin from /dev/null, stdout and stderr
 * together into out (at most size - 1 bytes kept, NUL-terminated), in its own
 * process group, killed with the group when it runs past timeout_ms.  Returns 0
 * with *status as waitpid's, or -1 with out holding why it did not run or
 * finish. */
int run_bounded(char *const argv[], int timeout_ms, char *out, size_t size, int *status);

/* The Python that commands needing one run: $KILN_PYTHON, else the python3 beside
 * this program (a virtual environment's bin/), else python3 on the PATH.  *how
 * says which ("KILN_PYTHON", "beside kiln", "PATH"); buf holds the path when it
 * is the one beside. */
const char *find_python(char *buf, size_t size, const char **how);

/* The directory of this program, into buf ("" when unknown). */
const char *self_path(char *buf, size_t size);

/* ---- the commands ----------------------------------------------------------------- */

int cmd_info(int argc, char **argv);
int cmd_cache(int argc, char **argv);
int cmd_metrics(int argc, char **argv);
extern const cli_cmd cli_info_cmd, cli_cache_cmds[], cli_metrics_cmd;

/* A diagnostics callback that prints to stderr and counts errors in *(int *)ud. */
void cli_on_diag(void *ud, const kiln_diag *d);

#endif
