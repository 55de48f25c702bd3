/* The matvec kernel, one template for every layout and activation mode:
 *   y[a, row] = norm(x)[a, :] . W[row, :], on the tensor cores,
 * for the full 16-row tiles of layout.h (the last n % 16 rows: the tail
 * kernel, kernels_tail.cuh).
 *
 * Geometry. A warp owns a row group of T tiles (16 T rows, the mma's M)
 * and one of KS k-slices (chunk ranges of a tile's stream); a CTA is G row
 * groups x KS slices (W = G KS warps) and loops over units of G row groups
 * (a persistent grid). KS comes from the shape and the device only, never
 * from m: a row's summation order (64-blocks in k order within a slice,
 * slices in order, split terms in order) is fixed, so every launch of a
 * weight gives a row the same bits whatever its m, T, G, grid or B mode,
 * and batched rows equal m = 1 rows.
 *
 * Weights reach a warp through its ring of kStages slots of T chunks in
 * shared memory, filled by bulk copies (lane 0 issues one per tile and
 * chunk, completing on the slot's mbarrier; sm_90+) or 16-byte cp.async
 * (every lane; sm_80-89). The ring runs on across the warp's units, so
 * weight bytes keep flowing at unit ends.
 *
 * B (activations, kernels_stage.cuh) is built either per CTA in shared
 * memory (BS = 1: by all threads at the start, for all of k; or, for
 * batched launches whose B does not fit, in phases of one R-th of every
 * slice's chunks between two CTA barriers), or per warp and scale block
 * from x (BS = 0). Same functions, same bits.
 *
 * Per scale block and tile the mma sums the block's steps from zero into c
 * (NF4: two mma per step, the hi and lo table terms, c and c2), then acc
 * += c * scale * 2^e. At the end of a unit the slices' partial sums meet in
 * shared memory and are added in slice order (and the split terms in
 * order); with RMSNorm the row's 1/rms multiplies the sum. No atomics:
 * bit-identical run to run.
 *
 * Start of a launch: griddepcontrol.launch_dependents first (the next
 * matvec of the stream may start its own ring on SMs this grid frees), the
 * first ring stages (weights only: they never depend on an earlier kernel),
 * then griddepcontrol.wait, and only after it anything that reads x or
 * gamma or writes y. B per CTA: one stage early (a full ring ahead of the
 * staging delays the x loads); B per warp: the whole ring early. */
#ifndef QGC_KERNELS_MATVEC_CUH
#define QGC_KERNELS_MATVEC_CUH

#include "kernels_decode.cuh"
#include "kernels_stage.cuh"
#include "layout.h"

