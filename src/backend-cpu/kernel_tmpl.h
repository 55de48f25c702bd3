/*
 * The blocked matvec loops of the SIMD levels, written once and
 * instantiated by each level file, which includes this header after
 * defining:
 *
 *   QG_TARGET      function attribute naming the ISA (may be empty)
 *   qv, QV_LANES   the f32 vector type and its lane count
 *   qv_zero() qv_set1(f) qv_load(p) qv_store(p, v) qv_add(a, b)
 *   qv_add_f64(double *a, v)  a[0 .. QV_LANES) += the lanes of v, in f64
 *   qv_fma(a, b, c)        a * b + c (one rounding where the ISA has FMA)
 *   QV_REG(v)      keeps v in a register (an empty asm), or nothing
 *   qg_consts, qg_consts_init(qg_consts *)   the decoders' constants
 *   NF4_CW, NF4_CV, nf4_decode(codes, consts, w)  NF4_CW weights (NF4_CW/2
 *                  code bytes) -> NF4_CV vectors, in the level's x order
 *   Q2_CW, Q2_CV, q2_decode(codes, consts, w)     likewise, Q2_CW/4 bytes
 *   q2_scale(p)    the fp16 block scale at p as a float
 *   QG_RB          weight rows per pass of the m = 1 path
 *   QG_RBB         weight rows per pass of the batched path
 *   QG_NCH         partial sums per output element and block
 *   QG_BR, QG_BT   register tile of the batched path: weight rows x
 *                  activation rows (QG_RB a multiple of QG_BR)
 *
 * and defines one static qg_cpu_rows_fn per layout it knows (QG_TMPL_NO_NF4:
 * all but NF4's; QG_TMPL_NO_Q2: all but Q2_0's), QG_TMPL_KERNEL(rows_...) for one entry of the level's
 * kernels[] and QG_TMPL_KERNELS, the whole initializer indexed by layout id.
 *
 * The arithmetic of one output element y[t, i], fixed whatever m, the path,
 * the tile or the thread's row range (cpu.h), so batched rows and any
 * thread count give bit-identical results:
 *   a64 = 0 (QV_LANES doubles)
 *   for each chunk of QG_KC / g blocks of row i, in order:
 *     acc = 0 (vector)
 *     for each block b of the chunk, in order:
 *       s[0..NCH-1] = 0; decoded vector number v of the block (in order)
 *       goes to s[v % NCH] = fma(w_v, x_v, s[v % NCH]);
 *       acc = fma(s[0] + s[1] + ..., broadcast(scale_b), acc)
 *     a64 += acc (lane by lane, in f64)
 *   y = (float)(a64[0] + a64[1] + ... in order)
 * The scale is applied once per block. Each product passes through the
 * f32 roundings of one block and one chunk only, however long the row: the
 * f64 sum over chunks keeps the error bound of DESIGN.md section 5 for k
 * up to 2^19 (f32 accumulation over all blocks would pass it from k of
 * about 10^4). Two paths compute exactly that:
 * - m = 1 (decode): QG_RB weight rows at a time, weights decoded into
 *   registers and used at once; every x vector loaded serves QG_RB FMAs.
 * - m > 1 (batched): per block, the QG_RB rows' weights are decoded once
 *   into a small buffer (L1) and then applied to up to QG_MT activation
 *   rows from there, in register tiles of QG_BR x QG_BT outputs, so each
 *   weight is decoded once per QG_MT rows however many rows there are.
 */
#ifndef QG_KERNEL_TMPL_H
#define QG_KERNEL_TMPL_H
#else
#error "kernel_tmpl.h is instantiated once per level file"
#endif

#define QG_AI static inline __attribute__((always_inline)) QG_TARGET

/* Analysis builds (-DQG_MCA, gcc -S): llvm-mca regions around the loop bodies. */
#ifdef QG_MCA
#define QG_MCA_BEGIN(name) __asm__ volatile("# LLVM-MCA-BEGIN " name)
#define QG_MCA_END() __asm__ volatile("# LLVM-MCA-END")
#else
#define QG_MCA_BEGIN(name) ((void)0)
#define QG_MCA_END() ((void)0)
#endif

/* Batched path: activation rows per pass (the weights are decoded once
 * per pass) and weights per decoded chunk of a row (a multiple of 128; 8
 * rows of it are 16 KB of f32, within L1). */
#define QG_MT 16
#ifndef QG_KC /* overridable with -D for tuning runs */
#define QG_KC 512
#endif

