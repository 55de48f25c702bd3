/*
 * Fake device modules for test_hardening_loader: each build of this file is
 * a real module qgemv-NAME.so that loads and opens, so that discovery and
 * auto's choice are tested without a device.
 *   FAKEDEV_NAME            its backend name (a string)
 *   FAKEDEV_PRIORITY        its auto priority
 *   FAKEDEV_ABORT_ON_LOAD   aborts as soon as it is loaded: for files the
 *                           loader must never open (shadowed, misnamed)
 * It sees as many devices as $QGEMV_TEST_DEVICES_<NAME> says (unset: none).
 * Only opening, describing and closing a context are supported: the tests
 * run no work on it.
 */
#include <stdio.h>
#include <stdlib.h>

#include "backend.h"

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

#define DEVICES_VAR "QGEMV_TEST_DEVICES_" FAKEDEV_NAME

#ifdef FAKEDEV_ABORT_ON_LOAD
__attribute__((constructor)) static void loaded(void) { abort(); }
#endif

static const char *error_detail(void) { return "no fake device: " DEVICES_VAR " is 0 or unset"; }

static int device_count(void) {
  const char *v = getenv(DEVICES_VAR);
  return v ? atoi(v) : 0;
}

static const char *build_info(void) { return "fake module for tests"; }

static int state_token;

static qgemv_status open_ctx(int device, void **state, int *device_opened) {
  *state = &state_token;
  *device_opened = device < 0 ? 0 : device;
  return QGEMV_OK;
}

static void close_ctx(void *state) { (void)state; }

static qgemv_status device_info(void *state, qgemv_device_info *info) {
  (void)state;
  snprintf(info->name, sizeof info->name, "fake device of %s", FAKEDEV_NAME);
  return QGEMV_OK;
}

static qgemv_status no_stream(void *state, void *native_stream) {
  (void)state;
  return native_stream ? QGEMV_ERR_UNSUPPORTED : QGEMV_OK;
}

static qgemv_status sync_ctx(void *state) {
  (void)state;
  return QGEMV_OK;
}

static const qg_backend fake = {
    .abi = QG_BACKEND_ABI,
    .name = FAKEDEV_NAME,
    .error_detail = error_detail,
    .device_count = device_count,
    .build_info = build_info,
    .open = open_ctx,
    .close = close_ctx,
    .device_info = device_info,
    .set_stream = no_stream,
    .sync = sync_ctx,
};

static const qg_module module = {.backend = &fake, .auto_priority = FAKEDEV_PRIORITY};

EXPORT const void *qgemv_module_entry(unsigned *abi);
EXPORT const void *qgemv_module_entry(unsigned *abi) {
  *abi = QG_BACKEND_ABI;
  return &module;
}
