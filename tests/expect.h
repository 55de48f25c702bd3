/* The assertions the Check suites share. ck_assert records a mark through
 * the fork pipe on every pass (seconds in loops of millions of checks), so
 * these check quietly and report only failures; EXPECT_OK names the call, its status and the library's message. */
#ifndef QG_TEST_EXPECT_H
#define QG_TEST_EXPECT_H

#include <check.h>

#include "qgemv.h"

#define EXPECT(cond, ...)                   \
  do {                                      \
    if (!(cond)) ck_abort_msg(__VA_ARGS__); \
  } while (0)

#define EXPECT_OK(call)                                                                                  \
  do {                                                                                                   \
    qgemv_status s_ = (call);                                                                            \
    EXPECT(s_ == QGEMV_OK, "line %d: %s: %s (%s)", __LINE__, #call, qgemv_status_str(s_),               \
           qgemv_last_error());                                                                          \
  } while (0)

#endif
