/* y of NF4 matvecs, m = 1 .. 17 (77 rows, k = 4288: odd rows, k not a
 * multiple of 512), written raw to stdout: two builds' outputs compared
 * with md5sum show a kernel change kept every bit (bench/NOTES-cpu.md v27).
 *   make -C bench/cpu-lab nf4-bits BUILD=<build dir> && bench/cpu-lab/nf4-bits | md5sum */
#include <qgemv.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  qgemv_ctx *c;
  if (qgemv_open("cpu", &c)) return 1;
  const int64_t n = 77, k = 4096 + 64 * 3;
  uint8_t *d = malloc((size_t)(n * k / 2));
  float *s = malloc((size_t)(n * (k / 64)) * 4);
  srand(7);
  for (int64_t i = 0; i < n * k / 2; i++) d[i] = (uint8_t)rand();
  for (int64_t i = 0; i < n * (k / 64); i++) s[i] = (float)(rand() % 2000 - 1000) / 97.0f;
  qgemv_weight_desc wd = {QGEMV_NF4, n, k, 64, d, s};
  qgemv_weight *w;
  if (qgemv_weight_upload(c, &wd, &w)) return 2;
  for (int64_t m = 1; m <= 17; m++) {
    float *x = malloc((size_t)(m * k) * 4), *y = malloc((size_t)(m * n) * 4);
    for (int64_t i = 0; i < m * k; i++) /* one x in 50 a thousand times larger */
      x[i] = (float)(rand() % 20001 - 10000) / 1234.5f * ((rand() % 50) ? 1.0f : 1000.0f);
    qgemv_tensor *tx, *ty;
    if (qgemv_tensor_new(c, QGEMV_F32, m, k, &tx) || qgemv_tensor_new(c, QGEMV_F32, m, n, &ty)) return 3;
    if (qgemv_tensor_write(tx, x, (size_t)(m * k) * 4) || qgemv_matvec(c, w, tx, ty, NULL) || qgemv_sync(c) ||
        qgemv_tensor_read(ty, y, (size_t)(m * n) * 4))
      return 4;
    fwrite(y, 4, (size_t)(m * n), stdout);
    qgemv_tensor_free(tx), qgemv_tensor_free(ty);
    free(x), free(y);
  }
  return 0;
}