namespace qgc {

/* How B is made (kernels_stage.cuh): bf16 x as stored (Q2_0, no norm), one
 * fp16 term (NF4, bf16 x, no norm), two fp16 terms (NF4, f32 x or norm),
 * three bf16 terms (Q2_0, f32 x or norm), four int8 digits for the integer
 * mma (Q2_0, bf16 x, no norm), or bf16 x as stored with gamma in A (kDG:
 * Q2_0, bf16 x, RMSNorm with bf16 gamma). kDG: A = (code - 1) gamma_k,
 * one packed multiply per A register (exact: -gamma, 0 or gamma), so the
 * products (code - 1) gamma_k x_k are exact in one bf16 term, where x
 * gamma in B needed three: the norm's launches are the plain direct
 * mode's plus those multiplies, the sums of squares and gamma's words. */
enum XMode { kDirect = 0, kS1 = 1, kS2 = 2, kB3 = 3, kI4 = 4, kDG = 5, kB2 = 6 };
/* kB2 (matvec_plan.h, qgc_norm_b2: in kDG's place for a weight uploaded
 * for m = 1 at the larger shapes): the same norm, x gamma in B as kB3's
 * first two terms. A bf16 x times a bf16 gamma has at
 * most 16 significant bits, so kB3's third term is always zero there (the
 * cut leaves nothing; under 2^-126 both cut the same bits): the same
 * products in two columns per row, where gamma in A adds four multiplies
 * per A fragment to every weight's decode. */
__host__ __device__ constexpr int xmode_splits(int xm) {
  return xm == kS2 || xm == kB2 ? 2 : xm == kB3 ? 3 : xm == kI4 ? kDigits : 1;
}
__host__ __device__ constexpr bool xmode_bf16(int xm) { return xm == kDirect || xm == kB3 || xm == kDG || xm == kB2; }
/* B is bf16 terms cut from x (times gamma): kB3, kB2. */
__host__ __device__ constexpr bool xmode_cut(int xm) { return xm == kB3 || xm == kB2; }
/* B is x's bf16 words as stored. */
__host__ __device__ constexpr bool xmode_raw(int xm) { return xm == kDirect || xm == kDG; }
/* Column groups per launch: 1 or 2 (8 or 16 B columns); up to 4 for kI4,
 * whose four digit columns per activation row would otherwise leave only
 * 4 rows per launch, and for kB3 at group 128 (three terms per row: 5 rows
 * per launch with 16 columns, so m = 8 took two passes over the weights;
 * at group 64 ptxas spills 44 bytes for sm_121 with 32 columns). kB3 also
 * takes three groups: eight activation rows in 24 columns, m = 8 in one
 * launch with no column wasted (QGC_EXP_B3G3: 0 is the plan before it,
 * for A/B runs). */
#ifndef QGC_EXP_B3G3
#define QGC_EXP_B3G3 1
#endif
__host__ __device__ constexpr int max_groups(int xm, int group) {
  return xm == kI4 || (xm == kB3 && group == 128) ? 4 : xm == kB3 && QGC_EXP_B3G3 ? 3 : 2;
}
/* Whether a kernel of xm takes NG column groups (1, 2, 3 or 4). */
__host__ __device__ constexpr bool groups_ok(int xm, int group, int NG) {
  return NG >= 1 && NG <= max_groups(xm, group) && (NG != 3 || (xm == kB3 && QGC_EXP_B3G3));
}
/* Whether B may be built per warp (BS = 0): not for the digits (kI4), and
 * not with 24 or 32 columns (their B words per lane spill: 184-416 bytes
 * at 32). */
__host__ __device__ constexpr bool warp_b_ok(int xm, int NG) { return xm != kI4 && NG < 3; }

/* NF4: which steps look up weight row g + 8 in registers (nf4_frag2's
 * PRMT_STEPS): steps 0 and 2 for two column groups with B per CTA (a
 * quarter of the lookups off the shared-memory pipe: batched calls 6-7%
 * faster on the H200's large shapes), none elsewhere (one activation row:
 * 16% slower, held by the ALU pipe's bursts and the latency of the
 * PRMT chain; bench/NOTES.md v10). */
#ifndef QGC_EXP_NF4PS1
#define QGC_EXP_NF4PS1 0 /* experiment: step 0 from the planes for one column group with B per CTA too */
#endif
/* Experiment (off in the library): the steps (bit mask, e.g. 1, 5, 15)
 * whose weight row g + 8 lookups go through the texture path
 * (tex1Dfetch of the 256 entries, Params::nf4_tex) at one column group:
 * if what fills the L1 pipe is the shared loads' requests, the texture
 * requests come in by another door. */
#ifndef QGC_EXP_NF4_TEX
#define QGC_EXP_NF4_TEX 0
#endif
__host__ __device__ constexpr int nf4_tex_steps(int NG) { return NG == 1 ? QGC_EXP_NF4_TEX : 0; }
__host__ __device__ constexpr int nf4_prmt_steps(int NG, int BS) {
  return NG >= 2 && BS ? 0x5 : QGC_EXP_NF4PS1 && BS ? 0x1 : 0x0;
}

#ifndef QGC_EXP_STAGES
#define QGC_EXP_STAGES 2 /* experiment: another ring depth */
#endif
constexpr int kStages = QGC_EXP_STAGES; /* ring slots per warp (deeper rings were slower) */
constexpr int kMaxWarps = 16;   /* per CTA: 512 threads at 128 registers */
constexpr int kMaxThreads = 32 * kMaxWarps;
/* The wide kernel: one activation row's first mode (NF4 one fp16 term,
 * Q2_0 direct), one tile per warp, B per CTA, up to 28 warps at 72
 * registers (no spills on sm_90). 28672 rows at k-split 2 then run one
 * tile per warp and still 14 tiles per CTA on 128 SMs, with twice the
 * warps to hide each warp's latency: the plan's choice for Q2_0 direct
 * there (2-3% faster on the H200); NF4, held by the shared-memory pipe,
 * lost 6% with it, so it is QGEMV_CUDA_PLAN's only (bench/NOTES.md v10). */
constexpr int kWideWarps = 28;
/* NF4 in two column groups (bf16 x m = 16, f32 x or the norm m = 8 and
 * 16) at two tiles per warp, B per CTA, in CTAs of at most kNg2T2Warps
 * warps, where the generic kernels take one tile (max_tiles). At one
 * tile per warp its loop cost twice bf16 m = 8's per weight (260 warp
 * instructions per 16 x 64 tile-block against 128, ncu at 28672 x 8192,
 * bench/NOTES.md v22): the lookups, B's loads and the loop's own work
 * served one tile. The plan takes it at a k-split of 2 (7 row groups,
 * m = 1's geometry there). On the H200 at 28672 x 8192: f32 m = 8 126 ->
 * 113 us, m = 16 254 -> 227, bf16 m = 16 135 -> 115, the norm 0.86-0.89x
 * (v22 run 3). 128 registers, no spills on sm_90; 36 bytes of spill on
 * sm_121 (12 before the paired scales, layout.h), whose plans at the
 * issue's shapes do not take it. (The other way to one column group, x's two terms in k instead of in
 * columns, made m = 1 1.08-1.39x slower, since batched rows keep m = 1's
 * bits: bench/NOTES.md v22; its code is in 8636f6b.)
 * QGC_EXP_NG2T2=0: e137623's plan, for A/B runs. */
#ifndef QGC_EXP_NG2T2
#define QGC_EXP_NG2T2 1
#endif
constexpr int kNg2T2Warps = 14;
__host__ __device__ constexpr bool ng2t2_config(bool nf4, int ng, int t, int bs) {
  return QGC_EXP_NG2T2 && nf4 && ng == 2 && t == 2 && bs;
}
/* Experiment (off in the library; -D on the module's build): each CTA's
 * thread 0 writes %globaltimer at 7 points of the launch, its SM and warp
 * 0's chunks 4 and 8 at issue and ready, into a device buffer of the
 * last kTlLaunches launches (matvec.cu allocates it and dumps it at close
 * to the file named by QGEMV_CUDA_TIMELINE; bench/lab/timeline.py reads
 * it). */
#ifndef QGC_EXP_TIMELINE
#define QGC_EXP_TIMELINE 0
#endif
/* Experiment: the ring, the staging and the epilogue without the chunks'
 * math (y is wrong): what the loads alone cost at the plan's geometry. */
#ifndef QGC_EXP_LOADS_ONLY
#define QGC_EXP_LOADS_ONLY 0
#endif
/* Experiment: the decode without its full cost (y is wrong). 1: no
 * decode at all, the mma take the code words as they are (NF4: no table
 * lookups; Q2_0: no LOP3 or HFMA2); 2 (NF4): only the hi half of each table
 * entry, one 4-byte load per code byte (lanes 16-31 read the lo word, so
 * that the 32 lanes hit 32 banks: one wavefront instead of two). What the
 * decode and the table's shared-memory traffic cost at the plan's
 * geometry. */
#ifndef QGC_EXP_DECODE
#define QGC_EXP_DECODE 0
#endif
/* Experiment: B per CTA's words loaded for a chunk's first scale block
 * only, the rest of the chunk reusing them (y is wrong): what B's shared
 * loads per block cost, batched above all (each column group's two
 * 16-byte loads per 64-part and tile-row group). */
#ifndef QGC_EXP_NOB
#define QGC_EXP_NOB 0
#endif
/* Experiment: B per warp's words (Q2_0's direct mode, one tile per warp)
 * loaded from global one scale block ahead of their mma, as NF4's
 * code words are: the loads' latency was 38% of the samples (long
 * scoreboard at the HMMA) of 4096 x 14336 Q2_0 bf16 m = 8 (bench/NOTES.md
 * v20). The same words and bits. */
#ifndef QGC_EXP_BAHEAD
#define QGC_EXP_BAHEAD 0
#endif
constexpr int kTlLaunches = 64, kTlCtas = 4096, kTlSlots = 16;
/* Experiment: ring stages issued before griddepcontrol.wait with B per
 * CTA (-1: the library's, 1). 0: x and gamma ahead of every weight byte
 * in the memory system's queues. */
#ifndef QGC_EXP_EARLY
#define QGC_EXP_EARLY (-1)
#endif
/* With B per CTA in phases, the first unit's phase 0 is staged before
 * the ring's stages after the first are issued, as all of k's B is, not
 * behind the whole ring (v52's timeline: Q2_0 f32 x at 8192 x 28672 took
 * 5.6 us to its first chunk against bf16's 0.6). On the H100 (v53) NF4
 * f32 at 8192 x 28672 took 0.96x (m = 1) and 0.98x (m = 8), Q2_0 g64 f32
 * with one tile per warp and one column group 0.98x at m = 1; Q2_0 g64's
 * three-column-group kernel 1.03-1.04x at m = 8 and 16 (with the loads
 * first, where it spills). v54 (H100, every sm_90 kernel against the
 * library): Q2_0 g64 and g128 in two column groups of two tiles (28672 x
 * 8192 f32 m = 8, 16) 0.966-0.970x, g128 of one tile and one group (8192
 * x 28672 f32 m = 1) 0.973x; three groups of one tile 1.018-1.027x at
 * g128 (g64 0.99-1.00). So on sm_90: NF4, and Q2_0's kernels of one tile
 * in one column group or two tiles in two; sm_121 not measured. The same
 * staging, the same bits. 0: nowhere, 2: every kernel on sm_90, 3: v53's
 * rule (NF4, Q2_0 g64 of one tile and one group), for A/B runs. */
#ifndef QGC_EXP_PH0
#define QGC_EXP_PH0 1
#endif
template <bool NF4, int QB, int NG, int T>
__host__ __device__ constexpr bool phase0_early() {
  if (QGC_EXP_PH0 == 3) return QGC_LF_ARCH && (NF4 || (QB == 1 && NG == 1 && T == 1));
  return QGC_EXP_PH0 && QGC_LF_ARCH && (QGC_EXP_PH0 == 2 || NF4 || (NG == 1 && T == 1) || (NG == 2 && T == 2));
}
/* Experiment: Q2_0's three bf16 terms (f32 x, the norm) in a wide kernel
 * of their own too (Kernels<L>::fn<37>): g64 2% faster at 28672 x 8192 on
 * the H200, g128 12-18% slower (it spills; bench/NOTES.md v14). */
#ifndef QGC_EXP_WIDEB3
#define QGC_EXP_WIDEB3 0
#endif
/* Experiment (off in the library): NF4's wide kernels take two tiles per
 * warp (72 registers at 28 warps, no spills on sm_90), one fp16 term at
 * [36] and two at [37], so that a warp keeps the two-tile loop's
 * instructions per weight (the one-tile wide kernel executed 26% more,
 * bench/NOTES.md v10) with twice the warps of the 16-warp kernels. The
 * ring of 28 warps of two tiles fits with QGC_EXP_NF4_KC128's chunks or
 * QGC_EXP_STAGES=1. On the H200 at 28672 x 8192, ks=4,t=2,w=28, bf16
 * m = 1 (bench/NOTES.md v28): 55.8 us with 128-k chunks, 54.5 with one
 * ring slot, against the library's 53.8-54.2: the issue slots go from 48%
 * to 55% busy and the eligible warps from 1.0 to 1.9 per scheduler, but
 * the L1 pipe stays at 77%, as in every NF4 launch measured, and the
 * instructions grow (twice the warps' prologues, four slices). */
#ifndef QGC_EXP_NF4_WIDE_T2
#define QGC_EXP_NF4_WIDE_T2 0
#endif
__host__ __device__ constexpr int wide_tiles(bool nf4) { return nf4 && QGC_EXP_NF4_WIDE_T2 ? 2 : 1; }
/* The configurations the wide kernels have (Kernels<L>::fn<36>, <37>): the
 * first activation mode of the format (QGC_EXP_WIDEB3: Q2_0's three terms
 * too; QGC_EXP_NF4_WIDE_T2: NF4's two terms too), one column group,
 * wide_tiles tiles, B per CTA. */
__host__ __device__ constexpr bool wide_config(bool nf4, int xm, int ng, int t, int bs) {
  return (xm == (nf4 ? kS1 : kDirect) || (QGC_EXP_WIDEB3 && !nf4 && xm == kB3) ||
          (QGC_EXP_NF4_WIDE_T2 && nf4 && xm == kS2)) &&
         ng == 1 && t == wide_tiles(nf4) && bs;
}
constexpr int kLutBytes = 256 * kLutStride; /* NF4 table, at the end of the dynamic shared memory */

/* What the kernels know of a layout (L: a qg_layout_id). A layout without
 * a specialisation has no kernels here: the module refuses its weights
 * (qgc_has_kernels). Everything else follows from format and group. */
template <int L>
struct Fmt {
  static constexpr bool kKernels = false;
};
template <int FORMAT, int GROUP>
struct FmtOf {
  static constexpr bool kKernels = true;
  static constexpr bool kNF4 = FORMAT == QGEMV_NF4;
  static constexpr int kGroup = GROUP;
  static constexpr int KC = kNF4 ? (QGC_EXP_NF4_KC128 ? 128 : 256) : 512; /* k per chunk (layout.h) */
  static constexpr int BK = GROUP;                       /* k per scale block */
  static constexpr int QB = BK / 64;                     /* 64-parts of a block */
  static constexpr int NEB = KC / BK;                    /* scale blocks per chunk */
  static constexpr int B64 = KC / 64;                    /* 64-blocks per chunk */
  static constexpr int SS = kNF4 ? 4 : 2;                /* bytes per scale */
  static constexpr int SRB = NEB * SS;                   /* a row's scale bytes per chunk */
  static constexpr int BCB = kNF4 ? 512 : 256;           /* code bytes per 64-block of a tile */
  static constexpr int CH = B64 * BCB + QGC_TILE_ROWS * SRB; /* chunk bytes */
};
/* Tiles per warp a kernel of NG column groups may take: NF4 with 16
 * columns holds two accumulators per tile (the table's two terms), and
 * two tiles of them spill past 128 registers; so do Q2_0's digits (kI4)
 * with 16 or 32 columns (g128: 88 bytes at 16), gamma in A (kDG) with 16
 * columns (g64, B per CTA: 44 bytes on sm_121, also with gamma's words
 * read per step), x gamma's two terms (kB2) with 16 columns (g128, B per
 * warp: 24 bytes on sm_121), and any 24 or 32 columns (kB3's 24 at two
 * tiles: 16 bytes on sm_90, 40 on sm_121; QGC_EXP_B3G3_T2 allows them, for
 * A/B runs: 1.13-1.14x slower on the H200, bench/NOTES.md v20). */
#ifndef QGC_EXP_B3G3_T2
#define QGC_EXP_B3G3_T2 0
#endif
template <int FORMAT>
__host__ __device__ constexpr int max_tiles(int NG, int xm) {
  return (FORMAT == QGEMV_NF4 && NG == 2) || ((xm == kI4 || xm == kDG || xm == kB2) && NG > 1) || NG == 4 ||
                 (NG == 3 && !QGC_EXP_B3G3_T2)
             ? 1
             : 2;
}
template <>
struct Fmt<QG_LAYOUT_NF4> : FmtOf<QGEMV_NF4, 64> {};
template <>
struct Fmt<QG_LAYOUT_Q2_G64> : FmtOf<QGEMV_Q2_0, 64> {};
template <>
struct Fmt<QG_LAYOUT_Q2_G128> : FmtOf<QGEMV_Q2_0, 128> {};

struct Params {
  const uint8_t *w;   /* the tile stream (layout.h) */
  int64_t tile_bytes;
  int64_t n, k;       /* n: y's row stride */
  int tiles;          /* full tiles */
  int nch, last_b64;  /* chunks per row; 64-blocks of the last */
  int last_bytes;     /* bytes of a tile's last chunk */
  int T_groups;       /* row groups: ceil(tiles / T) */
  int units;          /* ceil(row groups / G) */
  int G, KS;
  int early;          /* ring stages issued before griddepcontrol.wait */
  int phases;         /* BS = 1: 1 = B for all of k; R > 1: in R phases */
  /* Made on the host, to take integer divisions out of the CTAs'
   * prologue (7-8 of the 600-1000 instructions every warp ran there,
   * bench/NOTES.md v11): */
  int ks_shift;       /* log2 KS: slice s starts at chunk (s nch) >> ks_shift */
  int P;              /* phase_chunks(nch, KS, phases) */
  int nbe;            /* b_scale_blocks(k, BK, NEB, nch, KS, phases) */
  int iters_q, iters_r; /* units = iters_q grid + iters_r */
  /* Per launch (ncols): the staging's columns per thread and column
   * groups (kI4: activation rows), and div_magic() multipliers for the
   * staging's division by st_groups and the epilogue's by G T 16. */
  int st_cps, st_groups;
  uint64_t st_magic, ru_magic;
  const void *x, *gamma; /* x [m][k] of this launch; gamma [k] or null */
  void *y;            /* [m][n] of this launch */
  int m, ncols;       /* activation rows, B columns (m x splits) */
  int x_bf16, x_vec, g_bf16, g_vec, y_bf16;
  float eps, inv_k;
  uint32_t q2_magic;  /* kQ2Magic, kept out of ptxas's sight (q2_pair_bf16) */
  uint32_t nf4_pl[16]; /* NF4: the table's byte planes (nf4_planes) */
#if QGC_EXP_NF4_TEX
  unsigned long long nf4_tex; /* the 256 entries as a texture object (matvec.cu) */
#endif
#if QGC_EXP_TIMELINE
  unsigned long long *tl; /* [kTlLaunches][kTlCtas][kTlSlots] */
  unsigned tl_launch;     /* this launch's sequence number */
#endif
};

/* Chunks per slice and phase; scale blocks the staged B buffer holds (all
 * of k, or KS slices x one phase's chunks). */
__host__ __device__ inline int phase_chunks(int nch, int KS, int phases) {
  return ((nch + KS - 1) / KS + phases - 1) / phases;
}
__host__ __device__ inline int b_scale_blocks(int64_t k, int BK, int NEB, int nch, int KS, int phases) {
  return phases <= 1 ? (int)(k / BK) : KS * phase_chunks(nch, KS, phases) * NEB;
}
/* n / d for n d < 2^32 by one wide multiply with M = div_magic(d): M d =
 * 2^32 + e with 0 <= e < d, so n M / 2^32 = n / d + n e / (d 2^32), and
 * the second term stays under 1 / d, which cannot reach the next integer. */
__host__ __device__ constexpr uint64_t div_magic(uint32_t d) { return (uint64_t)(0xffffffffu / d) + 1u; }
__host__ __device__ inline int div_by(uint32_t n, uint64_t M) { return (int)(((uint64_t)n * M) >> 32); }
/* The first chunk of k-slice s (KS is a power of two). */
__host__ __device__ inline int slice_start(const Params &p, int s) { return (s * p.nch) >> p.ks_shift; }
/* The units CTA b takes: ceil((units - b) / grid) for b < units. */
__host__ __device__ inline int cta_units(const Params &p, int b) { return p.iters_q + (b < p.iters_r ? 1 : 0); }

/* Dynamic shared memory of a launch (byte offsets; host and device agree):
 *   bars  one mbarrier per ring slot and warp
 *   ring  W warps x kStages slots x T chunks
 *   comb  the slice partials of one unit [W][T][NG][32] float4, and the
 *         per-warp norm sums [W][NG][8] (BS = 0)
 *   B     (BS = 1) the B words of every 64-block and column [b][col][t][8]
 *         words (kI4: [b][col][t][4], bytes), kDG: gamma's words
 *         [b][t][8] (sb_gamma), 2^e [block][col], norm block
 *         sums [block][col] (kI4: the negated digit sums, int), slice sums
 *         [slice][col]; kI4: the flagged blocks [block][activation (8)]
 *   lut   (NF4) the table, kLutBytes: in the dynamic shared memory, whose
 *         base ptxas keeps in a uniform register, so that a lookup's
 *         address is one register plus that (static: 126 -> 110 warp
 *         instructions per 16 x 64 tile-block, bench/NOTES.md v9) */
struct SmemPlan {
  int bars, ring, comb, sbB, sbG, sbP, sbQ, sbS, sbF, lut, total;
};
/* Experiment (off in the library): sbP's rows (a scale block's 2^e per B
 * column) padded to an even count of columns, so that NF4's lane reads
 * the 2^e of its two output columns 2t, 2t + 1 in one LDS.64 where two
 * LDS.32 took it (at m = 1 the second is dead in every lane but still
 * issued): 20 -> 19.5 shared loads per 16 x 64 tile-block at two tiles
 * per warp. On the H200 (bench/NOTES.md v28, verify only: the suite and
 * the sanitizers have not run it): 0.99-1.00x at 28672 x 8192 and
 * 8192 x 28672, NF4, m = 1 and 8, but 8192 x 28672 bf16 m = 1 (0.977x):
 * a predicated-off load seems to cost the pipe nothing. */
#ifndef QGC_EXP_P_PAIR
#define QGC_EXP_P_PAIR 0
#endif
/* Floats from one scale block's row of sbP to the next's. */
__host__ __device__ constexpr int sbp_stride(int ncols) { return QGC_EXP_P_PAIR ? (ncols + 1) & ~1 : ncols; }
__host__ __device__ constexpr int round_up(int v, int a) { return (v + a - 1) / a * a; }
__host__ __device__ inline SmemPlan smem_plan(int CH, int QB, int W, int T, int NG, int neb, int ncols, int KS,
                                              bool digits, bool gwords = false) {
  SmemPlan p{};
  int off = 0;
  p.bars = off;
  off += round_up(W * kStages * 8, 128);
  p.ring = off;
  off += W * kStages * T * CH;
  p.comb = off;
  off += W * T * NG * 512 + W * NG * 8 * 4;
  p.sbB = p.sbG = p.sbP = p.sbQ = p.sbS = p.sbF = off;
  if (neb > 0) {
    off += neb * QB * ncols * (digits ? 64 : 128);
    p.sbG = off;
    off += gwords ? neb * QB * 128 : 0;
    p.sbP = off;
    off += round_up(neb * sbp_stride(ncols) * 4, 16);
    p.sbQ = off;
    off += round_up(neb * ncols * 4, 16);
    p.sbS = off;
    off += round_up(KS * ncols * 4, 16);
    p.sbF = off;
    off += digits ? neb * 8 : 0;
  }
  p.total = off;
  return p;
}
/* nbe: the staged B buffer's scale blocks (0: B per warp). */
template <int L>
__host__ __device__ inline SmemPlan smem_plan_nbe(int W, int T, int NG, int nbe, int ncols, int KS, int xm) {
  using F = Fmt<L>;
  SmemPlan p = smem_plan(F::CH, F::QB, W, T, NG, nbe, ncols, KS, xm == kI4, xm == kDG);
  p.lut = round_up(p.total, 128);
  if (F::kNF4) p.total = p.lut + kLutBytes;
  return p;
}
template <int L>
__host__ __device__ inline SmemPlan smem_plan_of(bool bs, int W, int T, int NG, int64_t k, int nch, int ncols, int KS,
                                                 int phases, int xm) {
  using F = Fmt<L>;
  return smem_plan_nbe<L>(W, T, NG, bs ? b_scale_blocks(k, F::BK, F::NEB, nch, KS, phases) : 0, ncols, KS, xm);
}

/* B words of one 64-block and column in the staged buffer (BS = 1), and
 * kI4's digit words. */
__device__ __forceinline__ char *sb_words(char *sbB, int blk, int ncols, int col, int t) {
  return sbB + ((size_t)(blk * ncols + col) * 4 + t) * 32;
}
/* A lane's 32 bytes of B words (one column, one t) are two 16-byte halves,
 * each one LDS.128: sb_half<SWZ>(col, h) is half h's offset. In order,
 * each column's 128 bytes fill the 32 banks once, so the lanes of one t
 * in columns g and g + 1 hit the same four banks: a B load of eight
 * columns takes twice its wavefronts (49% of the shared wavefronts of
 * Q2_0 g64 f32 m = 8 in 24 columns at 28672 x 8192 were excess, ncu v19).
 * Swizzled (SWZ), odd columns keep the halves swapped, so that the eight
 * columns spread over the 32 banks. Kernels of one tile per warp and two
 * or more column groups take it (sb_swizzled), whose loops are B's loads:
 * on the H200 0.81-0.99x the time (Q2_0 f32 in 24 columns 0.81-0.88x, NF4
 * f32 m = 8 and 16 0.97-0.99x); where a warp's two tiles share each B
 * load, or one column group mostly reads one column, the address's extra
 * instruction cost more than the conflicts (1.01-1.06x, bench/NOTES.md
 * v19).
 * QGC_EXP_SBSWZ=0: in order everywhere, for A/B runs. */
#ifndef QGC_EXP_SBSWZ
#define QGC_EXP_SBSWZ 1
#endif
__host__ __device__ constexpr bool sb_swizzled(int NG, int T) { return QGC_EXP_SBSWZ && NG >= 2 && T == 1; }
template <bool SWZ>
QGC_HD int sb_half(int col, int h) {
  return 16 * ((SWZ ? col ^ h : h) & 1);
}
/* kDG: the offset of gamma's words of one 64-block and t in the staged
 * buffer (BS = 1; the layout of one column of B words). */
QGC_HD int sb_gamma(int blk, int t) { return (blk * 4 + t) * 32; }
/* kDG: a block's sum of squares of x, from the words of its 4 lanes (t;
 * consecutive lanes, ssq_words' order), over those lanes: every lane of
 * the warp calls it (the shuffles); act = false adds nothing. */
template <int QB>
__device__ __forceinline__ float block_ssq_words(const uint32_t (&w)[QB][8], bool act) {
  float qb = act ? ssq_words<QB>(w) : 0.0f;
  qb += __shfl_xor_sync(0xffffffffu, qb, 1);
  return qb + __shfl_xor_sync(0xffffffffu, qb, 2);
}
/* Bytes from one block's B words to the next's (sb_words' layout). */
QGC_HD int sb_block_bytes(int ncols) { return ncols * 4 * 32; }
QGC_HD char *sb_digits(char *sbB, int blk, int ncols, int col, int t) {
  return sbB + ((size_t)(blk * ncols + col) * 4 + t) * 16;
}

/* A ring slot's chunks as a lane sees them: tile tt's chunk at tt * CH;
 * TAIL: the row's last chunk, of nb64 64-blocks (< B64). Host and device
 * (the CPU emulation test reads its slots through it). */
template <int L, bool TAIL>
struct View {
  using F = Fmt<L>;
  const char *base;
  int lane, g, nb64;
  QGC_HD int code_bytes() const { return (TAIL ? nb64 : F::B64) * F::BCB; }
  QGC_HD int srb() const { return TAIL ? nb64 / F::QB * F::SS : F::SRB; }
  /* Whether the chunk holds scale block e (a last chunk may be short). */
  QGC_HD bool has_block(int e) const { return !TAIL || e * F::QB < nb64; }
  QGC_HD uint4 word(int tt, int j) const {
    return *reinterpret_cast<const uint4 *>(base + tt * F::CH + j * 512 + lane * 16);
  }
  /* Q2_0: the words of rows g, g + 8 of half `half` of word j; a last
   * chunk with an odd count of 64-blocks ends in a half word. */
  QGC_HD void q2_words(int tt, int j, int half, uint32_t &wg, uint32_t &wh) const {
    if (TAIL && 2 * j + 1 >= nb64) {
      const uint2 h = *reinterpret_cast<const uint2 *>(base + tt * F::CH + j * 512 + lane * 8);
      wg = h.x, wh = h.y;
      return;
    }
    const uint4 u = word(tt, j);
    wg = half ? u.z : u.x;
    wh = half ? u.w : u.y;
  }
  /* The scale of block e of row g (h = 0) or g + 8 (h = 1). */
  QGC_HD float scale(int tt, int h, int e) const {
    const char *s = base + tt * F::CH + code_bytes() + QGC_SCALE_OFFSET(g + 8 * h, e, srb() / F::SS, F::SS);
    if (F::kNF4) return *reinterpret_cast<const float *>(s);
    return half_bits_f32(*reinterpret_cast<const unsigned short *>(s));
  }
  /* Both rows' scales of block e (QGC_EXP_SCALE_PAIR: one load). */
  QGC_HD void scales(int tt, int e, float &sg, float &sh) const {
#if QGC_EXP_SCALE_PAIR
    const char *s = base + tt * F::CH + code_bytes() + QGC_SCALE_OFFSET(g, e, srb() / F::SS, F::SS);
    if (F::kNF4) {
      const float2 f = *reinterpret_cast<const float2 *>(s);
      sg = f.x, sh = f.y;
    } else {
      const uint32_t w = *reinterpret_cast<const uint32_t *>(s);
      sg = half_bits_f32(w & 0xffffu), sh = half_bits_f32(w >> 16);
    }
#else
    sg = scale(tt, 0, e), sh = scale(tt, 1, e);
#endif
  }
};

/* The per-warp state of the chunk loop. */
template <int L, int XM, int NG, int T, int BS>
struct WarpCtx {
  using F = Fmt<L>;
  static constexpr int QB = F::QB, NEB = F::NEB, SPL = xmode_splits(XM);
  static constexpr bool BF = xmode_bf16(XM);
  static constexpr bool kSwz = sb_swizzled(NG, T); /* the staged B's layout (sb_half) */
  static_assert(F::kNF4 ? XM == kS1 || XM == kS2 : BF || XM == kI4,
                "NF4 takes fp16 B (S1, S2), Q2_0 bf16 B (direct, B3) or digits (I4)");
  static_assert(BS || warp_b_ok(XM, NG), "B per CTA only (the digits; 24 or 32 columns)");
  int lane, g, t;
  uint32_t lane8, q2m;
  const uint2 *lut;
  uint32_t pl[16]; /* NF4: the table in registers (nf4_planes) */
  unsigned long long tex = 0; /* QGC_EXP_NF4_TEX: the entries' texture object */
  char *sbB;
  const char *sbG;     /* kDG: gamma's staged words (BS = 1) */
  const float *sbP;
  const int *sbN;      /* kI4: negated digit sums [block][col] */
  const uint8_t *sbF;  /* kI4: flagged blocks [block][activation] */
  float acc[T][NG][4];
  float ss[NG];

