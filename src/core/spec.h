/* Parsing of backend specs ("auto", "cpu", "cuda:1") and $QGEMV_DEVICE. */
#ifndef QG_SPEC_H
#define QG_SPEC_H

#include <stdbool.h>

#include "qgemv.h"

typedef struct qg_spec {
  char name[16];  /* "auto", "cpu" or a module's name ("cuda"), not yet looked up */
  int device;     /* -1: not given */
  bool from_env;  /* the name came from $QGEMV_BACKEND */
} qg_spec;

/* spec NULL means $QGEMV_BACKEND, then "auto". $QGEMV_DEVICE fills the
 * device when the spec names none (GPU backends only). */
qgemv_status qg_spec_parse(const char *spec, qg_spec *out);
/* Parses a decimal device index in [0, INT_MAX]; -1 when not a number. */
int qg_parse_index(const char *s);

#endif
