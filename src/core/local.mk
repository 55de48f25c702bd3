# libqgemv: the public API and the core (this folder); the built-in CPU
# backend adds its files (src/backend-cpu/local.mk).
include_HEADERS = include/qgemv.h
lib_LTLIBRARIES += libqgemv.la
libqgemv_la_SOURCES = \
	src/core/backend.h \
	src/core/catalog.c \
	src/core/context.c \
	src/core/convert.c src/core/convert.h \
	src/core/error.c src/core/error.h \
	src/core/format_nf4.c \
	src/core/format_q2.c \
	src/core/formats.c src/core/formats.h \
	src/core/layouts.c src/core/layouts.h \
	src/core/loader.c src/core/module_load.h \
	src/core/registry.c src/core/registry.h \
	src/core/matvec.c \
	src/core/objects.h \
	src/core/reference.c src/core/reference.h \
	src/core/spec.c src/core/spec.h \
	src/core/tensor.c \
	src/core/version.c \
	src/core/weight.c
libqgemv_la_CPPFLAGS = $(AM_CPPFLAGS) -DQG_PKGLIBDIR='"$(pkglibdir)"'
libqgemv_la_CFLAGS = $(AM_CFLAGS) $(OPENMP_CFLAGS) $(HWLOC_CFLAGS) -fvisibility=hidden
libqgemv_la_LIBADD = src/topology/libqgtopology.la $(HWLOC_LIBS)
libqgemv_la_LDFLAGS = $(OPENMP_CFLAGS) -pthread -version-info $(QGEMV_LT_VERSION) \
	-export-symbols-regex '^qgemv_' -no-undefined
