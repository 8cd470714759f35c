// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests for src/process/kubelet.c and kubelet_pods.c: the /pods parser on a recorded-shape
 * PodList (tests/fixtures/kubelet/pods.json: a Deployment pod with init, sidecar and ephemeral
 * containers, a DaemonSet pod, a StatefulSet pod, a bare pod, a CronJob's Job pod, a hand-made
 * ReplicaSet's pod and a pending pod; containerd, cri-o and docker IDs side by side, which one
 * node would not mix but one parser must read), on broken and hostile input, and under a
 * deterministic mutation loop; then the client against tests/receiver/kubelet_server.py.
 *
 * The real kubelet cannot run on this machine (it needs a cluster, a container runtime and
 * root), so that HTTPS server stands in for it on the wire: a self-signed certificate made with
 * openssl at test time, bearer-token checks (401 otherwise), and the fixture as the answer.
 * Scratch files go to a fresh directory under /tmp: the tests run as 'nobody' with HOME=/tmp.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "port_server.h"
#include "process/kubelet.h"
#include "base/log.h"

#define FIXTURE "tests/fixtures/kubelet/pods.json"
#define SERVER "tests/receiver/kubelet_server.py"
#define GOOD_TOKEN "eyJhbGciOiJSUzI1NiJ9.good-token-4f1e9a"
#define BAD_TOKEN "eyJhbGciOiJSUzI1NiJ9.stale-token-77c0d2"

/* The fixture's container IDs: sha256 of the container's name, as the generator made them. */
#define ID_CHECKOUT "c7761e58969f7edd498186641b2021e8477e1bcd230de4cf3435242da4a40d14"
#define ID_ISTIO_PROXY "b8e9c2a497daf0198e1b79d0044361efcbeb110b0e12096e96fcf46aadefd73e"
#define ID_ISTIO_INIT "33fac92ae5802630929873400a96320b39778106269726e193fc7962811c37b0"
#define ID_DEBUGGER "4c44d7c28ec0f6ca3e2624c6af1d3be324576d01ef6f6c2dc0af7e61664b8c2c"
#define ID_NODE_EXPORTER "2303824a4e3dc61fe3195d1a6e978029d4774876cc9aba9d2c60ef85eb96a845"
#define ID_POSTGRES "a942b37ccfaf5a813b1432caa209a43b9d144e47ad0de1549c289c253e556cd5"
#define ID_INIT_PERMS "01e17947639cad02fd995bb579106132c590463595bb8bb26e208da910055b78"
#define ID_DEBUG_SHELL "bc289bb4c77c647ece51d763d918e2bbe5be56e810e477595074c43a9fcc4d65"
#define ID_BACKUP "54d00d867758cef816bc4685f58e327b949712b07ebd17c3485f3ffc9e9f5133"
#define ID_LEGACY "c49fea7425fa7f8699897a97c159c6690267d9003bb78c53fafa8fc15c325d84"
#define NODE "worker-3.prod.example.internal"

static const char *const all_ids[] = {
	ID_CHECKOUT, ID_ISTIO_PROXY, ID_ISTIO_INIT,  ID_DEBUGGER, ID_NODE_EXPORTER,
	ID_POSTGRES, ID_INIT_PERMS,  ID_DEBUG_SHELL, ID_BACKUP,	  ID_LEGACY,
};
#define NIDS (sizeof(all_ids) / sizeof(all_ids[0]))

static char scratch[64];

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *scratch_path(const char *name)
{
	static char paths[8][256];
	static int next;
	char *p = paths[next++ % 8];

	snprintf(p, 256, "%s/%s", scratch, name);
	return p;
}

/* File contents, NUL-terminated (malloc'ed), or NULL. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		if (n + 4096 + 1 > cap) {
			char *nb;

			cap = cap ? cap * 2 : 8192;
			nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		if (!got)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A well-formed, NUL-terminated field: what every copy out of the table must give. */
