/* What the CPU and the OS support, for run-time dispatch. A level is usable
 * only when the CPU has its instructions AND the OS saves the register state
 * they use on a context switch (XCR0 on x86, read with xgetbv): a kernel or
 * hypervisor may hide AVX-512 state even on a CPU that has AVX-512. */
#include "cpu.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <stdatomic.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

/* XCR0 bits: SSE (1), AVX upper halves (2), opmask (5), ZMM0-15 upper
 * halves (6), ZMM16-31 (7). */
#define XCR0_YMM 0x06u
#define XCR0_ZMM 0xe6u

static uint64_t xcr0(void) {
  uint32_t lo, hi;
  /* xgetbv with ecx = 0; written as asm so that no target flag is needed. */
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return ((uint64_t)hi << 32) | lo;
}

/* Leaf 1 ECX and leaf 7.0 EBX; false when the leaves are missing or the OS
 * did not enable xgetbv (OSXSAVE). */
static bool features(uint32_t *ecx1, uint32_t *ebx7, uint64_t *xcr) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  *ecx1 = c;
  if (!(c & bit_OSXSAVE)) return false;
  if (__get_cpuid_max(0, NULL) < 7) return false;
  __cpuid_count(7, 0, a, b, c, d);
  *ebx7 = b;
  *xcr = xcr0();
  return true;
}

bool qg_cpu_has_avx2(void) {
  uint32_t ecx1, ebx7;
  uint64_t xcr;
  if (!features(&ecx1, &ebx7, &xcr)) return false;
  bool cpu = (ecx1 & bit_AVX) && (ecx1 & bit_FMA) && (ecx1 & bit_F16C) && (ebx7 & bit_AVX2);
  return cpu && (xcr & XCR0_YMM) == XCR0_YMM;
}

#if defined(QG_X86_EMU)
/* x86_emu.h's build (scripts/x86-emu-check.sh): the AVX-512 and AMX levels
 * run emulated on AVX2, with no tile permission to ask for. */
bool qg_cpu_has_avx512(void) { return qg_cpu_has_avx2(); }
bool qg_cpu_has_avx512vnni(void) { return qg_cpu_has_avx2(); }
bool qg_cpu_has_avx512amx(void) { return qg_cpu_has_avx2(); }
const char *qg_cpu_amx_request(void) { return NULL; }
#else
bool qg_cpu_has_avx512(void) {
  uint32_t ecx1, ebx7;
  uint64_t xcr;
  if (!qg_cpu_has_avx2() || !features(&ecx1, &ebx7, &xcr)) return false;
  bool cpu = (ebx7 & bit_AVX512F) && (ebx7 & bit_AVX512BW) && (ebx7 & bit_AVX512VL);
  return cpu && (xcr & XCR0_ZMM) == XCR0_ZMM;
}

bool qg_cpu_has_avx512vnni(void) {
  unsigned a, b, c, d;
  if (!qg_cpu_has_avx512()) return false;
  __cpuid_count(7, 0, a, b, c, d);
  return (c & bit_AVX512VNNI) != 0;
}

/* XCR0 bits 17 (XTILECFG) and 18 (XTILEDATA); CPUID 7.0 EDX bits 24
 * (AMX-TILE) and 25 (AMX-INT8); arch_prctl's codes for the features the
 * kernel offers and for a process's request of XTILEDATA. */
#define XCR0_TILE 0x60000u
#define ARCH_GET_XCOMP_SUPP 0x1021
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18

/* Whether the kernel offers the tile data state; asking has no effect. */
static bool amx_offered(void) {
#if defined(__linux__)
  unsigned long supp = 0;
  return syscall(SYS_arch_prctl, ARCH_GET_XCOMP_SUPP, &supp) == 0 && ((supp >> XFEATURE_XTILEDATA) & 1);
#else
  return false;
#endif
}

bool qg_cpu_has_avx512amx(void) {
  unsigned a, b, c, d;
  if (!qg_cpu_has_avx512vnni()) return false;
  __cpuid_count(7, 0, a, b, c, d);
  if (!((d >> 24) & 1) || !((d >> 25) & 1) || (xcr0() & XCR0_TILE) != XCR0_TILE) return false;
  return amx_offered();
}

const char *qg_cpu_amx_request(void) {
#if defined(__linux__)
  /* 0 not asked, 1 granted, 2 refused: the permission is the whole
   * process's and lasts, so the first answer serves every later call */
  static _Atomic int state = 0;
  int s = atomic_load(&state);
  if (s == 0) {
    s = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0 ? 1 : 2;
    atomic_store(&state, s);
  }
  return s == 1 ? NULL
                : "Linux refused this process the AMX tile state (arch_prctl ARCH_REQ_XCOMP_PERM; a signal stack "
                  "too small for it, set with sigaltstack, is one cause)";
#else
  return "AMX tiles need Linux's arch_prctl permission";
#endif
}
#endif /* QG_X86_EMU */

bool qg_cpu_has_neon(void) { return false; }
bool qg_cpu_has_neondot(void) { return false; }

#elif defined(__aarch64__)
#include <asm/hwcap.h>
#include <sys/auxv.h>

bool qg_cpu_has_avx2(void) { return false; }
bool qg_cpu_has_avx512(void) { return false; }
bool qg_cpu_has_avx512vnni(void) { return false; }
bool qg_cpu_has_avx512amx(void) { return false; }
const char *qg_cpu_amx_request(void) { return "not an x86-64 build"; }

/* AdvSIMD is architecturally mandatory for AArch64 Linux userland, but the
 * kernel still reports it; trust the report over the assumption. */
bool qg_cpu_has_neon(void) {
  unsigned long hw = getauxval(AT_HWCAP);
  return (hw & HWCAP_ASIMD) && (hw & HWCAP_FP);
}

/* The dot-product instructions (SDOT/UDOT, Armv8.2 "dotprod"). */
bool qg_cpu_has_neondot(void) { return qg_cpu_has_neon() && (getauxval(AT_HWCAP) & HWCAP_ASIMDDP); }

#else
bool qg_cpu_has_avx2(void) { return false; }
bool qg_cpu_has_avx512(void) { return false; }
bool qg_cpu_has_avx512vnni(void) { return false; }
bool qg_cpu_has_avx512amx(void) { return false; }
const char *qg_cpu_amx_request(void) { return "not an x86-64 build"; }
bool qg_cpu_has_neon(void) { return false; }
bool qg_cpu_has_neondot(void) { return false; }
#endif
