/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Where an agent's instance lives, as longhauld makes it and longhaul finds
 * it: its pin directory on the bpffs and its lock file.
 */
#ifndef LH_USER_INSTANCE_H
#define LH_USER_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>

/* pin directories: DEFAULT_PIN_ROOT/INSTANCE, or DEFAULT_PIN_ROOT itself without --instance */
#define DEFAULT_PIN_ROOT "/sys/fs/bpf/longhaul"
#define PIN_DIR_MAX 200 /* bpffs path of the pins; leaves room for map names */
#define LOCK_DIR "/run/longhaul"
#define LH_INSTANCE_MAX 65 /* bytes of an instance name, its NUL included */

/* name is one longhauld takes for --instance: no '/', no leading '.', under LH_INSTANCE_MAX */
bool lh_instance_name_ok(const char *name);
/* The pin directory of an instance: DEFAULT_PIN_ROOT/NAME, DEFAULT_PIN_ROOT for none ("") */
void lh_instance_pin_dir(char *buf, size_t size, const char *instance);
/* The instance whose pins are in pin_dir: NAME of DEFAULT_PIN_ROOT/NAME, else NULL */
const char *lh_instance_of(const char *pin_dir);
/* name, of a file in LOCK_DIR, is a lock file's: NAME.lock */
bool lh_lock_file_name(const char *name);

/* longhauld's lock file of pin_dir: LOCK_DIR/PIN_DIR.lock, every '/' made '_' */
void lh_lock_path(char *buf, size_t size, const char *pin_dir);

#endif