/* Geometry of a layout (fmt: a qg_layout_id), as compile-time constants
 * after inlining. */
#define QG_GEOMETRY(fmt)                                                                     \
  const qgemv_weight_desc *d = &job->w->desc;                                                \
  const int g = (fmt) == QG_LAYOUT_Q2_G128 ? 128 : 64;                                       \
  const int cw = (fmt) == QG_LAYOUT_NF4 ? NF4_CW : Q2_CW; /* weights per decode */           \
  const int cv = (fmt) == QG_LAYOUT_NF4 ? NF4_CV : Q2_CV; /* vectors per decode */           \
  const size_t block_bytes = (fmt) == QG_LAYOUT_NF4 ? 32u : 2u + (size_t)g / 4u;             \
  const size_t code_off = (fmt) == QG_LAYOUT_NF4 ? 0u : 2u; /* codes after the fp16 scale */\
  const size_t chunk_bytes = (size_t)((fmt) == QG_LAYOUT_NF4 ? cw / 2 : cw / 4);             \
  const int64_t k = d->k, nb = k / g;                                                        \
  const uint8_t *row[QG_RB > QG_RBB ? QG_RB : QG_RBB];                                      \
  for (int rr = 0; rr < rb; rr++)                                                            \
    row[rr] = (const uint8_t *)d->data + (size_t)(i + rr) * (size_t)nb * block_bytes;        \
  (void)cv, (void)cw, (void)code_off, (void)chunk_bytes

QG_AI float qg_block_scale(const qgemv_weight_desc *d, int64_t i, int64_t b, const uint8_t *block, const int fmt) {
  const int64_t nb = d->k / QGEMV_NF4_BLOCK;
  return fmt == QG_LAYOUT_NF4 ? d->scales[(size_t)i * (size_t)nb + (size_t)b] : q2_scale(block);
}

/* m = 1: y[0, i .. i+rb). */
QG_AI void qg_tile_decode(const qg_cpu_job *job, const qg_consts *cs, int64_t i, const int rb, const int fmt) {
  QG_GEOMETRY(fmt);
  const float *x = job->xn;
  const int bpc = QG_KC / g; /* blocks per chunk */
  qv acc[QG_RB];
  double a64[QG_RB][QV_LANES] = {{0}};
  _Pragma("GCC unroll 8") for (int rr = 0; rr < rb; rr++) acc[rr] = qv_zero();

  for (int64_t b = 0; b < nb; b++) {
    QG_MCA_BEGIN("decode");
    qv s[QG_RB][QG_NCH];
    _Pragma("GCC unroll 8") for (int rr = 0; rr < rb; rr++)
    _Pragma("GCC unroll 4") for (int h = 0; h < QG_NCH; h++) s[rr][h] = qv_zero();
    const float *xb = x + (size_t)b * (size_t)g;
    _Pragma("GCC unroll 16") for (int c = 0; c < g / cw; c++) {
      _Pragma("GCC unroll 8") for (int rr = 0; rr < rb; rr++) {
        const uint8_t *codes = row[rr] + (size_t)b * block_bytes + code_off + (size_t)c * chunk_bytes;
        qv w[NF4_CV > Q2_CV ? NF4_CV : Q2_CV];
        if (fmt == QG_LAYOUT_NF4)
          nf4_decode(codes, cs, w);
        else
          q2_decode(codes, cs, w);
        _Pragma("GCC unroll 32") for (int v = 0; v < cv; v++) {
          const int h = (c * cv + v) % QG_NCH;
          s[rr][h] = qv_fma(w[v], qv_load(xb + (size_t)(c * cw + v * QV_LANES)), s[rr][h]);
        }
      }
    }
    _Pragma("GCC unroll 8") for (int rr = 0; rr < rb; rr++) {
      qv sum = s[rr][0];
      _Pragma("GCC unroll 4") for (int h = 1; h < QG_NCH; h++) sum = qv_add(sum, s[rr][h]);
      float sc = qg_block_scale(d, i + rr, b, row[rr] + (size_t)b * block_bytes, fmt);
      acc[rr] = qv_fma(sum, qv_set1(sc), acc[rr]);
    }
    if ((b + 1) % bpc == 0 || b + 1 == nb)
      _Pragma("GCC unroll 8") for (int rr = 0; rr < rb; rr++) {
        qv_add_f64(a64[rr], acc[rr]);
        acc[rr] = qv_zero();
      }
    QG_MCA_END();
  }
  for (int rr = 0; rr < rb; rr++) qg_cpu_store(job, 0, i + rr, qg_sum_f64(a64[rr], QV_LANES));
}