static bool bounded(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static const char *label(const struct pod_meta *m, const char *key)
{
	for (unsigned int i = 0; i < m->nlabels && i < POD_MAX_LABELS; i++)
		if (!strcmp(m->labels[i].key, key))
			return m->labels[i].value;
	return NULL;
}

/* ---- the parser on the fixture ---- */

struct want {
	const char *id, *ns, *pod, *uid, *container, *kind, *workload, *app_name, *app;
	unsigned int nlabels;
};

static const struct want wants[] = {
	{ID_CHECKOUT, "shop", "checkout-7d4b9c8f6d-x2k9p", "5f0c6a51-3b0e-4c39-9d7e-2a8f1b6c4d01",
	 "checkout", "Deployment", "checkout", "checkout", "checkout-legacy", 7},
	{ID_ISTIO_PROXY, "shop", "checkout-7d4b9c8f6d-x2k9p",
	 "5f0c6a51-3b0e-4c39-9d7e-2a8f1b6c4d01", "istio-proxy", "Deployment", "checkout",
	 "checkout", "checkout-legacy", 7},
	{ID_ISTIO_INIT, "shop", "checkout-7d4b9c8f6d-x2k9p", "5f0c6a51-3b0e-4c39-9d7e-2a8f1b6c4d01",
	 "istio-init", "Deployment", "checkout", "checkout", "checkout-legacy", 7},
	{ID_DEBUGGER, "shop", "checkout-7d4b9c8f6d-x2k9p", "5f0c6a51-3b0e-4c39-9d7e-2a8f1b6c4d01",
	 "debugger-7xk2q", "Deployment", "checkout", "checkout", "checkout-legacy", 7},
	{ID_NODE_EXPORTER, "monitoring", "node-exporter-5xq7z",
	 "a3d6c2b8-1e4f-4a7b-8c9d-0e1f2a3b4c5d", "node-exporter", "DaemonSet", "node-exporter",
	 "node-exporter", "", 5},
	{ID_POSTGRES, "db", "postgres-0", "7e8f9a0b-1c2d-4e3f-8a5b-6c7d8e9f0a1b", "postgres",
	 "StatefulSet", "postgres", "", "postgres", 4},
	{ID_INIT_PERMS, "db", "postgres-0", "7e8f9a0b-1c2d-4e3f-8a5b-6c7d8e9f0a1b",
	 "init-permissions", "StatefulSet", "postgres", "", "postgres", 4},
	{ID_DEBUG_SHELL, "default", "debug-shell", "11111111-2222-4333-8444-555555555555",
	 "debug-shell", "", "", "", "", 1},
	{ID_BACKUP, "ops", "backup-28598400-7gq4m", "22222222-3333-4444-8555-666666666666",
	 "backup", "Job", "backup-28598400", "", "", 4},
	{ID_LEGACY, "default", "legacy-rs-q8w2e", "33333333-4444-4555-8666-777777777777", "legacy",
	 "ReplicaSet", "legacy-rs", "", "legacy", 1},
};

static void check_want(const struct pod_meta *m, const struct want *w)
{
	CHECK_STR(m->pod_namespace, w->ns);
	CHECK_STR(m->pod_name, w->pod);
	CHECK_STR(m->pod_uid, w->uid);
	CHECK_STR(m->container_name, w->container);
	CHECK_STR(m->node_name, NODE);
	CHECK_STR(m->workload_kind, w->kind);
	CHECK_STR(m->workload_name, w->workload);
	CHECK_STR(m->app_name, w->app_name);
	CHECK_STR(m->app, w->app);
	CHECK_U64(m->nlabels, w->nlabels);
	CHECK_U64(m->labels_dropped, 0);
}

static void test_fixture(void)
{
	struct kubelet_parse_report r;
	struct kubelet_table *t = NULL;
	struct pod_meta m;
	char err[160];
	size_t len;
	char *json = slurp(FIXTURE, &len);
	int rc;

	CHECK(json != NULL, "cannot read %s (run from the repository root)", FIXTURE);
	if (!json)
		return;
	rc = kubelet__parse_pods(json, len, 0, &t, &r, err, sizeof(err));
	CHECK(rc == 0 && t, "parse: %d %s", rc, err);
	if (!t)
		goto out;
	CHECK_U64(r.pods, 7);
	CHECK_U64(r.containers, NIDS);
	CHECK_U64(r.pods_dropped, 0);
	CHECK_U64(r.pods_bad, 0);
	CHECK_U64(r.containers_no_id, 1); /* the pending pod's container */
	CHECK_U64(r.containers_bad_id, 0);
	CHECK_U64(r.containers_dropped, 0);
	CHECK_STR(r.warning, "");
	CHECK_U64(kubelet_table__pods(t), 7);
	CHECK_U64(kubelet_table__containers(t), NIDS);
	CHECK(kubelet_table__bytes(t) > len / 100 && kubelet_table__bytes(t) < len,
	      "table bytes %zu for a %zu-byte response", kubelet_table__bytes(t), len);

	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		memset(&m, 0x55, sizeof(m));
		rc = kubelet_table__lookup(t, wants[i].id, &m);
		CHECK(rc == 0, "lookup %s: %d", wants[i].container, rc);
		if (!rc)
			check_want(&m, &wants[i]);
	}

	/* Every label of the Deployment pod, in the kubelet's order. */
	if (kubelet_table__lookup(t, ID_CHECKOUT, &m) == 0 && m.nlabels == 7) {
		static const char *const kv[][2] = {
			{"app", "checkout-legacy"},
			{"app.kubernetes.io/name", "checkout"},
			{"app.kubernetes.io/part-of", "shop"},
			{"pod-template-hash", "7d4b9c8f6d"},
			{"security.istio.io/tlsMode", "istio"},
			{"tier", "backend"},
			{"version", "v2.14.1"},
		};

		for (size_t i = 0; i < 7; i++) {
			CHECK_STR(m.labels[i].key, kv[i][0]);
			CHECK_STR(m.labels[i].value, kv[i][1]);
		}
	}
	if (kubelet_table__lookup(t, ID_POSTGRES, &m) == 0) {
		CHECK_STR(label(&m, "statefulset.kubernetes.io/pod-name"), "postgres-0");
		CHECK_STR(label(&m, "apps.kubernetes.io/pod-index"), "0");
	}
	if (kubelet_table__lookup(t, ID_BACKUP, &m) == 0)
		CHECK_STR(label(&m, "job-name"), "backup-28598400");

	/* IDs in upper case find the same container; unknown, short or non-hex ones do not. */
	{
		char upper[65];

		for (size_t i = 0; i < 64; i++)
			upper[i] = (char)(ID_POSTGRES[i] >= 'a' ? ID_POSTGRES[i] - 32
								: ID_POSTGRES[i]);
		upper[64] = '\0';
		CHECK(kubelet_table__lookup(t, upper, &m) == 0, "upper-case ID");
		CHECK_STR(m.container_name, "postgres");
	}
	CHECK(kubelet_table__lookup(
		      t, "0000000000000000000000000000000000000000000000000000000000000000", &m) ==
		      -ENOENT,
	      "unknown ID");
	CHECK(kubelet_table__lookup(t, "c7761e58969f", &m) == -ENOENT, "a prefix is not the ID");
	CHECK(kubelet_table__lookup(t, "containerd://" ID_CHECKOUT, &m) == -ENOENT,
	      "lookups take bare IDs");
	CHECK(kubelet_table__lookup(t, "", &m) == -ENOENT, "empty ID");
	CHECK(kubelet_table__lookup(t, NULL, &m) == -ENOENT, "NULL ID");
	CHECK(kubelet_table__lookup(NULL, ID_CHECKOUT, &m) == -ENOENT, "NULL table");
	kubelet_table__delete(t);

	/* max_pods bounds the table; the valid pods past it are counted. */
	t = NULL;
	rc = kubelet__parse_pods(json, len, 2, &t, &r, err, sizeof(err));
	CHECK(rc == 0 && t, "parse max_pods 2: %d %s", rc, err);
	CHECK_U64(r.pods, 2);
	CHECK_U64(r.pods_dropped, 5);
	CHECK(strstr(r.warning, "more than 2 pods") != NULL, "warning '%s'", r.warning);
	CHECK(kubelet_table__lookup(t, ID_NODE_EXPORTER, &m) == 0, "second pod kept");
	CHECK(kubelet_table__lookup(t, ID_POSTGRES, &m) == -ENOENT, "third pod dropped");
out:
	kubelet_table__delete(t);
	free(json);
}

