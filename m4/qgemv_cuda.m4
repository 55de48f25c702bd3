# QGEMV_CHECK_CUDA: --with-cuda[=DIR] (default: use nvcc if found),
# --without-cuda, --with-cuda-arch=LIST. Sets NVCC, CUDA_ARCH_LIST,
# NVCC_GENCODE, CUDA_CPPFLAGS, CUDA_LIBDIR and the HAVE_CUDA conditional.
AC_DEFUN([QGEMV_CHECK_CUDA], [
  AC_ARG_WITH([cuda],
    [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@], [build the CUDA module with the toolkit in DIR (default: nvcc from PATH or /usr/local/cuda, if found)])],
    [], [with_cuda=check])
  AC_ARG_WITH([cuda-arch],
    [AS_HELP_STRING([--with-cuda-arch=LIST], [comma-separated sm_XY list (default: sm_80,sm_86,sm_89,sm_90,sm_100,sm_120,sm_121)])],
    [], [with_cuda_arch="sm_80,sm_86,sm_89,sm_90,sm_100,sm_120,sm_121"])
  have_cuda=no
  AS_IF([test "x$with_cuda" != xno], [
    cuda_path="$PATH"
    AS_IF([test "x$with_cuda" != xyes && test "x$with_cuda" != xcheck], [cuda_path="$with_cuda/bin"],
          [cuda_path="$PATH:/usr/local/cuda/bin"])
    AC_PATH_PROG([NVCC], [nvcc], [], [$cuda_path])
    AS_IF([test -n "$NVCC"], [
      CUDA_HOME=`dirname \`dirname "$NVCC"\``
      have_cuda=yes
    ], [
      AS_IF([test "x$with_cuda" != xcheck], [AC_MSG_ERROR([--with-cuda given but nvcc was not found in $cuda_path])])
    ])
  ])
  AS_IF([test "x$have_cuda" = xyes], [
    CUDA_ARCH_LIST="$with_cuda_arch"
    NVCC_GENCODE=""
    newest=0
    for a in `echo "$with_cuda_arch" | tr ',' ' '`; do
      n=`echo "$a" | sed -n 's/^sm_\(@<:@0-9@:>@@<:@0-9@:>@*@<:@a-z@:>@*\)$/\1/p'`
      AS_IF([test -z "$n"], [AC_MSG_ERROR([--with-cuda-arch: '$a' is not of the form sm_XY])])
      NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$n,code=sm_$n"
      num=`echo "$n" | tr -dc '0-9'`
      AS_IF([test "$num" -gt "$newest"], [newest=$num; newest_tag=$n])
    done
    # PTX of the newest architecture, for GPUs newer than the list
    NVCC_GENCODE="$NVCC_GENCODE -gencode=arch=compute_$newest_tag,code=compute_$newest_tag"
    CUDA_CPPFLAGS="-I$CUDA_HOME/include"
    CUDA_LIBDIR="$CUDA_HOME/lib64"
    AC_DEFINE([QG_HAVE_CUDA_MODULE], [1], [The CUDA module is built])
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_ARCH_LIST])
  AC_SUBST([NVCC_GENCODE])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LIBDIR])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])
