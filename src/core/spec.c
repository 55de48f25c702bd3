#include "spec.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

int qg_parse_index(const char *s) {
  if (s == NULL || *s == '\0') return -1;
  long v = 0;
  for (const char *p = s; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > INT_MAX) return -1;
  }
  return (int)v;
}

qgemv_status qg_spec_parse(const char *spec, qg_spec *out) {
  const char *origin = "backend spec";
  out->from_env = false;
  if (spec == NULL) {
    spec = getenv("QGEMV_BACKEND");
    origin = "QGEMV_BACKEND";
    out->from_env = spec != NULL && *spec != '\0';
    if (!out->from_env) spec = "auto";
  }
  const char *colon = strchr(spec, ':');
  size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
  if (name_len == 0)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s '%.64s' names no backend: use auto, cpu, or NAME[:N] of a backend that "
                   "qgemv info lists", origin, spec);
  /* Backend names are short; a longer name, however long, is unknown.
   * Whether a short one is known, the registry says. */
  if (name_len >= sizeof out->name)
    return qg_fail(QGEMV_ERR_NO_BACKEND, "%s names unknown backend '%.*s': backend names have at most %d characters",
                   origin, (int)(name_len > 64 ? 64 : name_len), spec, (int)sizeof out->name - 1);
  memcpy(out->name, spec, name_len);
  out->name[name_len] = '\0';
  out->device = -1;
  if (colon) {
    if (strcmp(out->name, "auto") == 0)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "%s '%.64s': auto takes no device index (use QGEMV_DEVICE)", origin,
                     spec);
    out->device = qg_parse_index(colon + 1);
    if (out->device < 0)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "%s '%.64s': the device index after ':' must be a number >= 0",
                     origin, spec);
    return QGEMV_OK;
  }
  /* $QGEMV_DEVICE names a GPU (job scripts set it per rank); the CPU
   * backend has one device and ignores it. */
  const char *dev = strcmp(out->name, "cpu") == 0 ? NULL : getenv("QGEMV_DEVICE");
  if (dev != NULL && *dev != '\0') {
    out->device = qg_parse_index(dev);
    if (out->device < 0)
      return qg_fail(QGEMV_ERR_INVALID_ARG, "QGEMV_DEVICE='%.32s' is not a device index (a number >= 0)", dev);
  }
  return QGEMV_OK;
}
