// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `longhaul status show`: whether an agent runs for the instance (its lock
 * held, its pid alive), the mode and options it wrote in its lock file, the
 * programs attached to its interfaces (queried inside the agent's network
 * namespace), its pinned maps with their compatibility, and the pool size.
 * `longhaul status list`: every agent that runs on this host.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lh_maps.h"
#include "log.h"
#include "output.h"
#include "pins.h"

/* ---- the agent's network namespace ---- */

/* A name for the namespace of st: as `ip netns` knows it, "current", or its inode */
static void netns_label(const struct stat *st, const struct stat *self, char *buf, size_t size)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat s;
	DIR *d;

	d = opendir("/var/run/netns");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/var/run/netns/%s", de->d_name);
		if (!stat(path, &s) && s.st_ino == st->st_ino && s.st_dev == st->st_dev) {
			snprintf(buf, size, "%s", de->d_name);
			closedir(d);
			return;
		}
	}
	if (d)
		closedir(d);
	if (st->st_ino == self->st_ino && st->st_dev == self->st_dev)
		snprintf(buf, size, "current");
	else
		snprintf(buf, size, "net:[%lu]", (unsigned long)st->st_ino);
}

/*
 * Interfaces are names in the agent's namespace, not necessarily ours: enter
 * it (setns needs CAP_SYS_ADMIN) for the queries. *saved is the namespace to
 * return to, -1 when we did not move.
 */
static int netns_enter(int pid, int *saved, char *label, size_t size)
{
	struct stat self, st;
	char path[64];
	int fd, err;

	*saved = -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || stat("/proc/self/ns/net", &self)) {
		err = -errno;
		close(fd);
		return err;
	}
	netns_label(&st, &self, label, size);
	if (st.st_ino == self.st_ino && st.st_dev == self.st_dev) {
		close(fd);
		return 0;
	}
	*saved = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (*saved < 0 || setns(fd, CLONE_NEWNET)) {
		err = -errno;
		if (*saved >= 0)
			close(*saved);
		*saved = -1;
		close(fd);
		return err;
	}
	close(fd);
	return 0;
}

static void netns_leave(int saved)
{
	if (saved < 0)
		return;
	if (setns(saved, CLONE_NEWNET))
		pr_warn("return to our network namespace: %s\n", strerror(errno));
	close(saved);
}

/* ---- programs on an interface ---- */

static void prog_name(__u32 id, char *buf, size_t size)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id);

	snprintf(buf, size, "?");
	if (fd < 0)
		return;
	if (!bpf_prog_get_info_by_fd(fd, &info, &len))
		snprintf(buf, size, "%s", info.name);
	close(fd);
}

static void print_prog(const char *key, __u32 id, const char *how)
{
	char name[BPF_OBJ_NAME_LEN + 2];

	prog_name(id, name, sizeof(name));
	out_row_begin(key);
	out_uint("id", id);
	out_str("name", name);
	out_str("attach", how);
	out_row_end();
}

static void print_xdp(int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	__u32 id = 0;
	const char *how = NULL;

	if (bpf_xdp_query(ifindex, 0, &q)) {
		out_null("xdp");
		return;
	}
	if (q.drv_prog_id) {
		id = q.drv_prog_id;
		how = "native";
	} else if (q.skb_prog_id) {
		id = q.skb_prog_id;
		how = "generic";
	} else if (q.hw_prog_id) {
		id = q.hw_prog_id;
		how = "offload";
	} else if (q.prog_id) {
		id = q.prog_id;
		how = "xdp";
	}
	if (!id)
		out_null("xdp");
	else
		print_prog("xdp", id, how);
}

/*
 * tcx programs in chain order, or on kernels without tcx longhauld's clsact
 * filters (handle 1; priority 1 an lr2 agent's, 2 a credit agent's: the
 * order they run in)
 */
static void print_tc(const char *key, int ifindex, bool ingress)
{
	static const __u32 prios[] = { 1, 2 };
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = ingress ? BPF_TC_INGRESS : BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_prog_query_opts, q);
	__u32 ids[16], i;

	q.prog_ids = ids;
	q.count = sizeof(ids) / sizeof(ids[0]);
	out_array_begin(key);
	if (!bpf_prog_query_opts(ifindex, ingress ? BPF_TCX_INGRESS : BPF_TCX_EGRESS, &q) &&
	    q.count) {
		for (i = 0; i < q.count && i < sizeof(ids) / sizeof(ids[0]); i++)
			print_prog(NULL, ids[i], "tcx");
	} else {
		for (i = 0; i < sizeof(prios) / sizeof(prios[0]); i++) {
			LIBBPF_OPTS(bpf_tc_opts, tco, .handle = 1, .priority = prios[i]);

			if (!bpf_tc_query(&hook, &tco) && tco.prog_id)
				print_prog(NULL, tco.prog_id, "clsact");
		}
	}
	out_array_end();
}