  /* One chunk (k from kc0) seen through v; beb0 = the staged B buffer's
   * scale block of the chunk's first (BS = 1). The blocks run in a loop
   * that is not unrolled (unrolled, ptxas spills past 128 registers), EU
   * scale blocks per iteration: Q2_0 g64's two blocks of a word, so that
   * which half of the word a block takes stays a constant. */
  template <bool TAIL>
  __device__ __forceinline__ void chunk(const Params &p, const View<L, TAIL> &v, int64_t kc0, int beb0) {
    if constexpr (XM == kI4) {
      chunk_i4(p, v, kc0, beb0);
      return;
    }
    constexpr int EU = !F::kNF4 && QB == 1 ? 2 : 1;
    constexpr int UNROLL = !F::kNF4 && NG == 1 ? 2 : 1; /* Q2_0 m <= 8: its decode is issue-bound */
    /* NF4 (this loop is not unrolled: it spills) loads the next scale
     * block's code words one block ahead, so that a block's chain (word,
     * table, mma: two shared loads in a row) starts with its word in
     * registers: 5-7% faster at 8192 x 28672 m = 1 on the H200, the same
     * elsewhere; its B words ahead too were 2-19% slower (bench/NOTES.md
     * v14). */
    uint4 un[T];
    if constexpr (F::kNF4) {
QGC_UNROLL
      for (int tt = 0; tt < T; ++tt) un[tt] = v.word(tt, 0);
    }
#if QGC_EXP_NOB
    uint32_t bw[NG][QB][8], gw[QB][8];
    float p0[NG], p1[NG];
#endif
    /* QGC_EXP_BAHEAD: the next block's B words */
    constexpr bool BA = QGC_EXP_BAHEAD && !BS && XM == kDirect && T == 1; /* kDG or two tiles: spills */
    uint32_t bn[NG][QB][8], gn[QB][8];
    float pn0[NG], pn1[NG];
    if constexpr (BA)
      if (v.has_block(0)) stage_b(p, kc0, bn, gn, pn0, pn1);
#pragma unroll UNROLL
    for (int e0 = 0; e0 < NEB; e0 += EU) {
QGC_UNROLL
      for (int e1 = 0; e1 < EU; ++e1) {
        const int eb = e0 + e1;
        if (!v.has_block(eb)) break;
#if !QGC_EXP_NOB
        uint32_t bw[NG][QB][8], gw[QB][8]; /* gw: kDG's gamma words */
        float p0[NG], p1[NG];
#endif
        uint4 uc[T] = {};
        if constexpr (F::kNF4) {
          const bool more = eb + 1 < NEB && v.has_block(eb + 1);
QGC_UNROLL
          for (int tt = 0; tt < T; ++tt) {
            uc[tt] = un[tt];
            if (more) un[tt] = v.word(tt, eb + 1);
          }
        }
        if (BS) {
          if (!QGC_EXP_NOB || eb == 0) load_b_smem(p, beb0 + eb, bw, gw, p0, p1);
        } else if constexpr (BA) {
QGC_UNROLL
          for (int G = 0; G < NG; ++G)
QGC_UNROLL
            for (int q = 0; q < QB; ++q)
QGC_UNROLL
              for (int i = 0; i < 8; ++i) bw[G][q][i] = bn[G][q][i];
QGC_UNROLL
          for (int G = 0; G < NG; ++G) p0[G] = pn0[G], p1[G] = pn1[G];
          if (eb + 1 < NEB && v.has_block(eb + 1)) stage_b(p, kc0 + (eb + 1) * F::BK, bn, gn, pn0, pn1);
        } else {
          stage_b(p, kc0 + eb * F::BK, bw, gw, p0, p1);
        }
QGC_UNROLL
        for (int tt = 0; tt < T; ++tt) {
          float c[NG][4], c2[NG][4]; /* c2: NF4's second mma (weight row g + 8) */
QGC_UNROLL
          for (int G = 0; G < NG; ++G)
            c[G][0] = c[G][1] = c[G][2] = c[G][3] = c2[G][0] = c2[G][1] = c2[G][2] = c2[G][3] = 0.0f;
QGC_UNROLL
          for (int q = 0; q < QB; ++q) block_mma(v, tt, e0 * QB, e1 * QB + q, bw, gw[q], q, c, c2, uc[tt]);
          if (F::kNF4) /* hi + lo of each weight row */
QGC_UNROLL
            for (int G = 0; G < NG; ++G) {
              const float r0 = c[G][0] + c[G][2], r1 = c[G][1] + c[G][3];
              c[G][2] = c2[G][0] + c2[G][2];
              c[G][3] = c2[G][1] + c2[G][3];
              c[G][0] = r0;
              c[G][1] = r1;
            }
          float sg, sh;
          v.scales(tt, eb, sg, sh);
QGC_UNROLL
          for (int G = 0; G < NG; ++G) {
            acc[tt][G][0] = fmaf(c[G][0], sg * p0[G], acc[tt][G][0]);
            acc[tt][G][1] = fmaf(c[G][1], sg * p1[G], acc[tt][G][1]);
            acc[tt][G][2] = fmaf(c[G][2], sh * p0[G], acc[tt][G][2]);
            acc[tt][G][3] = fmaf(c[G][3], sh * p1[G], acc[tt][G][3]);
          }
        }
      }
    }
  }

