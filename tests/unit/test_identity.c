// SPDX-License-Identifier: BSD-2-Clause
/* Service identity: the order of the service name sources, and relabel rules. (The Kubernetes
 * source is covered end to end against a stand-in kubelet: tests/e2e/agent.sh.) */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "process/identity.h"
#include "process/proc.h"
#include "process/process_context.h"

#define DOCKER_ROOT "tests/fixtures/docker"
#define WEB_ID "f31f384749f9115acf01fcf82f5a966b59dcc0a4cbd7c9740888c0bf32aa2bbb"

static struct process_identity pi;

static struct identity *make(const struct relabel_rule *rules, size_t n)
{
	struct identity_opts o = {.rules = rules, .nr_rules = n, .docker_root = DOCKER_ROOT};
	char err[256] = "";
	struct identity *id = identity__new(&o, err, sizeof(err));

	CHECK(id != NULL, "identity__new: %s", err);
	return id;
}

static const char *get(const char *key)
{
	const char *v = process_identity__get(&pi, key);

	return v ? v : "(none)";
}

static void test_service_order(void)
{
	struct identity *id = make(NULL, 0);
	struct identity_input in = {
		.pid = 42,
		.comm = "worker",
		.exe_path = "/usr/bin/python3.11",
		.cmdline = "python3 app.py",
		.env_service = "checkout",
		.container_id = WEB_ID,
		.systemd_unit = "web",
	};

	if (!id)
		return;
	/* 1. The process's own OTEL_SERVICE_NAME wins over everything. */
	CHECK(identity__resolve(id, &in, &pi), "kept");
	CHECK_STR(get("service.name"), "checkout");
	CHECK_STR(get("process.pid"), "42");
	CHECK_STR(get("container.id"), WEB_ID);
	CHECK_STR(get("systemd.unit"), "web.service");
	CHECK_STR(get("container.name"), "shop-web-1");
	/* 3. Then the systemd unit (no Kubernetes here). */
	in.env_service = NULL;
	identity__resolve(id, &in, &pi);
	CHECK_STR(get("service.name"), "web");
	/* 4. Then the container's name. */
	in.systemd_unit = NULL;
	identity__resolve(id, &in, &pi);
	CHECK_STR(get("service.name"), "shop-web-1");
	/* 5. Then the executable, then the process name. */
	in.container_id = "";
	identity__resolve(id, &in, &pi);
	CHECK_STR(get("service.name"), "python3.11");
	CHECK_STR(get("container.id"), "(none)");
	in.exe_path = NULL;
	identity__resolve(id, &in, &pi);
	CHECK_STR(get("service.name"), "worker");
	/* A container without a Docker config: no name, the executable names it. */
	in.container_id = "7214fd1ba1e08804ddaf0ff991d1712fc6eefeeff04e1cf7f751f6077073c787";
	in.exe_path = "/bin/sh";
	identity__resolve(id, &in, &pi);
	CHECK_STR(get("container.name"), "(none)");
	CHECK_STR(get("service.name"), "sh");
	identity__delete(id);
}

