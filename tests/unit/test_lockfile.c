// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* longhauld's lock file (user/lib/lockfile.h): written and read back with json-c, escapes included. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lockfile.h"
#include "tap.h"

/* a value of o by key as a string, "" when it has none */
static const char *str_of(struct json_object *o, const char *key)
{
	struct json_object *v;

	return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v) : "";
}

int main(void)
{
	char path[] = "/tmp/test_lockfile.XXXXXX";
	/* a pin directory may hold what JSON must escape: quotes, backslashes, control bytes */
	const char *dir = "/sys/fs/bpf/a \"quoted\" \\ dir\t1";
	struct json_object *o = json_object_new_object(), *back, *wans = json_object_new_array();
	char text[4096];
	ssize_t n;
	int fd = mkstemp(path);

	if (!tap_true(fd >= 0 && o && wans, "a temporary lock file and an object"))
		return tap_done();
	json_object_object_add(o, "pid", json_object_new_int(4242));
	json_object_object_add(o, "pin_dir", json_object_new_string(dir));
	json_object_array_add(wans, json_object_new_string("wan1"));
	json_object_array_add(wans, json_object_new_string("wan2"));
	json_object_object_add(o, "wans", wans);
	tap_eq_int(lh_lockfile_write(fd, o), 0, "written");
	/* a second write replaces the first whole: no tail of a longer one left */
	tap_eq_int(lh_lockfile_write(fd, o), 0, "written again");
	n = pread(fd, text, sizeof(text) - 1, 0);
	text[n > 0 ? n : 0] = 0;
	close(fd);
	back = lh_lockfile_parse(text);
	if (tap_true(back != NULL, "read back as a JSON object")) {
		tap_eq_str(str_of(back, "pin_dir"), dir, "the pin directory, escapes and all");
		tap_eq_str(str_of(back, "wans"), "[ \"wan1\", \"wan2\" ]", "the WAN list");
	}
	json_object_put(back);
	tap_eq_int(lh_lockfile_pid(path), 4242, "the holder's pid");
	tap_true(lh_lockfile_parse("{\"pid\":1") == NULL, "a cut object is refused");
	tap_true(lh_lockfile_parse("[1,2]") == NULL, "an array is not a lock file");
	unlink(path);
	tap_eq_int(lh_lockfile_pid(path), 0, "no file: no pid");
	json_object_put(o);
	return tap_done();
}
