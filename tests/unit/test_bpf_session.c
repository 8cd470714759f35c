// SPDX-License-Identifier: BSD-2-Clause
/*
 * The checks made before loading: a kernel without BTF, and a caller without the capabilities.
 * tests/run-unit.sh runs this as 'nobody', which has no capabilities, so the second case is real.
 */
#include <errno.h>
#include <unistd.h>

#include "collect/bpf_session.h"
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

int main(void)
{
	test_no_btf();
	test_capabilities();
	return check_summary("test_bpf_session");
}
