#include "pci_locality.h"

#include <hwloc/linux.h>
#include <stdio.h>

#include "topology.h"

/* "dddd:bb:dd.f" as sysfs spells it (runtimes may print an 8-digit domain). */
static bool sysfs_id(int device, qg_pci_id_fn id, char *buf, size_t size) {
  char raw[64];
  unsigned dom, bus, dev, fn;
  if (!id(device, raw, sizeof raw)) return false;
  if (sscanf(raw, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4) return false;
  snprintf(buf, size, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
  return true;
}

/* The CPUs near a device; false when unknown (no sysfs entry, no hwloc). */
static bool device_cpuset(int device, qg_pci_id_fn id, hwloc_bitmap_t set) {
  char pci[32], path[128];
  if (!sysfs_id(device, id, pci, sizeof pci)) return false;
  snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/local_cpus", pci);
  return hwloc_linux_read_path_as_cpumask(path, set) == 0 && !hwloc_bitmap_iszero(set);
}

int qg_pci_nearest(int count, qg_pci_id_fn id) {
  hwloc_topology_t t = qg_topology_machine();
  if (t == NULL || count <= 1) return 0;
  hwloc_bitmap_t bind = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc(), both = hwloc_bitmap_alloc();
  int best = 0, best_score = -1;
  if (bind && set && both && hwloc_get_cpubind(t, bind, HWLOC_CPUBIND_THREAD) == 0) {
    for (int d = 0; d < count; d++) {
      if (!device_cpuset(d, id, set)) continue;
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

void qg_pci_locality(int device, qg_pci_id_fn id, char *buf, size_t size) {
  char pci[32];
  if (!sysfs_id(device, id, pci, sizeof pci)) snprintf(pci, sizeof pci, "unknown");
  int used = snprintf(buf, size, "PCI %s", pci);
  hwloc_topology_t t = qg_topology_machine();
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (t && set && device_cpuset(device, id, set) && used > 0 && (size_t)used < size) {
    char cpus[64];
    hwloc_bitmap_list_snprintf(cpus, sizeof cpus, set);
    used += snprintf(buf + used, size - (size_t)used, ", CPUs %s, NUMA", cpus);
    int found = 0;
    for (hwloc_obj_t node = NULL; (node = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, node)) != NULL;) {
      if (!node->cpuset || !hwloc_bitmap_intersects(node->cpuset, set)) continue;
      if (used > 0 && (size_t)used < size)
        used += snprintf(buf + used, size - (size_t)used, "%s%u", found ? "," : " ", node->os_index);
      found++;
    }
    if (!found && used > 0 && (size_t)used < size) snprintf(buf + used, size - (size_t)used, " unknown");
  }
  hwloc_bitmap_free(set);
}
