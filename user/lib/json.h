/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * A small streaming JSON writer (the idea of bpftool's json_writer): the
 * caller opens and closes objects and arrays, the writer places commas,
 * indentation and string escapes.
 */
#ifndef LH_USER_JSON_H
#define LH_USER_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct lh_json;

struct lh_json *lh_json_new(FILE *out, bool pretty);
/* Ends the output with a newline and frees the writer; NULL is fine */
void lh_json_free(struct lh_json *j);

void lh_json_start_object(struct lh_json *j);
void lh_json_end_object(struct lh_json *j);
void lh_json_start_array(struct lh_json *j);
void lh_json_end_array(struct lh_json *j);
/* Key of the next value inside an object */
void lh_json_name(struct lh_json *j, const char *name);

void lh_json_string(struct lh_json *j, const char *s);
void lh_json_uint(struct lh_json *j, uint64_t v);
void lh_json_int(struct lh_json *j, int64_t v);
/* Non-finite numbers print as null: JSON has no NaN */
void lh_json_double(struct lh_json *j, double v);
void lh_json_bool(struct lh_json *j, bool v);
void lh_json_null(struct lh_json *j);

/* name + value in one call */
void lh_json_string_field(struct lh_json *j, const char *name, const char *s);
void lh_json_uint_field(struct lh_json *j, const char *name, uint64_t v);
void lh_json_int_field(struct lh_json *j, const char *name, int64_t v);
void lh_json_double_field(struct lh_json *j, const char *name, double v);
void lh_json_bool_field(struct lh_json *j, const char *name, bool v);

#endif /* LH_USER_JSON_H */
