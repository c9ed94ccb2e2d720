# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# longhaul: out-of-tree build into $(O) (default build/).
#   make [all]     BPF objects, skeletons, build/bin/* programs, unit-test binaries
#   make deps      install every package the project needs (Debian 12, root)
#   make vmlinux   regenerate vmlinux/vmlinux.h from the running kernel's BTF
#   make test      unit then integration tests; test-unit / test-integ run each half
#   make bench     measurements into $(O)/bench/ and docs/PERFORMANCE.md
#   make demo      the main comparison in the two-dc topology
#   make interop-image   the qemu guest with Soft-RoCE (rxe) peers, into $(O)/interop/
#   make check     clang-tidy and cppcheck;  make fmt   clang-format in place
#   V=1 shows full commands.

O ?= build
override O := $(abspath $(O))

CLANG ?= clang-19
LLVM_STRIP ?= llvm-strip-19
BPFTOOL ?= bpftool
ifeq ($(origin CC),default)
CC := gcc
endif
PKG_CONFIG ?= pkg-config

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(patsubst $(O)/%,%,$(2))";
endif

ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

LIBBPF_CFLAGS := $(shell $(PKG_CONFIG) --cflags libbpf 2>/dev/null)
LIBBPF_LIBS := $(or $(shell $(PKG_CONFIG) --libs libbpf 2>/dev/null),-lbpf)

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
# json-c: longhauld's lock file (user/lib/lockfile.c, which includes <json-c/json.h>: its
# pkg-config -I would put json-c's json.h before user/lib's)
JSONC_LIBS := $(or $(shell $(PKG_CONFIG) --libs json-c 2>/dev/null),-ljson-c)
USER_CFLAGS := $(CFLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -MMD -MP \
	-Iinclude -Iuser/lib -I$(O)/gen -I$(O)/skel $(LIBBPF_CFLAGS)
LDLIBS := $(LIBBPF_LIBS) $(JSONC_LIBS) -lelf -lz -lpthread -lm
BPF_CFLAGS := -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_$(ARCH) $(WARN) -MMD -MP \
	-Ivmlinux -Iinclude -Ibpf -I$(O)/gen $(LIBBPF_CFLAGS)
# TRACE=1: the Sentry's decisions to the trace buffer (bpf/lib/common.h lh_trace);
# build it apart, e.g. make O=build-trace TRACE=1
ifeq ($(TRACE),1)
BPF_CFLAGS += -DLH_TRACE
endif

# BPF programs: one object and one skeleton per bpf/*.bpf.c
BPF_SRCS := $(wildcard bpf/*.bpf.c)
BPF_OBJS := $(patsubst bpf/%.bpf.c,$(O)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS := $(patsubst bpf/%.bpf.c,$(O)/skel/%.skel.h,$(BPF_SRCS))

# Shared user-space library
LIB_SRCS := $(wildcard user/lib/*.c)
LIB_OBJS := $(patsubst user/%.c,$(O)/obj/%.o,$(LIB_SRCS))
LIB := $(O)/lib/liblonghaul.a

# Programs: every user/<name>/ other than lib/ builds $(O)/bin/<name>
PROGS := $(filter-out lib,$(patsubst user/%/,%,$(sort $(dir $(wildcard user/*/*.c)))))
BINS := $(patsubst %,$(O)/bin/%,$(PROGS))

