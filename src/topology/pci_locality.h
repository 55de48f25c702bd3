/*
 * Where a PCI device (a GPU) sits: the CPUs and NUMA nodes near it, from
 * the kernel's /sys/bus/pci/devices/<id>/local_cpus through hwloc, on the
 * whole machine's topology. For device modules: each gives the PCI bus id
 * of its devices as its runtime spells it; the rest is the same for every
 * vendor.
 */
#ifndef QG_PCI_LOCALITY_H
#define QG_PCI_LOCALITY_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the PCI bus id of `device` as "domain:bus:device.function" in hex
 * (any domain width: "00000000:3b:00.0"); false when unknown. */
typedef bool (*qg_pci_id_fn)(int device, char *buf, size_t size);

/* Of devices 0 .. count-1, the one whose local CPUs share the most with the
 * calling thread's binding (ties, as for an unbound thread: the lowest
 * index); 0 when the topology or the devices' CPUs are unknown. */
int qg_pci_nearest(int count, qg_pci_id_fn id);

/* "PCI 0000:3b:00.0, CPUs 0-15, NUMA 0" for `device`, as far as known. */
void qg_pci_locality(int device, qg_pci_id_fn id, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
