// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* An agent's instance: its name, its pin directory and its lock file (instance.h) */
#include <stdio.h>
#include <string.h>

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

bool lh_instance_name_ok(const char *name)
{
	return *name && !strchr(name, '/') && name[0] != '.' && strlen(name) < LH_INSTANCE_MAX;
}

void lh_instance_pin_dir(char *buf, size_t size, const char *instance)
{
	if (instance && *instance)
		snprintf(buf, size, DEFAULT_PIN_ROOT "/%s", instance);
	else
		snprintf(buf, size, DEFAULT_PIN_ROOT);
}

const char *lh_instance_of(const char *pin_dir)
{
	if (strncmp(pin_dir, DEFAULT_PIN_ROOT "/", sizeof(DEFAULT_PIN_ROOT)) != 0)
		return NULL;
	return pin_dir + sizeof(DEFAULT_PIN_ROOT);
}

bool lh_lock_file_name(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".lock");
}
