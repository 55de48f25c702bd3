#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

const char *qgemv_status_str(qgemv_status s) {
  switch (s) {
  case QGEMV_OK: return "QGEMV_OK";
  case QGEMV_ERR_INVALID_ARG: return "QGEMV_ERR_INVALID_ARG";
  case QGEMV_ERR_UNSUPPORTED: return "QGEMV_ERR_UNSUPPORTED";
  case QGEMV_ERR_NO_BACKEND: return "QGEMV_ERR_NO_BACKEND";
  case QGEMV_ERR_NO_DEVICE: return "QGEMV_ERR_NO_DEVICE";
  case QGEMV_ERR_NO_MEMORY: return "QGEMV_ERR_NO_MEMORY";
  case QGEMV_ERR_DEVICE: return "QGEMV_ERR_DEVICE";
  case QGEMV_ERR_BAD_DATA: return "QGEMV_ERR_BAD_DATA";
  case QGEMV_ERR_ABI: return "QGEMV_ERR_ABI";
  }
  return "QGEMV_ERR_UNKNOWN_STATUS";
}

const char *qgemv_last_error(void) { return last_error; }

qgemv_status qg_fail(qgemv_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_error, sizeof last_error, fmt, ap);
  va_end(ap);
  return s;
}

void qg_choices_add(char *buf, size_t size, int i, int count, const char *item) {
  size_t used = strlen(buf);
  if (used < size) snprintf(buf + used, size - used, "%s%s", i == 0 ? "" : i == count - 1 ? " or " : ", ", item);
}

qgemv_status qg_fail_detail(qgemv_status s, const char *prefix, const char *detail) {
  if (detail == NULL || detail[0] == '\0') detail = qgemv_status_str(s);
  return qg_fail(s, "%s: %s", prefix, detail);
}
