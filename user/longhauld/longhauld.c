// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * longhauld: the longhaul agent on a gateway. Loads the BPF programs,
 * attaches them to the gateway's interfaces with bpf_link, pins the maps an
 * operator or a test reads under the pin directory, runs until stopped and
 * detaches cleanly.
 *
 * Today it runs the gateway pass-through (bpf/gateway.bpf.c: parse, count,
 * optionally verify ICRCs, pass everything unchanged) on the DC-side and
 * WAN-side interfaces; the Depot and Sentry roles build on this lifecycle.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <linux/if_link.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gateway.skel.h"
#include "log.h"

#define DEFAULT_PIN_ROOT "/sys/fs/bpf/longhaul"
#define LOCK_DIR "/run/longhaul"
#define BPF_FS_MAGIC_NUM 0xcafe4a11
#define MAX_IFACES 2
#define PIN_DIR_MAX 200 /* bpffs path of the pins; leaves room for map names */

/* Exit statuses: one per failure class */
enum {
	EXIT_OK = 0,
	EXIT_USAGE = 2, /* bad flags or config */
	EXIT_NO_IFACE = 3, /* an interface does not exist */
	EXIT_BUSY = 4, /* another instance holds the interface or the pin directory */
	EXIT_KERNEL = 5, /* the kernel refused: missing feature, verifier */
};

enum xdp_mode { XDP_MODE_AUTO_, XDP_MODE_NATIVE_, XDP_MODE_GENERIC_ };

struct iface {
	const char *role; /* "dc" or "wan" */
	const char *name;
	int ifindex;
};

struct config {
	struct iface ifaces[MAX_IFACES];
	int nr_ifaces;
	char pin_dir[PIN_DIR_MAX];
	const char *instance;
	enum xdp_mode xdp_mode;
	bool verify_icrc;
	bool keep_pins;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: longhauld --dc IFACE --wan IFACE [OPTIONS]\n"
		"Attach longhaul to a gateway's DC-side and WAN-side interfaces and run until\n"
		"SIGINT/SIGTERM; the programs are detached and the pins removed on exit.\n"
		"\n"
		"  --dc IFACE          interface toward the local data center\n"
		"  --wan IFACE         interface toward the long haul\n"
		"  --instance NAME     pin under " DEFAULT_PIN_ROOT "/NAME (several gateways on one host)\n"
		"  --pin-dir DIR       pin maps under DIR instead (on a bpf filesystem)\n"
		"  --xdp-mode MODE     auto (native where the driver has it), native, generic\n"
		"  --verify-icrc       recompute every RoCEv2 ICRC and count bad ones\n"
		"  --keep-pins         leave the pinned maps after exit (post-mortem reading)\n"
		"  -v, --verbose       debug messages, libbpf's included\n"
		"  -h, --help\n"
		"\n"
		"Exit status: 0 stopped cleanly, %d bad usage, %d no such interface,\n"
		"%d interface or pin directory in use, %d kernel refused (feature, verifier).\n",
		EXIT_USAGE, EXIT_NO_IFACE, EXIT_BUSY, EXIT_KERNEL);
}