  /* kI4: per scale block, the integer mma sums codes times digits from the
   * negated digit sums (so (c - 1) times digits, exactly), two steps of k
   * 32 per 64-block, the tiles' chains interleaved. A lane's two columns
   * are digits D, D + 1 of one activation row: c_D 128 + c_D+1 is exact
   * (|c| <= 2^15), so one conversion and acc += v * scale * 2^(E-14-7D)
   * into the first column (the second stays 0). Flagged blocks (digits
   * zero) take the direct mode's bf16 mma from x (i4_fallback). The A
   * registers are (w >> 2p) & 0x03030303: no table, no float decode. */
  template <bool TAIL>
  __device__ __forceinline__ void chunk_i4(const Params &p, const View<L, TAIL> &v, int64_t kc0, int beb0) {
    constexpr int EU = QB == 1 ? 2 : 1;
    /* flag bytes of the launch's activation rows only (the rest are not staged) */
    const uint32_t mlo = p.m >= 4 ? 0xffffffffu : (1u << (8 * p.m)) - 1u;
    const uint32_t mhi = p.m >= 8 ? 0xffffffffu : p.m <= 4 ? 0u : (1u << (8 * (p.m - 4))) - 1u;
#pragma unroll 1
    for (int e0 = 0; e0 < NEB; e0 += EU) {
QGC_UNROLL
      for (int e1 = 0; e1 < EU; ++e1) {
        const int eb = e0 + e1, sb = beb0 + eb;
        if (!v.has_block(eb)) break;
        uint4 bq[NG][QB];
        int n0[NG], n1[NG];
        float pf[NG];
QGC_UNROLL
        for (int G = 0; G < NG; ++G) {
          /* past the launch's columns: its last digit pair (columns come
           * in fours per row), as load_b_smem */
          const int col = min(8 * G + g, p.ncols - 1), c0 = min(8 * G + 2 * t, p.ncols - 2);
QGC_UNROLL
          for (int q = 0; q < QB; ++q) bq[G][q] = lds128_ordered(sb_digits(sbB, sb * QB + q, p.ncols, col, t));
          n0[G] = sbN[sb * p.ncols + c0];
          n1[G] = sbN[sb * p.ncols + c0 + 1];
          pf[G] = sbP[sb * sbp_stride(p.ncols) + c0 + 1];
        }
        uint2 fl = *reinterpret_cast<const uint2 *>(sbF + sb * 8);
        fl.x &= mlo, fl.y &= mhi;
        int c[T][NG][4];
QGC_UNROLL
        for (int tt = 0; tt < T; ++tt)
QGC_UNROLL
          for (int G = 0; G < NG; ++G) c[tt][G][0] = n0[G], c[tt][G][1] = n1[G], c[tt][G][2] = n0[G], c[tt][G][3] = n1[G];
QGC_UNROLL
        for (int q = 0; q < QB; ++q) {
          const int bi = e1 * QB + q;
QGC_UNROLL
          for (int tt = 0; tt < T; ++tt) {
            uint32_t wg, wh;
            v.q2_words(tt, ((e0 * QB) >> 1) + (bi >> 1), bi & 1, wg, wh);
            uint32_t rg[4], rh[4];
QGC_UNROLL
            for (int i = 0; i < 4; ++i) rg[i] = (wg >> (2 * i)) & 0x03030303u, rh[i] = (wh >> (2 * i)) & 0x03030303u;
QGC_UNROLL
            for (int s = 0; s < 2; ++s) {
              const uint32_t a[4] = {rg[2 * s], rh[2 * s], rg[2 * s + 1], rh[2 * s + 1]};
QGC_UNROLL
              for (int G = 0; G < NG; ++G)
                mma_u8s8(c[tt][G], a, s ? bq[G][q].z : bq[G][q].x, s ? bq[G][q].w : bq[G][q].y);
            }
          }
        }
        float sg[T], sh[T];
QGC_UNROLL
        for (int tt = 0; tt < T; ++tt) {
          v.scales(tt, eb, sg[tt], sh[tt]);
QGC_UNROLL
          for (int G = 0; G < NG; ++G) {
            acc[tt][G][0] = fmaf((float)(c[tt][G][0] * 128 + c[tt][G][1]), sg[tt] * pf[G], acc[tt][G][0]);
            acc[tt][G][2] = fmaf((float)(c[tt][G][2] * 128 + c[tt][G][3]), sh[tt] * pf[G], acc[tt][G][2]);
          }
        }
        if ((fl.x | fl.y) == 0u) continue;
QGC_UNROLL
        for (int tt = 0; tt < T; ++tt)
QGC_UNROLL
          for (int G = 0; G < NG; ++G) {
            const uint32_t fw = ((G & 2) ? fl.y : fl.x) >> (16 * (G & 1));
            if ((fw & 0xffffu) == 0) continue;
            const int ap = t >> 1;
            const float2 r = i4_fallback<TAIL>(p.x, p.k, p.x_vec != 0, v, tt, e0, e1, kc0 + (int64_t)eb * F::BK,
                                               2 * G, fw, g, t);
            if ((t & 1) == 0 && ((fw >> (8 * ap)) & 0xffu) != 0) {
              acc[tt][G][0] = fmaf(r.x, sg[tt], acc[tt][G][0]);
              acc[tt][G][2] = fmaf(r.y, sh[tt], acc[tt][G][2]);
            }
          }
      }
    }
  }

