// SPDX-License-Identifier: BSD-2-Clause
/*
 * The agent's YAML configuration file on arbitrary bytes: loaded over the agent's defaults, and
 * printed back when it loads (the printer walks every key the loader may have set).
 */
#include "agent/config_load.h"
#define FUZZ_INPUT_NAME "fuzz-config"
#include "fuzz.h"

static FILE *devnull;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_init(void)
{
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config_origin o;
	struct config c;
	char err[512];
	int e;

	fuzz_input__write(&input, data, size);
	config_load__agent_defaults(&c, &o);
	err[0] = '\0';
	e = config_load__file(&c, &o, input.path, err, sizeof(err));
	FUZZ_ASSERT(!e || err[0]);
	if (!e)
		config_load__print(&c, &o, devnull);
	config__release(&c);
	return 0;
}
