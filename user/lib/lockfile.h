/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * longhauld's lock file (instance.h names it) holds one JSON object saying
 * who holds the instance: pid, mode, interfaces, pin directory, start time,
 * sizes. longhauld writes it, longhaul status reads it; json-c does both, so
 * any name is escaped as JSON wants.
 */
#ifndef LH_USER_LOCKFILE_H
#define LH_USER_LOCKFILE_H

#include <json-c/json.h>

/* o as the whole content of the lock file fd (truncated first); 0 or -errno */
int lh_lockfile_write(int fd, struct json_object *o);
/* The object text holds; NULL when it is not a JSON object. json_object_put() it. */
struct json_object *lh_lockfile_parse(const char *text);
/* The pid the lock file at path names, 0 when it names none (or cannot be read) */
int lh_lockfile_pid(const char *path);

#endif