  /* A flagged scale block of activation rows a0, a0 + 1 (fw: their flag
   * bytes): the direct mode's sum, bf16 (code - 1) times bf16 x from
   * global memory, exact products, with row a0 + a' in B column 4a' (the
   * column of its digit 0), so that lane t = 2a' gets the sums of weight
   * rows g and g + 8 (returned; the caller adds them to that column's
   * accumulator). Not inlined: only blocks the digits cannot hold come
   * here, and the main loop keeps its registers. */
  template <bool TAIL>
  static __device__ __noinline__ float2 i4_fallback(const void *x, int64_t k, bool x_vec, const View<L, TAIL> v, int tt,
                                                    int e0, int e1, int64_t kb, int a0, uint32_t fw, int g, int t) {
    float c[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
    for (int q = 0; q < QB; ++q) {
      const int bi = e1 * QB + q;
      uint32_t wg, wh;
      v.q2_words(tt, ((e0 * QB) >> 1) + (bi >> 1), bi & 1, wg, wh);
      uint32_t xw[1][8] = {{0u, 0u, 0u, 0u, 0u, 0u, 0u, 0u}};
      const int ap = g >> 2;
      if ((g & 3) == 0 && ((fw >> (8 * ap)) & 0xffu) != 0)
        stage_direct<1>(static_cast<const char *>(x) + (a0 + ap) * k * 2, kb + 64 * q + 16 * t, x_vec, xw);
      uint32_t A[4];
      q2_frag<0>(wg, wh, A);
      mma_bf16(c, A, xw[0][0], xw[0][1]);
      q2_frag<1>(wg, wh, A);
      mma_bf16(c, A, xw[0][2], xw[0][3]);
      q2_frag<2>(wg, wh, A);
      mma_bf16(c, A, xw[0][4], xw[0][5]);
      q2_frag<3>(wg, wh, A);
      mma_bf16(c, A, xw[0][6], xw[0][7]);
    }
    return make_float2(c[0], c[2]);
  }

  /* The four steps of 64-block b0 + BI of tile tt (b0 even where Q2_0
   * words hold two blocks): decode A, then the mma per column group (NF4:
   * two, into c and c2, same B; u: its code words, which the chunk loop
   * loaded a block ahead; gw: kDG's gamma words of the part). */
  template <bool TAIL>
  __device__ __forceinline__ void block_mma(const View<L, TAIL> &v, int tt, int b0, int bi,
                                            const uint32_t (&bw)[NG][QB][8], const uint32_t (&gw)[8], int q,
                                            float (&c)[NG][4], float (&c2)[NG][4], const uint4 &u) {
    uint32_t wg = 0, wh = 0;
    if (!F::kNF4)
      v.q2_words(tt, (b0 >> 1) + (bi >> 1), bi & 1, wg, wh);
QGC_UNROLL
    for (int s = 0; s < 4; ++s) {
      uint32_t a[4], a2[4];
      if (QGC_EXP_DECODE == 1) {
        a[0] = F::kNF4 ? u.x : wg, a[1] = F::kNF4 ? u.y : wh, a[2] = F::kNF4 ? u.z : wg ^ wh, a[3] = u.w ^ wh;
        a2[0] = a[1], a2[1] = a[0], a2[2] = a[3], a2[3] = a[2];
      } else if (QGC_EXP_DECODE == 2 && F::kNF4) {
        /* byte j of w's hi word: nf4_pair's address (the 128-byte stride),
         * lanes 16-31 at the entry's second word */
        const uint32_t l4 = lane8 | (lane & 16u) >> 2;
        const auto hi = [&](uint32_t w, int j) {
          const uint32_t off = ((j == 0 ? w << 7 : w >> (8 * j - 7)) & 0x7f80u) | l4;
          return *reinterpret_cast<const uint32_t *>(reinterpret_cast<const char *>(lut) + off);
        };
        const uint32_t wg2 = s < 2 ? u.x : u.y, wh2 = s < 2 ? u.z : u.w;
        const int J = 2 * (s & 1);
        a[0] = hi(wg2, J), a[2] = hi(wg2, J + 1), a2[0] = hi(wh2, J), a2[2] = hi(wh2, J + 1);
        a[1] = a[0] ^ 0x8000u, a[3] = a[2] ^ 0x8000u, a2[1] = a2[0] ^ 0x8000u, a2[3] = a2[2] ^ 0x8000u;
      } else if (F::kNF4) {
        constexpr int PS = nf4_prmt_steps(NG, BS), TS = nf4_tex_steps(NG);
        if (s == 0) nf4_frag2<0, PS, TS>(lut, pl, lane8, u, a, a2, tex);
        if (s == 1) nf4_frag2<1, PS, TS>(lut, pl, lane8, u, a, a2, tex);
        if (s == 2) nf4_frag2<2, PS, TS>(lut, pl, lane8, u, a, a2, tex);
        if (s == 3) nf4_frag2<3, PS, TS>(lut, pl, lane8, u, a, a2, tex);
      } else {
        if (s == 0) q2_frag<0>(wg, wh, a, q2m);
        if (s == 1) q2_frag<1>(wg, wh, a, q2m);
        if (s == 2) q2_frag<2>(wg, wh, a, q2m);
        if (s == 3) q2_frag<3>(wg, wh, a, q2m);
        if (XM == kDG) { /* (code - 1) gamma: rows g and g + 8 share k, so a word */
          a[0] = hmul2_bf16(a[0], gw[2 * s]);
          a[1] = hmul2_bf16(a[1], gw[2 * s]);
          a[2] = hmul2_bf16(a[2], gw[2 * s + 1]);
          a[3] = hmul2_bf16(a[3], gw[2 * s + 1]);
        }
      }
QGC_UNROLL
      for (int G = 0; G < NG; ++G) {
        if (F::kNF4) {
          mma_f16(c[G], a, bw[G][q][2 * s], bw[G][q][2 * s + 1]);
          mma_f16(c2[G], a2, bw[G][q][2 * s], bw[G][q][2 * s + 1]);
        } else {
          mma_bf16(c[G], a, bw[G][q][2 * s], bw[G][q][2 * s + 1]);
        }
      }
    }
  }

  /* BS = 1: the lane's B words (kDG: and gamma's) and 2^e from the CTA's
   * staged buffer (eb = the buffer's scale block). */
  __device__ __forceinline__ void load_b_smem(const Params &p, int eb, uint32_t (&bw)[NG][QB][8],
                                              uint32_t (&gw)[QB][8], float (&p0)[NG], float (&p1)[NG]) {
    if (XM == kDG) {
QGC_UNROLL
      for (int q = 0; q < QB; ++q) {
        const char *src = sbG + sb_gamma(eb * QB + q, t);
        const uint4 lo = lds128_ordered(src), hi = lds128_ordered(src + 16);
        gw[q][0] = lo.x, gw[q][1] = lo.y, gw[q][2] = lo.z, gw[q][3] = lo.w;
        gw[q][4] = hi.x, gw[q][5] = hi.y, gw[q][6] = hi.z, gw[q][7] = hi.w;
      }
    }
QGC_UNROLL
    for (int G = 0; G < NG; ++G) {
      /* Q2_0 (issue-bound) up to 16 columns: lanes past the launch's
       * columns read its last one (their D columns are never written): no
       * predicate, no zeroing, 2-11% faster at m = 1 on the H200. NF4
       * (held by the shared-memory pipe) and 32 columns: only the launch's
       * columns load, fewer wavefronts (the clamp was 1-6% slower for NF4
       * at m = 1, 2-4% for three bf16 terms in 32 columns; NOTES v10). */
      constexpr bool kClamp = !F::kNF4 && NG < 4;
      const int col = kClamp ? min(8 * G + g, p.ncols - 1) : 8 * G + g;
QGC_UNROLL
      for (int q = 0; q < QB; ++q) {
        uint4 lo = make_uint4(0, 0, 0, 0), hi = lo;
        if (kClamp || col < p.ncols) {
          /* Q2_0's direct mode: the lane's base (hoisted out of the loop)
           * plus the block times its stride, one IMAD per block where
           * ptxas makes three: 1-4% faster on the H200; the other modes
           * were up to 4% slower with it (bench/NOTES.md v14). */
          const char *src = xmode_raw(XM) ? sb_words(sbB, 0, p.ncols, col, t) + (eb * QB + q) * sb_block_bytes(p.ncols)
                                          : sb_words(sbB, eb * QB + q, p.ncols, col, t);
          /* swizzled, the other half's address is the first's with bit 4
           * flipped (a unit is 32-byte aligned): no second lane constant
           * (two spilled 4-20 bytes in three kernels on sm_121) */
          if constexpr (kSwz) {
            const uint32_t a = smem_addr(src + sb_half<kSwz>(col, 0));
            lo = lds128_at(a);
            hi = lds128_at(a ^ 16u);
          } else {
            lo = lds128_ordered(src);
            hi = lds128_ordered(src + 16);
          }
        }
        bw[G][q][0] = lo.x, bw[G][q][1] = lo.y, bw[G][q][2] = lo.z, bw[G][q][3] = lo.w;
        bw[G][q][4] = hi.x, bw[G][q][5] = hi.y, bw[G][q][6] = hi.z, bw[G][q][7] = hi.w;
      }
      if (BF) {
        p0[G] = p1[G] = 1.0f;
      } else { /* NF4 */
        const int c0 = 8 * G + 2 * t;
#if QGC_EXP_P_PAIR
        /* c0 even and the row padded to even: both in the row */
        const float2 pp = c0 < p.ncols ? *reinterpret_cast<const float2 *>(sbP + eb * sbp_stride(p.ncols) + c0)
                                       : make_float2(0.0f, 0.0f);
        p0[G] = pp.x;
        p1[G] = c0 + 1 < p.ncols ? pp.y : 0.0f; /* the padding is never written */
#else
        p0[G] = c0 < p.ncols ? sbP[eb * p.ncols + c0] : 0.0f;
        p1[G] = c0 + 1 < p.ncols ? sbP[eb * p.ncols + c0 + 1] : 0.0f;
#endif
      }
    }
  }

  /* BS = 0: the B words of the lane's column for the scale block at kb,
   * built here from x (kDG: and gamma's words), and the 2^e of the lane's
   * output columns 2t, 2t+1. */
  __device__ __forceinline__ void stage_b(const Params &p, int64_t kb, uint32_t (&bw)[NG][QB][8],
                                          uint32_t (&gw)[QB][8], float (&p0)[NG], float (&p1)[NG]) {
    const int64_t e0 = kb + 16 * t;
    const XSrc src = {p.gamma, p.x_bf16 != 0, p.x_vec != 0, p.g_bf16 != 0, p.g_vec != 0};
    if (XM == kDG) stage_direct<QB>(p.gamma, e0, src.g_vec, gw);
QGC_UNROLL
    for (int G = 0; G < NG; ++G) {
      const int col = 8 * G + g;
      if (xmode_raw(XM)) {
        if (col < p.m) {
          stage_direct<QB>(static_cast<const char *>(p.x) + (int64_t)col * p.k * 2, e0, src.x_vec, bw[G]);
        } else {
QGC_UNROLL
          for (int q = 0; q < QB; ++q)
QGC_UNROLL
            for (int i = 0; i < 8; ++i) bw[G][q][i] = 0u;
        }
        if (XM == kDG) ss[G] += block_ssq_words<QB>(bw[G], true); /* as stage_load adds it */
        p0[G] = p1[G] = 1.0f;
        continue;
      }
      float v[QB][16];
      float amax = 0.0f, qb = 0.0f;
      if (col < p.ncols) {
        amax = stage_load<QB>(static_cast<const char *>(p.x) + (int64_t)(col / SPL) * p.k * (p.x_bf16 ? 2 : 4), src,
                              e0, v, &qb);
      } else {
QGC_UNROLL
        for (int q = 0; q < QB; ++q)
QGC_UNROLL
          for (int j = 0; j < 16; ++j) v[q][j] = 0.0f;
      }
      if (p.gamma != nullptr) { /* the block's sum of squares, added in block order */
        qb += __shfl_xor_sync(0xffffffffu, qb, 1);
        qb += __shfl_xor_sync(0xffffffffu, qb, 2);
        ss[G] += qb;
      }
      if (xmode_cut(XM)) {
        stage_pack_b3<QB>(v, col % SPL, bw[G]);
        p0[G] = p1[G] = 1.0f;
        continue;
      }
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
      const float pc = stage_pack<SPL, QB>(v, amax, col % SPL, bw[G]);
      p0[G] = __shfl_sync(0xffffffffu, pc, 8 * t);
      p1[G] = __shfl_sync(0xffffffffu, pc, 8 * t + 4);
    }
  }
};

/* BS = 1: the whole CTA builds B (phase ph of every slice, or all of k
 * when phases == 1) with stage_b's functions, so the words, 2^e and block
 * sums of squares are the same bits as per warp: one thread per (scale
 * block, column, t) where that is one pass of the CTA, else one per (scale
 * block, activation row, t) making every split term's column from one load
 * of x (f32 x at k = 28672: Q2_0 75 -> 67 us, bench/NOTES.md v5); then one thread per (slice, column) adds its slice's block sums in
 * block order (continuing across phases). Buffer scale block bi: all of k:
 * the block of k; phased: (s P + j) NEB + e for local chunk ph P + j of
 * slice s. */
/* The block of k that buffer scale block bi holds in phase ph (all of k:
 * bi itself; phased: (s P + j) NEB + e is local chunk ph P + j of slice s),
 * and whether it exists (a slice's last phase may be short, k may end). */
__device__ __forceinline__ bool staged_block(const Params &p, int ph, int bi, int NEB, int P, int neb_k, int &eb) {
  eb = bi;
  if (p.phases > 1) {
    const int s = bi / (P * NEB), r = bi % (P * NEB), lc = ph * P + r / NEB;
    const int c0 = slice_start(p, s), c1 = slice_start(p, s + 1);
    eb = (c0 + lc) * NEB + r % NEB;
    if (lc >= c1 - c0) return false;
  }
  return eb < neb_k;
}

template <int L>
__device__ __forceinline__ void stage_range_i4(const Params &p, int ph, char *sbB, float *sbP, int *sbN, uint8_t *sbF);

#if QGC_EXP_TIMELINE
/* The staging's own points (timeline slots 12-15, written by thread 0
 * after the staging's barrier): [0] thread 0's values in registers, [1]
 * its terms stored, [2] after the norm's first barrier, [3] the CTA's
 * last thread's values in registers. */
__shared__ unsigned long long tl_stage[4];
__device__ __forceinline__ unsigned long long tl_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}
/* The time once v is in registers: the read is predicated on v, so that
 * ptxas cannot move it ahead of the loads (an asm input that no
 * instruction uses does not order it). */
__device__ __forceinline__ unsigned long long tl_after(float v) {
  unsigned long long t;
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.eq.f32 p, %1, %1;\n\t@p mov.u64 %0, %%globaltimer;\n\t"
      "@!p mov.u64 %0, %%globaltimer;\n\t}"
      : "=l"(t)
      : "f"(v)
      : "memory");
  return t;
}
#endif

