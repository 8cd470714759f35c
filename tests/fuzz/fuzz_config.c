// SPDX-License-Identifier: BSD-2-Clause
/*
 * The agent's YAML configuration file on arbitrary bytes: loaded over the agent's defaults, and
 * printed back when it loads (the printer walks every key the loader may have set).
 */
#include "config_load.h"
#include "fuzz.h"
#include "log.h"

static struct fuzz_input input;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	log_set_level(LOG_ERROR);
	fuzz_input__init(&input, "fuzz-config");
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		abort();
	return 0;
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
