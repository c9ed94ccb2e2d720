/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Every command of the longhaul CLI prints through these calls: one call per
 * field, rendered as JSON with -j (user/lib/json.h) or as indented text.
 *
 * Text rendering:
 *  - a scalar inside an object prints "key  value" on its own line;
 *  - a named object prints "key:" and its fields two columns further in;
 *  - an array of scalars prints "key  v1 v2 ..." on one line ("-" when empty);
 *  - in an array, an object's key is only a text heading (JSON elements have
 *    no name): out_object_begin("qp 0x12 ...") inside an array;
 *  - a row (out_row_begin) prints its key (if any) and all its scalars on
 *    one line, without their keys: numbers right-aligned (out_num_width),
 *    a bool as its key or "not <key>": counter tables, programs, maps.
 * A NULL string prints as JSON null and as "-" in text.
 */
#ifndef LONGHAUL_OUTPUT_H
#define LONGHAUL_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>

void out_init(bool json, bool pretty);
/* Ends the document (JSON: newline) and flushes; safe to call twice */
void out_finish(void);
bool out_json(void);
/* Text width of keys (default 16): counter tables use a wider one */
void out_key_width(int width);
/* Text width of numbers in rows (default 0: as wide as they are) */
void out_num_width(int width);

void out_object_begin(const char *key);
void out_object_end(void);
void out_array_begin(const char *key);
void out_array_end(void);
void out_row_begin(const char *key);
void out_row_end(void);

void out_str(const char *key, const char *s);
void out_uint(const char *key, uint64_t v);
void out_int(const char *key, int64_t v);
/* JSON: the number; text: 0x and at least 'digits' hex digits (QPNs, P_Keys) */
void out_hex(const char *key, uint64_t v, int digits);
void out_bool(const char *key, bool v);
/* JSON null, text "-": a value that does not exist (an unpaired QP's peer) */
void out_null(const char *key);
/*
 * A duration in microseconds. JSON: key as given (name it *_us) and the
 * number; text: the key without its "_us" and a human value ("1.52 s").
 * OUT_USEC_NONE: no such duration (JSON null, text "-").
 */
#define OUT_USEC_NONE UINT64_MAX
void out_usec(const char *key, uint64_t us);

#endif /* LONGHAUL_OUTPUT_H */
