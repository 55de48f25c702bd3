# The hwloc topology helper (src/topology): a static library linked into
# libqgemv (the CPU backend) and into each device module, so that modules
# need nothing from the core to place themselves (DESIGN.md s.6).
noinst_LTLIBRARIES += src/topology/libqgtopology.la
src_topology_libqgtopology_la_SOURCES = \
	src/topology/topology.c src/topology/topology.h \
	src/topology/pci_locality.c src/topology/pci_locality.h
src_topology_libqgtopology_la_CFLAGS = $(AM_CFLAGS) $(HWLOC_CFLAGS) -fvisibility=hidden
