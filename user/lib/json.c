// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Streaming JSON writer: commas, indentation and escapes. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "json.h"

#define JSON_MAX_DEPTH 64

struct lh_json {
	FILE *out;
	bool pretty;
	int depth;
	bool first[JSON_MAX_DEPTH]; /* no element written yet at this depth */
	bool after_name; /* a key was written, the value comes next */
};

struct lh_json *lh_json_new(FILE *out, bool pretty)
{
	struct lh_json *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->out = out;
	j->pretty = pretty;
	j->first[0] = true;
	return j;
}

void lh_json_free(struct lh_json *j)
{
	if (!j)
		return;
	fputc('\n', j->out);
	fflush(j->out);
	free(j);
}

static void json_indent(struct lh_json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->out);
	for (i = 0; i < j->depth; i++)
		fputs("    ", j->out);
}

/* Separator before a new element (value or key) */
static void json_sep(struct lh_json *j)
{
	if (j->after_name) {
		j->after_name = false;
		return;
	}
	if (!j->first[j->depth])
		fputc(',', j->out);
	if (j->depth > 0)
		json_indent(j);
	j->first[j->depth] = false;
}

static void json_open(struct lh_json *j, char c)
{
	json_sep(j);
	fputc(c, j->out);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->first[j->depth] = true;
}

static void json_close(struct lh_json *j, char c)
{
	bool empty = j->first[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (!empty)
		json_indent(j);
	fputc(c, j->out);
}

void lh_json_start_object(struct lh_json *j)
{
	json_open(j, '{');
}

void lh_json_end_object(struct lh_json *j)
{
	json_close(j, '}');
}

void lh_json_start_array(struct lh_json *j)
{
	json_open(j, '[');
}

void lh_json_end_array(struct lh_json *j)
{
	json_close(j, ']');
}

static void json_escaped(struct lh_json *j, const char *s)
{
	fputc('"', j->out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"':
			fputs("\\\"", j->out);
			break;
		case '\\':
			fputs("\\\\", j->out);
			break;
		case '\n':
			fputs("\\n", j->out);
			break;
		case '\t':
			fputs("\\t", j->out);
			break;
		case '\r':
			fputs("\\r", j->out);
			break;
		default:
			if (c < 0x20)
				fprintf(j->out, "\\u%04x", c);
			else
				fputc(c, j->out);
		}
	}
	fputc('"', j->out);
}

void lh_json_name(struct lh_json *j, const char *name)
{
	json_sep(j);
	json_escaped(j, name);
	fputs(j->pretty ? ": " : ":", j->out);
	j->after_name = true;
}

void lh_json_string(struct lh_json *j, const char *s)
{
	json_sep(j);
	if (s)
		json_escaped(j, s);
	else
		fputs("null", j->out);
}

void lh_json_uint(struct lh_json *j, uint64_t v)
{
	json_sep(j);
	fprintf(j->out, "%" PRIu64, v);
}

void lh_json_int(struct lh_json *j, int64_t v)
{
	json_sep(j);
	fprintf(j->out, "%" PRId64, v);
}

void lh_json_double(struct lh_json *j, double v)
{
	json_sep(j);
	if (isfinite(v))
		fprintf(j->out, "%.10g", v);
	else
		fputs("null", j->out);
}

void lh_json_bool(struct lh_json *j, bool v)
{
	json_sep(j);
	fputs(v ? "true" : "false", j->out);
}

void lh_json_null(struct lh_json *j)
{
	json_sep(j);
	fputs("null", j->out);
}

void lh_json_string_field(struct lh_json *j, const char *name, const char *s)
{
	lh_json_name(j, name);
	lh_json_string(j, s);
}

void lh_json_uint_field(struct lh_json *j, const char *name, uint64_t v)
{
	lh_json_name(j, name);
	lh_json_uint(j, v);
}

void lh_json_int_field(struct lh_json *j, const char *name, int64_t v)
{
	lh_json_name(j, name);
	lh_json_int(j, v);
}

void lh_json_double_field(struct lh_json *j, const char *name, double v)
{
	lh_json_name(j, name);
	lh_json_double(j, v);
}

void lh_json_bool_field(struct lh_json *j, const char *name, bool v)
{
	lh_json_name(j, name);
	lh_json_bool(j, v);
}