/* ---- broken input ---- */

static int parse_str(const char *json, struct kubelet_table **t, struct kubelet_parse_report *r,
		     char *err, size_t errlen)
{
	*t = NULL;
	return kubelet__parse_pods(json, strlen(json), 0, t, r, err, errlen);
}

static void expect_fail(const char *json, const char *why_has)
{
	struct kubelet_parse_report r;
	struct kubelet_table *t;
	char err[160];
	int rc = parse_str(json, &t, &r, err, sizeof(err));

	CHECK(rc == -EINVAL && !t, "'%.40s': rc %d", json, rc);
	CHECK(strstr(err, why_has) != NULL, "'%.40s': error '%s' lacks '%s'", json, err, why_has);
	kubelet_table__delete(t);
}

static const char mixed[] = "{\"items\":[1,\"x\",null,{},{\"metadata\":5},"
			    "{\"metadata\":{\"namespace\":\"a\"}},"
			    "{\"metadata\":{\"namespace\":7,\"name\":\"p\"}},"
			    "{\"metadata\":{\"namespace\":\"\",\"name\":\"p\"}},"
			    "{\"metadata\":{\"namespace\":\"ok\",\"name\":\"fine\"}}]}";

static const char wrong_types[] =
	"{\"items\":["
	"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p1\",\"uid\":9,\"labels\":[\"a\"],"
	"\"ownerReferences\":{}},\"spec\":\"x\","
	"\"status\":{\"containerStatuses\":\"no\",\"initContainerStatuses\":["
	"5,{\"name\":\"i\",\"containerID\":17},{\"name\":\"j\",\"containerID\":null},"
	"{\"name\":3,\"containerID\":\"containerd://abcdef01\"}]}},"
	"{\"metadata\":{\"namespace\":\"ns\",\"name\":\"p2\",\"labels\":{\"app\":5,\"ok\":\"yes\"},"
	"\"ownerReferences\":[7,{\"kind\":3,\"name\":\"x\"}]}}]}";

static const char ids[] = "{\"items\":[{\"metadata\":{\"namespace\":\"ns\",\"name\":\"ids\"},"
			  "\"status\":{\"containerStatuses\":["
			  "{\"name\":\"bare\",\"containerID\":\"00AA11bb\"},"
			  "{\"name\":\"podman\",\"containerID\":\"podman://22cc\"},"
			  "{\"name\":\"empty\",\"containerID\":\"containerd://\"},"
			  "{\"name\":\"nonhex\",\"containerID\":\"containerd://xyz\"},"
			  "{\"name\":\"noscheme\",\"containerID\":\"://abcd\"},"
			  "{\"name\":\"word\",\"containerID\":\"hello\"},"
			  "{\"name\":\"badscheme\",\"containerID\":\"a b://abcd\"},"
			  "{\"name\":\"ctl\",\"containerID\":\"docker://ab\\u0000cd\"},"
			  "{\"name\":\"dup\",\"containerID\":\"cri-o://00aa11BB\"},"
			  "{\"name\":\"\",\"containerID\":\"\"}]}}]}";

