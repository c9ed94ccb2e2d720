// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The agent as the CLI sees it through its lock file in /run/longhaul: a
 * one-line JSON object (pid, mode, options, interfaces) that longhauld
 * flocks while it runs. Who holds the lock, what the file says, which agents
 * run on this host.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lockfile.h"
#include "log.h"
#include "pins.h"

/* One value of the lock file's object into kv: a string, a number or a list of strings */
static bool lock_value(const char *key, struct json_object *v, struct agent_kv *kv)
{
	size_t i, n = 0;

	snprintf(kv->key, sizeof(kv->key), "%s", key);
	switch (json_object_get_type(v)) {
	case json_type_string:
		snprintf(kv->str, sizeof(kv->str), "%s", json_object_get_string(v));
		return true;
	case json_type_int:
	case json_type_double:
		/* a fraction or exponent: the integer part */
		kv->num = json_object_get_int64(v);
		kv->is_num = true;
		snprintf(kv->str, sizeof(kv->str), "%lld", kv->num);
		return true;
	case json_type_array:
		/* each item followed by '\n' (interface names hold none) */
		kv->is_list = true;
		for (i = 0; i < json_object_array_length(v); i++) {
			const char *item = json_object_get_string(json_object_array_get_idx(v, i));

			if (item && n + strlen(item) + 2 <= sizeof(kv->str))
				n += (size_t)snprintf(kv->str + n, sizeof(kv->str) - n, "%s\n", item);
		}
		return true;
	default:
		return false;
	}
}

/* The lock file's object (lockfile.h): strings, numbers and lists of strings */
static bool parse_lock(const char *text, struct agent_info *ai)
{
	struct json_object *o = lh_lockfile_parse(text);
	bool ok = o != NULL;

	if (!o)
		return false;
	json_object_object_foreach(o, key, v) {
		struct agent_kv kv = { 0 };

		if (!lock_value(key, v, &kv))
			ok = false;
		else if (ai->nr_kv < AGENT_KV_MAX)
			ai->kv[ai->nr_kv++] = kv;
	}
	json_object_put(o);
	return ok;
}

/*
 * Who holds the flock of path, read from /proc/locks (taking the lock to
 * find out would race with an agent starting). Returns the pid, 0 when
 * nobody holds it, -1 when /proc/locks cannot tell.
 */
static int lock_holder(const char *path)
{
	char line[256];
	struct stat st;
	int pid = 0;
	FILE *f;

	if (stat(path, &st))
		return -1;
	f = fopen("/proc/locks", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *tok[10], *save = NULL, *s;
		unsigned int maj, min, n = 0;
		unsigned long ino;

		for (s = strtok_r(line, " \t\n", &save); s && n < 10;
		     s = strtok_r(NULL, " \t\n", &save))
			tok[n++] = s;
		/* "1: FLOCK ADVISORY WRITE <pid> <maj>:<min>:<ino> 0 EOF"; "->" marks a waiter */
		if (n < 8 || strcmp(tok[1], "FLOCK") != 0)
			continue;
		if (sscanf(tok[5], "%x:%x:%lu", &maj, &min, &ino) != 3)
			continue;
		if (ino == st.st_ino && maj == major(st.st_dev) && min == minor(st.st_dev)) {
			pid = atoi(tok[4]);
			if (pid <= 0)
				pid = -2; /* held by a process of another pid namespace */
			break;
		}
	}
	fclose(f);
	return pid;
}

/* Without /proc/locks: a shared lock fails while longhauld holds its exclusive one */
static bool lock_held_by_test(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool held = false;

	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB))
		held = errno == EWOULDBLOCK;
	else
		flock(fd, LOCK_UN);
	close(fd);
	return held;
}

