/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where an agent's instance lives, as longhauld makes it and longhaul finds
 * it: its pin directory on the bpffs and its lock file.
 */
#ifndef LH_USER_INSTANCE_H
#define LH_USER_INSTANCE_H

#include <stddef.h>

/* pin directories: DEFAULT_PIN_ROOT/INSTANCE, or DEFAULT_PIN_ROOT itself without --instance */
#define DEFAULT_PIN_ROOT "/sys/fs/bpf/longhaul"
#define PIN_DIR_MAX 200 /* bpffs path of the pins; leaves room for map names */
#define LOCK_DIR "/run/longhaul"

/* longhauld's lock file of pin_dir: LOCK_DIR/PIN_DIR.lock, every '/' made '_' */
void lh_lock_path(char *buf, size_t size, const char *pin_dir);

#endif
