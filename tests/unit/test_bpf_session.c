// SPDX-License-Identifier: BSD-2-Clause
/*
 * The checks made before loading: a kernel without BTF, and a caller without the capabilities.
 * tests/run-unit.sh runs this as 'nobody', which has no capabilities, so the second case is real.
 * And the names the summary gives the loss counters the BPF programs keep.
 */
#include <errno.h>
#include <unistd.h>

#include "collect/bpf_session.h"
#include "collect/collector.h"
#include "check.h"

static void test_no_btf(void)
{
	char msg[512] = "";
	int err = bpf_session__preflight("/nonexistent/btf/vmlinux", msg, sizeof(msg));

	CHECK(err == -ENOTSUP, "err %d", err);
	CHECK(strstr(msg, "no BTF") && strstr(msg, "CONFIG_DEBUG_INFO_BTF"), "message: %s", msg);
	CHECK(strstr(msg, "/nonexistent/btf/vmlinux") != NULL, "message names the path: %s", msg);
}

static void test_capabilities(void)
{
	char msg[512] = "";
	int err;

	/* Without kernel BTF the BTF check fires first; that case is tested above. */
	if (access(BPF_SESSION_KERNEL_BTF, R_OK) != 0)
		return;
	err = bpf_session__preflight(BPF_SESSION_KERNEL_BTF, msg, sizeof(msg));
	if (geteuid() == 0) {
		CHECK(err == 0, "root: err %d: %s", err, msg);
		return;
	}
	CHECK(err == -EPERM, "unprivileged: err %d", err);
	CHECK(strstr(msg, "CAP_BPF") && strstr(msg, "CAP_PERFMON"), "message: %s", msg);
	CHECK(strstr(msg, "root") && strstr(msg, "setcap"), "message names the fix: %s", msg);
}

/* Every counter has its own name, and only the counters of a full map say "full": a failed
 * update of another kind (6.1 once reported every -EEXIST as a full map) must not send the reader
 * to the map-size flags. */
static void test_loss_names(void)
{
	for (int i = 0; i < HP_LOSS__COUNT; i++) {
		const char *name = collector__loss_name(i);

		CHECK(name && *name, "loss %d has no name", i);
		if (!name)
			continue;
		for (int j = 0; j < i; j++)
			CHECK(strcmp(name, collector__loss_name(j)) != 0, "losses %d and %d: %s", i,
			      j, name);
	}
	CHECK(!strstr(collector__loss_name(HP_LOSS_MAP_NO_MEMORY), "full"), "%s",
	      collector__loss_name(HP_LOSS_MAP_NO_MEMORY));
	CHECK(!strstr(collector__loss_name(HP_LOSS_MAP_UPDATE_FAILED), "full"), "%s",
	      collector__loss_name(HP_LOSS_MAP_UPDATE_FAILED));
	CHECK(strstr(collector__loss_name(HP_LOSS_USER_STACK_MAP_FULL), "full") != NULL, "%s",
	      collector__loss_name(HP_LOSS_USER_STACK_MAP_FULL));
}

int main(void)
{
	test_loss_names();
	test_no_btf();
	test_capabilities();
	return check_summary("test_bpf_session");
}
