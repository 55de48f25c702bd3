/*
 * Fake backend modules for test_hardening_loader: each build of this file
 * is a real shared object named qgemv-cuda.so that the loader must refuse.
 *   FAKEMOD_ABI       entry reports ABI 999 and a vtable of ABI 999
 *   FAKEMOD_VTABLE    entry reports our ABI, but its vtable says 999
 *   FAKEMOD_NULL      entry reports our ABI and returns no vtable
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

#if defined(FAKEMOD_NOENTRY)
/* Something exported, so that the object is not empty; not the entry. */
EXPORT const void *qgemv_module_entry_v0(unsigned *abi);
EXPORT const void *qgemv_module_entry_v0(unsigned *abi) {
  *abi = QG_BACKEND_ABI;
  return &fake;
}
#else
EXPORT const void *qgemv_module_entry(unsigned *abi);
EXPORT const void *qgemv_module_entry(unsigned *abi) {
#if defined(FAKEMOD_ABI)
  *abi = 999u;
  return &fake;
#elif defined(FAKEMOD_VTABLE)
  *abi = QG_BACKEND_ABI;
  return &fake;
#elif defined(FAKEMOD_NULL)
  (void)&fake;
  *abi = QG_BACKEND_ABI;
  return NULL;
#else
#error "define one of FAKEMOD_ABI, FAKEMOD_VTABLE, FAKEMOD_NULL, FAKEMOD_NOENTRY"
#endif
}
#endif
