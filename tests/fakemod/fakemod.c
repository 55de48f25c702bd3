/*
 * Fake backend modules for test_hardening_loader: each build of this file
 * is a real shared object named qgemv-cuda.so that the loader must refuse.
 *   FAKEMOD_ABI       entry reports ABI 999 (and a vtable of ABI 999)
 *   FAKEMOD_VTABLE    entry reports our ABI, but its vtable says 999
 *   FAKEMOD_NULL      entry reports our ABI and returns no module description
 *   FAKEMOD_NOTABLE   entry reports our ABI; its description has no vtable
 *   FAKEMOD_NOENTRY   no entry symbol at all
 * Every function of the vtable aborts: the loader must check the ABI before
 * it calls anything in a module, so reaching one is a failure.
 */
#include <stdlib.h>

#include "backend.h"

#if defined(__GNUC__)
#define EXPORT __attribute__((visibility("default")))
#else
#define EXPORT
#endif

static int trap_count(void) { abort(); }
static const char *trap_text(void) { abort(); }

static const qg_backend fake = {
    .abi = 999u,
    .name = "cuda",
    .error_detail = trap_text,
    .device_count = trap_count,
    .build_info = trap_text,
};

/* A priority that would win auto, were the module ever accepted. */
static const qg_module fake_module = {.backend = &fake, .auto_priority = 1000};

#if defined(FAKEMOD_NOENTRY)
/* Something exported, so that the object is not empty; not the entry. */
EXPORT const void *qgemv_module_entry_v0(unsigned *abi);
EXPORT const void *qgemv_module_entry_v0(unsigned *abi) {
  *abi = QG_BACKEND_ABI;
  return &fake_module;
}
#else
EXPORT const void *qgemv_module_entry(unsigned *abi);
EXPORT const void *qgemv_module_entry(unsigned *abi) {
#if defined(FAKEMOD_ABI)
  *abi = 999u;
  return &fake_module;
#elif defined(FAKEMOD_VTABLE)
  *abi = QG_BACKEND_ABI;
  return &fake_module;
#elif defined(FAKEMOD_NULL)
  (void)&fake_module;
  *abi = QG_BACKEND_ABI;
  return NULL;
#elif defined(FAKEMOD_NOTABLE)
  static const qg_module no_table = {.backend = NULL, .auto_priority = 1000};
  (void)&fake_module;
  *abi = QG_BACKEND_ABI;
  return &no_table;
#else
#error "define one of FAKEMOD_ABI, FAKEMOD_VTABLE, FAKEMOD_NULL, FAKEMOD_NOTABLE, FAKEMOD_NOENTRY"
#endif
}
#endif