/* m > 1, one chunk of nbk blocks: the decoded weights of br rows (w: rows
 * of QG_KC floats) against bt activation rows of x (row stride k). The
 * chunk's f32 accumulators stay in registers and are added to the f64 ones
 * (QV_LANES doubles each, acc[row][t + tt]) at the end. Plain buffers
 * rather than arrays of vectors, which the compiler would copy around. */
QG_AI void qg_chunk_fma(const float (*w)[QG_KC], const float (*scale)[QG_KC / 64], const float *xb, int64_t k,
                        const int g, int nbk, double (*acc)[QG_MT][QV_LANES], int64_t t, const int br,
                        const int bt) {
  const int nv = g / QV_LANES;
  qv a[QG_BR][QG_BT];
  _Pragma("GCC unroll 8") for (int rr = 0; rr < br; rr++)
  _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) a[rr][tt] = qv_zero();
  /* One pointer per x row, stepped a block at a time: indexing rows off
   * one base makes the compiler keep per-row offsets in memory. */
  const float *xr[QG_BT];
  _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) xr[tt] = xb + (size_t)tt * (size_t)k;
  const float *wr = w[0];
  for (int bb = 0; bb < nbk; bb++, wr += g) {
    QG_MCA_BEGIN("batch");
    qv s[QG_BR][QG_BT][QG_NCH];
    _Pragma("GCC unroll 8") for (int rr = 0; rr < br; rr++)
    _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++)
    _Pragma("GCC unroll 4") for (int h = 0; h < QG_NCH; h++) s[rr][tt][h] = qv_zero();
    _Pragma("GCC unroll 32") for (int v = 0; v < nv; v++) {
      const int h = v % QG_NCH;
      /* Each weight vector is loaded once into a register; so is each x
       * vector when br rows share it (QV_REG stops the compiler from
       * folding that load into all br FMAs). Used once, x folds. */
      qv xv[QG_BT];
      _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) {
        xv[tt] = qv_load(xr[tt] + v * QV_LANES);
        if (br > 1) QV_REG(xv[tt]);
      }
      _Pragma("GCC unroll 8") for (int rr = 0; rr < br; rr++) {
        qv wv = qv_load(wr + rr * QG_KC + v * QV_LANES);
        QV_REG(wv);
        _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) s[rr][tt][h] = qv_fma(wv, xv[tt], s[rr][tt][h]);
      }
    }
    _Pragma("GCC unroll 8") for (int rr = 0; rr < br; rr++) {
      const qv sc = qv_set1(scale[rr][bb]);
      _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) {
        qv sum = s[rr][tt][0];
        _Pragma("GCC unroll 4") for (int h = 1; h < QG_NCH; h++) sum = qv_add(sum, s[rr][tt][h]);
        a[rr][tt] = qv_fma(sum, sc, a[rr][tt]);
      }
    }
    _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) xr[tt] += g;
    QG_MCA_END();
  }
  _Pragma("GCC unroll 8") for (int rr = 0; rr < br; rr++)
  _Pragma("GCC unroll 8") for (int tt = 0; tt < bt; tt++) qv_add_f64(acc[rr][t + tt], a[rr][tt]);
}

/* m > 1: y[t0 .. t0+mt, i .. i+rb), mt <= QG_MT. The rows' weights are
 * decoded a chunk of QG_KC at a time into an L1-resident buffer, then
 * applied to all mt activation rows from there. */
