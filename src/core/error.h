/* Status and the per-thread error message. */
#ifndef QG_ERROR_H
#define QG_ERROR_H

#include "qgemv.h"

#if defined(__GNUC__)
#define QG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define QG_PRINTF(f, a)
#endif

/* Formats the calling thread's error message and returns s. */
qgemv_status qg_fail(qgemv_status s, const char *fmt, ...) QG_PRINTF(2, 3);
/* Keeps s; the message is "<prefix>: <detail>" (detail from a backend). */
qgemv_status qg_fail_detail(qgemv_status s, const char *prefix, const char *detail);
/* Appends item number i of count to buf, building "a, b or c": the list of
 * choices in a message. */
void qg_choices_add(char *buf, size_t size, int i, int count, const char *item);

#endif