bool agent_probe_file(const char *lock_path, struct agent_info *ai)
{
	char buf[4096];
	ssize_t n;
	int fd, pid;

	memset(ai, 0, sizeof(*ai));
	snprintf(ai->lock_path, sizeof(ai->lock_path), "%s", lock_path);
	fd = open(lock_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ai->lock_exists = true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (n > 0 && !parse_lock(buf, ai))
		pr_debug("%s: not the JSON longhauld writes\n", lock_path);
	pid = lock_holder(lock_path);
	if (pid == -1) {
		ai->running = lock_held_by_test(lock_path);
	} else if (pid) {
		ai->running = true;
		ai->holder_pid = pid > 0 ? pid : 0;
	}
	return true;
}

/* Strip trailing slashes: "/a/b/" and "/a/b" are one pin directory */
static void norm_dir(char *d)
{
	size_t n = strlen(d);

	while (n > 1 && d[n - 1] == '/')
		d[--n] = 0;
}

/* The next lock file of LOCK_DIR read into *ai (its agent running or not); false at the end */
static bool next_agent(DIR *d, struct agent_info *ai)
{
	char path[PATH_MAX + 300];
	struct dirent *de;

	while ((de = readdir(d))) {
		if (!lh_lock_file_name(de->d_name))
			continue;
		snprintf(path, sizeof(path), LOCK_DIR "/%s", de->d_name);
		if (agent_probe_file(path, ai))
			return true;
	}
	return false;
}

bool agent_probe(const struct lh_target *t, struct agent_info *ai)
{
	char want[PIN_DIR_MAX], have[PIN_DIR_MAX];
	struct agent_info cand;
	bool found = false;
	const char *pd;
	DIR *d;

	if (agent_probe_file(t->lock_path, ai))
		return true;
	/* the agent names the lock after the pin directory as it was given: "/x/" vs "/x" */
	snprintf(want, sizeof(want), "%s", t->pin_dir);
	norm_dir(want);
	d = opendir(LOCK_DIR);
	if (!d)
		return false;
	while (!found && next_agent(d, &cand)) {
		pd = agent_str(&cand, "pin_dir");
		if (!pd)
			continue;
		snprintf(have, sizeof(have), "%s", pd);
		norm_dir(have);
		if (!strcmp(have, want)) {
			*ai = cand;
			found = true;
		}
	}
	closedir(d);
	return found;
}

const char *agent_str(const struct agent_info *ai, const char *key)
{
	int i;

	for (i = 0; i < ai->nr_kv; i++)
		if (!strcmp(ai->kv[i].key, key))
			return ai->kv[i].str;
	return NULL;
}

bool agent_num(const struct agent_info *ai, const char *key, long long *v)
{
	int i;

	for (i = 0; i < ai->nr_kv; i++) {
		if (!strcmp(ai->kv[i].key, key) && ai->kv[i].is_num) {
			*v = ai->kv[i].num;
			return true;
		}
	}
	return false;
}

int agent_pid(const struct agent_info *ai)
{
	long long pid;

	if (ai->holder_pid > 0)
		return ai->holder_pid;
	if (agent_num(ai, "pid", &pid) && pid > 0 && pid <= INT32_MAX)
		return (int)pid;
	return 0;
}

bool pid_alive(int pid)
{
	return pid > 0 && (!kill(pid, 0) || errno == EPERM);
}

/* Names of the running instances, comma separated ("" when none) */
static void running_instances(char *buf, size_t size)
{
	struct agent_info ai;
	const char *pd, *name;
	size_t used = 0;
	DIR *d;
	int w;

	buf[0] = 0;
	d = opendir(LOCK_DIR);
	if (!d)
		return;
	while (next_agent(d, &ai)) {
		pd = agent_str(&ai, "pin_dir");
		if (!ai.running || !pd)
			continue;
		if (!strcmp(pd, DEFAULT_PIN_ROOT))
			name = "(default)";
		else
			name = lh_instance_of(pd) ? lh_instance_of(pd) : pd;
		w = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", name);
		if (w < 0 || (size_t)w >= size - used)
			break;
		used += (size_t)w;
	}
	closedir(d);
}

void hint_running_instances(void)
{
	char hint[512];

	running_instances(hint, sizeof(hint));
	if (hint[0])
		fprintf(stderr, "longhaul: running: %s (choose with --instance NAME)\n", hint);
}
