// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* The XDP pass program the emulator puts on its veth ports (lhwan.h says why) */
#include <errno.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lhwan.h"

int xdp_pass_attach(int ifindex)
{
	/* r0 = XDP_PASS; exit */
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS},
		{.code = BPF_JMP | BPF_EXIT},
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts);
	int fd, err;

	fd = bpf_prog_load(BPF_PROG_TYPE_XDP, "lhwan_pass", "Dual BSD/GPL", insns, 2, &opts);
	if (fd < 0)
		return -errno;
	/* never replace a program somebody else attached */
	err = bpf_xdp_attach(ifindex, fd, XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err == -EBUSY || err == -EEXIST) {
		close(fd);
		return 0;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

void xdp_pass_detach(int ifindex, int prog_fd)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = prog_fd);

	if (prog_fd <= 0)
		return;
	/* only if it is still ours */
	bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE, &opts);
	close(prog_fd);
}
