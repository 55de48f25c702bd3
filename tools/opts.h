/* Command-line parsing shared by the subcommands.
 *
 * Options are "--name VALUE" or "--name=VALUE". Every error names the
 * option and the accepted values, and the caller exits with status 2
 * (usage error), so scripts can tell a typo from a failed measurement. */
#ifndef QGEMV_TOOL_OPTS_H
#define QGEMV_TOOL_OPTS_H

#include <stdbool.h>
#include <stdint.h>

#define EXIT_USAGE 2

typedef struct opt_iter {
  const char *cmd; /* "bench", for messages */
  int argc;
  char **argv;
  int i;
  char name[48];            /* current option, without any "=VALUE" */
  const char *inline_value; /* the VALUE of "--name=VALUE", else NULL */
} opt_iter;

void opt_init(opt_iter *it, const char *cmd, int argc, char **argv);
/* Advances to the next argument; false when there is none. */
bool opt_next(opt_iter *it);
bool opt_is(const opt_iter *it, const char *name);
/* A flag must not carry "=VALUE"; false (with a message) when it does. */
bool opt_flag(opt_iter *it);
/* The option's value (inline or the next argument); NULL, with a message,
 * when it is missing. */
const char *opt_value(opt_iter *it);
/* An optional value: inline, or the next argument when it is "-" or does
 * not start with '-'; NULL when absent (no message). */
const char *opt_optional_value(opt_iter *it);

/* Print "qgemv CMD: OPTION 'VALUE': <message>" and return EXIT_USAGE. */
int opt_bad_value(const opt_iter *it, const char *value, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The current argument is not an option of this command. */
int opt_unknown(const opt_iter *it);

/* Strict numbers: the whole string, in [lo, hi]; false otherwise. */
bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out);
bool parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
bool parse_double(const char *s, double lo, double hi, double *out);
/* A byte count with an optional binary suffix K, M, G or T (KiB ...). */
bool parse_size(const char *s, uint64_t *out);

/* Splits a comma list into at most max items of at most 31 characters;
 * returns the count, or -1 when the list is empty, too long or has an
 * empty item. */
int split_list(const char *s, char items[][32], int max);

#endif
