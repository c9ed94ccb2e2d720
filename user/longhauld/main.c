// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhauld: the longhaul agent on a gateway. Takes the instance lock, loads
 * and attaches the BPF programs of its mode (datapath.c), pins the maps an
 * operator or a test reads, runs the agent loop (agent.c) until SIGINT or
 * SIGTERM, and detaches cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "agent.h"
#include "config.h"
#include "credit.h"
#include "datapath.h"
#include "lockfile.h"
#include "log.h"

#define BPF_FS_MAGIC_NUM 0xcafe4a11

/* 1: stop; STOP_KEEP: stop and leave the data path running for the next agent */
#define STOP_KEEP 2
static volatile int stop;

static void on_signal(int sig)
{
	stop = sig == SIGUSR2 ? STOP_KEEP : 1;
}

/* mkdir -p for the pin directory, which must be on a bpf filesystem */
static int prepare_pin_dir(const char *dir)
{
	char path[PIN_DIR_MAX], *p;
	struct statfs st;

	snprintf(path, sizeof(path), "%s", dir);
	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(path, 0700) && errno != EEXIST)
		return -errno;
	if (statfs(path, &st))
		return -errno;
	if ((unsigned long)st.f_type != BPF_FS_MAGIC_NUM)
		return -ENOTSUP;
	return 0;
}

/* Mount bpffs at /sys/fs/bpf when nothing is mounted there (fresh machines) */
static void ensure_bpffs(void)
{
	struct statfs st;

	if (!statfs("/sys/fs/bpf", &st) && (unsigned long)st.f_type == BPF_FS_MAGIC_NUM)
		return;
	if (mount("bpf", "/sys/fs/bpf", "bpf", 0, "mode=0700"))
		pr_debug("mount bpffs on /sys/fs/bpf: %s\n", strerror(errno));
}

/*
 * One agent per pin directory: an flock'ed file named after it, held until
 * exit (the kernel drops it if we crash). It also says who holds it, for
 * `longhaul status`: pid, mode, interfaces, pin directory, start time.
 */
static char lock_path[PIN_DIR_MAX + 32];

static const char *mode_name(enum lh_mode m)
{
	return m == MODE_LR2 ? "lr2" : m == MODE_CREDIT ? "credit" : "observe";
}

static int take_lock(const struct lhd_config *cfg)
{
	struct stat a, b;
	int fd;

	if (mkdir(LOCK_DIR, 0755) && errno != EEXIST)
		return -errno;
	lh_lock_path(lock_path, sizeof(lock_path), cfg->pin_dir);
	for (;;) {
		fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

			close(fd);
			return err;
		}
		/* the holder before us may have unlinked it at exit: lock the file the path names */
		if (!fstat(fd, &a) && !stat(lock_path, &b) && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev)
			break;
		close(fd);
	}
	return fd;
}

static const char *roles_name(const struct lhd_config *cfg)
{
	if (cfg->mode != MODE_LR2)
		return "";
	return cfg->depot && cfg->sentry ? "depot,sentry" : cfg->depot ? "depot" : "sentry";
}

/*
 * What the lock file says of its holder, once the map sizes are known. Its
 * "wan" is the first WAN interface (what one-interface readers had), "wans"
 * all of them in --wan order.
 */
static void write_lock_info(int fd, const struct lhd_config *cfg)
{
	struct json_object *o = json_object_new_object(), *wans = json_object_new_array();
	int i, err;

	for (i = 0; wans && i < cfg->n_wan; i++)
		json_object_array_add(wans, json_object_new_string(cfg->wan[i].name));
	if (!o || !wans) {
		json_object_put(o);
		json_object_put(wans);
		pr_warn("lock file %s: out of memory (longhaul status cannot tell this agent)\n",
			lock_path);
		return;
	}
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "mode", json_object_new_string(mode_name(cfg->mode)));
	json_object_object_add(o, "roles", json_object_new_string(roles_name(cfg)));
	json_object_object_add(o, "dc", json_object_new_string(cfg->dc.name));
	json_object_object_add(o, "wan", json_object_new_string(cfg->n_wan ? cfg->wan[0].name : ""));
	json_object_object_add(o, "wans", wans);
	json_object_object_add(o, "pin_dir", json_object_new_string(cfg->pin_dir));
	json_object_object_add(o, "started", json_object_new_int64((int64_t)time(NULL)));
	json_object_object_add(o, "pool_slots", json_object_new_int64(cfg->pool_slots));
	json_object_object_add(o, "max_qps", json_object_new_int64(cfg->max_qps));
	json_object_object_add(o, "rings", json_object_new_int64(cfg->rings));
	json_object_object_add(o, "wan_rtt_us", json_object_new_int64(cfg->wan_rtt_us));
	json_object_object_add(o, "nack_timeout_us", json_object_new_int64(cfg->nack_timeout_us));
	err = lh_lockfile_write(fd, o);
	if (err)
		pr_warn("lock file %s: %s (longhaul status cannot tell this agent)\n", lock_path,
			strerror(-err));
	json_object_put(o);
}

