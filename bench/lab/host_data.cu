/* Host side of the lab (host_data.h). */
#include "host_data.h"

#include <cuda_fp16.h>
#include <math.h>
#include <string.h>

#include <atomic>
#include <thread>

#include "decode.cuh"

namespace lab {

namespace {

uint64_t splitmix(uint64_t &s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
double uniform(uint64_t &s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }
double normal(uint64_t &s) {
  const double u1 = uniform(s) + 1e-300, u2 = uniform(s);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}
uint16_t half_bits(float f) { return __half_as_ushort(__float2half_rn(f)); }
double half_value(uint16_t h) { return (double)__half2float(__ushort_as_half(h)); }

size_t q2_block_bytes(int g) { return 2 + (size_t)g / 4; }

}  // namespace

float bf16_round(float f) {
  uint32_t w;
  memcpy(&w, &f, 4);
  if ((w & 0x7f800000u) != 0x7f800000u) w += 0x7fffu + ((w >> 16) & 1u);
  w &= 0xffff0000u;
  float r;
  memcpy(&r, &w, 4);
  return r;
}
uint16_t f32_to_bf16_bits(float f) {
  const float r = bf16_round(f);
  uint32_t w;
  memcpy(&w, &r, 4);
  return (uint16_t)(w >> 16);
}

void parallel_for(int64_t n, const std::function<void(int64_t)> &f) {
  unsigned nt = std::thread::hardware_concurrency();
  if (nt == 0) nt = 1;
  if (nt > 32) nt = 32;
  std::atomic<int64_t> next(0);
  std::vector<std::thread> th;
  for (unsigned i = 0; i < nt; ++i)
    th.emplace_back([&] {
      for (int64_t j; (j = next.fetch_add(1)) < n;) f(j);
    });
  for (auto &t : th) t.join();
}

int Weight::code(int64_t r, int64_t kk) const {
  if (fmt == kNF4) {
    const uint8_t b = data[(size_t)(r * (k / 2) + kk / 2)];
    return (kk & 1) ? b >> 4 : b & 15;
  }
  const uint8_t *blk = &data[(size_t)(r * (k / group) + kk / group) * q2_block_bytes(group)];
  const int64_t j = kk % group;
  return (blk[2 + j / 4] >> (2 * (j % 4))) & 3;
}
double Weight::scale(int64_t r, int64_t kk) const {
  if (fmt == kNF4) return (double)scales[(size_t)(r * (k / 64) + kk / 64)];
  const uint8_t *blk = &data[(size_t)(r * (k / group) + kk / group) * q2_block_bytes(group)];
  return half_value((uint16_t)(blk[0] | (blk[1] << 8)));
}
double Weight::value(int64_t r, int64_t kk) const {
  if (fmt == kNF4) return (double)nf4_value(code(r, kk)) * scale(r, kk);
  return (double)(code(r, kk) - 1) * scale(r, kk);
}
size_t Weight::packed_bytes() const { return data.size() + scales.size() * sizeof(float); }

Weight make_weight(int fmt, int64_t n, int64_t k, uint64_t seed) {
  Weight w;
  w.fmt = fmt;
  w.n = n;
  w.k = k;
  w.group = fmt == kQ2G128 ? 128 : 64;
  const size_t row_bytes = fmt == kNF4 ? (size_t)k / 2 : (size_t)(k / w.group) * q2_block_bytes(w.group);
  w.data.resize(row_bytes * (size_t)n);
  if (fmt == kNF4) w.scales.resize((size_t)n * (size_t)(k / 64));
  parallel_for((n + 255) / 256, [&](int64_t chunk) {
    for (int64_t r = chunk * 256; r < n && r < chunk * 256 + 256; ++r) {
      uint64_t s = seed * 0x100000001b3ull + (uint64_t)r * 0x9e3779b97f4a7c15ull + 1;
      uint8_t *row = &w.data[(size_t)r * row_bytes];
      for (size_t i = 0; i < row_bytes; i += 8) {
        const uint64_t v = splitmix(s);
        memcpy(row + i, &v, row_bytes - i < 8 ? row_bytes - i : 8);
      }
      if (fmt == kNF4) {
        for (int64_t b = 0; b < k / 64; ++b)
          w.scales[(size_t)(r * (k / 64) + b)] = (r * 131 + b) % 97 == 0 ? 0.0f : (float)(0.01 + 0.02 * uniform(s));
      } else {
        for (int64_t b = 0; b < k / w.group; ++b) {
          const uint16_t d = half_bits((float)(0.01 + 0.02 * uniform(s)));
          row[(size_t)b * q2_block_bytes(w.group)] = (uint8_t)d;
          row[(size_t)b * q2_block_bytes(w.group) + 1] = (uint8_t)(d >> 8);
        }
      }
      if (r % 4 != 3) continue;
      for (int64_t b = 0; b < k / 64; ++b) { /* the zero code at the large activation */
        const int64_t kk = 64 * b + adv_pos(b);
        if (fmt == kNF4) {
          uint8_t &byte = row[kk / 2];
          byte = (kk & 1) ? (uint8_t)((byte & 0x0f) | (7 << 4)) : (uint8_t)((byte & 0xf0) | 7);
        } else {
          const int64_t j = kk % w.group;
          uint8_t &byte = row[(size_t)(kk / w.group) * q2_block_bytes(w.group) + 2 + j / 4];
          byte = (uint8_t)((byte & ~(3 << (2 * (j % 4)))) | (1 << (2 * (j % 4))));
        }
      }
    }
  });
  return w;
}

Weight make_weight_corr(int fmt, int64_t n, int64_t k, uint64_t seed) {
  Weight w = make_weight(fmt, n, k, seed);
  const size_t bb = q2_block_bytes(w.group);
  for (int64_t r = 0; r < n; ++r) {
    uint64_t s = seed * 31 + (uint64_t)r * 0x9e3779b97f4a7c15ull + 5;
    if (fmt == kNF4) {
      for (int64_t b = 0; b < k / 64; ++b) w.scales[(size_t)(r * (k / 64) + b)] = (float)(0.01 + 0.02 * uniform(s));
      if (r < n / 2) memset(&w.data[(size_t)(r * (k / 2))], (int)((r % 16) * 17), (size_t)(k / 2));
    } else if (r < n / 2) {
      const int c = (int)(r % 4);
      for (int64_t b = 0; b < k / w.group; ++b)
        memset(&w.data[(size_t)(r * (k / w.group) + b) * bb + 2], c * 0x55, (size_t)w.group / 4);
    }
  }
  return w;
}

uint32_t q2_lane_word(const Weight &w, int64_t row, int64_t blk, int t) {
  uint32_t word = 0;
  for (int s = 0; s < 4; ++s)
    for (int j = 0; j < 4; ++j) {
      const uint32_t c = (uint32_t)w.code(row, 64 * blk + 16 * t + 4 * s + j);
      const int i = 2 * s + j / 2;
      word |= c << ((j & 1) ? 16 + 2 * i : 2 * i);
    }
  return word;
}

std::vector<uint8_t> repack(const Weight &w) {
  const int CH = fmt_chunk_bytes(w.fmt), KC = fmt_kc(w.fmt), SRB = fmt_scale_row_bytes(w.fmt);
  const int64_t tiles = w.n / 16, nch = w.k / KC;
  std::vector<uint8_t> out((size_t)(tiles * nch) * CH);
  parallel_for(tiles, [&](int64_t tile) {
    for (int64_t c = 0; c < nch; ++c) {
      uint8_t *dst = &out[(size_t)(tile * nch + c) * CH];
      for (int j = 0; j < 4; ++j)
        for (int lane = 0; lane < 32; ++lane) {
          const int g = lane >> 2, t = lane & 3;
          uint8_t *d = dst + j * 512 + lane * 16;
          const int64_t rg = tile * 16 + g, rh = rg + 8;
          if (w.fmt == kNF4) {
            const int64_t off = (c * KC + 64 * j) / 2 + 8 * t;
            memcpy(d, &w.data[(size_t)(rg * (w.k / 2) + off)], 8);
            memcpy(d + 8, &w.data[(size_t)(rh * (w.k / 2) + off)], 8);
          } else {
            const int64_t b0 = c * 8 + 2 * j;
            const uint32_t v[4] = {q2_lane_word(w, rg, b0, t), q2_lane_word(w, rh, b0, t),
                                   q2_lane_word(w, rg, b0 + 1, t), q2_lane_word(w, rh, b0 + 1, t)};
            memcpy(d, v, 16);
          }
        }
      for (int r = 0; r < 16; ++r) {
        uint8_t *d = dst + kChunkCodeBytes + r * SRB;
        const int64_t row = tile * 16 + r;
        if (w.fmt == kNF4) {
          memcpy(d, &w.scales[(size_t)(row * (w.k / 64) + c * 4)], 16);
        } else {
          const int ng = SRB / 2; /* groups per chunk */
          for (int q = 0; q < ng; ++q) {
            const uint8_t *blk = &w.data[(size_t)(row * (w.k / w.group) + c * ng + q) * q2_block_bytes(w.group)];
            d[2 * q] = blk[0];
            d[2 * q + 1] = blk[1];
          }
        }
      }
    }
  });
  return out;
}

Acts make_acts(int64_t m, int64_t k, bool bf16, int pattern, uint64_t seed) {
  Acts a;
  a.m = m;
  a.k = k;
  a.bf16 = bf16;
  a.x.resize((size_t)(m * k));
  a.gamma.resize((size_t)k);
  uint64_t s = seed * 0x2545f4914f6cdd1dull + 7;
  const double big = pattern == kExtreme ? 4194304.0 : 4096.0; /* 2^22 or 2^12 */
  for (int64_t r = 0; r < m; ++r)
    for (int64_t kk = 0; kk < k; ++kk) {
      double v;
      if (pattern == kNormal) {
        v = normal(s);
      } else if (pattern == kPositive) {
        v = 0.5 + uniform(s);
      } else {
        const int64_t b = kk / 64, j = kk % 64, p = adv_pos(b);
        const double sign = (splitmix(s) & 1) ? -1.0 : 1.0, mag = 1.0 + uniform(s);
        if (j == p)
          v = sign * big * mag;
        else if ((j - p + 64) % 64 <= 3)
          v = 0.0;
        else
          v = sign * mag / big;
      }
      a.x[(size_t)(r * k + kk)] = bf16 ? bf16_round((float)v) : (float)v;
    }
  for (int64_t kk = 0; kk < k; ++kk) {
    const float gv = (float)(0.5 + uniform(s));
    a.gamma[(size_t)kk] = bf16 ? bf16_round(gv) : gv;
  }
  const size_t es = bf16 ? 2 : 4;
  a.xbits.resize(a.x.size() * es);
  a.gbits.resize(a.gamma.size() * es);
  for (size_t i = 0; i < a.x.size(); ++i) {
    if (bf16) {
      const uint16_t h = f32_to_bf16_bits(a.x[i]);
      memcpy(&a.xbits[i * 2], &h, 2);
    } else {
      memcpy(&a.xbits[i * 4], &a.x[i], 4);
    }
  }
  for (size_t i = 0; i < a.gamma.size(); ++i) {
    if (bf16) {
      const uint16_t h = f32_to_bf16_bits(a.gamma[i]);
      memcpy(&a.gbits[i * 2], &h, 2);
    } else {
      memcpy(&a.gbits[i * 4], &a.gamma[i], 4);
    }
  }
  return a;
}

std::vector<int64_t> sample_rows(int64_t n, int count) {
  std::vector<int64_t> rows;
  for (int i = 0; i < count; ++i) {
    int64_t r = (int64_t)i * n / count + (i % 4);
    rows.push_back(r < n ? r : n - 1);
  }
  rows.push_back(n - 1);
  return rows;
}

Ref reference(const Weight &w, const Acts &x, int64_t m, bool norm, float eps, const std::vector<int64_t> &rows) {
  Ref r;
  r.rows = rows;
  const int64_t nr = (int64_t)rows.size(), k = w.k;
  r.ref.assign((size_t)(m * nr), 0.0);
  r.R.assign((size_t)(m * nr), 0.0);
  std::vector<double> xn((size_t)(m * k));
  for (int64_t a = 0; a < m; ++a) {
    double inv = 1.0;
    if (norm) {
      double ss = 0.0;
      for (int64_t kk = 0; kk < k; ++kk) ss += (double)x.x[(size_t)(a * k + kk)] * x.x[(size_t)(a * k + kk)];
      inv = 1.0 / sqrt(ss / (double)k + (double)eps);
    }
    for (int64_t kk = 0; kk < k; ++kk)
      xn[(size_t)(a * k + kk)] = norm ? (double)x.x[(size_t)(a * k + kk)] * inv * (double)x.gamma[(size_t)kk]
                                      : (double)x.x[(size_t)(a * k + kk)];
  }
  parallel_for(nr, [&](int64_t i) {
    std::vector<double> wr((size_t)k);
    for (int64_t kk = 0; kk < k; ++kk) wr[(size_t)kk] = w.value(rows[(size_t)i], kk);
    for (int64_t a = 0; a < m; ++a) {
      double s = 0.0, q = 0.0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const double p = wr[(size_t)kk] * xn[(size_t)(a * k + kk)];
        s += p;
        q += p * p;
      }
      r.ref[(size_t)(a * nr + i)] = s;
      r.R[(size_t)(a * nr + i)] = sqrt(q);
    }
  });
  return r;
}

static float y_value(const void *y, int64_t idx, bool y_bf16) {
  if (!y_bf16) return static_cast<const float *>(y)[idx];
  const uint16_t h = static_cast<const uint16_t *>(y)[idx];
  const uint32_t w = (uint32_t)h << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

Check check(const Ref &r, const void *y, int64_t m, int64_t n, bool y_bf16) {
  Check c;
  const int64_t nr = (int64_t)r.rows.size();
  for (int64_t a = 0; a < m; ++a)
    for (int64_t i = 0; i < nr; ++i) {
      const double ref = r.ref[(size_t)(a * nr + i)], R = r.R[(size_t)(a * nr + i)];
      const double v = y_value(y, a * n + r.rows[(size_t)i], y_bf16);
      const double tol = 1e-3 * R + (y_bf16 ? ldexp(fabs(ref), -8) : 0.0);
      if (isnan(v) && !isnan(ref)) {
        c.nan++;
        c.fails++;
        c.worst = INFINITY;
        continue;
      }
      const double err = fabs(v - ref);
      const double ratio = err == 0.0 ? 0.0 : tol > 0.0 ? err / tol : INFINITY;
      if (ratio > c.worst) c.worst = ratio;
      if (err > tol) c.fails++;
    }
  c.unwritten = count_unwritten(y, m * n, y_bf16);
  c.pass = c.fails == 0 && c.unwritten == 0;
  return c;
}

int64_t count_unwritten(const void *y, int64_t elems, bool y_bf16) {
  int64_t u = 0;
  for (int64_t i = 0; i < elems; ++i) {
    if (y_bf16)
      u += static_cast<const uint16_t *>(y)[i] == 0xffffu;
    else
      u += static_cast<const uint32_t *>(y)[i] == 0xffffffffu;
  }
  return u;
}

uint64_t fnv1a(const void *p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  const uint8_t *b = static_cast<const uint8_t *>(p);
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

}  // namespace lab
