// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An agent's instance: its lock file (instance.h) */
#include <stdio.h>

#include "instance.h"

void lh_lock_path(char *buf, size_t size, const char *pin_dir)
{
	char name[PIN_DIR_MAX];
	size_t i;

	snprintf(name, sizeof(name), "%s", pin_dir);
	for (i = 0; name[i]; i++)
		if (name[i] == '/')
			name[i] = '_';
	snprintf(buf, size, LOCK_DIR "/%s.lock", name);
}