static void print_iface(const char *role, const char *name, bool query)
{
	char head[64];
	int ifindex = query ? (int)if_nametoindex(name) : 0;

	snprintf(head, sizeof(head), "%s %s", role, name);
	out_object_begin(head);
	out_str("role", role);
	out_str("name", name);
	if (!ifindex) {
		/* not running (programs go with the agent), or the interface is gone */
		out_null("ifindex");
		out_null("xdp");
		out_array_begin("tc_ingress");
		out_array_end();
		out_array_begin("tc_egress");
		out_array_end();
	} else {
		out_uint("ifindex", (uint64_t)ifindex);
		print_xdp(ifindex);
		print_tc("tc_ingress", ifindex, true);
		print_tc("tc_egress", ifindex, false);
	}
	out_object_end();
}

/*
 * The agent's WAN interfaces into names[] (at most max): the lock file's
 * "wans" list, or its "wan" (a longhauld from before several --wan)
 */
static int wan_names(const struct agent_info *ai, char names[][64], int max)
{
	const char *list = agent_str(ai, "wans"), *one = agent_str(ai, "wan"), *nl;
	int n = 0;

	if (!list || !*list) {
		if (one && *one && max > 0)
			snprintf(names[n++], 64, "%s", one);
		return n;
	}
	for (; n < max && (nl = strchr(list, '\n')); list = nl + 1)
		snprintf(names[n++], 64, "%.*s", (int)(nl - list), list);
	return n;
}

static void print_interfaces(const struct agent_info *ai, int pid)
{
	char label[PATH_MAX] = "", wans[8][64];
	const char *name;
	int saved = -1, err = -ESRCH, i, n;

	if (ai->running && pid)
		err = netns_enter(pid, &saved, label, sizeof(label));
	if (err && ai->running)
		pr_warn("cannot enter the network namespace of pid %d (%s): attached programs "
			"not shown\n",
			pid, strerror(-err));
	if (err)
		out_null("netns");
	else
		out_str("netns", label);
	out_array_begin("interfaces");
	name = agent_str(ai, "dc");
	if (name && *name)
		print_iface("dc", name, !err);
	n = wan_names(ai, wans, 8);
	for (i = 0; i < n; i++)
		print_iface("wan", wans[i], !err);
	out_array_end();
	netns_leave(saved);
}

/* ---- pinned maps ---- */

static int not_dot(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

/* Every pin of the directory: known maps checked, others only described; true if all fit */
static bool print_maps(const struct lh_target *t)
{
	struct dirent **names = NULL;
	struct pinned_map pm;
	bool all_ok = true;
	int n, i, rc;

	n = scandir(t->pin_dir, &names, not_dot, alphasort);
	out_key_width(16);
	out_object_begin("maps");
	for (i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		const char *type;

		rc = map_get(t, name, &pm);
		if (rc && !pm.spec) {
			map_close(&pm); /* a program or link pinned there: not ours to judge */
			continue;
		}
		type = libbpf_bpf_map_type_str(pm.info.type);
		out_row_begin(name);
		if (pm.fd >= 0 && rc != LH_EXIT_ERROR) {
			out_uint("id", pm.info.id);
			out_str("type", type ? type : "unknown");
			out_uint("max_entries", pm.info.max_entries);
		}
		out_bool("known", pm.spec != NULL);
		out_bool("compatible", !rc);
		if (rc)
			out_str("error", pm.why);
		out_row_end();
		all_ok &= !rc;
		map_close(&pm);
	}
	out_object_end();
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return all_ok;
}

/* Roles from lh_config (written by longhauld at start), when it is pinned */
static void print_roles(const struct lh_target *t)
{
	struct pinned_map pm;
	struct lh_config c;
	__u32 key = 0;

	if (map_get(t, "lh_config", &pm) || bpf_map_lookup_elem(pm.fd, &key, &c)) {
		map_close(&pm);
		return;
	}
	map_close(&pm);
	out_array_begin("roles");
	if (c.flags & LH_CFG_DEPOT)
		out_str(NULL, "depot");
	if (c.flags & LH_CFG_SENTRY)
		out_str(NULL, "sentry");
	out_array_end();
}

static void print_pool(const struct lh_target *t)
{
	static const char *const maps[][2] = {
		{ "lh_pool", "slots" },
		{ "lh_ring", "rings" },
		{ "lh_qp", "max_qps" },
	};
	struct pinned_map pm;
	unsigned int i;

	if (map_get(t, "lh_pool", &pm)) {
		map_close(&pm);
		out_null("pool");
		return;
	}
	map_close(&pm);
	out_object_begin("pool");
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		if (!map_get(t, maps[i][0], &pm))
			out_uint(maps[i][1], pm.info.max_entries);
		else
			out_null(maps[i][1]);
		map_close(&pm);
	}
	out_object_end();
}