static int parse_args(int argc, char **argv, struct config *cfg)
{
	static const struct option opts[] = {
		{ "dc", required_argument, NULL, 'd' },
		{ "wan", required_argument, NULL, 'w' },
		{ "instance", required_argument, NULL, 'i' },
		{ "pin-dir", required_argument, NULL, 'p' },
		{ "xdp-mode", required_argument, NULL, 'x' },
		{ "verify-icrc", no_argument, NULL, 'c' },
		{ "keep-pins", no_argument, NULL, 'k' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pin_dir = NULL;
	int c, i;

	memset(cfg, 0, sizeof(*cfg));
	while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
		case 'w':
			if (cfg->nr_ifaces == MAX_IFACES) {
				pr_warn("one --dc and one --wan interface\n");
				return -EINVAL;
			}
			cfg->ifaces[cfg->nr_ifaces].role = c == 'd' ? "dc" : "wan";
			cfg->ifaces[cfg->nr_ifaces++].name = optarg;
			break;
		case 'i':
			cfg->instance = optarg;
			break;
		case 'p':
			pin_dir = optarg;
			break;
		case 'x':
			if (!strcmp(optarg, "auto"))
				cfg->xdp_mode = XDP_MODE_AUTO_;
			else if (!strcmp(optarg, "native"))
				cfg->xdp_mode = XDP_MODE_NATIVE_;
			else if (!strcmp(optarg, "generic"))
				cfg->xdp_mode = XDP_MODE_GENERIC_;
			else {
				pr_warn("--xdp-mode: '%s' is not auto, native or generic\n", optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			cfg->verify_icrc = true;
			break;
		case 'k':
			cfg->keep_pins = true;
			break;
		case 'v':
			lh_log_set_level(LH_LOG_DEBUG);
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_OK);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		pr_warn("unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	if (!cfg->nr_ifaces) {
		pr_warn("no interface: give --dc IFACE and/or --wan IFACE\n");
		return -EINVAL;
	}
	if (cfg->nr_ifaces == 2 && !strcmp(cfg->ifaces[0].role, cfg->ifaces[1].role)) {
		pr_warn("--%s given twice\n", cfg->ifaces[0].role);
		return -EINVAL;
	}
	if (cfg->nr_ifaces == 2 && !strcmp(cfg->ifaces[0].name, cfg->ifaces[1].name)) {
		pr_warn("--dc and --wan are the same interface (%s)\n", cfg->ifaces[0].name);
		return -EINVAL;
	}
	if (cfg->instance && (!*cfg->instance || strchr(cfg->instance, '/') ||
			      strlen(cfg->instance) > 64 || cfg->instance[0] == '.')) {
		pr_warn("--instance: '%s' is not a plain name\n", cfg->instance);
		return -EINVAL;
	}
	if (pin_dir && cfg->instance) {
		pr_warn("--pin-dir and --instance both name the pin directory: give one\n");
		return -EINVAL;
	}
	if (pin_dir && strlen(pin_dir) >= sizeof(cfg->pin_dir)) {
		pr_warn("--pin-dir: longer than %zu bytes\n", sizeof(cfg->pin_dir) - 1);
		return -EINVAL;
	}
	if (pin_dir)
		snprintf(cfg->pin_dir, sizeof(cfg->pin_dir), "%s", pin_dir);
	else if (cfg->instance)
		snprintf(cfg->pin_dir, sizeof(cfg->pin_dir), DEFAULT_PIN_ROOT "/%s", cfg->instance);
	else
		snprintf(cfg->pin_dir, sizeof(cfg->pin_dir), DEFAULT_PIN_ROOT);
	for (i = 0; i < cfg->nr_ifaces; i++) {
		if (strlen(cfg->ifaces[i].name) >= IFNAMSIZ) {
			pr_warn("--%s: '%s' is too long for an interface name\n", cfg->ifaces[i].role,
				cfg->ifaces[i].name);
			return -EINVAL;
		}
	}
	return 0;
}

/* mkdir -p for the pin directory, which must be on a bpf filesystem */
static int prepare_pin_dir(const char *dir)
{
	char path[PATH_MAX], *p;
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
 * One agent per pin directory: an flock'ed file named after the directory.
 * Held until exit; the kernel drops it if we crash.
 */
static int take_lock(const char *pin_dir)
{
	char path[PIN_DIR_MAX + 32], name[PIN_DIR_MAX];
	size_t i;
	int fd;

	snprintf(name, sizeof(name), "%s", pin_dir);
	for (i = 0; name[i]; i++)
		if (name[i] == '/')
			name[i] = '_';
	if (mkdir(LOCK_DIR, 0755) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), LOCK_DIR "/%s.lock", name);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;

		close(fd);
		return err;
	}
	return fd;
}

/* Pins a crashed agent left behind: we hold the lock, nobody else uses them */
static void remove_stale_pins(const char *pin_dir, struct bpf_object *obj)
{
	struct bpf_map *map;
	char path[PIN_DIR_MAX + 32];

	bpf_object__for_each_map(map, obj) {
		if (!bpf_map__pin_path(map))
			continue;
		snprintf(path, sizeof(path), "%s/%s", pin_dir, bpf_map__name(map));
		if (!unlink(path))
			pr_info("removed stale pin %s\n", path);
	}
}

static int attach_xdp(struct bpf_program *prog, struct iface *ifc, enum xdp_mode mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts);
	char msg[128];
	int fd, err;

	if (mode == XDP_MODE_NATIVE_)
		opts.flags = XDP_FLAGS_DRV_MODE;
	else if (mode == XDP_MODE_GENERIC_)
		opts.flags = XDP_FLAGS_SKB_MODE;
	fd = bpf_link_create(bpf_program__fd(prog), ifc->ifindex, BPF_XDP, &opts);
	if (fd < 0) {
		err = -errno;
		libbpf_strerror(err, msg, sizeof(msg));
		if (err == -EBUSY || err == -EEXIST)
			pr_warn("attach XDP to %s (%s): an XDP program is already attached there "
				"(another longhauld or tool): %s\n",
				ifc->name, ifc->role, msg);
		else
			pr_warn("attach XDP to %s (%s): %s\n", ifc->name, ifc->role, msg);
		return err;
	}
	return fd;
}

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_object_open_opts, open_opts);
	struct gateway_bpf *skel = NULL;
	int link_fds[MAX_IFACES] = { -1, -1 };
	struct config cfg;
	int err, i, lock_fd = -1, rc = EXIT_KERNEL;
	char msg[128];

	lh_log_init("longhauld", LH_LOG_INFO);
	lh_log_route_libbpf();
	if (parse_args(argc, argv, &cfg))
		return EXIT_USAGE;

	for (i = 0; i < cfg.nr_ifaces; i++) {
		cfg.ifaces[i].ifindex = (int)if_nametoindex(cfg.ifaces[i].name);
		if (!cfg.ifaces[i].ifindex) {
			pr_warn("--%s %s: no such interface in this network namespace\n",
				cfg.ifaces[i].role, cfg.ifaces[i].name);
			return EXIT_NO_IFACE;
		}
	}

	ensure_bpffs();
	err = prepare_pin_dir(cfg.pin_dir);
	if (err) {
		pr_warn("pin directory %s: %s\n", cfg.pin_dir,
			err == -ENOTSUP ? "not on a bpf filesystem" : strerror(-err));
		return EXIT_USAGE;
	}
	lock_fd = take_lock(cfg.pin_dir);
	if (lock_fd < 0) {
		if (lock_fd == -EBUSY)
			pr_warn("another longhauld uses %s: give this one --instance NAME\n",
				cfg.pin_dir);
		else
			pr_warn("lock for %s: %s\n", cfg.pin_dir, strerror(-lock_fd));
		return EXIT_BUSY;
	}

	/* open: maps with LIBBPF_PIN_BY_NAME are pinned under pin_root_path at load */
	open_opts.pin_root_path = cfg.pin_dir;
	skel = gateway_bpf__open_opts(&open_opts);
	if (!skel) {
		err = -errno;
		libbpf_strerror(err, msg, sizeof(msg));
		pr_warn("open BPF object: %s\n", msg);
		goto out;
	}
	skel->rodata->lh_verify_icrc = cfg.verify_icrc;
	remove_stale_pins(cfg.pin_dir, skel->obj);

	err = gateway_bpf__load(skel);
	if (err) {
		libbpf_strerror(err, msg, sizeof(msg));
		pr_warn("load BPF programs: %s (kernel too old or verifier refused; -v shows why)\n",
			msg);
		goto out;
	}

	for (i = 0; i < cfg.nr_ifaces; i++) {
		link_fds[i] = attach_xdp(skel->progs.lh_gateway, &cfg.ifaces[i], cfg.xdp_mode);
		if (link_fds[i] < 0) {
			rc = (link_fds[i] == -EBUSY || link_fds[i] == -EEXIST) ? EXIT_BUSY : EXIT_KERNEL;
			goto out_detach;
		}
		pr_info("attached gateway XDP to %s (%s side, ifindex %d)\n", cfg.ifaces[i].name,
			cfg.ifaces[i].role, cfg.ifaces[i].ifindex);
	}
	pr_info("maps pinned under %s; running (SIGINT/SIGTERM stops)\n", cfg.pin_dir);

	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!stop)
		pause();
	pr_info("stopping\n");
	rc = EXIT_OK;

out_detach:
	for (i = 0; i < MAX_IFACES; i++)
		if (link_fds[i] >= 0)
			close(link_fds[i]); /* closing the last link fd detaches the program */
	if (!cfg.keep_pins) {
		bpf_object__unpin_maps(skel->obj, NULL);
		if (cfg.instance)
			rmdir(cfg.pin_dir); /* only if empty: never another's pins */
	}
out:
	gateway_bpf__destroy(skel);
	if (lock_fd >= 0)
		close(lock_fd);
	return rc;
}
