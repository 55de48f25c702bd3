/* What this build knows, by name: the weight formats (the layout table)
 * and the CPU backend's ISA levels. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "layouts.h"
#include "registry.h"

int qgemv_format_count(void) { return QG_LAYOUT_COUNT; }

/* Public format index i is layout id i: the table's order is the list's. */
static void describe(qg_layout_id id, qgemv_format_info *info) {
  const qg_layout *L = &qg_layouts[id];
  *info = (qgemv_format_info){.name = L->name, .label = L->label, .format = L->format, .group = L->group,
                              .block_bytes = L->block_bytes,
                              .scale_bytes = L->scale == QG_SCALE_F32 ? (int32_t)sizeof(float) : 0};
}

qgemv_status qgemv_format_get(int index, qgemv_format_info *info) {
  if (info == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_format_get: info is NULL");
  if (index < 0 || index >= QG_LAYOUT_COUNT)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_format_get: index %d is not in 0 .. %d", index, QG_LAYOUT_COUNT - 1);
  describe((qg_layout_id)index, info);
  return QGEMV_OK;
}

/* "nf4, q2_0g64 or q2_0": every format's name, for messages. */
static const char *names_text(char *buf, size_t size) {
  buf[0] = '\0';
  for (int i = 0; i < QG_LAYOUT_COUNT; i++) qg_choices_add(buf, size, i, QG_LAYOUT_COUNT, qg_layouts[i].name);
  return buf;
}

qgemv_status qgemv_format_lookup(const char *name, qgemv_format_info *info) {
  if (name == NULL || info == NULL)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_format_lookup: %s is NULL", name ? "info" : "name");
  for (int i = 0; i < QG_LAYOUT_COUNT; i++)
    if (strcmp(name, qg_layouts[i].name) == 0) {
      describe((qg_layout_id)i, info);
      return QGEMV_OK;
    }
  char names[256];
  return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_format_lookup: \"%.64s\" is not a format: use %s", name,
                 names_text(names, sizeof names));
}

int qgemv_cpu_level_count(void) { return qg_cpu_level_total(); }

qgemv_status qgemv_cpu_level_get(int index, qgemv_cpu_level_info *info) {
  if (info == NULL) return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_cpu_level_get: info is NULL");
  if (index < 0 || index >= qg_cpu_level_total())
    return qg_fail(QGEMV_ERR_INVALID_ARG, "qgemv_cpu_level_get: index %d is not in 0 .. %d", index,
                   qg_cpu_level_total() - 1);
  qg_cpu_level_describe(index, info);
  return QGEMV_OK;
}