/*
 * --takeover of the instance's running agent: this build's programs are
 * loaded and verified beside it (maps shared through their pins), then it is
 * asked to stop keeping its data path (SIGUSR2) and, once its lock is free,
 * its links are given these programs. What runs between its stop and this
 * attach is the data path alone: the agent's timers wait only that long
 * (about 0.15 s here), not a whole load (about 1 s). Returns the lock fd, or
 * -EXIT_* with the data path unloaded.
 */
static int take_over(struct lhd_config *cfg, struct lhd_datapath *dp, bool *loaded)
{
	int pid = lh_lockfile_pid(lock_path), fd = -EBUSY, rc, i;
	bool same;

	if (!pid) {
		pr_warn("--takeover: the lock of %s names no running agent\n", cfg->pin_dir);
		return -EXIT_BUSY;
	}
	if (!lhd_datapath_maps_fit(cfg)) {
		pr_warn("--takeover: the running agent's maps cannot serve this build (above): "
			"stop it, then start this one (what it holds is lost)\n");
		return -EXIT_BUSY;
	}
	/*
	 * The running agent runs this very build: its programs serve as they are
	 * (adopted with the data path it keeps, no load); else this build's are
	 * loaded and verified first, beside it
	 */
	same = !cfg->reload && lhd_datapath_same_build(cfg);
	*loaded = !same;
	if (same) {
		pr_info("the running longhauld (pid %d) runs this very build: asking it to stop and "
			"keep its data path, whose programs this one reuses\n", pid);
	} else {
		rc = lhd_datapath_load(dp, cfg, true);
		if (rc)
			return -rc;
		pr_info("loaded beside the running longhauld (pid %d): asking it to stop and keep "
			"its data path\n", pid);
	}
	if (kill(pid, SIGUSR2)) {
		pr_warn("--takeover: signal pid %d: %s\n", pid, strerror(errno));
		if (!same)
			lhd_datapath_down(dp, cfg, false);
		return -EXIT_BUSY;
	}
	for (i = 0; i < 2000 && fd == -EBUSY; i++) {
		fd = take_lock(cfg);
		if (fd == -EBUSY)
			usleep(5000);
	}
	if (fd < 0) {
		pr_warn("--takeover: pid %d did not stop within 10 s\n", pid);
		if (!same)
			lhd_datapath_down(dp, cfg, false);
		return -EXIT_BUSY;
	}
	if (same)
		return fd; /* the caller adopts what it kept (lhd_datapath_probe_kept) */
	if (!lhd_datapath_probe_kept(cfg)) {
		/* it stopped without keeping (a crash, or another build took its data path down) */
		pr_warn("--takeover: pid %d left no data path to adopt: starting fresh\n", pid);
		lhd_datapath_down(dp, cfg, false);
		rc = lhd_datapath_load(dp, cfg, false);
		if (rc) {
			close(fd);
			return -rc;
		}
	}
	return fd;
}

/*
 * NAKs the data path creates carry the receiver's address and are forwarded
 * like any packet: strict reverse-path filtering would drop them on the
 * interface they arrive on, and a NAK sent back out the interface it came in
 * on would make the kernel send ICMP redirects. Set what is needed on our two
 * interfaces only, and say so.
 */
static void set_sysctl(const char *iface, const char *key, const char *want, const char *bad)
{
	char path[128], cur[16] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/%s", iface, key);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(cur, sizeof(cur), f))
		cur[0] = 0;
	fclose(f);
	if (strncmp(cur, bad, strlen(bad)) != 0)
		return;
	f = fopen(path, "w");
	if (f) {
		fputs(want, f);
		fclose(f);
		pr_info("set net.ipv4.conf.%s.%s = %s (was %s)\n", iface, key, want, bad);
	}
}

/*
 * Each WAN interface gets what the one did: loose reverse-path filtering
 * (with several paths, a packet may also come in by an interface that is
 * not the route back to its source), and the forwarding check.
 */
static void gateway_sysctls(const struct lhd_config *cfg)
{
	char path[128], cur[8];
	FILE *f;
	int i;

	set_sysctl(cfg->dc.name, "rp_filter", "2", "1");
	for (i = 0; i < cfg->n_wan; i++)
		set_sysctl(cfg->wan[i].name, "rp_filter", "2", "1");
	set_sysctl("all", "rp_filter", "2", "1");
	set_sysctl(cfg->dc.name, "send_redirects", "0", "1");
	set_sysctl("all", "send_redirects", "0", "1");
	for (i = 0; i < cfg->n_wan; i++) {
		snprintf(path, sizeof(path), "/proc/sys/net/ipv4/conf/%s/forwarding",
			 cfg->wan[i].name);
		f = fopen(path, "r");
		if (!f)
			continue;
		cur[0] = 0;
		if (fgets(cur, sizeof(cur), f) && cur[0] == '0')
			pr_warn("IPv4 forwarding is off on %s: this host does not route, so RoCEv2 "
				"will not cross it\n", cfg->wan[i].name);
		fclose(f);
	}
}

