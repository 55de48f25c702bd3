# QGEMV_CHECK_CUDA: --with-cuda[=DIR] (default: use nvcc if found),
# --without-cuda, --with-cuda-arch=LIST. Sets NVCC, CUDA_ARCH_LIST,
# NVCC_GENCODE, CUDA_CPPFLAGS, CUDA_LIBDIR and the HAVE_CUDA conditional,
# and adds cuda to QG_MODULES when the module is built.
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
      # nvcc may be a wrapper script or a symlink outside the toolkit
      # (/usr/local/bin/nvcc): ask nvcc where it really lives.
      AC_MSG_CHECKING([for the CUDA toolkit directory])
      cuda_bin=`"$NVCC" --dryrun -c -x cu /dev/null -o conftest.o 2>&1 | sed -n 's/^#\$ _HERE_=//p' | head -n 1`
      AS_IF([test -z "$cuda_bin"], [cuda_bin=`dirname "$NVCC"`])
      CUDA_HOME=`dirname "$cuda_bin"`
      AC_MSG_RESULT([$CUDA_HOME])
      AC_MSG_CHECKING([for libcudart_static.a])
      CUDA_LIBDIR=""
      for d in "$CUDA_HOME/lib64" "$CUDA_HOME/lib" "$CUDA_HOME/targets/x86_64-linux/lib" "$CUDA_HOME/targets/sbsa-linux/lib"; do
        AS_IF([test -z "$CUDA_LIBDIR" && test -f "$d/libcudart_static.a"], [CUDA_LIBDIR="$d"])
      done
      AS_IF([test -n "$CUDA_LIBDIR" && test -f "$CUDA_HOME/include/cuda_runtime.h"], [
        AC_MSG_RESULT([$CUDA_LIBDIR])
        have_cuda=yes
      ], [
        AC_MSG_RESULT([no])
        AS_IF([test "x$with_cuda" != xcheck],
          [AC_MSG_ERROR([the CUDA toolkit in $CUDA_HOME lacks include/cuda_runtime.h or lib64/libcudart_static.a; pass --with-cuda=DIR])],
          [AC_MSG_WARN([nvcc found but the toolkit in $CUDA_HOME is incomplete; building without the CUDA module])])
      ])
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
    QG_MODULES="$QG_MODULES cuda"
  ])
  AC_SUBST([NVCC])
  AC_SUBST([CUDA_ARCH_LIST])
  AC_SUBST([NVCC_GENCODE])
  AC_SUBST([CUDA_CPPFLAGS])
  AC_SUBST([CUDA_LIBDIR])
  AC_SUBST([CUDA_HOME])
  AM_CONDITIONAL([HAVE_CUDA], [test "x$have_cuda" = xyes])
])
