// SPDX-License-Identifier: BSD-2-Clause
/* The agent's layered configuration: YAML file, environment, flags, header files, printing. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "agent/config_load.h"

static char dir[] = "/tmp/hostprof-cfgtest.XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return path;
}

/* Load text as a config file into c; returns the loader's result, err filled. */
static int load(struct config *c, struct config_origin *o, const char *text, char *err, size_t len)
{
	config_load__agent_defaults(c, o);
	return config_load__file(c, o, write_file("c.yaml", text), err, len);
}

static void test_example_config(void)
{
	struct config c;
	struct config_origin o;
	char err[512] = "";
	int rc;

	/* The example that systemd/ installs must load as it is. */
	config_load__agent_defaults(&c, &o);
	rc = config_load__file(&c, &o, "systemd/config.yaml", err, sizeof(err));
	CHECK(rc == 0, "systemd/config.yaml loads: %s", err);
	CHECK(c.frequency_hz == 19, "frequency %u", c.frequency_hz);
	CHECK(c.upload_interval_s == 15, "upload_interval %g", c.upload_interval_s);
	CHECK(c.nr_otlp_header_files == 1, "one header file");
	CHECK(config_load__source(&o, "frequency") == CONFIG_SRC_FILE, "frequency from the file");
	config__release(&c);
}

static void test_values(void)
{
	struct config c;
	struct config_origin o;
	char err[512] = "";
	int rc = load(&c, &o,
		      "frequency: 49\n"
		      "types: [cpu, wall]\n"
		      "upload_interval: 2m\n"
		      "unwind: fp\n"
		      "http_listen: \":7470\"\n"
		      "log_level: debug\n"
		      "limits:\n  max_processes: 100\n  export_queue_bytes: 1048576\n"
		      "export:\n  deadline: 500ms\n  otlp:\n    endpoint: http://c:4318\n"
		      "    timeout: 3s\n    insecure: yes\n    sample_type: samples\n"
		      "    headers:\n      a: b\n      x-token: \"s3cret\"\n"
		      "kubernetes:\n  enabled: false\n  refresh_interval: 1m\n"
		      "relabel:\n  - action: keep\n    source: service.name\n    regex: \"web.*\"\n"
		      "  - action: replace\n    target: env\n    replacement: prod\n",
		      err, sizeof(err));

	CHECK(rc == 0, "loads: %s", err);
	CHECK(c.frequency_hz == 49, "frequency");
	CHECK(c.types == (PROFILE_TYPE_CPU | PROFILE_TYPE_WALL), "types %#x", c.types);
	CHECK(c.upload_interval_s == 120, "2m = 120 s: %g", c.upload_interval_s);
	CHECK(!c.unwind_tables, "unwind fp");
	CHECK_STR(c.http_listen, ":7470");
	CHECK(c.log_level == 3, "log_level debug");
	CHECK(c.max_procs == 100 && c.unwind_procs == 100, "max_processes bounds both tables");
	CHECK(c.export_queue_bytes == 1048576, "queue bytes");
	CHECK(c.export_deadline_s == 0.5, "500ms");
	CHECK_STR(c.otlp_endpoint, "http://c:4318");
	CHECK_STR(c.otlp_timeout_ms, "3000");
	CHECK(c.otlp_insecure && c.otlp_samples_count, "insecure, samples");
	CHECK(c.nr_otlp_headers == 2, "two headers");
	CHECK_STR(c.otlp_headers[1], "x-token=s3cret");
	CHECK(c.kube_mode == KUBE_OFF && c.kube_refresh_s == 60, "kubernetes");
	CHECK(c.nr_relabel == 2, "two rules");
	CHECK(c.relabel[0].action == RELABEL_KEEP && c.relabel[0].line == 24, "keep rule, line %d",
	      c.relabel[0].line);
	CHECK_STR(c.relabel[1].replacement, "prod");
	config__release(&c);

	/* A null value unsets a string; an empty file is no configuration at all. */
	rc = load(&c, &o, "cache_dir:\nexport:\n  otlp:\n    endpoint: ~\n", err, sizeof(err));
	CHECK(rc == 0 && c.cache_dir == NULL && c.otlp_endpoint == NULL, "nulls unset: %s", err);
	config__release(&c);
	rc = load(&c, &o, "", err, sizeof(err));
	CHECK(rc == 0 && c.frequency_hz == 19, "empty file: defaults: %s", err);
	config__release(&c);
}