template <int L>
__device__ __forceinline__ void stage_ssq(const Params &p, int ph, const float *sbQ, float *sbS);

/* The raw modes' staging (direct, kDG) of a batched launch where x (and
 * gamma) are 16-byte aligned: every unit's words go to shared memory by
 * cp.async, all of the thread's units issued before one wait, where
 * stage_range's loop waits for each pass's loads before the next pass
 * issues (many activation rows take several passes of the CTA, each a
 * round trip to a memory system the weight ring keeps busy: such launches
 * 13-22% faster on the H200, bench/NOTES.md v16). The same bytes as
 * stage_direct's; kDG's block sums of squares then from the thread's own
 * words (ssq_words, the same order). The term modes fetched the same way
 * into their own B slots measured 1.19-1.53x slower with f32 x (v16), so
 * they load through registers. */
template <int L, int XM, bool SWZ>
__device__ __forceinline__ void stage_range_async(const Params &p, int ph, char *sbB, char *sbG, float *sbQ) {
  using F = Fmt<L>;
  constexpr int BK = F::BK, QB = F::QB, NEB = F::NEB;
  const int neb_k = (int)(p.k / BK), units = p.st_groups * p.nbe * 4, P = p.P;
  const auto unit = [&](int base, int &t, int &bi, int &row, int64_t &e0) {
    const int u = base + threadIdx.x, cu = u >> 2;
    t = u & 3, bi = div_by(cu, p.st_magic), row = cu - bi * p.st_groups;
    int eb;
    const bool exists = staged_block(p, ph, bi, NEB, P, neb_k, eb);
    e0 = (int64_t)eb * BK + 16 * t;
    return u < units && exists;
  };
  for (int base = 0; base < units; base += blockDim.x) {
    int t, bi, row;
    int64_t e0;
    if (!unit(base, t, bi, row, e0)) continue;
    const char *xr = static_cast<const char *>(p.x) + (int64_t)row * p.k * 2;
QGC_UNROLL
    for (int q = 0; q < QB; ++q) {
      const uint32_t dst = smem_addr(sb_words(sbB, bi * QB + q, p.ncols, row, t));
      cp_async16(dst + sb_half<SWZ>(row, 0), xr + (e0 + 64 * q) * 2);
      cp_async16(dst + sb_half<SWZ>(row, 1), xr + (e0 + 64 * q) * 2 + 16);
      if (XM == kDG && row == 0) { /* gamma's words once per block */
        const uint32_t gd = smem_addr(sbG + sb_gamma(bi * QB + q, t));
        cp_async16(gd, static_cast<const char *>(p.gamma) + (e0 + 64 * q) * 2);
        cp_async16(gd + 16, static_cast<const char *>(p.gamma) + (e0 + 64 * q) * 2 + 16);
      }
    }
  }
  cp_async_commit();
  cp_async_wait<0>(); /* the thread's own copies are visible to it */
#if QGC_EXP_TIMELINE
  const unsigned long long tv = tl_now();
  if (threadIdx.x == 0) tl_stage[0] = tv;
  atomicMax(&tl_stage[3], tv);
#endif
  if constexpr (XM == kDG) {
    for (int base = 0; base < units; base += blockDim.x) { /* uniform: every lane shuffles */
      int t, bi, row;
      int64_t e0;
      const bool act = unit(base, t, bi, row, e0);
      uint32_t w[QB][8] = {};
      if (act) {
QGC_UNROLL
        for (int q = 0; q < QB; ++q) { /* the thread's own copies */
          const char *src = sb_words(sbB, bi * QB + q, p.ncols, row, t);
          const uint4 lo = *reinterpret_cast<const uint4 *>(src + sb_half<SWZ>(row, 0)),
                      hi = *reinterpret_cast<const uint4 *>(src + sb_half<SWZ>(row, 1));
          w[q][0] = lo.x, w[q][1] = lo.y, w[q][2] = lo.z, w[q][3] = lo.w;
          w[q][4] = hi.x, w[q][5] = hi.y, w[q][6] = hi.z, w[q][7] = hi.w;
        }
      }
      const float qb = block_ssq_words<QB>(w, act);
      if (act && t == 0) sbQ[bi * p.ncols + row] = qb;
    }
  }
}

/* ASYNC: whether batched raw launches may stage by cp.async (not in the
 * wide kernel: at its 72 registers that spilled 128 bytes on sm_90, and
 * with the spill it measured 0.99-1.02x the register staging on the H200
 * for bf16 Q2_0 at m = 1, 8, 16, bench/NOTES.md v17). SWZ: the kernel's
 * B layout (sb_half). */
template <int L, int XM, bool ASYNC, bool SWZ, int NG, int T, typename H = NoHook>
__device__ __forceinline__ void stage_range(const Params &p, int ph, char *sbB, char *sbG, float *sbP, float *sbQ, float *sbS,
                                            uint8_t *sbF, H hook = H()) {
  /* QGC_EXP_S2X: hook once by every thread, after its first (1) or last
   * (2) pass's loads are issued; else after the staging's loads */
  bool hooked = false;
  const auto hook_once = [&]() {
    if (!hooked) hooked = true, hook();
  };
  if constexpr (XM == kI4) {
    stage_range_i4<L>(p, ph, sbB, sbP, reinterpret_cast<int *>(sbQ), sbF);
    if (QGC_EXP_S2X) hook_once();
    return;
  }
  using F = Fmt<L>;
  constexpr int BK = F::BK, QB = F::QB, SPL = xmode_splits(XM), NEB = F::NEB;
  constexpr int LF = stage_lf<F::kNF4, QB, NG, T>();
  const int neb_k = (int)(p.k / BK); /* scale blocks of k */
  const int nbe = p.nbe;
  const int cps = p.st_cps, groups = p.st_groups, units = groups * nbe * 4; /* cps: columns per thread */
  const int P = p.P;
  const XSrc src = {p.gamma, p.x_bf16 != 0, p.x_vec != 0, p.g_bf16 != 0, p.g_vec != 0};
  /* Batched launches stage several passes of the CTA (cp.async: all in
   * flight at once); one activation row's, one or a few passes, measured
   * the same or 1-3% slower with it (H200, bench/NOTES.md v16). */
  const bool async = ASYNC && xmode_raw(XM) && p.m > 1 && src.x_vec && (XM != kDG || src.g_vec);
  if constexpr (ASYNC && xmode_raw(XM))
    if (async) stage_range_async<L, XM, SWZ>(p, ph, sbB, sbG, sbQ);
  for (int base = 0; base < (async ? 0 : units); base += blockDim.x) {
    const int u = base + threadIdx.x, t = u & 3, cu = u >> 2, bi = div_by(cu, p.st_magic), col0 = (cu - bi * groups) * cps;
    const int row = col0 / SPL, sp0 = col0 % SPL;
    int eb;
    const bool exists = staged_block(p, ph, bi, NEB, P, neb_k, eb), act = u < units && exists;
    const int64_t e0 = (int64_t)eb * BK + 16 * t;
    const bool hook_pass = QGC_EXP_S2X == 1 || QGC_EXP_S2X == 3 ? base == 0 : base + (int)blockDim.x >= units;
    uint32_t w[QB][8];
    auto store = [&](int col) {
QGC_UNROLL
      for (int q = 0; q < QB; ++q) {
        char *dst = sb_words(sbB, bi * QB + q, p.ncols, col, t);
        *reinterpret_cast<uint4 *>(dst + sb_half<SWZ>(col, 0)) = make_uint4(w[q][0], w[q][1], w[q][2], w[q][3]);
        *reinterpret_cast<uint4 *>(dst + sb_half<SWZ>(col, 1)) = make_uint4(w[q][4], w[q][5], w[q][6], w[q][7]);
      }
    };
    if (xmode_raw(XM)) {
      /* LF: kDG's gamma words loaded beside x's (direct has x's alone) */
      constexpr bool LFG = LF && XM == kDG;
      uint32_t wg[QB][8];
      if (QGC_EXP_S2X || LFG) {
        const char *xr = static_cast<const char *>(p.x) + (int64_t)row * p.k * 2;
        if (act) stage_direct<QB>(xr, e0, src.x_vec, w);
        if (LFG && act && row == 0) stage_direct<QB>(p.gamma, e0, src.g_vec, wg);
        if (hook_pass) hook_once();
      }
      if (act) {
        if (!QGC_EXP_S2X && !LFG)
          stage_direct<QB>(static_cast<const char *>(p.x) + (int64_t)row * p.k * 2, e0, src.x_vec, w);
#if QGC_EXP_TIMELINE
        const unsigned long long tv = tl_after(__uint_as_float(w[QB - 1][7] | w[0][0]));
        if (threadIdx.x == 0) tl_stage[0] = tv;
        atomicMax(&tl_stage[3], tv);
#endif
        store(row);
      }
      if (XM == kDG) {
        /* the block's sum of squares of x (every lane: the shuffles), and
         * gamma's words once per block (by the units of row 0) */
        const float qb = block_ssq_words<QB>(w, act);
        if (act && t == 0) sbQ[bi * p.ncols + row] = qb;
        if (act && row == 0) {
          if (LFG) {
QGC_UNROLL
            for (int q = 0; q < QB; ++q)
QGC_UNROLL
              for (int i = 0; i < 8; ++i) w[q][i] = wg[q][i];
          } else {
            stage_direct<QB>(p.gamma, e0, src.g_vec, w);
          }
QGC_UNROLL
          for (int q = 0; q < QB; ++q) {
            char *dst = sbG + sb_gamma(bi * QB + q, t);
            *reinterpret_cast<uint4 *>(dst) = make_uint4(w[q][0], w[q][1], w[q][2], w[q][3]);
            *reinterpret_cast<uint4 *>(dst + 16) = make_uint4(w[q][4], w[q][5], w[q][6], w[q][7]);
          }
        }
      }
      continue;
    }
    float v[QB][16], amax = 0.0f, qb = 0.0f;
    if (act) {
      const char *xr = static_cast<const char *>(p.x) + (int64_t)row * p.k * (p.x_bf16 ? 2 : 4);
      if constexpr (QGC_EXP_S2X != 0)
        amax = stage_load<QB, LF>(xr, src, e0, v, &qb, [&]() {
          if (hook_pass) hook_once();
        });
      else
        amax = stage_load<QB, LF>(xr, src, e0, v, &qb);
#if QGC_EXP_TIMELINE
      const unsigned long long tv = tl_after(v[QB - 1][15] + v[0][0]);
      if (threadIdx.x == 0) tl_stage[0] = tv;
      atomicMax(&tl_stage[3], tv);
#endif
    } else {
QGC_UNROLL
      for (int q = 0; q < QB; ++q)
QGC_UNROLL
        for (int j = 0; j < 16; ++j) v[q][j] = 0.0f;
    }
    if (QGC_EXP_S2X && hook_pass) hook_once();
    if (p.gamma != nullptr) {
      qb += __shfl_xor_sync(0xffffffffu, qb, 1);
      qb += __shfl_xor_sync(0xffffffffu, qb, 2);
      if (act && t == 0)
        for (int sp = sp0; sp < sp0 + cps; ++sp) sbQ[bi * p.ncols + row * SPL + sp] = qb;
    }
    if (!xmode_cut(XM)) {
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
      amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
    }
    /* not unrolled: Q2_0 g128's three terms would spill at 128 registers */
    if constexpr (xmode_cut(XM)) {
      /* warp-uniform: a warp with a non-finite value takes the tested path */
      const bool finite = __all_sync(0xffffffffu, b3_all_finite<QB>(v));
QGC_NO_UNROLL
      for (int sp = 0; sp < sp0 + cps; ++sp) { /* terms before sp0 only advance v */
        if (finite)
          stage_next_b3_finite<QB>(v, w);
        else
          stage_next_b3<QB>(v, w);
        if (act && sp >= sp0) store(row * SPL + sp);
      }
#if QGC_EXP_TIMELINE
      if (threadIdx.x == 0) tl_stage[1] = tl_now();
#endif
    } else {
QGC_NO_UNROLL
      for (int sp = sp0; sp < sp0 + cps; ++sp) {
        const int col = row * SPL + sp;
        const float pc = stage_pack<SPL, QB>(v, amax, sp, w);
        if (act && t == 0) sbP[bi * sbp_stride(p.ncols) + col] = pc;
        if (act) store(col);
      }
#if QGC_EXP_TIMELINE
      if (threadIdx.x == 0) tl_stage[1] = tl_now();
#endif
    }
  }
  if (QGC_EXP_S2X) hook_once();
  if (XM == kDirect || p.gamma == nullptr) return;
  /* With all of k staged, the kernel adds the sums after its barrier
   * (matvec_kernel); in phases, before the phase's B is replaced. */
  if (p.phases <= 1) return;
  __syncthreads();
#if QGC_EXP_TIMELINE
  if (threadIdx.x == 0) tl_stage[2] = tl_now();
#endif
  stage_ssq<L>(p, ph, sbQ, sbS);
}

