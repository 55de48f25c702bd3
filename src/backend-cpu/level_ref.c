/* The oracle as a CPU level: exact weights, double arithmetic, then the
 * result rounded once to f32 (and from there to bf16). */
#include "../core/reference.h"
#include "cpu.h"

static bool always(void) { return true; }

static void ref_rows(const qg_cpu_job *job, int64_t row0, int64_t row1) {
  const qgemv_weight_desc *d = &job->w->desc;
  for (int64_t i = row0; i < row1; i++)
    for (int64_t r = 0; r < job->m; r++)
      qg_cpu_store(job, r, i, (float)qg_ref_dot(d, job->w->id, i, job->xd + (size_t)r * (size_t)d->k, NULL));
}

/* The oracle takes every layout the core knows. */
const qg_cpu_level qg_cpu_level_ref = {
    .name = "ref", .wants_double = true, .available = always, .kernels = {[0 ... QG_LAYOUT_COUNT - 1] = {.rows = ref_rows}},
};