/* Numbers of the lock file other than pid and start time: the agent's options */
static void print_options(const struct agent_info *ai)
{
	int i;

	out_object_begin("options");
	for (i = 0; i < ai->nr_kv; i++) {
		const struct agent_kv *kv = &ai->kv[i];

		if (!kv->is_num || !strcmp(kv->key, "pid") || !strcmp(kv->key, "started"))
			continue;
		out_int(kv->key, kv->num);
	}
	out_object_end();
}

int do_status_show(struct lh_cli *cli)
{
	const struct lh_target *t = &cli->target;
	struct agent_info ai;
	long long started;
	bool maps_ok;
	int pid;

	agent_probe(t, &ai);
	pid = agent_pid(&ai);

	out_key_width(16);
	out_object_begin(NULL);
	out_str("instance", t->instance[0] ? t->instance : NULL);
	out_str("pin_dir", t->pin_dir);
	out_str("lock_file", ai.lock_exists ? ai.lock_path : NULL);
	out_bool("running", ai.running);
	if (ai.running && pid)
		out_uint("pid", (uint64_t)pid);
	else
		out_null("pid");
	out_bool("pid_alive", ai.running && pid_alive(pid));
	out_str("mode", agent_str(&ai, "mode"));
	if (agent_num(&ai, "started", &started) && started > 0) {
		out_uint("started", (uint64_t)started);
		if (ai.running && time(NULL) >= started)
			out_usec("uptime_us", (uint64_t)(time(NULL) - started) * 1000000);
		else
			out_usec("uptime_us", OUT_USEC_NONE);
	} else {
		out_null("started");
		out_usec("uptime_us", OUT_USEC_NONE);
	}
	print_roles(t);
	print_options(&ai);
	print_interfaces(&ai, pid);
	print_pool(t);
	maps_ok = print_maps(t);
	out_object_end();
	out_finish();

	if (!ai.running) {
		pr_err("no longhauld runs for %s%s\n", target_name(t),
		       ai.lock_exists ? " (its lock file is not held: the agent stopped)" : "");
		hint_running_instances();
		return LH_EXIT_NO_AGENT;
	}
	if (!maps_ok) {
		pr_err("pinned maps of %s are incompatible with this build (see maps)\n",
		       target_name(t));
		return LH_EXIT_INCOMPAT;
	}
	return LH_EXIT_OK;
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

static int is_lock(const struct dirent *de)
{
	return lh_lock_file_name(de->d_name);
}

int do_status_list(struct lh_cli *cli)
{
	struct dirent **names = NULL;
	char path[PATH_MAX + 300], head[PATH_MAX + 64], wans[8][64];
	struct agent_info ai;
	long long started;
	int n, i, j, wn, shown = 0;

	n = scandir(LOCK_DIR, &names, is_lock, alphasort);
	out_key_width(16);
	out_array_begin(NULL);
	for (i = 0; i < n; i++) {
		const char *pd, *inst;

		snprintf(path, sizeof(path), LOCK_DIR "/%s", names[i]->d_name);
		if (!agent_probe_file(path, &ai) || (!ai.running && !cli->opt.all))
			continue;
		pd = agent_str(&ai, "pin_dir");
		inst = pd ? lh_instance_of(pd) : NULL;
		snprintf(head, sizeof(head), "%s", inst ? inst : pd ? pd : names[i]->d_name);
		out_object_begin(head);
		out_str("instance", inst);
		out_str("pin_dir", pd);
		out_bool("running", ai.running);
		if (ai.running && agent_pid(&ai))
			out_uint("pid", (uint64_t)agent_pid(&ai));
		else
			out_null("pid");
		out_str("mode", agent_str(&ai, "mode"));
		out_str("dc", nonempty(agent_str(&ai, "dc")));
		out_str("wan", nonempty(agent_str(&ai, "wan")));
		wn = wan_names(&ai, wans, 8);
		out_array_begin("wans");
		for (j = 0; j < wn; j++)
			out_str(NULL, wans[j]);
		out_array_end();
		if (agent_num(&ai, "started", &started))
			out_int("started", started);
		else
			out_null("started");
		out_str("lock_file", path);
		out_object_end();
		shown++;
	}
	out_array_end();
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	if (!shown && !out_json())
		printf("no longhauld runs on this host\n");
	return LH_EXIT_OK;
}