# Unit tests: tests/unit/test_*.c, each linked with tests/unit/lib/*.c
TEST_LIB_SRCS := $(wildcard tests/unit/lib/*.c)
TEST_LIB_OBJS := $(patsubst tests/%.c,$(O)/obj/tests/%.o,$(TEST_LIB_SRCS))
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(O)/tests/unit/%,$(UNIT_SRCS))

# Bench programs: tests/bench/*.c, linked like the unit tests
BENCH_SRCS := $(wildcard tests/bench/*.c)
BENCH_BINS := $(patsubst tests/bench/%.c,$(O)/tests/bench/%,$(BENCH_SRCS))

GEN_HDRS := $(O)/gen/lh_crc32_table.h

.PHONY: all deps vmlinux test test-unit test-integ bench demo soak check fmt clean interop-image
.DEFAULT_GOAL := all
.SECONDARY:

all: $(BPF_OBJS) $(SKELS) $(LIB) $(BINS) $(UNIT_BINS) $(BENCH_BINS)

deps:
	$(Q)bash scripts/deps.sh

vmlinux:
	$(call msg,GEN,vmlinux/vmlinux.h)
	$(Q)$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h.tmp
	$(Q)mv vmlinux/vmlinux.h.tmp vmlinux/vmlinux.h
	$(Q)printf '%s\n' "$$(uname -r)" > vmlinux/KERNEL

# ---- generated headers ----
$(O)/gen/lh_crc32_table.h: scripts/gen_crc32_table.c | $(O)/gen $(O)/tools
	$(call msg,GEN,$@)
	$(Q)$(CC) -O2 -Wall -Wextra -Werror -o $(O)/tools/gen_crc32_table $<
	$(Q)$(O)/tools/gen_crc32_table > $@.tmp && mv $@.tmp $@

# ---- BPF ----
$(O)/bpf/%.bpf.o: bpf/%.bpf.c $(GEN_HDRS) | $(O)/bpf
	$(call msg,BPF,$@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -MF $(O)/bpf/$*.d -MT $@ -c $< -o $@.tmp.o
	$(Q)$(BPFTOOL) gen object $@ $@.tmp.o
	$(Q)rm -f $@.tmp.o

$(O)/skel/%.skel.h: $(O)/bpf/%.bpf.o | $(O)/skel
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@.tmp && mv $@.tmp $@

# ---- user space ----
$(O)/obj/%.o: user/%.c $(GEN_HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJS) | $(O)/lib
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

define PROG_RULE
$(O)/bin/$(1): $(patsubst user/%.c,$(O)/obj/%.o,$(wildcard user/$(1)/*.c)) $(LIB) | $(O)/bin
	$$(call msg,LINK,$$@)
	$(Q)$$(CC) $$(USER_CFLAGS) -o $$@ $$^ $$(LDLIBS)
endef
$(foreach p,$(PROGS),$(eval $(call PROG_RULE,$(p))))

# ---- unit tests ----
$(O)/obj/tests/%.o: tests/%.c $(GEN_HDRS) $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(USER_CFLAGS) -Itests/unit/lib -DLH_BUILD_DIR='"$(O)"' -c $< -o $@

$(O)/tests/unit/%: $(O)/obj/tests/unit/%.o $(TEST_LIB_OBJS) $(LIB) | $(O)/tests/unit
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) -o $@ $^ $(LDLIBS)

$(O)/tests/bench/%: $(O)/obj/tests/bench/%.o $(TEST_LIB_OBJS) $(LIB) | $(O)/tests/bench
	$(call msg,LINK,$@)
	$(Q)$(CC) $(USER_CFLAGS) -o $@ $^ $(LDLIBS)

$(O)/gen $(O)/tools $(O)/bpf $(O)/skel $(O)/lib $(O)/bin $(O)/tests/unit $(O)/tests/bench:
	$(Q)mkdir -p $@

# ---- tests, bench, demo ----
test: all
	$(Q)O=$(O) bash tests/run.sh all

test-unit: all
	$(Q)O=$(O) bash tests/run.sh unit

test-integ: all
	$(Q)O=$(O) bash tests/run.sh integ

bench: all
	$(Q)O=$(O) bash tests/bench/run.sh

demo: all
	$(Q)O=$(O) bash scripts/demo.sh

# not in CI: a 10-minute transfer while the gateways' agents are replaced every
# minute (SOAK_MINUTES, SOAK_EVERY); passes with 0 QP errors and empty pools after
soak: all
	$(Q)O=$(O) bash tests/soak/restart-soak.sh

# the rxe guest of tests/interop (Debian packages only); rebuilt when they or its scripts change
interop-image:
	$(Q)O=$(O) bash tests/interop/build-image.sh

# ---- style ----
C_SRCS = $(shell git ls-files '*.c' '*.h' | grep -v '^vmlinux/')
fmt:
	$(Q)clang-format -i $(C_SRCS)

# unix.Malloc: bpftool's generated skeletons trip it (a false leak inside *__create_skeleton)
TIDY_CHECKS := -*,clang-analyzer-*,bugprone-*,-bugprone-easily-swappable-parameters,-clang-analyzer-unix.Malloc,\
	-bugprone-reserved-identifier,-bugprone-narrowing-conversions,\
	-bugprone-assignment-in-if-condition,-clang-analyzer-valist.Uninitialized,\
	-clang-analyzer-security.insecureAPI.DeprecatedOrUnsafeBufferHandling
check: all
	$(Q)cppcheck -q --error-exitcode=1 --enable=warning,portability \
		--suppress=missingIncludeSystem --suppress=unknownMacro \
		-Iinclude -Iuser/lib -I$(O)/gen -I$(O)/skel -D__x86_64__ \
		$(filter user/%.c tests/%.c,$(C_SRCS))
	$(Q)clang-tidy -quiet --checks='$(TIDY_CHECKS)' --warnings-as-errors='*' \
		$(filter user/%.c,$(C_SRCS)) -- -std=gnu11 -D_GNU_SOURCE \
		-Iinclude -Iuser/lib -isystem $(O)/gen -isystem $(O)/skel

clean:
	$(Q)rm -rf $(O)

-include $(shell find $(O) -name '*.d' -type f 2>/dev/null)
