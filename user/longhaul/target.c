// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Which agent the CLI looks at: the pin directory and lock file that
 * --instance or --pin-dir name (the default instance without either), and
 * how messages name it.
 */
#include <stdio.h>
#include <string.h>

#include "pins.h"

int target_init(struct lh_target *t, const char *instance, const char *pin_dir)
{
	memset(t, 0, sizeof(*t));
	if (instance && pin_dir) {
		pr_err("--instance and --pin-dir both name the pin directory: give one\n");
		return LH_EXIT_USAGE;
	}
	if (instance) {
		if (!lh_instance_name_ok(instance)) {
			pr_err("--instance '%s': not an instance name (as longhauld takes it)\n",
			       instance);
			return LH_EXIT_USAGE;
		}
		snprintf(t->instance, sizeof(t->instance), "%s", instance);
		lh_instance_pin_dir(t->pin_dir, sizeof(t->pin_dir), instance);
	} else if (pin_dir) {
		if (!*pin_dir || strlen(pin_dir) >= sizeof(t->pin_dir)) {
			pr_err("--pin-dir '%s': not a pin directory\n", pin_dir);
			return LH_EXIT_USAGE;
		}
		snprintf(t->pin_dir, sizeof(t->pin_dir), "%s", pin_dir);
	} else {
		lh_instance_pin_dir(t->pin_dir, sizeof(t->pin_dir), NULL);
	}
	lh_lock_path(t->lock_path, sizeof(t->lock_path), t->pin_dir);
	return 0;
}

const char *target_name(const struct lh_target *t)
{
	static char buf[PATH_MAX + 32];

	if (t->instance[0])
		snprintf(buf, sizeof(buf), "instance '%s'", t->instance);
	else if (!strcmp(t->pin_dir, DEFAULT_PIN_ROOT))
		snprintf(buf, sizeof(buf), "the default instance");
	else
		snprintf(buf, sizeof(buf), "pin directory %s", t->pin_dir);
	return buf;
}