/* The norm's sums of squares of each slice and activation row's column,
 * from the staged blocks' sums (sbQ) in block order (the bits of the
 * per-warp staging's running sum), continuing across phases. */
template <int L>
__device__ __forceinline__ void stage_ssq(const Params &p, int ph, const float *sbQ, float *sbS) {
  constexpr int NEB = Fmt<L>::NEB;
  const int neb_k = (int)(p.k / Fmt<L>::BK), P = p.P;
  for (int i = threadIdx.x; i < p.KS * p.ncols; i += blockDim.x) {
    const int s = i / p.ncols, col = i % p.ncols;
    const int c0 = slice_start(p, s), c1 = slice_start(p, s + 1);
    const int b1 = min(c1 * NEB, neb_k); /* the blocks of the slice that exist */
    float q = 0.0f;
    if (p.phases <= 1) {
      for (int b = c0 * NEB; b < b1; ++b) q += sbQ[b * p.ncols + col];
    } else {
      q = ph == 0 ? 0.0f : sbS[i];
      const int lc0 = ph * P, lc1 = min(lc0 + P, c1 - c0);
      for (int lc = lc0; lc < lc1; ++lc)
        for (int e = 0; e < NEB && (c0 + lc) * NEB + e < b1; ++e) q += sbQ[((s * P + lc - lc0) * NEB + e) * p.ncols + col];
    }
    sbS[i] = q;
  }
}

/* kI4's staging: one thread per (scale block, activation row, t) makes
 * the row's four digit columns from one load of x (bf16, no norm); the 4
 * threads of a block share its exponent, flag and digit sums through
 * shuffles (they are 4 consecutive lanes). Same buffer mapping as
 * stage_range. */
template <int L>
__device__ __forceinline__ void stage_range_i4(const Params &p, int ph, char *sbB, float *sbP, int *sbN, uint8_t *sbF) {
  using F = Fmt<L>;
  constexpr int BK = F::BK, QB = F::QB, NEB = F::NEB;
  const int neb_k = (int)(p.k / BK);
  const int nbe = p.nbe;
  const int nact = p.st_groups, units = nact * nbe * 4;
  const int P = p.P;
  const XSrc src = {nullptr, true, p.x_vec != 0, false, false};
  for (int base = 0; base < units; base += blockDim.x) {
    const int u = base + threadIdx.x, t = u & 3, cu = u >> 2, bi = div_by(cu, p.st_magic), a = cu - bi * nact;
    int eb;
    const bool exists = staged_block(p, ph, bi, NEB, P, neb_k, eb), act = u < units && exists;
    float v[QB][16], amax = 0.0f, qb = 0.0f;
    if (act) {
      amax = stage_load<QB, stage_lf<false, QB>()>(static_cast<const char *>(p.x) + (int64_t)a * p.k * 2, src,
                                                  (int64_t)eb * BK + 16 * t, v, &qb);
    } else {
QGC_UNROLL
      for (int q = 0; q < QB; ++q)
QGC_UNROLL
        for (int j = 0; j < 16; ++j) v[q][j] = 0.0f;
    }
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 1));
    amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, 2));
    const int E = i4_block_exp(amax);
    int bad = i4_block_bad(amax, E);
QGC_UNROLL
    for (int q = 0; q < QB; ++q)
QGC_UNROLL
      for (int j = 0; j < 16; ++j) bad |= i4_elem_inexact(v[q][j], E);
    bad |= __shfl_xor_sync(0xffffffffu, bad, 1);
    bad |= __shfl_xor_sync(0xffffffffu, bad, 2);
    uint32_t w[QB][kDigits][4];
    int sum[kDigits];
    stage_i4<QB>(v, E, bad != 0, w, sum);
QGC_UNROLL
    for (int D = 0; D < kDigits; ++D) {
      sum[D] += __shfl_xor_sync(0xffffffffu, sum[D], 1);
      sum[D] += __shfl_xor_sync(0xffffffffu, sum[D], 2);
    }
    if (!act) continue;
QGC_UNROLL
    for (int D = 0; D < kDigits; ++D) {
      const int col = a * kDigits + D;
QGC_UNROLL
      for (int q = 0; q < QB; ++q)
        *reinterpret_cast<uint4 *>(sb_digits(sbB, bi * QB + q, p.ncols, col, t)) =
            make_uint4(w[q][D][0], w[q][D][1], w[q][D][2], w[q][D][3]);
      if (t == 0) {
        sbN[bi * p.ncols + col] = -sum[D];
        sbP[bi * sbp_stride(p.ncols) + col] = bad ? 0.0f : i4_digit_factor(E, D);
      }
    }
    if (t == 0) sbF[bi * 8 + a] = (uint8_t)bad;
  }
}

template <int L, int XM, int NG, int T, int BS, int MAXW = kMaxWarps>
__global__ void __launch_bounds__(32 * MAXW, 1) matvec_kernel(const Params p) {
  using F = Fmt<L>;
  static_assert(T <= max_tiles<F::kNF4 ? QGEMV_NF4 : QGEMV_Q2_0>(NG, XM) ||
                    (ng2t2_config(F::kNF4, NG, T, BS) && MAXW <= kNg2T2Warps),
                "this many tiles spill");
  constexpr int CH = F::CH, KC = F::KC, SPL = xmode_splits(XM), NEB = F::NEB, S = kStages;
  extern __shared__ __align__(128) char smem[];
#if QGC_EXP_TIMELINE
  unsigned long long *tl_rec =
      p.tl + ((size_t)(p.tl_launch % kTlLaunches) * kTlCtas + (blockIdx.x % kTlCtas)) * kTlSlots;
  const auto tl_mark = [&](int slot) {
    if (threadIdx.x == 0) {
      unsigned long long t;
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
      tl_rec[slot] = t;
    }
  };
  tl_mark(0);
  if (threadIdx.x < 4) tl_stage[threadIdx.x] = 0ull;
  __syncthreads(); /* tl_stage is zero before any thread's atomicMax */
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    tl_rec[7] = sm;
  }
