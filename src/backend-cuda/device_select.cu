/* Which GPU is near the calling thread, and where a GPU sits. The runtime
 * gives each device's PCI bus id; the shared topology helper
 * (src/topology, linked into this module: backends never call back into
 * the core) finds the CPUs and NUMA nodes near it. */
#include "../topology/pci_locality.h"
#include "cuda_state.h"

static bool pci_id(int device, char *buf, size_t size) {
  if (cudaDeviceGetPCIBusId(buf, (int)size, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}

int qgc_nearest_device(int count) { return qg_pci_nearest(count, pci_id); }

void qgc_device_locality(int device, char *buf, size_t size) { qg_pci_locality(device, pci_id, buf, size); }
