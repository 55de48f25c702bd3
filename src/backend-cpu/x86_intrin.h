/* <immintrin.h> for the x86 level files, or under QG_X86_EMU its
 * emulation (x86_emu.h, scripts/x86-emu-check.sh). */
#ifndef QG_X86_INTRIN_H
#define QG_X86_INTRIN_H
#if defined(QG_X86_EMU)
#include "x86_emu.h"
#else
#include <immintrin.h>
#endif
#endif
