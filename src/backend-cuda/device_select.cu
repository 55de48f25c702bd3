/* Which GPU is near the calling thread, and where a GPU sits: the PCI bus
 * id from the runtime, the CPUs and NUMA nodes near it from hwloc (the
 * kernel's /sys/bus/pci/devices/<id>/local_cpus). The module loads its own
 * topology once: backends never call back into the core. */
#include <hwloc.h>
#include <hwloc/linux.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cuda_state.h"

static hwloc_topology_t topo;
static pthread_once_t topo_once = PTHREAD_ONCE_INIT;

static void load_topology(void) {
  if (hwloc_topology_init(&topo) != 0) {
    topo = nullptr;
    return;
  }
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    topo = nullptr;
  }
}

static hwloc_topology_t topology(void) {
  pthread_once(&topo_once, load_topology);
  return topo;
}

/* "dddd:bb:dd.f" as sysfs spells it (the runtime prints an 8-digit domain). */
static bool pci_id(int device, char *buf, size_t size) {
  char raw[64];
  unsigned dom, bus, dev, fn;
  if (cudaDeviceGetPCIBusId(raw, (int)sizeof raw, device) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  if (sscanf(raw, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return false;
  snprintf(buf, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
  return true;
}

/* The CPUs near a device; false when unknown (no sysfs entry, no hwloc). */
static bool device_cpuset(int device, hwloc_bitmap_t set) {
  char id[32], path[128];
  if (!pci_id(device, id, sizeof id)) return false;
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/local_cpus", id);
  return hwloc_linux_read_path_as_cpumask(path, set) == 0 && !hwloc_bitmap_iszero(set);
}

int qgc_nearest_device(int count) {
  hwloc_topology_t t = topology();
  if (t == nullptr || count <= 1) return 0;
  hwloc_bitmap_t bind = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc(), both = hwloc_bitmap_alloc();
  int best = 0, best_score = -1;
  if (bind && set && both && hwloc_get_cpubind(t, bind, HWLOC_CPUBIND_THREAD) == 0) {
    /* The GPU whose local CPUs share the most with the thread's binding;
     * ties (an unbound thread) go to the lowest index. */
    for (int d = 0; d < count; d++) {
      if (!device_cpuset(d, set)) continue;
      hwloc_bitmap_and(both, bind, set);
      int score = hwloc_bitmap_weight(both);
      if (score > best_score) {
        best_score = score;
        best = d;
      }
    }
  }
  hwloc_bitmap_free(bind);
  hwloc_bitmap_free(set);
  hwloc_bitmap_free(both);
  return best;
}

void qgc_device_locality(int device, char *buf, size_t size) {
  char id[32];
  if (!pci_id(device, id, sizeof id)) snprintf(id, sizeof id, "unknown");
  int used = snprintf(buf, size, "PCI %s", id);
  hwloc_topology_t t = topology();
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (t && set && device_cpuset(device, set) && used > 0 && (size_t)used < size) {
    char cpus[64];
    hwloc_bitmap_list_snprintf(cpus, sizeof cpus, set);
    used += snprintf(buf + used, size - (size_t)used, ", CPUs %s, NUMA", cpus);
    int found = 0;
    for (hwloc_obj_t node = nullptr; (node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, node)) != nullptr;) {
      if (!node->cpuset || !hwloc_bitmap_intersects(node->cpuset, set)) continue;
      if (used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, "%s%u", found ? "," : " ", node->os_index);
      found++;
    }
    if (!found && used > 0 && (size_t)used < size) snprintf(buf + used, size - (size_t)used, " unknown");
  }
  hwloc_bitmap_free(set);
}