/* Each broken file: the loader's message names the file, the line and the key. */
static void test_errors(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"frequency: 19\nexprot:\n  otlp: {}\n", "c.yaml:2: unknown key 'exprot'"},
		{"limits:\n  max_procs: 5\n", "c.yaml:2: unknown key 'limits.max_procs' in limits"},
		{"frequency: fast\n", "c.yaml:1: frequency: 'fast' is not a sampling frequency"},
		{"upload_interval: 0s\n", "c.yaml:1: upload_interval: '0s' is not a duration"},
		{"upload_interval: 10 parsecs\n", "c.yaml:1: upload_interval:"},
		{"include_idle: maybe\n", "c.yaml:1: include_idle: 'maybe' is not true or false"},
		{"export:\n  otlp:\n    protocol: carrier-pigeon\n",
		 "c.yaml:3: export.otlp.protocol: 'carrier-pigeon' is not one of: http/protobuf"},
		{"export: 5\n", "c.yaml:1: export: is a section: give a map"},
		{"frequency: [1, 2]\n", "c.yaml:1: frequency: give a value, not a list"},
		{"types: {a: b}\n", "c.yaml:1: types: give a list"},
		{"types: [cpu, gpu]\n", "c.yaml:1: types: 'gpu' is not a profile type"},
		{"export:\n  otlp:\n    headers: [a]\n",
		 "c.yaml:3: export.otlp.headers: give a map"},
		{"export:\n  otlp:\n    headers:\n      \"bad name\": x\n",
		 "c.yaml:4: export.otlp.headers: 'bad name' is not a header name"},
		{"relabel: {}\n", "c.yaml:1: relabel: give a list of rules"},
		{"relabel:\n  - source: a\n", "c.yaml:2: relabel: a rule needs an action"},
		{"relabel:\n  - action: replace\n",
		 "c.yaml:2: relabel: a replace rule needs a target"},
		{"relabel:\n  - action: keep\n    colour: red\n",
		 "c.yaml:3: relabel: unknown key 'colour' in a rule"},
		{"relabel:\n  - action: drop\n    regex: \"a[\"\n",
		 "c.yaml:2: relabel: regex 'a['"},
		{"frequency: 19\n  bad indent: [\n", "c.yaml:2: not valid YAML"},
		/* An unclosed list or quote: the line where it opened, not where the parser
		 * noticed. */
		{"frequency: 19\ntypes: [cpu, wall\nupload_interval: 2s\n",
		 "c.yaml:2: not valid YAML: while parsing a flow sequence"},
		{"frequency: \"19\nupload_interval: 2s\n",
		 "c.yaml:1: not valid YAML: while scanning"},
		{"- just\n- a list\n", "c.yaml:1: the file must be a map of keys"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct config c;
		struct config_origin o;
		char err[512] = "";
		int rc = load(&c, &o, cases[i].text, err, sizeof(err));
		const char *at = strstr(err, "c.yaml");

		CHECK(rc == -EINVAL, "case %zu: -EINVAL, got %d", i, rc);
		CHECK(at && !strncmp(at, cases[i].want, strlen(cases[i].want)),
		      "case %zu: want '%s', got '%s'", i, cases[i].want, err);
		config__release(&c);
	}
	{
		struct config c;
		struct config_origin o;
		char err[512] = "";

		config_load__agent_defaults(&c, &o);
		CHECK(config_load__file(&c, &o, "/nonexistent/hostprof.yaml", err, sizeof(err)) ==
			      -ENOENT,
		      "missing file: -ENOENT");
		CHECK(strstr(err, "'/nonexistent/hostprof.yaml': No such file") != NULL, "%s", err);
	}
	{
		/* A secret header value is never quoted in an error. */
		struct config c;
		struct config_origin o;
		char err[512] = "";
		int rc = load(&c, &o, "export:\n  otlp:\n    headers:\n      x: [tok3n-value]\n",
			      err, sizeof(err));

		CHECK(rc == -EINVAL && !strstr(err, "tok3n"), "header error without the value: %s",
		      err);
		config__release(&c);
	}
}

