// SPDX-License-Identifier: BSD-2-Clause
/*
 * OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_PROFILES_HEADERS ("k1=v1,k2=v2", values
 * percent-encoded), with --otlp-header flags over them: the input's NUL-separated parts are the
 * two variables, then the flags (one per '\n'). Headers hold tokens, so whatever the text, a
 * resolved config's headers are valid names (unique in any case) with values that cannot break a
 * request line; an error says what is wrong in one printable line; and the description of a
 * config never depends on a header's value.
 */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "base/log.h"
#include "export/otlp_config.h"

#define MAX_FLAGS 16

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *headers_env, *profiles_headers_env;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Broken input is the normal case here: its warnings would drown libFuzzer's output. */
	log_set_level(LOG_ERROR);
	return 0;
}

static const char *get_env(const char *name)
{
	if (!strcmp(name, "OTEL_EXPORTER_OTLP_ENDPOINT"))
		return "http://localhost:4318";
	if (!strcmp(name, "OTEL_EXPORTER_OTLP_HEADERS"))
		return headers_env;
	if (!strcmp(name, "OTEL_EXPORTER_OTLP_PROFILES_HEADERS"))
		return profiles_headers_env;
	return NULL;
}

static void check_printable(const char *s)
{
	for (; *s; s++)
		FUZZ_ASSERT(*s >= 0x20 && *s < 0x7f);
}

static void check_config(struct endpoint_config *c)
{
	char with_values[4096], without[4096];
	int rc;

	for (size_t i = 0; i < c->nr_headers; i++) {
		FUZZ_ASSERT(transport__check_header(c->headers[i].name, c->headers[i].value) == 0);
		for (size_t j = 0; j < i; j++)
			FUZZ_ASSERT(strcasecmp(c->headers[i].name, c->headers[j].name));
	}
	rc = otlp_config__describe(c, with_values, sizeof(with_values));
	/* Empty every value in place: the description must not change. */
	for (size_t i = 0; i < c->nr_headers; i++)
		c->headers[i].value[0] = '\0';
	FUZZ_ASSERT(otlp_config__describe(c, without, sizeof(without)) == rc);
	FUZZ_ASSERT(!strcmp(with_values, without));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Three NULs after the input: each part ends in one, present or not. */
	char *text = malloc(size + 3), *flags_text, *save = NULL, *line;
	const char *flags[MAX_FLAGS];
	struct otlp_flags f = {0};
	struct endpoint_config c;
	char err[256];
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	memset(text + size, 0, 3);
	headers_env = text;
	profiles_headers_env = headers_env + strlen(headers_env) + 1;
	flags_text = (char *)profiles_headers_env + strlen(profiles_headers_env) + 1;
	for (line = strtok_r(flags_text, "\n", &save); line && f.nr_headers < MAX_FLAGS;
	     line = strtok_r(NULL, "\n", &save))
		flags[f.nr_headers++] = line;
	f.headers = flags;

	memset(err, 'x', sizeof(err));
	rc = otlp_config__resolve(&f, get_env, &c, err, sizeof(err));
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOMEM);
	FUZZ_ASSERT(memchr(err, '\0', sizeof(err)));
	if (rc) {
		FUZZ_ASSERT(err[0] && !c.nr_headers && !c.headers);
		check_printable(err);
	} else {
		check_config(&c);
	}
	otlp_config__release(&c);
	free(text);
	return 0;
}
