// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The streaming JSON writer: separators, nesting, escapes, numbers, pretty mode. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "tap.h"

static char *render(bool pretty, void (*fn)(struct lh_json *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct lh_json *j = lh_json_new(f, pretty);

	fn(j);
	lh_json_free(j);
	fclose(f);
	return buf;
}

static void doc(struct lh_json *j)
{
	lh_json_start_object(j);
	lh_json_string_field(j, "s", "a\"b\\c\n\x01");
	lh_json_uint_field(j, "u", 18446744073709551615ull);
	lh_json_int_field(j, "i", -5);
	lh_json_double_field(j, "d", 0.25);
	lh_json_double_field(j, "nan", NAN);
	lh_json_bool_field(j, "t", true);
	lh_json_name(j, "arr");
	lh_json_start_array(j);
	lh_json_uint(j, 1);
	lh_json_start_object(j);
	lh_json_end_object(j);
	lh_json_start_array(j);
	lh_json_end_array(j);
	lh_json_null(j);
	lh_json_end_array(j);
	lh_json_end_object(j);
}

int main(void)
{
	char *compact = render(false, doc), *pretty = render(true, doc);
	char cmd[256];
	FILE *p;
	int same = 0;

	tap_eq_str(compact,
		   "{\"s\":\"a\\\"b\\\\c\\n\\u0001\",\"u\":18446744073709551615,\"i\":-5,"
		   "\"d\":0.25,\"nan\":null,\"t\":true,\"arr\":[1,{},[],null]}\n",
		   "compact output: escapes, u64 max, NaN as null, empty containers");
	/* jq, an independent parser, must read the pretty form as the same document */
	compact[strlen(compact) - 1] = 0; /* the newline */
	snprintf(cmd, sizeof(cmd), "jq -e --argjson a '%s' '. == $a' >/dev/null 2>&1", compact);
	p = popen(cmd, "w");
	if (p) {
		fputs(pretty, p);
		same = pclose(p) == 0;
	}
	tap_true(same, "pretty output parses (jq) to the same document");
	tap_true(strchr(pretty, '\n') != strrchr(pretty, '\n'), "pretty output is indented on lines");
	free(compact);
	free(pretty);
	return tap_done();
}
