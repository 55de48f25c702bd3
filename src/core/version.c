#include "qgemv.h"

#ifndef QG_BUILD_CONFIG
#define QG_BUILD_CONFIG "unknown"
#endif

const char *qgemv_version(void) { return QGEMV_VERSION_STRING; }
int qgemv_version_number(void) { return QGEMV_VERSION_NUMBER; }
const char *qgemv_build_config(void) { return QG_BUILD_CONFIG; }