static const char *fake_env(const char *name)
{
	if (!strcmp(name, "HOSTPROF_UPLOAD_INTERVAL"))
		return "20s";
	if (!strcmp(name, "HOSTPROF_EXPORT_OTLP_ENDPOINT"))
		return "http://from-env:4318";
	if (!strcmp(name, "HOSTPROF_LIMITS_MAX_BINARIES"))
		return "64";
	if (!strcmp(name, "NODE_NAME"))
		return "node-7";
	return NULL;
}

static const char *bad_env(const char *name)
{
	return !strcmp(name, "HOSTPROF_FREQUENCY") ? "lots" : NULL;
}

static void test_layers(void)
{
	struct config c;
	struct config_origin o;
	char err[512] = "";
	int rc = load(&c, &o,
		      "frequency: 49\nupload_interval: 30s\nexport:\n  otlp:\n"
		      "    endpoint: http://from-file:4318\n",
		      err, sizeof(err));

	CHECK(rc == 0, "loads: %s", err);
	rc = config_load__env(&c, &o, fake_env, err, sizeof(err));
	CHECK(rc == 0, "env: %s", err);
	CHECK(c.upload_interval_s == 20, "env beats the file");
	CHECK_STR(c.otlp_endpoint, "http://from-env:4318");
	CHECK(c.max_dsos == 64, "HOSTPROF_LIMITS_MAX_BINARIES");
	CHECK_STR(c.kube_node_name, "node-7");
	CHECK(config_load__source(&o, "upload_interval") == CONFIG_SRC_ENV, "source env");
	CHECK(config_load__source(&o, "frequency") == CONFIG_SRC_FILE, "frequency from the file");
	rc = config_load__set(&c, &o, "upload_interval", "7s", CONFIG_SRC_FLAG, err, sizeof(err));
	CHECK(rc == 0 && c.upload_interval_s == 7, "flag beats env");
	CHECK(config_load__source(&o, "upload_interval") == CONFIG_SRC_FLAG, "source flag");
	rc = config_load__set(&c, &o, "nope", "1", CONFIG_SRC_FLAG, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "unknown key 'nope'"), "unknown --set key: %s", err);
	rc = config_load__set(&c, &o, "frequency", "0", CONFIG_SRC_FLAG, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "frequency: '0'"), "bad --set value: %s", err);
	rc = config_load__set(&c, &o, "export.otlp.headers", "a=b", CONFIG_SRC_FLAG, err,
			      sizeof(err));
	CHECK(rc == -EINVAL, "a map cannot be set from text");
	rc = config_load__env(&c, &o, bad_env, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "HOSTPROF_FREQUENCY: 'lots'"), "bad variable: %s", err);
	config__release(&c);
}

static void test_header_files(void)
{
	struct config c;
	struct config_origin o;
	char err[512] = "", text[1024], path[256];
	int rc;

	snprintf(path, sizeof(path), "%s", write_file("token", "  tok-123\n\n"));
	snprintf(text, sizeof(text),
		 "export:\n  otlp:\n    headers:\n      x-token: from-yaml\n"
		 "    header_files:\n      x-token: %s\n      other: %s\n",
		 path, path);
	rc = load(&c, &o, text, err, sizeof(err));
	CHECK(rc == 0, "loads: %s", err);
	rc = config_load__read_header_files(&c, err, sizeof(err));
	CHECK(rc == 0, "reads: %s", err);
	CHECK(c.nr_otlp_headers == 2, "the file's header replaces the same name: %zu",
	      c.nr_otlp_headers);
	CHECK_STR(c.otlp_headers[0], "x-token=tok-123");
	CHECK_STR(c.otlp_headers[1], "other=tok-123");
	config__release(&c);

	write_file("empty", "\n");
	snprintf(text, sizeof(text), "export:\n  otlp:\n    header_files:\n      t: %s/empty\n",
		 dir);
	rc = load(&c, &o, text, err, sizeof(err));
	rc = rc ? rc : config_load__read_header_files(&c, err, sizeof(err));
	CHECK(rc == -ENODATA && strstr(err, "header 't'") && strstr(err, "empty"), "empty: %s",
	      err);
	config__release(&c);

	snprintf(text, sizeof(text), "export:\n  otlp:\n    header_files:\n      t: %s/none\n",
		 dir);
	rc = load(&c, &o, text, err, sizeof(err));
	rc = rc ? rc : config_load__read_header_files(&c, err, sizeof(err));
	CHECK(rc == -ENOENT && strstr(err, "No such file"), "missing: %s", err);
	config__release(&c);

	snprintf(text, sizeof(text), "export:\n  otlp:\n    header_files:\n      t: %s\n", dir);
	rc = load(&c, &o, text, err, sizeof(err));
	rc = rc ? rc : config_load__read_header_files(&c, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "not a regular file"), "a directory: %s", err);
	config__release(&c);
}