static int resolve(struct lh_iface *ifc, const char *role)
{
	if (!ifc->name[0])
		return 0;
	ifc->ifindex = (int)if_nametoindex(ifc->name);
	if (!ifc->ifindex) {
		pr_warn("--%s %s: no such interface in this network namespace\n", role, ifc->name);
		return EXIT_NO_IFACE;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct lhd_datapath dp;
	struct lhd_config cfg;
	struct sigaction sa = { .sa_handler = on_signal };
	int rc, lock_fd, err, adopt;
	bool keep, loaded;

	lh_log_init("longhauld", LH_LOG_INFO);
	lh_log_route_libbpf();
	rc = lhd_config_parse(argc, argv, &cfg);
	if (rc)
		return rc;
	if (cfg.verbose)
		lh_log_set_level(LH_LOG_DEBUG);
	rc = resolve(&cfg.dc, "dc");
	for (int i = 0; !rc && i < cfg.n_wan; i++)
		rc = resolve(&cfg.wan[i], "wan");
	for (int i = 0; !rc && i < cfg.n_cr_routes; i++)
		rc = resolve(&cfg.cr_routes[i].ifc, "credit-route");
	if (rc)
		return rc;
	/* two names of one interface (an altname): the name checks could not see it */
	for (int i = 0; i < cfg.n_wan; i++) {
		for (int j = -1; j < i; j++) {
			const struct lh_iface *o = j < 0 ? &cfg.dc : &cfg.wan[j];

			if (o->ifindex == cfg.wan[i].ifindex) {
				pr_warn("--wan %s: the same interface as --%s %s\n", cfg.wan[i].name,
					j < 0 ? "dc" : "wan", o->name);
				return EXIT_USAGE;
			}
		}
	}

	ensure_bpffs();
	err = prepare_pin_dir(cfg.pin_dir);
	if (err) {
		pr_warn("pin directory %s: %s\n", cfg.pin_dir,
			err == -ENOTSUP ? "not on a bpf filesystem" : strerror(-err));
		return EXIT_USAGE;
	}
	lock_fd = take_lock(&cfg);
	loaded = false;
	if (lock_fd == -EBUSY && cfg.takeover) {
		lock_fd = take_over(&cfg, &dp, &loaded);
		if (lock_fd < 0)
			return -lock_fd;
	}
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			pr_warn("another longhauld uses %s: give this one --instance NAME\n",
				cfg.pin_dir);
		else
			pr_warn("lock for %s: %s\n", cfg.pin_dir, strerror(-lock_fd));
		return EXIT_BUSY;
	}

	adopt = loaded ? 1 : lhd_datapath_probe_kept(&cfg);
	write_lock_info(lock_fd, &cfg);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	rc = loaded ? lhd_datapath_attach(&dp, &cfg) : lhd_datapath_up(&dp, &cfg, adopt);
	if (rc) {
		if (!cfg.keep_pins && cfg.instance[0])
			rmdir(cfg.pin_dir);
		unlink(lock_path);
		close(lock_fd);
		return rc;
	}
	if (cfg.mode == MODE_LR2) {
		gateway_sysctls(&cfg);
		pr_info("LR2 (%s%s%s): pool %u slots, %u QPs, Depot-NACK retry %u us\n",
			cfg.depot ? "Depot" : "", cfg.depot && cfg.sentry ? " + " : "",
			cfg.sentry ? "Sentry" : "", cfg.pool_slots, cfg.max_qps, cfg.nack_timeout_us);
	}
	pr_info("maps pinned under %s; running (SIGINT/SIGTERM stops)\n", cfg.pin_dir);

	rc = cfg.mode == MODE_CREDIT ? lhd_credit_run(&cfg, &dp, &stop) : lhd_agent_run(&cfg, &dp, &stop);
	keep = cfg.keep_running || stop == STOP_KEEP;
	pr_info("stopping%s\n", keep ? ", the data path kept running" : "");
	lhd_datapath_down(&dp, &cfg, keep);
	if (!keep && !cfg.keep_pins && cfg.instance[0])
		rmdir(cfg.pin_dir); /* only if empty: never another's pins */
	/*
	 * Still ours: the next agent re-checks the path after locking. With
	 * --keep-pins or a kept data path the file stays (unlocked) beside the
	 * pins it describes, so `longhaul status` can tell what mode and
	 * interfaces the stopped agent had.
	 */
	if (!keep && !cfg.keep_pins)
		unlink(lock_path);
	close(lock_fd);
	return rc;
}
