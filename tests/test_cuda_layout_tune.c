/* QGEMV_CUDA_PLAN's parser for test_cuda_layout's --plan mode. Compiled
 * again here because automake names an object after its source: the
 * module's libtool object and a plain one of the same file would clash. */
#include "../src/backend-cuda/plan_tune.c"