static void test_relabel(void)
{
	const struct relabel_rule rules[] = {
		{.action = RELABEL_DROP,
		 .source = "process.executable.name",
		 .regex = "(sshd|agetty)"},
		{.action = RELABEL_KEEP, .source = "process.command_line", .regex = ".*--serve.*"},
		{.action = RELABEL_REPLACE,
		 .source = "process.executable.path",
		 .regex = "/opt/([a-z]+)/bin/(.*)",
		 .target = "service.name",
		 .replacement = "$1-$2"},
		{.action = RELABEL_REPLACE,
		 .target = "deployment.environment",
		 .replacement = "prod"},
		/* A replacement that comes out empty removes the attribute. */
		{.action = RELABEL_REPLACE,
		 .source = "nothing",
		 .target = "container.id",
		 .replacement = "$1"},
	};
	struct identity *id = make(rules, sizeof(rules) / sizeof(rules[0]));
	struct identity_input in = {
		.pid = 7,
		.comm = "app",
		.exe_path = "/opt/shop/bin/api",
		.cmdline = "api --serve :80",
		.container_id = "7214fd1ba1e08804ddaf0ff991d1712fc6eefeeff04e1cf7f751f6077073c787",
	};
	struct identity_stats st;

	if (!id)
		return;
	CHECK(identity__resolve(id, &in, &pi), "kept");
	CHECK_STR(get("service.name"), "shop-api");
	CHECK_STR(get("deployment.environment"), "prod");
	CHECK_STR(get("container.id"), "(none)");
	/* The regex is anchored: "xsshd" is not "sshd". */
	in.exe_path = "/usr/sbin/xsshd";
	CHECK(identity__resolve(id, &in, &pi), "xsshd kept (anchored)");
	in.exe_path = "/usr/sbin/sshd";
	CHECK(!identity__resolve(id, &in, &pi), "sshd dropped");
	in.exe_path = "/usr/bin/api";
	in.cmdline = "api --once";
	CHECK(!identity__resolve(id, &in, &pi), "keep rule: not --serve, dropped");
	in.cmdline = NULL; /* a missing attribute reads as "" */
	CHECK(!identity__resolve(id, &in, &pi), "keep rule on a missing attribute: dropped");
	identity__stats(id, &st);
	CHECK(st.resolved == 5 && st.dropped == 3, "stats %lu resolved, %lu dropped", st.resolved,
	      st.dropped);
	identity__delete(id);
}

static void test_bad_rule(void)
{
	const struct relabel_rule bad = {.action = RELABEL_DROP, .regex = "((", .line = 12};
	struct identity_opts o = {.rules = &bad, .nr_rules = 1, .config_file = "agent.yaml"};
	char err[256] = "";
	struct identity *id = identity__new(&o, err, sizeof(err));

	CHECK(id == NULL && errno == EINVAL, "bad regex refused");
	CHECK(strstr(err, "agent.yaml: relabel rule 1 at line 12: regex '(('") != NULL, "%s", err);
}

/* Many long attributes: the identity stays within its buffer and never crashes. */
static void test_bounds(void)
{
	struct relabel_rule rules[40];
	char targets[40][32], big[2048];
	struct identity *id;
	struct identity_input in = {.pid = 1, .comm = "x", .exe_path = "/bin/x"};

	memset(big, 'v', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 40; i++) {
		snprintf(targets[i], sizeof(targets[i]), "attr.%d", i);
		rules[i] = (struct relabel_rule){
			.action = RELABEL_REPLACE, .target = targets[i], .replacement = big};
	}
	id = make(rules, 40);
	if (!id)
		return;
	CHECK(identity__resolve(id, &in, &pi), "kept");
	CHECK(pi.used <= sizeof(pi.buf) && pi.nr <= IDENTITY_MAX_ATTRS, "bounded: %zu bytes, %zu",
	      pi.used, pi.nr);
	CHECK_STR(get("service.name"), "x");
	identity__delete(id);
}

static void test_systemd_unit(void)
{
	static const struct {
		const char *cgroup, *want;
	} cases[] = {
		{"0::/system.slice/nginx.service\n", "nginx"},
		{"0::/system.slice/system-getty.slice/getty@tty1.service\n", "getty@tty1"},
		{"0::/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service\n", "foo"},
		{"0::/user.slice/user-1000.slice/user@1000.service/init.scope\n", NULL},
		{"0::/system.slice/docker-abc.scope\n", NULL},
		{"12:pids:/system.slice/a.service\n1:name=systemd:/system.slice/cron.service\n0::/"
		 "\n",
		 "cron"},
		{"0::/\n", NULL},
		/* Only the hierarchy named name=systemd, whole: found by fuzz_cgroup, these were
		 * taken for it. */
		{"1:name=sys:/system.slice/evil.service\n", NULL},
		{"1:name:/system.slice/evil.service\n", NULL},
		{"1:name=systemdx:/system.slice/evil.service\n", NULL},
		{"0::/system.slice/.service\n", NULL},
		{"", NULL},
	};
	char unit[64];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = proc__systemd_unit(cases[i].cgroup, unit, sizeof(unit));

		if (cases[i].want)
			CHECK(rc == 0 && !strcmp(unit, cases[i].want), "case %zu: want %s, got %s",
			      i, cases[i].want, rc ? "none" : unit);
		else
			CHECK(rc == -ENOENT, "case %zu: no unit, got %s", i, rc ? "none" : unit);
	}
	CHECK(proc__systemd_unit("0::/a/"
				 "averyveryverylongservicename.service\n",
				 unit, 8) == -ENOENT,
	      "a name that does not fit is not cut");
}

