// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `lhpkt check`: every packet of classic pcap captures parsed, and the ICRC
 * of each RoCEv2 one recomputed (the independent ICRC check of a gateway
 * capture): the bad ones and the totals, as text or JSON.
 */
#include <errno.h>
#include <string.h>

#include "json.h"
#include "lhpkt.h"
#include "opts.h"
#include "pcap.h"

struct check_totals {
	unsigned long packets, roce, icrc_ok, icrc_bad, not_roce[LH_STAT_MAX];
};

/* The options of check */
struct check_opts {
	bool json;
};

static const struct lh_opt check_opt_table[] = {
	{ .type = LH_OPT_HEADING, .help = "check:" },
	{ .type = LH_OPT_FLAG,
	  .short_opt = 'j',
	  LH_FIELD(struct check_opts, json),
	  .help = "JSON on stdout: the packets with a bad ICRC, the totals" },
	{ .type = LH_OPT_HELP, .short_opt = 'h', .help = "this help" },
	{ .type = LH_OPT_END },
};

static const struct lh_opts check_opts = { .opts = check_opt_table, .usage = lhpkt_usage };

void check_opts_print(FILE *f)
{
	lh_opts_print(f, check_opt_table);
}

/* A packet whose ICRC is wrong: its place, its headers, both ICRCs */
static void print_bad(struct lh_json *j, const char *path, unsigned long idx,
		      const struct lh_pkt *p, uint32_t want)
{
	if (!j) {
		printf("%s #%lu: %s QP 0x%06x PSN %u: ICRC 0x%08x on the wire, 0x%08x computed\n",
		       path, idx, lh_opcode_name(p->roce.opcode), p->roce.dqpn, p->roce.psn,
		       p->icrc, want);
		return;
	}
	lh_json_start_object(j);
	lh_json_string_field(j, "file", path);
	lh_json_uint_field(j, "index", idx);
	lh_json_string_field(j, "opcode", lh_opcode_name(p->roce.opcode));
	lh_json_uint_field(j, "qpn", p->roce.dqpn);
	lh_json_uint_field(j, "psn", p->roce.psn);
	lh_json_uint_field(j, "icrc_wire", p->icrc);
	lh_json_uint_field(j, "icrc_computed", want);
	lh_json_end_object(j);
}

/* Open a capture of a link type check reads; 0 or EXIT_IO, the reason printed */
static int open_capture(struct lh_pcap *pc, const char *path)
{
	int err = lh_pcap_open(pc, path);

	if (err) {
		fprintf(stderr, "lhpkt: %s: %s\n", path,
			err == -EPROTO ? "not a classic pcap file (pcapng? use tcpdump -w)"
				       : strerror(-err));
		return EXIT_IO;
	}
	if (pc->linktype != LH_PCAP_LINKTYPE_ETHERNET && pc->linktype != LH_PCAP_LINKTYPE_RAW) {
		fprintf(stderr, "lhpkt: %s: link type %u not supported (Ethernet or raw IP)\n",
			path, pc->linktype);
		lh_pcap_close(pc);
		return EXIT_IO;
	}
	return 0;
}

/* Every packet of one capture counted into t, the bad ones printed; 0 or EXIT_IO */
static int check_file(const char *path, struct lh_json *j, struct check_totals *t)
{
	static uint8_t buf[262144];
	struct lh_pcap pc;
	size_t len, orig;
	unsigned long idx = 0;
	int r, err = open_capture(&pc, path);

	if (err)
		return err;
	while ((r = lh_pcap_next(&pc, buf, sizeof(buf), &len, &orig, NULL)) == 1) {
		struct lh_pkt p;
		uint32_t want = 0;

		idx++;
		t->packets++;
		if (lh_pkt_parse(buf, len, pc.linktype == LH_PCAP_LINKTYPE_ETHERNET, &p) !=
		    LH_STAT_ROCE) {
			/* a snapped RoCE packet is a capture problem, not a bad ICRC */
			t->not_roce[p.result]++;
			continue;
		}
		t->roce++;
		lh_pkt_icrc_calc(buf, &p, &want);
		if (want == p.icrc) {
			t->icrc_ok++;
			continue;
		}
		t->icrc_bad++;
		print_bad(j, path, idx, &p, want);
	}
	lh_pcap_close(&pc);
	if (r < 0) {
		fprintf(stderr, "lhpkt: %s: truncated or corrupt capture\n", path);
		return EXIT_IO;
	}
	return 0;
}

/* The JSON document's end: after the bad packets, the totals */
static void print_totals_json(struct lh_json *j, const struct check_totals *t)
{
	int s;

	lh_json_end_array(j);
	lh_json_uint_field(j, "packets", t->packets);
	lh_json_uint_field(j, "roce", t->roce);
	lh_json_uint_field(j, "icrc_ok", t->icrc_ok);
	lh_json_uint_field(j, "icrc_bad", t->icrc_bad);
	lh_json_name(j, "not_roce");
	lh_json_start_object(j);
	for (s = 0; s < LH_STAT_MAX; s++)
		if (t->not_roce[s])
			lh_json_uint_field(j, lh_stat_name((enum lh_stat)s), t->not_roce[s]);
	lh_json_end_object(j);
	lh_json_end_object(j);
}

int cmd_check(int argc, char **argv)
{
	struct check_totals t = { 0 };
	struct check_opts o = { 0 };
	struct lh_json *j = NULL;
	int i, first, rc = 0;

	first = lh_opts_parse(&check_opts, argc, argv, &o);
	if (first < 0)
		return EXIT_USAGE;
	if (first == argc) {
		fprintf(stderr, "lhpkt check: no capture file given\n");
		return EXIT_USAGE;
	}
	if (o.json) {
		j = lh_json_new(stdout, false);
		lh_json_start_object(j);
		lh_json_name(j, "bad");
		lh_json_start_array(j);
	}
	for (i = first; i < argc && !rc; i++)
		rc = check_file(argv[i], j, &t);
	if (j) {
		print_totals_json(j, &t);
		lh_json_free(j);
	} else {
		printf("%lu packets, %lu RoCEv2: %lu ICRC valid, %lu ICRC wrong\n", t.packets,
		       t.roce, t.icrc_ok, t.icrc_bad);
	}
	if (rc)
		return rc;
	return t.icrc_bad ? EXIT_BAD_ICRC : 0;
}