static void test_broken(void)
{
	struct kubelet_parse_report r;
	struct kubelet_table *t;
	struct pod_meta m;
	char err[160], *big;
	size_t len;
	char *json = slurp(FIXTURE, &len);
	int rc;

	/* Not a PodList at all. */
	expect_fail("", "empty");
	expect_fail("hello", "bad JSON");
	expect_fail("[]", "not a PodList");
	expect_fail("{\"kind\":\"PodList\"}", "not a PodList");
	expect_fail("{\"items\":{}}", "not a PodList");
	expect_fail("{\"items\":null}", "not a PodList");
	expect_fail("{\"items\":[]} trailing", "after the end");
	expect_fail("{\"items\":[{\"metadata\":{\"name\":\"a\\u00", "truncated");
	/* Truncated anywhere: always an error, never a crash. */
	if (json) {
		static const size_t cuts[] = {1, 2, 100, 1000, 12345};
		int ok = 0;

		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			t = NULL;
			rc = kubelet__parse_pods(json, cuts[i], 0, &t, &r, err, sizeof(err));
			ok += rc == -EINVAL && !t && strstr(err, "truncated");
			kubelet_table__delete(t);
		}
		CHECK(ok == 5, "%d of 5 truncations reported as truncated (last: %s)", ok, err);
		t = NULL;
		rc = kubelet__parse_pods(json, len - 3, 0, &t, &r, err, sizeof(err));
		CHECK(rc == -EINVAL && strstr(err, "truncated"), "cut at len-3: %d %s", rc, err);
		kubelet_table__delete(t);
	}
	/* Nesting deeper than any pod: refused, not recursed into. */
	{
		char deep[2 * 200 + 32];
		size_t o = 0;

		o += (size_t)sprintf(deep, "{\"items\":");
		for (int i = 0; i < 150; i++)
			deep[o++] = '[';
		for (int i = 0; i < 150; i++)
			deep[o++] = ']';
		deep[o++] = '}';
		deep[o] = '\0';
		expect_fail(deep, "bad JSON");
	}
	/* Over the body bound: refused before it is read. */
	big = malloc(KUBELET_MAX_BODY + 1);
	if (big) {
		memset(big, ' ', KUBELET_MAX_BODY + 1);
		t = NULL;
		rc = kubelet__parse_pods(big, KUBELET_MAX_BODY + 1, 0, &t, &r, err, sizeof(err));
		CHECK(rc == -E2BIG && !t, "oversized: %d", rc);
		free(big);
	}
	CHECK(kubelet__parse_pods("{}", 2, 0, NULL, NULL, NULL, 0) == -EINVAL, "NULL out");
	t = NULL;
	CHECK(kubelet__parse_pods(NULL, 5, 0, &t, NULL, NULL, 0) == -EINVAL, "NULL json");

	/* Items that are not pods are skipped and counted; the rest still parse. */
	rc = parse_str(mixed, &t, &r, err, sizeof(err));
	CHECK(rc == 0 && t, "mixed items: %d %s", rc, err);
	CHECK_U64(r.pods_bad, 8);
	CHECK_U64(r.pods, 1);
	CHECK(strstr(r.warning, "items[0]") != NULL, "warning '%s'", r.warning);
	kubelet_table__delete(t);

	/* Wrong types and missing fields: absent, never fatal. */
	rc = parse_str(wrong_types, &t, &r, err, sizeof(err));
	CHECK(rc == 0 && t, "wrong types: %d %s", rc, err);
	CHECK_U64(r.pods, 2);
	CHECK_U64(r.containers, 1);
	CHECK_U64(r.containers_bad_id, 2); /* the non-object, the numeric ID */
	CHECK_U64(r.containers_no_id, 1);  /* null */
	if (kubelet_table__lookup(t, "ABCDEF01", &m) == 0) {
		CHECK_STR(m.pod_name, "p1");
		CHECK_STR(m.pod_uid, "");
		CHECK_STR(m.container_name, "");
		CHECK_STR(m.node_name, "");
		CHECK_STR(m.workload_kind, "");
		CHECK_U64(m.nlabels, 0);
	} else {
		CHECK(0, "the init container with a good ID was not indexed");
	}
	kubelet_table__delete(t);

	/* Container IDs: every scheme, a bare ID, and what is not an ID. */
	rc = parse_str(ids, &t, &r, err, sizeof(err));
	CHECK(rc == 0 && t, "IDs: %d %s", rc, err);
	CHECK_U64(r.containers, 2);
	CHECK_U64(r.containers_bad_id, 7);
	CHECK_U64(r.containers_no_id, 1);
	CHECK(strstr(r.warning, "pod ns/ids: containerID 'containerd://' is not [scheme://]hex"),
	      "warning '%s'", r.warning);
	CHECK(kubelet_table__lookup(t, "00aa11bb", &m) == 0 && !strcmp(m.container_name, "bare"),
	      "bare ID kept, the duplicate dropped: '%s'", m.container_name);
	CHECK(kubelet_table__lookup(t, "22cc", &m) == 0, "any scheme is stripped");
	kubelet_table__delete(t);

	/* Workloads: no controller flag (first owner), and ReplicaSets that are not a
	 * Deployment's. */
	{
		static const char owners[] =
			"{\"items\":["
			"{\"metadata\":{\"namespace\":\"a\",\"name\":\"p\",\"ownerReferences\":["
			"{\"kind\":\"Node\",\"name\":\"worker-3\"},{\"kind\":\"X\",\"name\":\"y\"}]"
			"}"
			",\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"containerID\":"
			"\"containerd://01\"}]}},"
			"{\"metadata\":{\"namespace\":\"a\",\"name\":\"q\","
			"\"labels\":{\"pod-template-hash\":\"abc\"},\"ownerReferences\":["
			"{\"kind\":\"ReplicaSet\",\"name\":\"web-abcd\",\"controller\":true}]}"
			",\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"containerID\":"
			"\"containerd://02\"}]}},"
			"{\"metadata\":{\"namespace\":\"a\",\"name\":\"r\","
			"\"labels\":{\"pod-template-hash\":\"abc\"},\"ownerReferences\":["
			"{\"kind\":\"Job\",\"name\":\"j\"},"
			"{\"kind\":\"ReplicaSet\",\"name\":\"-abc\",\"controller\":true}]}"
			",\"status\":{\"containerStatuses\":[{\"name\":\"c\",\"containerID\":"
			"\"containerd://03\"}]}},"
			"{}]}";

		rc = parse_str(owners, &t, &r, err, sizeof(err));
	}
	CHECK(rc == 0 && t, "owners: %d %s", rc, err);
	if (kubelet_table__lookup(t, "01", &m) == 0) {
		CHECK_STR(m.workload_kind, "Node"); /* a static pod's mirror */
		CHECK_STR(m.workload_name, "worker-3");
	}
	if (kubelet_table__lookup(t, "02", &m) == 0) {
		CHECK_STR(m.workload_kind, "ReplicaSet");
		CHECK_STR(m.workload_name, "web-abcd");
	}
	if (kubelet_table__lookup(t, "03", &m) == 0) {
		CHECK_STR(m.workload_kind, "ReplicaSet");
		CHECK_STR(m.workload_name, "-abc");
	}
	kubelet_table__delete(t);
	free(json);
}

/* ---- hostile sizes: long names, many labels, control characters ---- */

