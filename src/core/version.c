#include "config.h"

#include <pthread.h>
#include <stdio.h>

#include "qgemv.h"
#include "registry.h"

#ifndef QG_BUILD_CONFIG
#define QG_BUILD_CONFIG "unknown"
#endif

const char *qgemv_version(void) { return QGEMV_VERSION_STRING; }
int qgemv_version_number(void) { return QGEMV_VERSION_NUMBER; }

static char config[512];
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* configure's facts plus the CPU levels compiled into this library. */
static void make_config(void) {
  snprintf(config, sizeof config, "%s; %s", QG_BUILD_CONFIG, qg_cpu_backend()->build_info());
}

const char *qgemv_build_config(void) {
  pthread_once(&config_once, make_config);
  return config;
}
