/* args.c: the option parser of every `kiln` command.
 *
 * Each command is a table (cli_cmd): its usage, a summary, and its options with
 * one line of help each; --help is generated from the table, so what a command
 * takes and what it says it takes cannot drift apart.  Conventions are those of
 * getopt_long tools and of git and pip: options and positional arguments may
 * mix, "--name value" and "--name=value" are the same, "--" ends the options,
 * -h/--help prints the help to stdout and exits 0, and a command line the
 * command cannot take prints what is wrong and the usage line to stderr and
 * exits 2.  Hand-written rather than getopt_long because the help text comes
 * from the same table and getopt's error messages name neither the command nor
 * its usage.
 */
#include <stdarg.h>
#include <string.h>

#include "cli.h"

static const cli_opt help_opt = {"--help", 'h', NULL, "show this help and exit"};

static int nopts(const cli_cmd *cmd) {
    int n = 0;
    while (cmd->opts && cmd->opts[n].name) n++;
    return n;
}

void cli_usage(const cli_cmd *cmd, FILE *f) {
    fprintf(f, "usage: kiln %s%s%s%s\n", cmd->name, nopts(cmd) ? " [options]" : "",
            cmd->args && *cmd->args ? " " : "", cmd->args ? cmd->args : "");
}

enum { HELP_COLUMN = 26, HELP_WIDTH = 79 }; /* where option help starts, and wraps */

/* Writes text from column HELP_COLUMN, wrapped at spaces before HELP_WIDTH. */
static void print_wrapped(FILE *f, const char *text) {
    int room = HELP_WIDTH - HELP_COLUMN;
    while (*text) {
        int n = (int)strlen(text);
        if (n > room) {
            n = room;
            while (n > 0 && text[n] != ' ') n--;
            if (n == 0) n = (int)strcspn(text, " "); /* one long word */
        }
        fprintf(f, "%.*s\n", n, text);
        text += n;
        while (*text == ' ') text++;
        if (*text) fprintf(f, "%*s", HELP_COLUMN, "");
    }
}

static void print_opt(FILE *f, const cli_opt *o) {
    char left[64];
    int w = 0;
    if (o->short_name) w = snprintf(left, sizeof left, "-%c, ", o->short_name);
    snprintf(left + w, sizeof left - (size_t)w, "%s%s%s", o->name, o->metavar ? " " : "",
             o->metavar ? o->metavar : "");
    if ((int)strlen(left) > HELP_COLUMN - 4) fprintf(f, "  %s\n%*s", left, HELP_COLUMN, "");
    else fprintf(f, "  %-*s", HELP_COLUMN - 2, left);
    print_wrapped(f, o->help);
}

void cli_help(const cli_cmd *cmd, FILE *f) {
    cli_usage(cmd, f);
    fprintf(f, "\n%s\n", cmd->summary);
    if (cmd->details) fprintf(f, "\n%s", cmd->details);
    fprintf(f, "\noptions:\n");
    print_opt(f, &help_opt);
    for (int i = 0; i < nopts(cmd); i++) print_opt(f, &cmd->opts[i]);
}

int cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "kiln %s: ", cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    cli_usage(cmd, stderr);
    fprintf(stderr, "(kiln %s --help says more)\n", cmd->name);
    return EXIT_USAGE;
}

/* The option that word names: "--target", "--target=cpu", "-t", "-tcpu".  *inline_value
 * gets the value written in the same word, or NULL. */
static int find_opt(const cli_cmd *cmd, const char *word, const char **inline_value) {
    *inline_value = NULL;
    int n = nopts(cmd);
    if (word[1] == '-') {
        size_t len = strcspn(word, "=");
        for (int i = 0; i < n; i++)
            if (strlen(cmd->opts[i].name) == len && strncmp(cmd->opts[i].name, word, len) == 0) {
                if (word[len] == '=') *inline_value = word + len + 1;
                return i;
            }
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (cmd->opts[i].short_name && cmd->opts[i].short_name == word[1]) {
            if (word[2]) *inline_value = word + 2;
            return i;
        }
    return -1;
}

int cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *out) {
    memset(out, 0, sizeof *out);
    bool options_end = false;
    /* --help wins wherever it is, even after a mistake, as with argparse */
    for (int i = 0; i < argc && strcmp(argv[i], "--") != 0; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            cli_help(cmd, stdout);
            return -1;
        }
    for (int i = 0; i < argc; i++) {
        const char *w = argv[i];
        if (!options_end && strcmp(w, "--") == 0) {
            options_end = true;
            continue;
        }
        if (options_end || w[0] != '-' || w[1] == 0) {
            if (out->npos >= cmd->max_pos || out->npos >= CLI_MAX_ARGS)
                return cli_usage_error(cmd, "unexpected argument '%s'", w);
            out->pos[out->npos++] = w;
            continue;
        }
        const char *value;
        int k = find_opt(cmd, w, &value);
        if (k < 0) return cli_usage_error(cmd, "unknown option '%s'", w);
        const cli_opt *o = &cmd->opts[k];
        if (!o->metavar && value)
            return cli_usage_error(cmd, "option '%s' takes no value", o->name);
        if (o->metavar && !value) {
            if (i + 1 >= argc)
                return cli_usage_error(cmd, "option '%s' needs a value (%s %s)", o->name,
                                       o->name, o->metavar);
            value = argv[++i];
        }
        if (out->ngiven >= CLI_MAX_ARGS) return cli_usage_error(cmd, "too many options");
        out->given[out->ngiven].opt = k;
        out->given[out->ngiven].value = value;
        out->ngiven++;
    }
    if (out->npos < cmd->min_pos)
        return cli_usage_error(cmd, "missing arguments (it takes %s)", cmd->args);
    return 0;
}

static int opt_index(const cli_cmd *cmd, const char *name) {
    for (int i = 0; i < nopts(cmd); i++)
        if (strcmp(cmd->opts[i].name, name) == 0) return i;
    return -1;
}

const char *cli_value(const cli_cmd *cmd, const cli_args *a, const char *name) {
    int k = opt_index(cmd, name);
    const char *v = NULL;
    for (int i = 0; i < a->ngiven; i++)
        if (a->given[i].opt == k) v = a->given[i].value;
    return v;
}

bool cli_flag(const cli_cmd *cmd, const cli_args *a, const char *name) {
    int k = opt_index(cmd, name);
    for (int i = 0; i < a->ngiven; i++)
        if (a->given[i].opt == k) return true;
    return false;
}
