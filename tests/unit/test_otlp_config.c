// SPDX-License-Identifier: BSD-2-Clause
/*
 * otlp_config: flags and OTEL_EXPORTER_OTLP_* variables (from an injected table, never the real
 * environment) to an endpoint_config, with the precedence, path and header rules, and the
 * errors that name what to fix without quoting a secret.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include "base/log.h"
#include "export/otlp_config.h"

#define OTLP_PATH "/v1development/profiles"

/* NULL-terminated name, value pairs */
static const char *const *env_table;

static const char *fake_env(const char *name)
{
	for (const char *const *e = env_table; e && e[0]; e += 2)
		if (strcmp(e[0], name) == 0)
			return e[1];
	return NULL;
}

static int resolve(const struct otlp_flags *f, const char *const *envs, struct endpoint_config *c,
		   char *err, size_t errlen)
{
	env_table = envs;
	return otlp_config__resolve(f, fake_env, c, err, errlen);
}

static const char *header(const struct endpoint_config *c, const char *name)
{
	for (size_t i = 0; i < c->nr_headers; i++)
		if (strcasecmp(c->headers[i].name, name) == 0)
			return c->headers[i].value;
	return NULL;
}

static void test_off(void)
{
	struct endpoint_config c;
	char err[256];
	const char *envs[] = {"OTEL_EXPORTER_OTLP_HEADERS", "a=b", "OTEL_EXPORTER_OTLP_PROTOCOL",
			      "bogus", NULL};

	CHECK(resolve(NULL, NULL, &c, err, sizeof(err)) == -ENOENT, "no endpoint: not -ENOENT");
	CHECK(c.url == NULL && c.nr_headers == 0, "off but filled");
	/* Other variables alone do not switch export on, nor fail a run that does not export. */
	CHECK(resolve(NULL, envs, &c, err, sizeof(err)) == -ENOENT, "headers alone: %s", err);
	const char *empty[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "", NULL};
	CHECK(resolve(NULL, empty, &c, err, sizeof(err)) == -ENOENT, "empty var counts as unset");
	otlp_config__release(&c);
	otlp_config__release(NULL);
}