static void test_bounds(void)
{
	struct kubelet_parse_report r;
	struct kubelet_table *t = NULL;
	struct pod_meta m;
	char err[160], *json, *p;
	size_t cap = 1 << 20;
	int rc;

	json = malloc(cap);
	if (!json)
		return;
	p = json;
	p += sprintf(p, "{\"items\":[{\"metadata\":{\"namespace\":\"");
	for (int i = 0; i < 300; i++)
		*p++ = 'n';
	/* 200 two-byte characters: a cut must fall between them. */
	p += sprintf(p, "\",\"name\":\"");
	for (int i = 0; i < 200; i++)
		p += sprintf(p, "\xc3\xa9");
	p += sprintf(p, "\",\"uid\":\"a\\u0001b\\nc\",\"labels\":{");
	p += sprintf(p, "\"app\":\"");
	for (int i = 0; i < 100; i++)
		*p++ = 'v'; /* too long for a label value: dropped, but app is cut to fit */
	p += sprintf(p, "\",\"");
	for (int i = 0; i < 200; i++)
		*p++ = 'k'; /* a key too long: dropped */
	p += sprintf(p, "\":\"x\",\"n\":null");
	for (int i = 0; i < 1000; i++)
		p += sprintf(p, ",\"label-%04d\":\"value-%d\"", i, i);
	p += sprintf(p, "}},\"status\":{\"containerStatuses\":[");
	for (int i = 0; i < 100; i++)
		p += sprintf(p, "%s{\"name\":\"c%d\",\"containerID\":\"containerd://%064x\"}",
			     i ? "," : "", i, i + 1);
	p += sprintf(p, "]}}]}");

	rc = kubelet__parse_pods(json, (size_t)(p - json), 0, &t, &r, err, sizeof(err));
	CHECK(rc == 0 && t, "hostile pod: %d %s", rc, err);
	CHECK_U64(r.containers, 64); /* the per-pod bound */
	CHECK_U64(r.containers_dropped, 36);
	if (t && kubelet_table__lookup(
			 t, "0000000000000000000000000000000000000000000000000000000000000001",
			 &m) == 0) {
		size_t n = strlen(m.pod_name);
		char id[65];

		CHECK_U64(strlen(m.pod_namespace), POD_NAMESPACE_LEN - 1);
		CHECK(n <= POD_NAME_LEN - 1 && n % 2 == 0 && n >= POD_NAME_LEN - 3,
		      "name cut to %zu bytes, inside a character?", n);
		CHECK_STR(m.pod_uid, "a?b?c");
		CHECK_U64(strlen(m.app), POD_LABEL_VALUE_LEN - 1);
		CHECK_U64(m.nlabels, POD_MAX_LABELS);
		/* app, the long key and null are dropped; 32 of the 1000 kept. */
		CHECK_U64(m.labels_dropped, 3 + 1000 - POD_MAX_LABELS);
		CHECK_STR(m.labels[0].key, "label-0000");
		CHECK_STR(m.labels[31].key, "label-0031");
		CHECK_STR(m.labels[31].value, "value-31");
		snprintf(id, sizeof(id), "%064x", 64);
		CHECK(kubelet_table__lookup(t, id, &m) == 0 && !strcmp(m.container_name, "c63"),
		      "the 64th container kept");
		snprintf(id, sizeof(id), "%064x", 65);
		CHECK(kubelet_table__lookup(t, id, &m) == -ENOENT, "the 65th dropped");
	} else {
		CHECK(0, "the hostile pod's first container is not there");
	}
	kubelet_table__delete(t);
	free(json);
}

/* ---- a deterministic mutation loop ---- */

static uint64_t rng_state = 0x2545F4914F6CDD1DULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_fuzz(void)
{
	static const char tokens[] = "{}[]\":,0123456789abcdef-.tfnul\\ /";
	size_t len, parsed = 0, refused = 0, iters = 2500, odd = 0;
	char *json = slurp(FIXTURE, &len);
	char *buf;

	if (!json)
		return;
	buf = malloc(len * 2 + 64);
	if (!buf) {
		free(json);
		return;
	}
	for (size_t it = 0; it < iters; it++) {
		struct kubelet_parse_report r;
		struct kubelet_table *t = NULL;
		size_t n = len, edits = 1 + rng() % 6;
		char err[160];

		memcpy(buf, json, len);
		for (size_t e = 0; e < edits && n > 1; e++) {
			size_t at = rng() % n, span = 1 + rng() % 64;

			switch (rng() % 5) {
			case 0: /* replace a byte with a JSON-significant one */
				buf[at] = tokens[rng() % (sizeof(tokens) - 1)];
				break;
			case 1: /* any byte at all */
				buf[at] = (char)(rng() & 0xff);
				break;
			case 2: /* delete a span */
				if (at + span > n)
					span = n - at;
				memmove(buf + at, buf + at + span, n - at - span);
				n -= span;
				break;
			case 3: /* duplicate a span */
				if (at + span > n)
					span = n - at;
				if (n + span <= len * 2 + 64) {
					memmove(buf + at + span, buf + at, n - at);
					n += span;
				}
				break;
			default: /* truncate */
				n = at + 1;
				break;
			}
		}
		if (kubelet__parse_pods(buf, n, 1 + rng() % 8, &t, &r, err, sizeof(err)) == 0) {
			struct pod_meta m;

			parsed++;
			for (size_t i = 0; i < NIDS; i++) {
				if (kubelet_table__lookup(t, all_ids[i], &m))
					continue;
				if (!bounded(m.pod_namespace, sizeof(m.pod_namespace)) ||
				    !bounded(m.pod_name, sizeof(m.pod_name)) ||
				    !bounded(m.container_name, sizeof(m.container_name)) ||
				    !bounded(m.workload_name, sizeof(m.workload_name)) ||
				    m.nlabels > POD_MAX_LABELS)
					odd++;
			}
		} else {
			refused++;
			if (!err[0])
				odd++;
		}
		kubelet_table__delete(t);
	}
	CHECK(parsed + refused == iters, "%zu parsed + %zu refused", parsed, refused);
	CHECK(parsed > 0 && refused > 0, "mutations both kept and broke the PodList: %zu / %zu",
	      parsed, refused);
	CHECK(odd == 0, "%zu results without an error message or with unbounded fields", odd);
	free(buf);
	free(json);
}