QG_AI void qg_tile_batch(const qg_cpu_job *job, const qg_consts *cs, int64_t i, int64_t t0, int64_t mt,
                         const int rb, const int fmt) {
  QG_GEOMETRY(fmt);
  const int bpc = QG_KC / g; /* blocks per chunk */
  const float *x = job->xn + (size_t)t0 * (size_t)k;
  _Alignas(64) double acc[QG_RBB][QG_MT][QV_LANES];
  _Alignas(64) float w[QG_RBB][QG_KC];
  float scale[QG_RBB][QG_KC / 64];
  for (int rr = 0; rr < rb; rr++)
    for (int64_t t = 0; t < mt; t++)
      for (int l = 0; l < QV_LANES; l++) acc[rr][t][l] = 0.0;

  for (int64_t b0 = 0; b0 < nb; b0 += bpc) {
    const int nbk = nb - b0 < bpc ? (int)(nb - b0) : bpc;
    _Pragma("GCC unroll 8") for (int rr = 0; rr < rb; rr++)
      for (int bb = 0; bb < nbk; bb++) {
        const uint8_t *block = row[rr] + (size_t)(b0 + bb) * block_bytes;
        _Pragma("GCC unroll 16") for (int c = 0; c < g / cw; c++) {
          qv wc[NF4_CV > Q2_CV ? NF4_CV : Q2_CV];
          if (fmt == QG_LAYOUT_NF4)
            nf4_decode(block + (size_t)c * chunk_bytes, cs, wc);
          else
            q2_decode(block + code_off + (size_t)c * chunk_bytes, cs, wc);
          _Pragma("GCC unroll 32") for (int v = 0; v < cv; v++)
            qv_store(w[rr] + bb * g + (c * cv + v) * QV_LANES, wc[v]);
        }
        scale[rr][bb] = qg_block_scale(d, i + rr, b0 + bb, block, fmt);
      }
    /* Weight rows outside, activation rows inside: the x vectors of a tile
     * are loaded in the loop that uses them, which the compiler cannot
     * hoist or merge across register tiles into a spilling mass. */
    const float *xb = x + (size_t)b0 * (size_t)g;
    const int br = rb < QG_BR ? rb : QG_BR;
    _Pragma("GCC unroll 8") for (int r0 = 0; r0 < rb; r0 += QG_BR) {
      int64_t t = 0;
      for (; t + QG_BT <= mt; t += QG_BT)
        qg_chunk_fma(w + r0, scale + r0, xb + (size_t)t * (size_t)k, k, g, nbk, acc + r0, t, br, QG_BT);
      if (QG_BT > 2)
        for (; t + 2 <= mt; t += 2)
          qg_chunk_fma(w + r0, scale + r0, xb + (size_t)t * (size_t)k, k, g, nbk, acc + r0, t, br, 2);
      for (; t < mt; t++) qg_chunk_fma(w + r0, scale + r0, xb + (size_t)t * (size_t)k, k, g, nbk, acc + r0, t, br, 1);
    }
  }
  for (int rr = 0; rr < rb; rr++)
    for (int64_t t = 0; t < mt; t++) qg_cpu_store(job, t0 + t, i + rr, qg_sum_f64(acc[rr][t], QV_LANES));
}

/* The rows [row0, row1) for every activation row: passes of QG_RB (m = 1)
 * or QG_RBB (batched) weight rows, then single rows at the end. */
QG_AI void qg_rows(const qg_cpu_job *job, int64_t row0, int64_t row1, const int fmt) {
  qg_consts cs;
  qg_consts_init(&cs);
  int64_t i = row0, m = job->m;
  if (m == 1) {
    for (; i + QG_RB <= row1; i += QG_RB) qg_tile_decode(job, &cs, i, QG_RB, fmt);
    for (; i < row1; i++) qg_tile_decode(job, &cs, i, 1, fmt);
    return;
  }
  for (; i + QG_RBB <= row1; i += QG_RBB)
    for (int64_t t = 0; t < m; t += QG_MT) qg_tile_batch(job, &cs, i, t, m - t < QG_MT ? m - t : QG_MT, QG_RBB, fmt);
  for (; i < row1; i++)
    for (int64_t t = 0; t < m; t += QG_MT) qg_tile_batch(job, &cs, i, t, m - t < QG_MT ? m - t : QG_MT, 1, fmt);
}

#ifndef QG_TMPL_NO_NF4 /* defined by a level with its own NF4 kernel */
static QG_TARGET void rows_nf4(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  qg_rows(job, row0, row1, QG_LAYOUT_NF4);
}
#endif

#ifndef QG_TMPL_NO_Q2 /* defined by a level with its own Q2_0 kernels */
static QG_TARGET void rows_q2_g64(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  qg_rows(job, row0, row1, QG_LAYOUT_Q2_G64);
}

static QG_TARGET void rows_q2_g128(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  qg_rows(job, row0, row1, QG_LAYOUT_Q2_G128);
}
#endif

/* The level's kernels[] entries (the packed format as uploaded, f32 x). */
#define QG_TMPL_KERNEL(fn) {.rows = (fn)}
#define QG_TMPL_KERNELS                                                                                 \
  {                                                                                                     \
    [QG_LAYOUT_NF4] = QG_TMPL_KERNEL(rows_nf4), [QG_LAYOUT_Q2_G64] = QG_TMPL_KERNEL(rows_q2_g64),        \
    [QG_LAYOUT_Q2_G128] = QG_TMPL_KERNEL(rows_q2_g128)                                                  \
  }