static void test_base_endpoint(void)
{
	struct endpoint_config c;
	char err[256];
	const struct {
		const char *base, *want;
	} cases[] = {
		{"http://collector:4318", "http://collector:4318" OTLP_PATH},
		{"http://collector:4318/", "http://collector:4318" OTLP_PATH},
		{"https://h/prefix//", "https://h/prefix" OTLP_PATH},
		{"https://h/otlp", "https://h/otlp" OTLP_PATH},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *envs[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", cases[i].base, NULL};

		CHECK(resolve(NULL, envs, &c, err, sizeof(err)) == 0, "%s: %s", cases[i].base, err);
		CHECK_STR(c.url, cases[i].want);
		otlp_config__release(&c);
	}
	/* and the defaults that come with it */
	const char *envs[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", NULL};
	CHECK(resolve(NULL, envs, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.protocol == EXPORT_OTLP_HTTP_PROTOBUF, "default protocol %d", c.protocol);
	CHECK(c.gzip, "gzip is the default");
	CHECK_U64(c.timeout_ms, 10000);
	CHECK(!c.insecure && c.ca_file == NULL, "TLS defaults");
	CHECK(c.user_agent && strncmp(c.user_agent, "hostprof", 8) == 0, "user agent %s",
	      c.user_agent ? c.user_agent : "(null)");
	otlp_config__release(&c);
}

static void test_signal_endpoint_and_flag(void)
{
	struct endpoint_config c;
	char err[256];
	const char *oneuptime[] = {"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT",
				   "https://oneuptime.com/otlp/v1/profiles",
				   "OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318", NULL};

	CHECK(resolve(NULL, oneuptime, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.url, "https://oneuptime.com/otlp/v1/profiles");
	otlp_config__release(&c);

	/* The signal variable is used as is, even without a path. */
	const char *bare[] = {"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "http://h:4318", NULL};
	CHECK(resolve(NULL, bare, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.url, "http://h:4318");
	otlp_config__release(&c);

	/* The flag wins, used as is when it has a path... */
	struct otlp_flags f = {.endpoint = "https://flag.example/otlp/v1/profiles"};
	CHECK(resolve(&f, oneuptime, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.url, "https://flag.example/otlp/v1/profiles");
	otlp_config__release(&c);

	/* ...and helped to the OTLP path when it has none. */
	const char *no_path[] = {"http://localhost:4318", "http://localhost:4318/"};
	for (size_t i = 0; i < 2; i++) {
		f.endpoint = no_path[i];
		CHECK(resolve(&f, NULL, &c, err, sizeof(err)) == 0, "%s", err);
		CHECK_STR(c.url, "http://localhost:4318" OTLP_PATH);
		otlp_config__release(&c);
	}
	f.endpoint = "http://localhost:4318/?a=b";
	CHECK(resolve(&f, NULL, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.url, "http://localhost:4318/?a=b");
	otlp_config__release(&c);
}

static void test_grpc(void)
{
	struct endpoint_config c;
	char err[256];
	const char *base[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317/",
			      "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc", NULL};

	CHECK(resolve(NULL, base, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.protocol == EXPORT_OTLP_GRPC, "protocol %d", c.protocol);
	CHECK_STR(c.url, "http://collector:4317");
	otlp_config__release(&c);

	/* No scheme: OTEL_EXPORTER_OTLP_INSECURE chooses plaintext, else TLS. */
	struct otlp_flags f = {.endpoint = "collector:4317", .protocol = "grpc"};
	CHECK(resolve(&f, NULL, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.url, "https://collector:4317");
	otlp_config__release(&c);
	const char *insecure[] = {"OTEL_EXPORTER_OTLP_INSECURE", "TRUE", NULL};
	CHECK(resolve(&f, insecure, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.url, "http://collector:4317");
	CHECK(!c.insecure, "INSECURE picks plaintext; it never turns certificate checks off");
	otlp_config__release(&c);
}

static void test_protocol_compression_timeout(void)
{
	struct endpoint_config c;
	char err[256];
	const char *json[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
			      "http://h:4318",
			      "OTEL_EXPORTER_OTLP_PROTOCOL",
			      "grpc",
			      "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL",
			      "http/json",
			      "OTEL_EXPORTER_OTLP_COMPRESSION",
			      "none",
			      "OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT",
			      "0",
			      "OTEL_EXPORTER_OTLP_TIMEOUT",
			      "5",
			      NULL};

	CHECK(resolve(NULL, json, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.protocol == EXPORT_OTLP_HTTP_JSON, "PROFILES_PROTOCOL wins: %d", c.protocol);
	CHECK(!c.gzip, "compression none");
	CHECK_U64(c.timeout_ms, 0); /* 0 = no limit, and PROFILES_ wins */
	CHECK_STR(c.url, "http://h:4318" OTLP_PATH);
	otlp_config__release(&c);

	/* Flags beat both variables. */
	struct otlp_flags f = {
		.protocol = "http/protobuf", .compression = "gzip", .timeout_ms = "2500"};
	CHECK(resolve(&f, json, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.protocol == EXPORT_OTLP_HTTP_PROTOBUF && c.gzip, "flags");
	CHECK_U64(c.timeout_ms, 2500);
	otlp_config__release(&c);

	/* A negative timeout warns and takes the default. */
	enum log_level lv = log_get_level();
	log_set_level(LOG_ERROR);
	const char *neg[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h",
			     "OTEL_EXPORTER_OTLP_TIMEOUT", "-5", NULL};
	CHECK(resolve(NULL, neg, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_U64(c.timeout_ms, 10000);
	otlp_config__release(&c);
	log_set_level(lv);

	/* Bad values: the message names the variable and what is accepted. */
	const struct {
		const char *var, *value, *want1, *want2;
	} bad[] = {
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "http", "OTEL_EXPORTER_OTLP_PROTOCOL",
		 "http/protobuf, http/json, grpc"},
		{"OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "grpc/json",
		 "OTEL_EXPORTER_OTLP_PROFILES_PROTOCOL", "accepted"},
		{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd", "OTEL_EXPORTER_OTLP_COMPRESSION",
		 "gzip, none"},
		{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s", "OTEL_EXPORTER_OTLP_TIMEOUT", "milliseconds"},
		{"OTEL_EXPORTER_OTLP_PROFILES_TIMEOUT", "", NULL, NULL}, /* empty: unset, fine */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *envs[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h", bad[i].var,
				      bad[i].value, NULL};
		int rc = resolve(NULL, envs, &c, err, sizeof(err));

		if (!bad[i].want1) {
			CHECK(rc == 0, "%s='%s': %s", bad[i].var, bad[i].value, err);
		} else {
			CHECK(rc == -EINVAL, "%s='%s' accepted", bad[i].var, bad[i].value);
			CHECK(strstr(err, bad[i].want1) && strstr(err, bad[i].want2), "message: %s",
			      err);
			CHECK(c.url == NULL, "error left a URL behind");
		}
		otlp_config__release(&c);
	}
	struct otlp_flags badflag = {.endpoint = "http://h", .protocol = "thrift"};
	CHECK(resolve(&badflag, NULL, &c, err, sizeof(err)) == -EINVAL, "bad flag accepted");
	CHECK(strstr(err, "--otlp-protocol") != NULL, "message: %s", err);
}

static void test_bad_endpoints(void)
{
	struct endpoint_config c;
	char err[256];
	const char *bad[] = {"localhost:4318",	 "ftp://h/x",	"http://",
			     "http://h:99999/x", "http://h x/", "http://user:s3cr3t@/x"};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct otlp_flags f = {.endpoint = bad[i]};

		CHECK(resolve(&f, NULL, &c, err, sizeof(err)) == -EINVAL, "'%s' accepted", bad[i]);
		CHECK(strstr(err, "--otlp-endpoint") != NULL, "message: %s", err);
		CHECK(strstr(err, "s3cr3t") == NULL, "userinfo leaked: %s", err);
		otlp_config__release(&c);
	}
	const char *envs[] = {"OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT", "collector:4318", NULL};
	CHECK(resolve(NULL, envs, &c, err, sizeof(err)) == -EINVAL, "no scheme accepted");
	CHECK(strstr(err, "OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT") && strstr(err, "http://"),
	      "message: %s", err);
}

static void test_headers(void)
{
	struct endpoint_config c;
	char err[256], desc[1024];
	const char *envs[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
			      "https://h",
			      "OTEL_EXPORTER_OTLP_HEADERS",
			      " x-oneuptime-token = tok%20en%2Cx ,, Other=1,keep=%zz",
			      "OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
			      "other=2",
			      NULL};

	CHECK(resolve(NULL, envs, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_U64(c.nr_headers, 3);
	CHECK_STR(header(&c, "x-oneuptime-token"), "tok en,x"); /* percent-decoded */
	CHECK_STR(header(&c, "other"), "2");			/* PROFILES_ overrides per name */
	CHECK_STR(header(&c, "keep"), "%zz");			/* a bad escape stays literal */

	/* describe() shows names, never values */
	CHECK(otlp_config__describe(&c, desc, sizeof(desc)) == 0, "describe cut: %s", desc);
	CHECK(strstr(desc, "x-oneuptime-token=***") != NULL, "describe: %s", desc);
	CHECK(strstr(desc, "tok en") == NULL && strstr(desc, "=2") == NULL, "value shown: %s",
	      desc);
	CHECK(strstr(desc, "https://h" OTLP_PATH) != NULL, "describe: %s", desc);
	char small[16];
	CHECK(otlp_config__describe(&c, small, sizeof(small)) == -ENOSPC, "no -ENOSPC");
	CHECK(strlen(small) < sizeof(small), "not terminated");
	otlp_config__release(&c);

	/* Flags override per name and are taken literally. */
	const char *flags[] = {"X-OneUptime-Token=flag%20tok", "Authorization=Bearer abc=="};
	struct otlp_flags f = {.headers = flags, .nr_headers = 2};
	CHECK(resolve(&f, envs, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_U64(c.nr_headers, 4);
	CHECK_STR(header(&c, "x-oneuptime-token"), "flag%20tok");
	CHECK_STR(header(&c, "authorization"), "Bearer abc==");
	otlp_config__release(&c);

	/* A config file's headers sit below the environment: a variable's header of the same
	 * name wins, the others stay, and flags still win over both. */
	const char *base[] = {"other=from-file", "x-file-only=1", "authorization=from-file"};
	struct otlp_flags fb = {
		.base_headers = base, .nr_base_headers = 3, .headers = flags + 1, .nr_headers = 1};
	CHECK(resolve(&fb, envs, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(header(&c, "other"), "2");
	CHECK_STR(header(&c, "x-file-only"), "1");
	CHECK_STR(header(&c, "authorization"), "Bearer abc==");
	otlp_config__release(&c);

	/* Malformed entries fail, naming the source but never the secret. */
	const char *bad_flags[][1] = {
		{"Authorization: Bearer s3cr3t"}, {"=s3cr3t"}, {"x-token=s3cr3t\r\nInjected: 1"}};
	for (size_t i = 0; i < 3; i++) {
		struct otlp_flags bf = {
			.endpoint = "http://h", .headers = bad_flags[i], .nr_headers = 1};

		CHECK(resolve(&bf, NULL, &c, err, sizeof(err)) == -EINVAL, "flag #%zu accepted", i);
		CHECK(strstr(err, "--otlp-header") != NULL, "message: %s", err);
		CHECK(strstr(err, "s3cr3t") == NULL, "secret in message: %s", err);
		otlp_config__release(&c);
	}
	const char *bad_env[][5] = {
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h", "OTEL_EXPORTER_OTLP_HEADERS",
		 "a=b,s3cr3t", NULL},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h", "OTEL_EXPORTER_OTLP_PROFILES_HEADERS",
		 "a=s3cr3t%0d%0aX: y", NULL},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://h", "OTEL_EXPORTER_OTLP_HEADERS",
		 "a=s3cr3t%00", NULL},
	};
	for (size_t i = 0; i < 3; i++) {
		CHECK(resolve(NULL, bad_env[i], &c, err, sizeof(err)) == -EINVAL,
		      "env #%zu accepted", i);
		CHECK(strstr(err, bad_env[i][2]) != NULL, "message: %s", err);
		CHECK(strstr(err, "s3cr3t") == NULL, "secret in message: %s", err);
		otlp_config__release(&c);
	}
}

static void test_tls(void)
{
	struct endpoint_config c;
	char err[256], desc[512];
	const char *envs[] = {"OTEL_EXPORTER_OTLP_ENDPOINT",
			      "https://h",
			      "OTEL_EXPORTER_OTLP_CERTIFICATE",
			      "/etc/ca.pem",
			      "OTEL_EXPORTER_OTLP_PROFILES_INSECURE",
			      "false",
			      "OTEL_EXPORTER_OTLP_INSECURE",
			      "true",
			      NULL};

	CHECK(resolve(NULL, envs, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK_STR(c.ca_file, "/etc/ca.pem");
	CHECK(!c.insecure, "an https endpoint stays verified whatever INSECURE says");
	otlp_config__release(&c);
	const char *only_insecure[] = {"OTEL_EXPORTER_OTLP_ENDPOINT", "https://h",
				       "OTEL_EXPORTER_OTLP_INSECURE", "true", NULL};
	CHECK(resolve(NULL, only_insecure, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(!c.insecure, "OTEL_EXPORTER_OTLP_INSECURE=true turned certificate checks off");
	otlp_config__release(&c);

	struct otlp_flags f = {.insecure = true, .ca_file = "/flag/ca.pem"};
	CHECK(resolve(&f, envs, &c, err, sizeof(err)) == 0, "%s", err);
	CHECK(c.insecure, "--otlp-insecure");
	CHECK_STR(c.ca_file, "/flag/ca.pem");
	CHECK(otlp_config__describe(&c, desc, sizeof(desc)) == 0 && strstr(desc, "OFF"),
	      "describe: %s", desc);
	otlp_config__release(&c);
}

static void test_pyroscope(void)
{
	struct endpoint_config c;
	char err[256];
	const char *hdrs[] = {"x-oneuptime-token=abc", "X-Scope-OrgID=tenant"};

	CHECK(otlp_config__resolve_pyroscope("https://oneuptime.com/pyroscope/", NULL, hdrs, 2, &c,
					     err, sizeof(err)) == 0,
	      "%s", err);
	CHECK(c.protocol == EXPORT_PYROSCOPE_PUSH, "push is the default");
	CHECK_STR(c.url, "https://oneuptime.com/pyroscope");
	CHECK_STR(header(&c, "x-oneuptime-token"), "abc");
	CHECK_STR(header(&c, "x-scope-orgid"), "tenant");
	CHECK(!c.gzip && c.timeout_ms == 10000, "gzip %d timeout %ld", c.gzip, c.timeout_ms);
	otlp_config__release(&c);

	CHECK(otlp_config__resolve_pyroscope("http://py:4040", "ingest", NULL, 0, &c, err,
					     sizeof(err)) == 0,
	      "%s", err);
	CHECK(c.protocol == EXPORT_PYROSCOPE_INGEST, "ingest");
	otlp_config__release(&c);

	CHECK(otlp_config__resolve_pyroscope(NULL, NULL, NULL, 0, &c, err, sizeof(err)) == -ENOENT,
	      "no URL");
	CHECK(otlp_config__resolve_pyroscope("http://py", "grpc", NULL, 0, &c, err, sizeof(err)) ==
			      -EINVAL &&
		      strstr(err, "push, ingest"),
	      "bad api: %s", err);
	CHECK(otlp_config__resolve_pyroscope("py:4040", NULL, NULL, 0, &c, err, sizeof(err)) ==
		      -EINVAL,
	      "no scheme accepted");
	CHECK(otlp_config__resolve_pyroscope("http://py/?x=1", NULL, NULL, 0, &c, err,
					     sizeof(err)) == -EINVAL,
	      "query accepted");
	const char *bad[] = {"nonsense"};
	CHECK(otlp_config__resolve_pyroscope("http://py", NULL, bad, 1, &c, err, sizeof(err)) ==
			      -EINVAL &&
		      strstr(err, "--pyroscope-header"),
	      "bad header: %s", err);
	CHECK(c.url == NULL, "error left a URL behind");
}

/* A credential-looking header on plain http:// is named (never its value); https is fine. */
static void test_cleartext_credential(void)
{
	static const struct {
		const char *endpoint, *header, *want;
	} cases[] = {
		{"http://collector:4318", "Authorization=Bearer x", "Authorization"},
		{"HTTP://collector:4318", "x-api-key=k", "x-api-key"},
		{"http://collector:4318", "x-oneuptime-token=t", "x-oneuptime-token"},
		{"http://collector:4318", "X-Scope-OrgID=tenant", NULL},
		{"https://collector:4318", "Authorization=Bearer x", NULL},
		{"http://collector:4318", NULL, NULL},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *headers[] = {cases[i].header};
		struct otlp_flags f = {.endpoint = cases[i].endpoint,
				       .headers = headers,
				       .nr_headers = cases[i].header ? 1 : 0};
		struct endpoint_config c;
		char err[256] = "";
		const char *got;

		CHECK(resolve(&f, NULL, &c, err, sizeof(err)) == 0, "resolve: %s", err);
		got = otlp_config__cleartext_credential(&c);
		if (cases[i].want)
			CHECK_STR(got, cases[i].want);
		else
			CHECK(got == NULL, "%s with %s: flagged %s", cases[i].endpoint,
			      cases[i].header ? cases[i].header : "no header", got);
		otlp_config__release(&c);
	}
	CHECK(otlp_config__cleartext_credential(NULL) == NULL, "NULL");
}

int main(void)
{
	test_cleartext_credential();
	/* The resolver's info and warning lines are expected here. */
	log_set_level(LOG_ERROR);
	test_off();
	test_base_endpoint();
	test_signal_endpoint_and_flag();
	test_grpc();
	test_protocol_compression_timeout();
	test_bad_endpoints();
	test_headers();
	test_tls();
	test_pyroscope();
	return check_summary("test_otlp_config");
}