#define QGC_TL(slot) tl_mark(slot)
#else
#define QGC_TL(slot) ((void)0)
#endif
  pdl_launch_dependents();
  const int W = blockDim.x >> 5, w = threadIdx.x >> 5;
  const int gi = w / p.KS, sl = w % p.KS;
  const SmemPlan sp = smem_plan_nbe<L>(W, T, NG, BS ? p.nbe : 0, p.ncols, p.KS, XM);

  WarpCtx<L, XM, NG, T, BS> cx;
  cx.lane = threadIdx.x & 31;
  cx.g = cx.lane >> 2;
  cx.t = cx.lane & 3;
  cx.lane8 = 8u * (cx.lane & 15);
  cx.q2m = p.q2_magic;
  cx.lut = nullptr;
  cx.sbB = smem + sp.sbB;
  cx.sbG = smem + sp.sbG;
  cx.sbP = reinterpret_cast<const float *>(smem + sp.sbP);
  cx.sbN = reinterpret_cast<const int *>(smem + sp.sbQ);
  cx.sbF = reinterpret_cast<const uint8_t *>(smem + sp.sbF);
  if constexpr (F::kNF4) {
    /* One thread per entry: its 16 copies by 16-byte stores, each thread
     * starting at another pair of copies so that a warp's stores hit every
     * bank (computing every copy took 6% of NF4's warp time, v9). */
    uint2 *lut_s = reinterpret_cast<uint2 *>(smem + sp.lut);
QGC_UNROLL
    for (int i = 0; i < 16; ++i) cx.pl[i] = p.nf4_pl[i];
    for (int v = threadIdx.x; v < 256; v += blockDim.x) {
      uint32_t e[4]; /* the entry from the byte planes: 20 ALU instructions, where
                        nf4_lut_entry's four fp16 roundings took more (v11) */
      nf4_prmt2(cx.pl, (uint32_t)v, e);
      uint4 *dst = reinterpret_cast<uint4 *>(lut_s + kLutStride / 8 * v);
QGC_UNROLL
      for (int c = 0; c < 8; ++c) dst[(c + v) & 7] = make_uint4(e[0], e[1], e[0], e[1]);
    }
    cx.lut = lut_s;
#if QGC_EXP_NF4_TEX
    cx.tex = p.nf4_tex;
#endif
  }
  const uint32_t bars = smem_addr(smem + sp.bars) + w * S * 8;
  char *ring = smem + sp.ring + (size_t)w * S * T * CH;
  const uint32_t ring_s = smem_addr(ring);
  if (QGC_TMA && cx.lane == 0) {
    for (int s = 0; s < S; ++s) mbar_init(bars + 8 * s, 1);
    fence_mbar_init();
  }

  const int c0 = slice_start(p, sl), c1 = slice_start(p, sl + 1);
  const int nloc = c1 - c0;
  /* The units of this CTA; the warp's valid ones come first (its row
   * group grows with the unit). */
  const int iters = (int)blockIdx.x < p.units ? cta_units(p, (int)blockIdx.x) : 0;
  int nvalid = 0;
  while (nvalid < iters && ((int)blockIdx.x + nvalid * (int)gridDim.x) * p.G + gi < p.T_groups) ++nvalid;
  /* One stream of chunks over the warp's units: position j is chunk c0 +
   * j % nloc of unit j / nloc, in slot j % S. The issue position advances
   * by one chunk at a time (no division in the loop). */
  const int total = nvalid * nloc;
  const uint64_t wpol = QGC_EXP_WEF ? l2_evict_first_policy() : 0;
  int iss_it = 0, iss_i = 0; /* the next chunk to issue */
  auto issue_next = [&]() {
    const int slot = (iss_it * nloc + iss_i) % S;
    if (iss_it * nloc + iss_i == 4) QGC_TL(8); /* the timeline's chunk latency */
    if (iss_it * nloc + iss_i == 8) QGC_TL(10);
    const int rg = ((int)blockIdx.x + iss_it * (int)gridDim.x) * p.G + gi, ci = c0 + iss_i;
    const uint32_t bytes = ci + 1 < p.nch ? (uint32_t)CH : (uint32_t)p.last_bytes;
    const uint8_t *src[T];
QGC_UNROLL
    for (int tt = 0; tt < T; ++tt)
      src[tt] = p.w + (int64_t)min(rg * T + tt, p.tiles - 1) * p.tile_bytes + (int64_t)ci * CH;
    if (QGC_TMA) {
      if (cx.lane == 0) {
        fence_proxy_async();
        mbar_arrive_tx(bars + 8 * slot, T * bytes);
QGC_UNROLL
        for (int tt = 0; tt < T; ++tt) bulk_g2s(ring_s + (slot * T + tt) * CH, src[tt], bytes, bars + 8 * slot, wpol);
      }
    } else {
QGC_UNROLL
      for (int tt = 0; tt < T; ++tt)
        for (int pc = cx.lane; pc < (int)bytes / 16; pc += 32)
          cp_async16(ring_s + (slot * T + tt) * CH + pc * 16, src[tt] + pc * 16);
    }
    if (++iss_i == nloc) iss_i = 0, ++iss_it;
  };
  /* Ring stages [j0, j1) of the stream (cp.async: one commit group each). */
  auto prologue = [&](int j0, int j1) {
    for (int j = j0; j < j1; ++j) {
      if (j < total) issue_next();
      if (!QGC_TMA) cp_async_commit();
    }
  };
  prologue(0, p.early);
  pdl_wait(); /* from here on x and gamma may be read and y written */
  QGC_TL(1);
  const bool phased = BS && p.phases > 1;
  char *sbB = smem + sp.sbB;
  float *sbP = reinterpret_cast<float *>(smem + sp.sbP), *sbQ = reinterpret_cast<float *>(smem + sp.sbQ),
        *sbS = reinterpret_cast<float *>(smem + sp.sbS);
  uint8_t *sbF = reinterpret_cast<uint8_t *>(smem + sp.sbF);
  constexpr bool SWZ = sb_swizzled(NG, T);
  constexpr bool ASYNC = MAXW <= kMaxWarps;
  const auto ring_rest = [&]() { prologue(p.early, S); };
  /* QGC_EXP_S2X 3: the hook issues the ring only where the plan put no
   * stage before the wait */
  const bool s2x_here = QGC_EXP_S2X != 0 && (QGC_EXP_S2X != 3 || p.early == 0);
  const auto ring_hook = [&]() {
    if (s2x_here) ring_rest();
  };
  /* the first unit's phase 0 before the ring's rest (phase0_early) */
  const bool ph0_early = phase0_early<F::kNF4, F::QB, NG, T>() && phased && iters > 0;
  if (BS && !phased) {
    if constexpr (QGC_EXP_S2X != 0)
      stage_range<L, XM, ASYNC, SWZ, NG, T>(p, 0, sbB, smem + sp.sbG, sbP, sbQ, sbS, sbF, ring_hook);
    else
      stage_range<L, XM, ASYNC, SWZ, NG, T>(p, 0, sbB, smem + sp.sbG, sbP, sbQ, sbS, sbF);
  } else if (ph0_early) {
    stage_range<L, XM, ASYNC, SWZ, NG, T>(p, 0, sbB, smem + sp.sbG, sbP, sbQ, sbS, sbF);
  }
  __syncthreads(); /* the table, B and the barriers are ready */
  QGC_TL(2);
#if QGC_EXP_TIMELINE
  if (threadIdx.x == 0)
    for (int i = 0; i < 4; ++i) tl_rec[12 + i] = tl_stage[i];
#endif
  if (!s2x_here || !BS || phased) ring_rest();
  /* Only the epilogue reads the norm's sums of squares, after the
   * combine's barriers: added here (the same order, the same bits), they
   * overlap the other warps' first chunks instead of holding every warp
   * between two barriers of their own (Q2_0's norm up to 4% faster at
   * m = 1 on the H200, bench/NOTES.md v15). */
  if (BS && !phased && XM != kDirect && XM != kI4 && p.gamma != nullptr) stage_ssq<L>(p, 0, sbQ, sbS);

  const int R = phased ? p.phases : 1, P = phased ? p.P : nloc;
  for (int it = 0; it < iters; ++it) {
    const int u = (int)blockIdx.x + it * (int)gridDim.x;
QGC_UNROLL
    for (int tt = 0; tt < T; ++tt)
QGC_UNROLL
      for (int G = 0; G < NG; ++G) cx.acc[tt][G][0] = cx.acc[tt][G][1] = cx.acc[tt][G][2] = cx.acc[tt][G][3] = 0.0f;
QGC_UNROLL
    for (int G = 0; G < NG; ++G) cx.ss[G] = 0.0f;

    for (int ph = 0; ph < R; ++ph) {
      if (phased && !(ph0_early && it == 0 && ph == 0)) {
        __syncthreads(); /* every warp is done with the previous phase's B */
        stage_range<L, XM, MAXW <= kMaxWarps, SWZ, NG, T>(p, ph, sbB, smem + sp.sbG, sbP, sbQ, sbS, sbF);
        __syncthreads();
      }
      if (it >= nvalid) continue;
      const int i0 = ph * P, i1 = min(nloc, i0 + P);
      for (int i = i0; i < i1; ++i) {
        const int q = it * nloc + i, slot = q % S, ci = c0 + i;
        const int beb0 = phased ? (sl * P + i - i0) * NEB : ci * NEB;
        if (QGC_TMA)
          mbar_wait(bars + 8 * slot, (uint32_t)(q / S) & 1u);
        else
          cp_async_wait<S - 1>();
        __syncwarp();
        if (q == 0) QGC_TL(3);
        if (q == 4) QGC_TL(9);
        if (q == 8) QGC_TL(11);
        const char *base = ring + slot * T * CH;
        if (QGC_EXP_LOADS_ONLY) {
          /* the experiment: the ring without the chunk's math */
        } else if (ci + 1 == p.nch && p.last_b64 < F::B64)
          cx.chunk(p, View<L, true>{base, cx.lane, cx.g, p.last_b64}, (int64_t)ci * KC, beb0);
        else
          cx.chunk(p, View<L, false>{base, cx.lane, cx.g, F::B64}, (int64_t)ci * KC, beb0);
        __syncwarp(); /* every lane is done with the slot */
        if (q + S < total) issue_next();
        if (!QGC_TMA) cp_async_commit();
      }
    }

    /* Combine: slice partials in slice order, split terms in order. */
    float4 *part = reinterpret_cast<float4 *>(smem + sp.comb);
    float *ssb = reinterpret_cast<float *>(part + W * T * NG * 32);
    QGC_TL(4);
    __syncthreads(); /* the previous unit's partials are read */
QGC_UNROLL
    for (int tt = 0; tt < T; ++tt)
QGC_UNROLL
      for (int G = 0; G < NG; ++G)
        part[((w * T + tt) * NG + G) * 32 + cx.lane] =
            make_float4(cx.acc[tt][G][0], cx.acc[tt][G][1], cx.acc[tt][G][2], cx.acc[tt][G][3]);
    if (!BS && p.gamma != nullptr) {
QGC_UNROLL
      for (int G = 0; G < NG; ++G)
        if (cx.t == 0) ssb[w * NG * 8 + G * 8 + cx.g] = cx.ss[G];
    }
    __syncthreads();
    QGC_TL(5);
    const int ru = p.G * T * 16;
    for (int o = threadIdx.x; o < ru * p.m; o += blockDim.x) {
      const int a = div_by(o, p.ru_magic), rl = o - a * ru;
      const int ogi = rl / (T * 16), tt = (rl / 16) % T, r = rl % 16;
      const int tile = (u * p.G + ogi) * T + tt;
      if (u * p.G + ogi >= p.T_groups || tile >= p.tiles) continue;
      float tot = 0.0f;
QGC_UNROLL
      for (int spl = 0; spl < SPL; ++spl) {
        const int col = a * SPL + spl, cg = col >> 3, j = col & 7;
        const int ln = (r & 7) * 4 + (j >> 1), ri = (r >> 3) * 2 + (j & 1);
        float v = 0.0f;
        for (int s = 0; s < p.KS; ++s) {
          const float4 f = part[(((ogi * p.KS + s) * T + tt) * NG + cg) * 32 + ln];
          const float e = ri == 0 ? f.x : ri == 1 ? f.y : ri == 2 ? f.z : f.w;
          v = s == 0 ? e : v + e;
        }
        tot = spl == 0 ? v : tot + v;
      }
      if (p.gamma != nullptr) {
        float q = 0.0f;
        for (int s = 0; s < p.KS; ++s) {
          const float e = BS ? sbS[s * p.ncols + a * SPL] : ssb[(ogi * p.KS + s) * NG * 8 + a * SPL];
          q = s == 0 ? e : q + e;
        }
        tot *= 1.0f / sqrtf(q * p.inv_k + p.eps);
      }
      const int64_t row = (int64_t)tile * 16 + r;
      if (p.y_bf16)
        static_cast<__nv_bfloat16 *>(p.y)[(int64_t)a * p.n + row] = __float2bfloat16_rn(tot);
      else
        static_cast<float *>(p.y)[(int64_t)a * p.n + row] = tot;
    }
  }
  if (!QGC_TMA) cp_async_wait<0>();
  QGC_TL(6);
#undef QGC_TL
}

}  // namespace qgc

#endif