/* What the kernel may skip of a dropped process: its cgroup only when every rule that decided read
 * what the cgroup gives, the process when anything of its own decided, nothing when kept. */
static void test_drop_scope(void)
{
	const struct relabel_rule by_unit[] = {
		{.action = RELABEL_DROP, .source = "systemd.unit", .regex = "batch.*"},
	};
	const struct relabel_rule by_exe[] = {
		{.action = RELABEL_DROP, .source = "process.executable.name", .regex = "sh"},
	};
	/* The container's ID made into team, then kept by team: the cgroup's. Without a match, team
	 * is unset here, but another process's SDK may publish one: the process's own. */
	const struct relabel_rule derived[] = {
		{.action = RELABEL_REPLACE,
		 .source = "container.id",
		 .regex = "(7214).*",
		 .target = "team",
		 .replacement = "ops-$1"},
		{.action = RELABEL_KEEP, .source = "team", .regex = "web"},
	};
	const struct relabel_rule tainted[] = {
		{.action = RELABEL_REPLACE,
		 .source = "process.command_line",
		 .regex = ".*--team=([a-z]+).*",
		 .target = "container.name"},
		{.action = RELABEL_DROP, .source = "container.name", .regex = "shop-web-1"},
	};
	struct process_context ctx = {.nr_attrs = 1};
	struct identity_input in = {
		.pid = 9,
		.comm = "sh",
		.exe_path = "/bin/sh",
		.cmdline = "sh job.sh",
		.container_id = WEB_ID,
		.systemd_unit = "batch-nightly",
	};
	struct identity *id = make(by_unit, 1);

	if (!id)
		return;
	CHECK(!identity__resolve(id, &in, &pi), "dropped by its unit");
	CHECK(pi.drop == IDENTITY_DROP_CGROUP, "a drop by systemd.unit is the cgroup's (%d)",
	      pi.drop);
	/* Its own SDK says which unit: then the attribute is the process's own. */
	ctx.attrs[0] =
		(struct process_context_attr){.key = "systemd.unit", .value = "batch-x.service"};
	in.otel_ctx = &ctx;
	CHECK(!identity__resolve(id, &in, &pi) && pi.drop == IDENTITY_DROP_PROCESS,
	      "systemd.unit from the process's SDK: the process only (%d)", pi.drop);
	in.otel_ctx = NULL;
	in.systemd_unit = "web";
	CHECK(identity__resolve(id, &in, &pi) && pi.drop == IDENTITY_DROP_NONE,
	      "kept: nothing to skip (%d)", pi.drop);
	identity__delete(id);

	id = make(by_exe, 1);
	CHECK(id && !identity__resolve(id, &in, &pi) && pi.drop == IDENTITY_DROP_PROCESS,
	      "a drop by the executable is the process's (%d)", pi.drop);
	identity__delete(id);

	id = make(derived, 2);
	in.container_id = "7214fd1ba1e08804ddaf0ff991d1712fc6eefeeff04e1cf7f751f6077073c787";
	CHECK(id && !identity__resolve(id, &in, &pi) && pi.drop == IDENTITY_DROP_CGROUP,
	      "team made from container.id: the cgroup's (%d)", pi.drop);
	in.container_id = WEB_ID;
	CHECK(id && !identity__resolve(id, &in, &pi) && pi.drop == IDENTITY_DROP_PROCESS,
	      "team unset: the process's (%d)", pi.drop);
	identity__delete(id);

	id = make(tainted, 2);
	CHECK(id && !identity__resolve(id, &in, &pi), "dropped by container.name");
	CHECK(pi.drop == IDENTITY_DROP_PROCESS,
	      "container.name that a command-line rule may rewrite: the process's (%d)", pi.drop);
	identity__delete(id);
}

int main(void)
{
	test_service_order();
	test_relabel();
	test_drop_scope();
	test_bad_rule();
	test_bounds();
	test_systemd_unit();
	return check_summary("test_identity");
}
