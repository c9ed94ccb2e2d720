// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* longhauld's lock file as JSON, with json-c (lockfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lockfile.h"

int lh_lockfile_write(int fd, struct json_object *o)
{
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t len = s ? strlen(s) : 0;

	if (!s)
		return -ENOMEM;
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	if (dprintf(fd, "%s\n", s) != (int)len + 1)
		return -EIO;
	return 0;
}

struct json_object *lh_lockfile_parse(const char *text)
{
	struct json_object *o = json_tokener_parse(text);

	if (o && !json_object_is_type(o, json_type_object)) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

int lh_lockfile_pid(const char *path)
{
	char buf[4096];
	struct json_object *o, *pid;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), v = 0;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	o = lh_lockfile_parse(buf);
	if (o && json_object_object_get_ex(o, "pid", &pid))
		v = json_object_get_int(pid);
	json_object_put(o);
	return v > 0 ? v : 0;
}