/* ---- the client against the stand-in kubelet ---- */

struct server {
	pid_t pid;
	int port;
};

static int run_quiet(char *const argv[])
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);

		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A self-signed certificate for 127.0.0.1 (SAN IP), as kubelets serve by default. */
static int make_cert(void)
{
	char *argv[] = {"openssl",
			"req",
			"-x509",
			"-newkey",
			"ec",
			"-pkeyopt",
			"ec_paramgen_curve:prime256v1",
			"-nodes",
			"-days",
			"2",
			"-subj",
			"/CN=127.0.0.1",
			"-addext",
			"subjectAltName=IP:127.0.0.1",
			"-keyout",
			(char *)scratch_path("key.pem"),
			"-out",
			(char *)scratch_path("cert.pem"),
			NULL};

	return run_quiet(argv);
}

static int server_start(struct server *s, double delay)
{
	char delay_s[32];
	char *argv[] = {"python3",
			SERVER,
			"--cert",
			(char *)scratch_path("cert.pem"),
			"--key",
			(char *)scratch_path("key.pem"),
			"--pods",
			FIXTURE,
			"--token-file",
			(char *)scratch_path("server-token"),
			"--log",
			(char *)scratch_path("requests.log"),
			"--delay",
			delay_s,
			"--lifetime",
			"90",
			NULL};

	s->port = 0;
	s->pid = -1;
	if (access(SERVER, R_OK))
		return -1;
	snprintf(delay_s, sizeof(delay_s), "%.1f", delay);
	s->port = port_server__start(argv, &s->pid);
	return s->port > 0 ? 0 : -1;
}

static void server_stop(struct server *s)
{
	port_server__stop(&s->pid);
}