/* `hostprof profile --otlp-header-file`: the same reader, named by the flag; a FIFO at the
 * path is refused at once instead of blocking the start. */
static void test_read_headers(void)
{
	struct config c;
	const char *files[1];
	char err[512] = "", spec[512], fifo[256];
	int rc;

	config__defaults(&c);
	snprintf(spec, sizeof(spec), "x-oneuptime-token=%s", write_file("flagtoken", "s3cr3t\n"));
	files[0] = spec;
	rc = config_load__read_headers(&c, files, 1, c.otlp_headers, &c.nr_otlp_headers,
				       "--otlp-header-file", err, sizeof(err));
	CHECK(rc == 0, "reads: %s", err);
	CHECK(c.nr_otlp_headers == 1, "%zu headers", c.nr_otlp_headers);
	CHECK_STR(c.otlp_headers[0], "x-oneuptime-token=s3cr3t");
	config__release(&c);

	config__defaults(&c);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo: %s", strerror(errno));
	snprintf(spec, sizeof(spec), "t=%s", fifo);
	rc = config_load__read_headers(&c, files, 1, c.otlp_headers, &c.nr_otlp_headers,
				       "--otlp-header-file", err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "--otlp-header-file: header 't'") &&
		      strstr(err, "not a regular file"),
	      "a FIFO: %s", err);
	CHECK(!strstr(err, "s3cr3t"), "no value in the message");
	config__release(&c);
	unlink(fifo);
}

/* The printed configuration masks secrets, names sources, and loads back to the same values. */
static void test_print(void)
{
	struct config c, back;
	struct config_origin o, ob;
	char err[512] = "", *text = NULL, *again = NULL;
	size_t len = 0, len2 = 0;
	FILE *f;
	int rc = load(
		&c, &o,
		"frequency: 29\ntypes: [cpu, contention]\nexport:\n  otlp:\n"
		"    endpoint: https://user:pa55@host/x\n    headers:\n      x-tok: s3cr3t\n"
		"relabel:\n  - action: drop\n    source: service.name\n    regex: \"a\\\\.b\"\n",
		err, sizeof(err));

	CHECK(rc == 0, "loads: %s", err);
	f = open_memstream(&text, &len);
	config_load__print(&c, &o, f);
	fclose(f);
	CHECK(!strstr(text, "s3cr3t") && strstr(text, "x-tok: \"***\""), "header masked");
	CHECK(!strstr(text, "pa55") && !strstr(text, "user") && strstr(text, "https://***@host/x"),
	      "credentials masked");
	CHECK(strstr(text, "frequency: 29  # ") != NULL, "source named");
	CHECK(strstr(text, "types: [cpu, contention]") != NULL, "types listed");

	/* Round trip: what was printed loads back to the same printout (secrets excepted). */
	config_load__agent_defaults(&back, &ob);
	rc = config_load__file(&back, &ob, write_file("printed.yaml", text), err, sizeof(err));
	CHECK(rc == 0, "the printout loads: %s", err);
	f = open_memstream(&again, &len2);
	config_load__print(&back, &ob, f);
	fclose(f);
	CHECK(strstr(again, "regex: \"a\\\\.b\"") != NULL, "the regex survives escaping");
	CHECK(back.frequency_hz == 29 && back.types == c.types && back.nr_relabel == 1,
	      "values survive");
	free(text);
	free(again);
	config__release(&c);
	config__release(&back);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_example_config();
	test_values();
	test_errors();
	test_layers();
	test_header_files();
	test_read_headers();
	test_print();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", dir);
	}
	return check_summary("test_config_load");
}
