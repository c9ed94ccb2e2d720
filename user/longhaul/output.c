// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The CLI's one output path (output.h): each field call writes JSON through
 * user/lib/json.h, or text laid out by the nesting of objects and arrays.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "output.h"

#define MAX_DEPTH 16

enum frame_kind { FRAME_OBJECT, FRAME_ARRAY, FRAME_ROW };

struct frame {
	enum frame_kind kind;
	const char *key; /* array: printed lazily, once the first element says how */
	int elems;
	bool inline_scalars; /* array: its scalars follow the key on one line */
};

static struct {
	bool json;
	bool pretty;
	struct lh_json *jw;
	struct frame f[MAX_DEPTH];
	int depth; /* frames open */
	int key_width;
	int num_width; /* numbers in a row */
	bool finished;
} out = { .key_width = 16 };

void out_init(bool json, bool pretty)
{
	out.json = json;
	out.depth = 0;
	out.pretty = pretty;
	out.finished = false;
}

/* The JSON writer, made at the first field: a command that fails before printing prints nothing */
static struct lh_json *jw(void)
{
	if (!out.jw)
		out.jw = lh_json_new(stdout, out.pretty);
	return out.jw;
}

void out_finish(void)
{
	if (out.finished)
		return;
	out.finished = true;
	if (out.jw) {
		lh_json_free(out.jw);
		out.jw = NULL;
	}
	fflush(stdout);
}

bool out_json(void)
{
	return out.json;
}

void out_key_width(int width)
{
	out.key_width = width;
}

void out_num_width(int width)
{
	out.num_width = width;
}

static struct frame *top(void)
{
	return out.depth ? &out.f[out.depth - 1] : NULL;
}

static void indent(int level)
{
	int i;

	for (i = 0; i < level; i++)
		fputs("  ", stdout);
}

/* Text: content of the frame at index p is indented 2p; its heading 2(p-1) */
static int content_indent(void)
{
	return out.depth ? out.depth - 1 : 0;
}

/* Text: an element is about to be printed in the current frame */
static void text_element(bool scalar)
{
	struct frame *t = top();

	if (!t || t->kind != FRAME_ARRAY)
		return;
	if (!t->elems++ && t->key) {
		indent(content_indent() - 1 < 0 ? 0 : content_indent() - 1);
		if (scalar) {
			printf("%-*s", out.key_width, t->key);
			t->inline_scalars = true;
		} else {
			printf("%s:\n", t->key);
		}
	}
}

static void push(enum frame_kind kind, const char *key)
{
	/* deeper than MAX_DEPTH reuses the last frame: the CLI never nests that deep */
	struct frame *t = &out.f[out.depth < MAX_DEPTH ? out.depth++ : MAX_DEPTH - 1];

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->key = key;
}

static void json_key(const char *key)
{
	struct frame *t = top();

	if (key && t && t->kind != FRAME_ARRAY)
		lh_json_name(jw(), key);
}

void out_object_begin(const char *key)
{
	struct frame *parent = top();

	if (out.json) {
		json_key(key);
		lh_json_start_object(jw());
		push(FRAME_OBJECT, key);
		return;
	}
	text_element(false);
	if (parent) {
		indent(content_indent());
		if (parent->kind == FRAME_ARRAY)
			printf("%s\n", key ? key : "-");
		else
			printf("%s:\n", key ? key : "");
	}
	push(FRAME_OBJECT, key);
}

void out_object_end(void)
{
	if (out.json)
		lh_json_end_object(jw());
	if (out.depth)
		out.depth--;
}

void out_array_begin(const char *key)
{
	if (out.json) {
		json_key(key);
		lh_json_start_array(jw());
	} else {
		text_element(false);
	}
	push(FRAME_ARRAY, key);
}

void out_array_end(void)
{
	struct frame *t = top();

	if (out.json) {
		lh_json_end_array(jw());
	} else if (t && t->key) {
		if (!t->elems) {
			indent(content_indent() - 1 < 0 ? 0 : content_indent() - 1);
			printf("%-*s -\n", out.key_width, t->key);
		} else if (t->inline_scalars) {
			putchar('\n');
		}
	}
	if (out.depth)
		out.depth--;
}

void out_row_begin(const char *key)
{
	if (out.json) {
		json_key(key);
		lh_json_start_object(jw());
	} else {
		text_element(false);
		indent(content_indent());
		if (key)
			printf("%-*s", out.key_width, key);
	}
	push(FRAME_ROW, key);
}

void out_row_end(void)
{
	if (out.json)
		lh_json_end_object(jw());
	else
		putchar('\n');
	if (out.depth)
		out.depth--;
}

/* Text: one scalar, already formatted, where its frame wants it */
static void text_scalar(const char *key, const char *val, bool number)
{
	struct frame *t = top();

	if (t && t->kind == FRAME_ROW) {
		if (number)
			printf(" %*s", out.num_width, val);
		else
			printf("  %s", val);
		return;
	}
	if (t && t->kind == FRAME_ARRAY) {
		text_element(true);
		printf(" %s", val);
		return;
	}
	indent(content_indent());
	printf("%-*s %s\n", out.key_width, key ? key : "", val);
}

void out_str(const char *key, const char *s)
{
	if (out.json) {
		json_key(key);
		lh_json_string(jw(), s);
		return;
	}
	text_scalar(key, s ? s : "-", false);
}

void out_uint(const char *key, uint64_t v)
{
	char buf[32];

	if (out.json) {
		json_key(key);
		lh_json_uint(jw(), v);
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	text_scalar(key, buf, true);
}

void out_int(const char *key, int64_t v)
{
	char buf[32];

	if (out.json) {
		json_key(key);
		lh_json_int(jw(), v);
		return;
	}
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	text_scalar(key, buf, true);
}

void out_hex(const char *key, uint64_t v, int digits)
{
	char buf[32];

	if (out.json) {
		json_key(key);
		lh_json_uint(jw(), v);
		return;
	}
	snprintf(buf, sizeof(buf), "0x%0*" PRIx64, digits, v);
	text_scalar(key, buf, false);
}

void out_bool(const char *key, bool v)
{
	struct frame *t = top();
	char buf[64];

	if (out.json) {
		json_key(key);
		lh_json_bool(jw(), v);
		return;
	}
	if (t && t->kind == FRAME_ROW && key) {
		/* a row has no labels: a flag reads as its name */
		snprintf(buf, sizeof(buf), "%s%s", v ? "" : "not ", key);
		text_scalar(key, buf, false);
		return;
	}
	text_scalar(key, v ? "yes" : "no", false);
}

void out_null(const char *key)
{
	if (out.json) {
		json_key(key);
		lh_json_null(jw());
		return;
	}
	text_scalar(key, "-", false);
}

void out_usec(const char *key, uint64_t us)
{
	char name[64], buf[32];
	size_t n;

	if (out.json) {
		json_key(key);
		if (us == OUT_USEC_NONE)
			lh_json_null(jw());
		else
			lh_json_uint(jw(), us);
		return;
	}
	snprintf(name, sizeof(name), "%s", key ? key : "");
	n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, "_us"))
		name[n - 3] = 0;
	if (us == OUT_USEC_NONE)
		snprintf(buf, sizeof(buf), "-");
	else if (us < 1000)
		snprintf(buf, sizeof(buf), "%" PRIu64 " us", us);
	else if (us < 1000000)
		snprintf(buf, sizeof(buf), "%.1f ms", (double)us / 1e3);
	else
		snprintf(buf, sizeof(buf), "%.2f s", (double)us / 1e6);
	text_scalar(name, buf, false);
}
