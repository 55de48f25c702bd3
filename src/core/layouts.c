/* The layout table and the mapping from (format, group) to a layout. */
#include "layouts.h"

#include <stdbool.h>
#include <stdio.h>

#include "error.h"

const qg_layout qg_layouts[QG_LAYOUT_COUNT] = {
    [QG_LAYOUT_NF4] = {.name = "nf4", .label = "NF4", .family = "NF4", .format = QGEMV_NF4, .group = 64,
                       .block_bytes = 32, .scale = QG_SCALE_F32, .quantize = qg_nf4_quantize,
                       .decode = qg_nf4_decode},
    [QG_LAYOUT_Q2_G64] = {.name = "q2_0g64", .label = "Q2_0/g64", .family = "Q2_0", .format = QGEMV_Q2_0,
                          .group = 64, .block_bytes = 2 + 64 / 4, .scale = QG_SCALE_F16_INLINE,
                          .quantize = qg_q2_quantize, .decode = qg_q2_decode},
    /* "q2_0" alone is group 128: the qgemv tool's word for it since the
     * first release (bench records, scripts). */
    [QG_LAYOUT_Q2_G128] = {.name = "q2_0", .label = "Q2_0/g128", .family = "Q2_0", .format = QGEMV_Q2_0,
                           .group = 128, .block_bytes = 2 + 128 / 4, .scale = QG_SCALE_F16_INLINE,
                           .quantize = qg_q2_quantize, .decode = qg_q2_decode},
};

/* The first layout of a format; NULL when it has none. */
static const qg_layout *first_of(qgemv_format format) {
  for (int i = 0; i < QG_LAYOUT_COUNT; i++)
    if (qg_layouts[i].format == format) return &qg_layouts[i];
  return NULL;
}

static int count_of(qgemv_format format) {
  int n = 0;
  for (int i = 0; i < QG_LAYOUT_COUNT; i++) n += qg_layouts[i].format == format;
  return n;
}

/* Whether layout l is its format's first (so each format is listed once). */
static bool leads(int l) { return first_of(qg_layouts[l].format) == &qg_layouts[l]; }

/* "QGEMV_NF4 or QGEMV_Q2_0": the formats, in table order. */
static const char *formats_text(char *buf, size_t size) {
  int count = 0, i = 0;
  for (int l = 0; l < QG_LAYOUT_COUNT; l++) count += leads(l);
  buf[0] = '\0';
  for (int l = 0; l < QG_LAYOUT_COUNT; l++) {
    char item[48];
    snprintf(item, sizeof item, "QGEMV_%s", qg_layouts[l].family);
    if (leads(l)) qg_choices_add(buf, size, i++, count, item);
  }
  return buf;
}

/* "64 or 128": the groups of a format, in table order. */
static const char *groups_text(qgemv_format format, char *buf, size_t size) {
  int count = count_of(format), i = 0;
  buf[0] = '\0';
  for (int l = 0; l < QG_LAYOUT_COUNT; l++) {
    if (qg_layouts[l].format != format) continue;
    char item[16];
    snprintf(item, sizeof item, "%d", (int)qg_layouts[l].group);
    qg_choices_add(buf, size, i++, count, item);
  }
  return buf;
}

qgemv_status qg_check_format(qgemv_format format) {
  char text[128];
  if (first_of(format) != NULL) return QGEMV_OK;
  return qg_fail(QGEMV_ERR_INVALID_ARG, "format %d is not a qgemv_format (%s)", (int)format,
                 formats_text(text, sizeof text));
}

const char *qg_family_name(qgemv_format format) { return first_of(format)->family; }

qgemv_status qg_layout_find(qgemv_format format, int32_t group, qg_layout_id *out) {
  qgemv_status s = qg_check_format(format);
  if (s != QGEMV_OK) return s;
  const qg_layout *only = count_of(format) == 1 ? first_of(format) : NULL;
  for (int l = 0; l < QG_LAYOUT_COUNT; l++)
    if (qg_layouts[l].format == format && (qg_layouts[l].group == group || (only && group == 0))) {
      *out = (qg_layout_id)l;
      return QGEMV_OK;
    }
  const char *family = qg_family_name(format);
  if (only)
    return qg_fail(QGEMV_ERR_INVALID_ARG, "%s group=%d: %s blocks are %d wide (pass %d or 0)", family, (int)group,
                   family, (int)only->group, (int)only->group);
  char text[128];
  return qg_fail(QGEMV_ERR_INVALID_ARG, "%s group=%d: the group must be %s", family, (int)group,
                 groups_text(format, text, sizeof text));
}
