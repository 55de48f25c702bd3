# The CUDA backend module, qgemv-cuda.so (built when configure finds nvcc).
#
# automake knows no CUDA: .cu files compile through libtool with nvcc as the
# compiler, via build-aux/nvcc-libtool (which hands libtool's gcc flags to
# the host compiler). cudart is linked statically, so a node needs only the
# driver; libqgemv itself never links CUDA. The topology helper
# (src/topology) is linked in, as into libqgemv.

qgc_headers = \
	src/backend-cuda/cuda_api.h \
	src/backend-cuda/cuda_state.h \
	src/backend-cuda/layout.h \
	src/backend-cuda/lut_layout.h \
	src/backend-cuda/lut_matvec.h \
	src/backend-cuda/lut_kernels.cuh \
	src/backend-cuda/share_layout.h \
	src/backend-cuda/share_matvec.h \
	src/backend-cuda/share_kernels.cuh \
	src/backend-cuda/matvec_launch.h \
	src/backend-cuda/matvec_plan.h \
	src/backend-cuda/plan_tune.h \
	src/backend-cuda/kernels_ptx.cuh \
	src/backend-cuda/kernels_decode.cuh \
	src/backend-cuda/kernels_stage.cuh \
	src/backend-cuda/kernels_matvec.cuh \
	src/backend-cuda/kernels_tail.cuh \
	src/backend-cuda/kernels_launch.cuh
qgc_sources = \
	src/backend-cuda/module.c \
	src/backend-cuda/repack.c \
	src/backend-cuda/lut_repack.c \
	src/backend-cuda/share_repack.c \
	src/backend-cuda/plan_tune.c \
	src/backend-cuda/cuda_core.cu \
	src/backend-cuda/device_select.cu \
	src/backend-cuda/weight_upload.cu \
	src/backend-cuda/matvec.cu \
	src/backend-cuda/matvec_nf4.cu \
	src/backend-cuda/matvec_q2g64.cu \
	src/backend-cuda/matvec_q2g128.cu \
	src/backend-cuda/lut_matvec.cu \
	src/backend-cuda/share_matvec.cu \
	src/backend-cuda/bandwidth.cu \
	src/backend-cuda/cublas_baseline.cu

# Named whether or not CUDA is configured: test_cuda_fatbin.sh reads it.
module_build_dirs += $(abs_top_builddir)/src/backend-cuda/.libs

EXTRA_DIST += $(qgc_headers) build-aux/nvcc-libtool
# The GPU run script and the kernel design notes travel in the tarball.
EXTRA_DIST += bench/gpu-run.sh bench/gpu-pack-run.sh bench/plan-sweep.sh bench/gpu-ab.sh bench/ncu-insn.py bench/lab/timeline.py bench/NOTES.md

if HAVE_CUDA
pkglib_LTLIBRARIES += src/backend-cuda/qgemv-cuda.la
src_backend_cuda_qgemv_cuda_la_SOURCES = $(qgc_sources)
src_backend_cuda_qgemv_cuda_la_LDFLAGS = -module -avoid-version -shared -no-undefined \
	-export-symbols-regex '^qgemv_module_entry$$'
src_backend_cuda_qgemv_cuda_la_LIBADD = src/topology/libqgtopology.la \
	$(CUDA_LIBDIR)/libcudart_static.a $(HWLOC_LIBS) \
	-ldl -lrt -lpthread -lstdc++

# Host compiler warnings follow --enable-werror; nvcc's own warnings too.
# Long option spellings: libtool would take -Xcompiler as its own option.
# 128 registers: the kernels' launch bounds (512 threads, one CTA per SM)
# allow that many, but without the cap ptxas aims lower and spills.
QGC_WERROR = $(if $(findstring -Werror,$(WARN_CFLAGS)),--Werror=all-warnings --compiler-options=-Werror,)
QGC_NVCCFLAGS = $(NVCC_GENCODE) -O3 -std=c++17 -lineinfo --maxrregcount=128 \
	--compiler-options=-fvisibility=hidden,-Wall,-Wextra $(QGC_WERROR) \
	-DQG_CUDA_ARCHS='"$(CUDA_ARCH_LIST)"' \
	-I$(top_srcdir)/include -I$(top_builddir) $(CUDA_CPPFLAGS) $(HWLOC_CFLAGS) \
	$(NVCCFLAGS)

# Header dependencies of the .cu objects, tracked as automake tracks C:
# nvcc writes DIR/$(DEPDIR)/NAME.Plo while it compiles DIR/NAME.cu (.Po for
# a program's object), and the Makefile includes it. Before the first
# compile there is no file, and none is needed: the object is missing too,
# so it is built anyway (GNU make's -include, where automake's portable
# include needs a placeholder). The list is written to .Tpo and renamed, so
# an interrupted compile leaves no half file.
qgc_cu_depfiles = $(foreach s,$(filter %.cu,$(qgc_sources)),$(dir $(s))$(DEPDIR)/$(basename $(notdir $(s))).Plo)
DISTCLEANFILES = $(qgc_cu_depfiles)
if AMDEP
-include $(qgc_cu_depfiles)
endif
endif

if AMDEP
QGC_DEPFLAGS = -MT $@ -MD -MP -MF $(@D)/$(DEPDIR)/$(*F).Tpo
qgc_depsave = && $(am__mv) $(@D)/$(DEPDIR)/$(*F).Tpo $(@D)/$(DEPDIR)/$(*F).$(1)
endif
SUFFIXES = .cu
.cu.lo:
	$(AM_V_GEN)$(MKDIR_P) $(@D)/$(DEPDIR) && \
	$(LIBTOOL) $(AM_V_lt) --tag=CC $(AM_LIBTOOLFLAGS) $(LIBTOOLFLAGS) --mode=compile \
	  $(SHELL) $(top_srcdir)/build-aux/nvcc-libtool $(NVCC) $(QGC_NVCCFLAGS) $(QGC_DEPFLAGS) -c -o $@ $< \
	  $(call qgc_depsave,Plo)
# Host programs with CUDA sources (the CPU-side layout test); the wrapper
# also passes gcc-only flags (-pthread from pkg-config) to the host compiler.
.cu.o:
	$(AM_V_GEN)$(MKDIR_P) $(@D)/$(DEPDIR) && \
	  $(SHELL) $(top_srcdir)/build-aux/nvcc-libtool $(NVCC) $(QGC_NVCCFLAGS) $(QGC_NVCC_EXTRA) $(QGC_DEPFLAGS) \
	    -c -o $@ $< $(call qgc_depsave,Po)
