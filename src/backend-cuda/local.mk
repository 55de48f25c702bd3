# The CUDA backend module, qgemv-cuda.so (built when configure finds nvcc).
if HAVE_CUDA
endif
