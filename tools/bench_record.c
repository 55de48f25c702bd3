/* qgemv bench: the --json and --csv files, kept up to date as rows finish,
 * so that a run cut short (a time limit, ^C) leaves valid files with every
 * row it measured.
 *
 * JSON cannot be appended to and stay valid, so a JSON file is rewritten
 * whole after each row into a temporary file beside it, which is then
 * renamed over it: a reader, or an interruption, sees the previous record
 * or the next, never half of one. That needs a regular file (or a new
 * one); standard output, a pipe or a device gets the record once, at the
 * end. The record is a few hundred kB at most, rewritten once per row that
 * took far longer to measure. CSV lines are appended and flushed as rows
 * finish. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"

/* A path that does not exist yet, or a regular file (not a link to one:
 * renaming over a link would replace the link). */
static bool replaceable(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) return errno == ENOENT;
  return S_ISREG(st.st_mode);
}

/* A new temporary file beside path: its name in tmp (path + 7), open. */
static FILE *temp_beside(const char *path, char *tmp) {
  sprintf(tmp, "%s.XXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) return NULL;
  FILE *f = fdopen(fd, "w");
  if (!f) {
    close(fd);
    unlink(tmp);
  }
  return f;
}

/* Writes the record to a temporary file and renames it over the path:
 * 0, or the errno of what failed. */
static int save_json(const bench_record *rec, const bench_run *run) {
  char *tmp = malloc(strlen(rec->json_path) + 8);
  if (!tmp) return ENOMEM;
  FILE *f = temp_beside(rec->json_path, tmp);
  int err = f ? 0 : errno;
  if (f) {
    bench_write_json(f, run);
    if (ferror(f) || fchmod(fileno(f), (mode_t)rec->mode) != 0) err = errno ? errno : EIO;
    if (fclose(f) != 0 && !err) err = errno;
    if (!err && rename(tmp, rec->json_path) != 0) err = errno;
    if (err) unlink(tmp);
  }
  free(tmp);
  return err;
}

static void update_json(bench_record *rec, const bench_run *run) {
  int err = rec->replace ? save_json(rec, run) : 0;
  if (!err || rec->save_failed) return;
  fprintf(stderr, "qgemv bench: cannot write '%s': %s (tried again after each row)\n", rec->json_path, strerror(err));
  rec->save_failed = true;
}

int bench_record_open(bench_record *rec, const bench_opts *o) {
  *rec = (bench_record){.json_path = o->json_path, .csv_path = o->csv_path};
  if (o->json_path && strcmp(o->json_path, "-") != 0 && replaceable(o->json_path)) {
    rec->replace = true;
    mode_t mask = umask(0);
    umask(mask);
    rec->mode = 0666 & ~mask;
    /* a directory that cannot take the temporary file fails now */
    char *tmp = malloc(strlen(o->json_path) + 8);
    FILE *probe = tmp ? temp_beside(o->json_path, tmp) : NULL;
    if (!probe) {
      fprintf(stderr, "qgemv bench: cannot write '%s': %s\n", o->json_path, strerror(tmp ? errno : ENOMEM));
      free(tmp);
      return -1;
    }
    fclose(probe);
    unlink(tmp);
    free(tmp);
  } else if (o->json_path && !(rec->json = out_open("bench", o->json_path))) {
    return -1;
  }
  if (o->csv_path && !(rec->csv = out_open("bench", o->csv_path))) {
    if (rec->json && rec->json != stdout) fclose(rec->json);
    return -1;
  }
  if (rec->csv) {
    bench_csv_header(rec->csv);
    fflush(rec->csv);
  }
  return 0;
}

void bench_record_start(bench_record *rec, const bench_run *run) { update_json(rec, run); }

void bench_record_row(bench_record *rec, const bench_run *run, int i) {
  if (rec->csv) {
    bench_csv_row(rec->csv, run, i);
    fflush(rec->csv);
  }
  update_json(rec, run);
}

int bench_record_close(bench_record *rec, const bench_run *run) {
  int rc = 0;
  int err = rec->replace && run->rows ? save_json(rec, run) : 0;
  if (err) {
    fprintf(stderr, "qgemv bench: writing '%s' failed: %s\n", rec->json_path, strerror(err));
    rc = -1;
  }
  if (rec->json) {
    if (run->rows) bench_write_json(rec->json, run);
    if (out_close("bench", rec->json, rec->json_path) != 0) rc = -1;
  }
  if (rec->csv && out_close("bench", rec->csv, rec->csv_path) != 0) rc = -1;
  return rc;
}
