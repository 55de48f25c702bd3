/* A small streaming JSON writer for the tool's machine-readable output.
 *
 * Members are written in call order with two-space indentation. `key` is
 * the member name inside an object and NULL inside an array or at the top.
 * Non-finite numbers become null (JSON has no NaN or infinity). */
#ifndef QGEMV_TOOL_JSON_H
#define QGEMV_TOOL_JSON_H

#include <stdbool.h>
#include <stdio.h>

#include "qgemv.h"

#define JSON_MAX_DEPTH 16

typedef struct json_w {
  FILE *f;
  int depth;
  bool has_items[JSON_MAX_DEPTH]; /* a comma is due before the next item */
} json_w;

void json_init(json_w *j, FILE *f);
void json_obj_begin(json_w *j, const char *key);
void json_obj_end(json_w *j);
void json_arr_begin(json_w *j, const char *key);
void json_arr_end(json_w *j);
void json_str(json_w *j, const char *key, const char *v); /* NULL: null */
void json_num(json_w *j, const char *key, double v);
void json_int(json_w *j, const char *key, long long v);
void json_bool(json_w *j, const char *key, bool v);
void json_null(json_w *j, const char *key);

/* The fields of a qgemv_device_info, as an object member named key. */
void json_device_info(json_w *j, const char *key, const qgemv_device_info *d);

#endif
