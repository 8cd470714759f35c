// SPDX-License-Identifier: BSD-2-Clause
/*
 * The kubelet's /pods answer (a v1 PodList): parsed with the agent's bound and with a tiny one
 * taken from the input, then every run of hex digits in the input looked up as a container ID.
 * A failed parse says why; a table holds no more pods than asked and indexes what its report
 * says; every field a lookup copies out is NUL-terminated inside its array and free of control
 * characters (they reach logs and exported attributes).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "fuzz.h"
#include "process/kubelet_pods.h"

#define MAX_LOOKUPS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_field(const char *s, size_t size)
{
	const char *end = memchr(s, '\0', size);

	FUZZ_ASSERT(end);
	for (const char *c = s; c < end; c++)
		FUZZ_ASSERT((unsigned char)*c >= 0x20 && *c != 0x7f);
}

#define CHECK_FIELD(f) check_field((f), sizeof(f))

static void check_meta(const struct pod_meta *m)
{
	CHECK_FIELD(m->pod_namespace);
	CHECK_FIELD(m->pod_name);
	CHECK_FIELD(m->pod_uid);
	CHECK_FIELD(m->container_name);
	CHECK_FIELD(m->node_name);
	CHECK_FIELD(m->workload_kind);
	CHECK_FIELD(m->workload_name);
	CHECK_FIELD(m->app_name);
	CHECK_FIELD(m->app);
	FUZZ_ASSERT(m->nlabels <= POD_MAX_LABELS);
	for (unsigned int i = 0; i < m->nlabels; i++) {
		CHECK_FIELD(m->labels[i].key);
		CHECK_FIELD(m->labels[i].value);
		FUZZ_ASSERT(m->labels[i].key[0]);
	}
}

/* Every run of hex digits (an ID with or without its scheme) as a lookup. */
static void lookup_all(const struct kubelet_table *t, const uint8_t *data, size_t size)
{
	size_t found = 0, lookups = 0;
	char id[160];

	for (size_t i = 0; i < size && lookups < MAX_LOOKUPS;) {
		size_t n = 0;
		struct pod_meta m;

		while (i + n < size && isxdigit(data[i + n]))
			n++;
		if (!n) {
			i++;
			continue;
		}
		if (n < sizeof(id)) {
			memcpy(id, data + i, n);
			id[n] = '\0';
			lookups++;
			if (kubelet_table__lookup(t, id, &m) == 0) {
				FUZZ_ASSERT(kubelet__container_id_ok(id));
				check_meta(&m);
				found++;
			}
		}
		i += n;
	}
	FUZZ_ASSERT(found <= lookups);
}

static void parse(const uint8_t *data, size_t size, size_t max_pods)
{
	struct kubelet_parse_report r;
	struct kubelet_table *t = NULL;
	char err[256];
	int rc;

	memset(&r, 0xa5, sizeof(r));
	err[0] = '\0';
	rc = kubelet__parse_pods((const char *)data, size, max_pods, &t, &r, err, sizeof(err));
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -E2BIG || rc == -ENOMEM);
	if (rc) {
		FUZZ_ASSERT(!t && err[0] && memchr(err, '\0', sizeof(err)));
		return;
	}
	FUZZ_ASSERT(t);
	FUZZ_ASSERT(memchr(r.warning, '\0', sizeof(r.warning)));
	FUZZ_ASSERT(r.pods <= (max_pods ? max_pods : KUBELET_DEFAULT_MAX_PODS));
	FUZZ_ASSERT(kubelet_table__pods(t) == r.pods);
	FUZZ_ASSERT(kubelet_table__containers(t) == r.containers);
	lookup_all(t, data, size);
	kubelet_table__delete(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	parse(data, size, 0);
	parse(data, size, size ? 1 + data[size - 1] % 3 : 1);
	return 0;
}