/* A port on which nothing listens: bound by us for a moment, then closed. */
static int dead_port(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;

	if (fd < 0)
		return 0;
	if (!bind(fd, (struct sockaddr *)&a, sizeof(a)) &&
	    !getsockname(fd, (struct sockaddr *)&a, &alen))
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static struct kubelet *client(int port, const char *ca, bool insecure, int64_t timeout_ms)
{
	char url[64];
	struct kubelet_opts o = {
		.url = url,
		.token_file = scratch_path("client-token"),
		.ca_file = ca,
		.insecure = insecure,
		.timeout_ms = timeout_ms,
		.refresh_interval_ms = 200,
		.max_pods = 64,
	};

	snprintf(url, sizeof(url), "https://127.0.0.1:%d/pods", port);
	return kubelet__new(&o);
}

/* Look up until found or timeout; each lookup must return at once. */
static int lookup_until(struct kubelet *k, const char *id, struct pod_meta *m, int64_t timeout_ms,
			int64_t *slowest_ms)
{
	int64_t end = now_ms() + timeout_ms;
	int rc;

	*slowest_ms = 0;
	for (;;) {
		int64_t t0 = now_ms(), dt;

		rc = kubelet__lookup(k, id, m);
		dt = now_ms() - t0;
		if (dt > *slowest_ms)
			*slowest_ms = dt;
		if (rc != -ENOENT || now_ms() > end)
			return rc;
		usleep(20000);
	}
}

static bool wait_failures(struct kubelet *k, uint64_t n, int64_t timeout_ms,
			  struct kubelet_stats *st)
{
	int64_t end = now_ms() + timeout_ms;
	struct pod_meta m;

	for (;;) {
		kubelet__stats(k, st);
		if (st->fetch_failures >= n)
			return true;
		if (now_ms() > end)
			return false;
		kubelet__lookup(k, ID_CHECKOUT, &m); /* misses ask for the retries */
		usleep(20000);
	}
}

static size_t count_in_log(const char *needle)
{
	char *log = slurp(scratch_path("requests.log"), NULL);
	size_t n = 0;

	for (const char *p = log; p && (p = strstr(p, needle)); p++)
		n++;
	free(log);
	return n;
}

static void test_client_good(int port)
{
	struct kubelet_stats st;
	struct pod_meta m;
	struct kubelet *k;
	int64_t slowest, t0;
	uint64_t fetches_before;
	size_t found = 0;
	int rc;

	write_file(scratch_path("client-token"), GOOD_TOKEN "\n");
	k = client(port, scratch_path("cert.pem"), false, 5000);
	CHECK(k != NULL, "kubelet__new: %s", strerror(errno));
	if (!k)
		return;
	rc = lookup_until(k, ID_CHECKOUT, &m, 8000, &slowest);
	CHECK(rc == 0, "lookup with the right token and CA: %d", rc);
	CHECK(slowest < 100, "a lookup took %lld ms", (long long)slowest);
	if (!rc)
		check_want(&m, &wants[0]);
	CHECK(kubelet__lookup(k, ID_NODE_EXPORTER, &m) == 0 &&
		      !strcmp(m.workload_kind, "DaemonSet"),
	      "the DaemonSet pod too");
	kubelet__stats(k, &st);
	CHECK(st.fetches >= 1 && st.fetch_failures == 0, "fetches %llu, failures %llu",
	      (unsigned long long)st.fetches, (unsigned long long)st.fetch_failures);
	CHECK_U64(st.pods, 7);
	CHECK_U64(st.containers, NIDS);
	CHECK(st.last_fetch_ok && !st.last_error[0], "last error '%s'", st.last_error);
	CHECK(st.memory_bytes > 1000, "memory %llu", (unsigned long long)st.memory_bytes);
	CHECK(count_in_log("GET /pods 200 auth=ok") >= 1, "the server saw the bearer token");

	/* Misses ask for fetches, at most one per refresh interval (200 ms). */
	fetches_before = st.fetches;
	t0 = now_ms();
	while (now_ms() - t0 < 1000) {
		found += kubelet__lookup(k, "ffff", &m) != -ENOENT;
		usleep(2000);
	}
	CHECK(found == 0, "an unknown container was found %zu times", found);
	kubelet__stats(k, &st);
	CHECK(st.fetches > fetches_before, "misses caused no refresh");
	CHECK(st.fetches - fetches_before <= 1000 / 200 + 1, "%llu fetches in 1 s",
	      (unsigned long long)(st.fetches - fetches_before));
	CHECK(st.misses >= 100 && st.lookups > st.misses, "lookups %llu, misses %llu",
	      (unsigned long long)st.lookups, (unsigned long long)st.misses);
	/* Invalid arguments, and an empty ID (a process outside any container). */
	CHECK(kubelet__lookup(k, NULL, &m) == -EINVAL, "NULL ID");
	CHECK(kubelet__lookup(k, ID_CHECKOUT, NULL) == -EINVAL, "NULL out");
	CHECK(kubelet__lookup(NULL, ID_CHECKOUT, &m) == -EINVAL, "NULL client");
	CHECK(kubelet__lookup(k, "", &m) == -ENOENT, "empty ID");
	CHECK(kubelet__lookup(k, "../etc", &m) == -ENOENT, "not an ID");
	kubelet__delete(k);
}

/* Run fn with stderr captured into a file; returns what was written (malloc'ed). */
static char *with_stderr_captured(void (*fn)(void *), void *arg)
{
	const char *path = scratch_path("stderr.txt");
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	if (saved < 0 || fd < 0) {
		if (saved >= 0)
			close(saved);
		if (fd >= 0)
			close(fd);
		fn(arg);
		return NULL;
	}
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return slurp(path, NULL);
}

struct bad_token_run {
	int port;
	int rc_first, rc_rotated;
	struct kubelet_stats after_failure, end;
	bool failed_in_time;
};

static void bad_token_body(void *arg)
{
	struct bad_token_run *b = arg;
	struct pod_meta m;
	struct kubelet *k;
	int64_t slowest;

	write_file(scratch_path("client-token"), BAD_TOKEN "\n");
	k = client(b->port, scratch_path("cert.pem"), false, 5000);
	if (!k)
		return;
	b->failed_in_time = wait_failures(k, 2, 8000, &b->after_failure);
	b->rc_first = kubelet__lookup(k, ID_CHECKOUT, &m);
	/* The token rotates on disk: the next fetch must read the new one. */
	write_file(scratch_path("client-token"), GOOD_TOKEN);
	b->rc_rotated = lookup_until(k, ID_CHECKOUT, &m, 8000, &slowest);
	kubelet__stats(k, &b->end);
	kubelet__delete(k);
}

static void test_client_bad_token(int port)
{
	struct bad_token_run b = {.port = port, .rc_first = 1, .rc_rotated = 1};
	enum log_level level = log_get_level();
	char *log;

	log_set_level(LOG_DEBUG);
	log = with_stderr_captured(bad_token_body, &b);
	log_set_level(level);
	CHECK(b.failed_in_time, "no failed fetch counted with a wrong token");
	CHECK(b.rc_first == -ENOENT, "lookup with a wrong token: %d", b.rc_first);
	CHECK_STR(b.after_failure.last_error, "HTTP 401");
	CHECK(!b.after_failure.last_fetch_ok, "last fetch ok after a 401");
	CHECK_U64(b.after_failure.pods, 0);
	CHECK(b.rc_rotated == 0, "lookup after the token rotated: %d", b.rc_rotated);
	CHECK(b.end.last_fetch_ok && b.end.pods == 7, "stats after rotation: ok %d pods %llu",
	      b.end.last_fetch_ok, (unsigned long long)b.end.pods);
	CHECK(count_in_log("GET /pods 401 auth=bad") >= 2, "the server saw the wrong token");
	CHECK(log != NULL, "stderr not captured");
	if (log) {
		char url[64];
		size_t warnings = 0;

		snprintf(url, sizeof(url), "https://127.0.0.1:%d/pods", port);
		for (const char *p = log; (p = strstr(p, "fetching pods failed: HTTP 401")); p++)
			warnings++;
		CHECK(strstr(log, url) != NULL, "the warning names the URL: %s", log);
		CHECK(strstr(log, "RBAC get on nodes/proxy") != NULL, "the warning says why: %s",
		      log);
		CHECK(warnings == 1, "%zu warnings for repeated 401s (want one): %s", warnings,
		      log);
		CHECK(strstr(log, "repeated") != NULL, "the repeats are summed up: %s", log);
		CHECK(strstr(log, "fetched again") != NULL, "the recovery is logged: %s", log);
		CHECK(!strstr(log, "good-token") && !strstr(log, "stale-token"),
		      "a token reached the log: %s", log);
	}
	free(log);
}

static void test_client_tls(int port)
{
	struct kubelet_stats st;
	struct pod_meta m;
	struct kubelet *k;
	int64_t slowest;
	int rc;

	write_file(scratch_path("client-token"), GOOD_TOKEN);
	/* The CA file is not there (the service account's ca.crt outside a cluster). */
	k = client(port, scratch_path("no-such-ca.crt"), false, 5000);
	CHECK(k != NULL, "kubelet__new");
	if (k) {
		CHECK(wait_failures(k, 1, 8000, &st), "no failure with a missing CA file");
		CHECK(strstr(st.last_error, "TLS") != NULL, "last error '%s'", st.last_error);
		CHECK(kubelet__lookup(k, ID_CHECKOUT, &m) == -ENOENT, "lookup without trust");
		kubelet__delete(k);
	}
	/* No CA file: the system's bundle, which does not know our self-signed certificate. */
	k = client(port, NULL, false, 5000);
	if (k) {
		CHECK(wait_failures(k, 1, 8000, &st), "no failure with the system CAs");
		CHECK(strstr(st.last_error, "TLS") != NULL, "last error '%s'", st.last_error);
		kubelet__delete(k);
	}
	/* insecure: no verification, so it works. */
	k = client(port, NULL, true, 5000);
	if (k) {
		rc = lookup_until(k, ID_POSTGRES, &m, 8000, &slowest);
		CHECK(rc == 0, "insecure lookup: %d", rc);
		CHECK_STR(m.workload_kind, "StatefulSet");
		kubelet__delete(k);
	}
}

static void test_client_down(void)
{
	struct kubelet_stats st;
	struct pod_meta m;
	struct kubelet *k;
	int port = dead_port();
	int64_t slowest = 0, t0;
	size_t found = 0;

	CHECK(port > 0, "no free port");
	k = client(port, scratch_path("cert.pem"), false, 2000);
	CHECK(k != NULL, "kubelet__new");
	if (!k)
		return;
	t0 = now_ms();
	while (now_ms() - t0 < 500) {
		int64_t t1 = now_ms();

		found += kubelet__lookup(k, ID_CHECKOUT, &m) != -ENOENT;
		if (now_ms() - t1 > slowest)
			slowest = now_ms() - t1;
		usleep(1000);
	}
	CHECK(found == 0, "%zu lookups found something with no kubelet", found);
	CHECK(slowest < 50, "a lookup took %lld ms with the kubelet down", (long long)slowest);
	CHECK(wait_failures(k, 2, 8000, &st), "failures not counted");
	CHECK_STR(st.last_error, "connection failed");
	t0 = now_ms();
	kubelet__delete(k);
	CHECK(now_ms() - t0 < 1500, "delete took %lld ms", (long long)(now_ms() - t0));
}

/* A kubelet that does not answer: the timeout holds, lookups stay instant, delete is prompt. */
static void test_client_hang(int port)
{
	struct kubelet_stats st;
	struct pod_meta m;
	struct kubelet *k;
	int64_t slowest = 0, t0;

	write_file(scratch_path("client-token"), GOOD_TOKEN);
	k = client(port, scratch_path("cert.pem"), false, 400);
	CHECK(k != NULL, "kubelet__new");
	if (!k)
		return;
	t0 = now_ms();
	while (now_ms() - t0 < 300) {
		int64_t t1 = now_ms();

		kubelet__lookup(k, ID_CHECKOUT, &m);
		if (now_ms() - t1 > slowest)
			slowest = now_ms() - t1;
		usleep(1000);
	}
	CHECK(slowest < 50, "a lookup took %lld ms during a fetch", (long long)slowest);
	CHECK(wait_failures(k, 1, 5000, &st), "the timeout did not fire");
	CHECK_STR(st.last_error, "timed out");
	kubelet__delete(k);

	/* Delete while a fetch with a long timeout is in flight. */
	k = client(port, scratch_path("cert.pem"), false, 20000);
	if (k) {
		usleep(300000);
		t0 = now_ms();
		kubelet__delete(k);
		CHECK(now_ms() - t0 < 2500, "delete during a fetch took %lld ms",
		      (long long)(now_ms() - t0));
	}
}

static void test_new_args(void)
{
	struct kubelet_opts o = {0};
	struct kubelet_stats st;
	static const char *const bad[] = {"ftp://host/pods", "https://",
					  "https:///pods",   "https://host name/pods",
					  "host:10250/pods", ""};

	errno = 0;
	CHECK(kubelet__new(NULL) == NULL && errno == EINVAL, "NULL opts");
	errno = 0;
	CHECK(kubelet__new(&o) == NULL && errno == EINVAL, "no URL");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o.url = bad[i];
		errno = 0;
		CHECK(kubelet__new(&o) == NULL && errno == EINVAL, "URL '%s' taken", bad[i]);
	}
	kubelet__delete(NULL);
	memset(&st, 0x55, sizeof(st));
	kubelet__stats(NULL, &st);
	CHECK(st.fetches == 0 && !st.last_error[0], "stats of NULL are zero");
}

static void test_client(void)
{
	struct server s = {.pid = -1}, slow = {.pid = -1};

	snprintf(scratch, sizeof(scratch), "/tmp/hostprof-kubelet.XXXXXX");
	if (!mkdtemp(scratch)) {
		CHECK(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	CHECK(make_cert() == 0, "openssl req -x509 failed (is openssl installed?)");
	write_file(scratch_path("server-token"), GOOD_TOKEN "\n");
	CHECK(server_start(&s, 0) == 0, "cannot start %s (python3?)", SERVER);
	if (s.port > 0) {
		test_client_good(s.port);
		test_client_bad_token(s.port);
		test_client_tls(s.port);
	}
	server_stop(&s);
	test_client_down();
	CHECK(server_start(&slow, 5) == 0, "cannot start the slow server");
	if (slow.port > 0)
		test_client_hang(slow.port);
	server_stop(&slow);

	{
		static const char *const files[] = {"cert.pem",	    "key.pem",	    "server-token",
						    "client-token", "requests.log", "stderr.txt"};

		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			unlink(scratch_path(files[i]));
		rmdir(scratch);
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	test_fixture();
	test_broken();
	test_bounds();
	test_fuzz();
	test_new_args();
	test_client();
	return check_summary("test_kubelet");
}
