/* The matvec kernels instantiated for one layout (QG_LAYOUT_NF4). */
#include "kernels_launch.cuh"

QGC_INSTANTIATE(QG_LAYOUT_NF4);
