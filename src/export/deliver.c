// SPDX-License-Identifier: BSD-2-Clause
#include "export/deliver.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/vec.h"
#include "export/otlp_config.h"

struct deliverer {
	struct deliver_opts opts;
	struct exporter *otlp;
	struct exporter *pyroscope;
	size_t files_written, files_failed;
};

void deliver__host_facts(char *name, size_t name_len, const char **arch)
{
	struct utsname u;

	if (gethostname(name, name_len) != 0)
		snprintf(name, name_len, "unknown");
	name[name_len - 1] = '\0';
	*arch = "unknown";
	if (uname(&u) != 0)
		return;
	/* OTel's host.arch values follow Go's GOARCH names. */
	if (!strcmp(u.machine, "x86_64"))
		*arch = "amd64";
	else if (!strcmp(u.machine, "aarch64"))
		*arch = "arm64";
	else if (!strcmp(u.machine, "i686") || !strcmp(u.machine, "i386"))
		*arch = "x86";
	else if (!strncmp(u.machine, "ppc64", 5))
		*arch = "ppc64";
	else if (!strcmp(u.machine, "s390x"))
		*arch = "s390x";
}

static const char *env_lookup(const char *name)
{
	return getenv(name);
}

/* Once per resolution (a start, a reload that restarts the exporters); the header's name only. */
static void warn_cleartext(const char *what, const struct endpoint_config *c)
{
	const char *name = otlp_config__cleartext_credential(c);

	if (name)
		log_warn("%s: the header '%s' looks like a credential and is sent over plain "
			 "http://, readable by anyone on the path; use an https:// endpoint",
			 what, name);
}

int export_targets__resolve(struct export_targets *t, const struct otlp_flags *otlp,
			    const struct config *c)
{
	char err[512];
	int rc;

	memset(t, 0, sizeof(*t));
	rc = otlp_config__resolve(otlp, env_lookup, &t->otlp, err, sizeof(err));
	if (rc == 0) {
		t->otlp_on = true;
	} else if (rc != -ENOENT) {
		log_error("OTLP export: %s", err);
		return rc;
	}
	warn_cleartext("OTLP export", t->otlp_on ? &t->otlp : NULL);
	if (c->pyroscope_url) {
		rc = otlp_config__resolve_pyroscope(c->pyroscope_url, c->pyroscope_api,
						    c->pyroscope_headers, c->nr_pyroscope_headers,
						    &t->pyroscope, err, sizeof(err));
		if (rc) {
			log_error("Pyroscope export: %s", err);
			export_targets__release(t);
			return rc;
		}
		t->pyroscope_on = true;
		warn_cleartext("Pyroscope export", &t->pyroscope);
	}
	return 0;
}

void export_targets__release(struct export_targets *t)
{
	if (t->otlp_on)
		otlp_config__release(&t->otlp);
	if (t->pyroscope_on)
		otlp_config__release(&t->pyroscope);
	t->otlp_on = t->pyroscope_on = false;
}

void export_targets__opts(struct export_targets *t, const struct config *c, struct deliver_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->otlp = t->otlp_on ? &t->otlp : NULL;
	o->pyroscope = t->pyroscope_on ? &t->pyroscope : NULL;
	o->pyroscope_profile_name = "process_cpu";
	o->exporter.queue_max_bytes = c->export_queue_bytes;
	deliver__host_facts(t->host_name, sizeof(t->host_name), &o->otlp_opts.host_arch);
	o->otlp_opts.host_name = t->host_name;
	o->otlp_opts.scope_version = HOSTPROF_VERSION;
	o->otlp_opts.samples_count = c->otlp_samples_count;
}

static struct exporter *start_exporter(const struct endpoint_config *cfg,
				       const struct exporter_opts *opts)
{
	struct transport *t = transport__new(cfg);
	struct exporter *e;

	if (!t)
		return NULL;
	e = exporter__new(t, opts);
	if (!e) {
		int err = errno;

		transport__delete(t);
		errno = err;
		return NULL;
	}
	log_info("exporting to %s", transport__describe(t));
	return e;
}

struct deliverer *deliverer__new(const struct deliver_opts *opts)
{
	struct deliverer *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return NULL;
	d->opts = *opts;
	if (opts->otlp && !(d->otlp = start_exporter(opts->otlp, &opts->exporter)))
		goto fail;
	if (opts->pyroscope && !(d->pyroscope = start_exporter(opts->pyroscope, &opts->exporter)))
		goto fail;
	return d;
fail:
	err = errno;
	deliverer__shutdown(d, 0, NULL);
	errno = err;
	return NULL;
}

/*
 * pprof and folded files hold one profile type each: with several types, "x.pb.gz" becomes
 * "x.cpu.pb.gz", "x.wall.pb.gz", ... (the type's name without underscores: off_cpu → offcpu).
 */
static int typed_path(const char *path, const char *ext, const struct profile *p, char *out,
		      size_t len)
{
	const char *type = profile__desc(p)->sample_type;
	size_t stem = strlen(path) - strlen(ext), o;
	int n = snprintf(out, len, "%.*s.", (int)stem, path);

	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	o = n;
	for (; *type && o + 1 < len; type++)
		if (*type != '_')
			out[o++] = *type;
	n = snprintf(out + o, len - o, "%s", ext);
	return n < 0 || (size_t)n >= len - o ? -ENAMETOOLONG : 0;
}

/*
 * A written file (0600, base/atomic_file.h) to the owner the options name. AT_SYMLINK_NOFOLLOW:
 * a link planted at the path since is not followed. A failure costs only a warning: the file
 * stays the writer's.
 */
static int hand_over(const struct deliverer *d, const char *path, int err)
{
	if (err || !d->opts.give_files)
		return err;
	if (fchownat(AT_FDCWD, path, d->opts.owner_uid, d->opts.owner_gid, AT_SYMLINK_NOFOLLOW))
		log_warn("cannot give '%s' to uid %u: %s; it stays readable by its writer only",
			 path, (unsigned)d->opts.owner_uid, strerror(errno));
	return 0;
}

static int write_per_type(const struct deliverer *d, const struct output *o,
			  const struct profile *const *profiles, size_t n, const char *ext,
			  int (*write)(const struct profile *, const char *))
{
	char path[PATH_MAX];
	int err = 0;

	if (n == 1)
		return hand_over(d, o->path, write(profiles[0], o->path));
	for (size_t i = 0; i < n && !err; i++) {
		err = typed_path(o->path, ext, profiles[i], path, sizeof(path));
		if (!err)
			err = hand_over(d, path, write(profiles[i], path));
		if (!err)
			printf("Wrote %s\n", path);
	}
	return err;
}

static int write_file(const struct deliverer *d, const struct output *o,
		      const struct profile *const *profiles, size_t n)
{
	switch (o->format) {
	case OUTPUT_PPROF:
		return write_per_type(d, o, profiles, n, ".pb.gz", enc_pprof__write);
	case OUTPUT_FOLDED:
		return write_per_type(d, o, profiles, n, ".folded", enc_folded__write);
	case OUTPUT_OTLP_PB:
		return hand_over(d, o->path,
				 enc_otlp__write(profiles, n, &d->opts.otlp_opts, o->path));
	case OUTPUT_OTLP_JSON:
		return hand_over(d, o->path,
				 enc_otlp__write_json(profiles, n, &d->opts.otlp_opts, o->path));
	case OUTPUT_HTML:
		return hand_over(d, o->path, enc_html__write(profiles, n, o->path));
	}
	return -EINVAL;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keep the newest `keep` files "TYPE-*.pb.gz" of a directory: their names sort by time. */
static void prune_windows(const char *dir, const char *type, size_t keep)
{
	size_t tl = strlen(type), n = 0, cap = 0;
	char **names = NULL;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (strncmp(e->d_name, type, tl) || e->d_name[tl] != '-' || len < 7 ||
		    strcmp(e->d_name + len - 6, ".pb.gz"))
			continue;
		if (VEC_RESERVE(names, cap, n + 1) || !(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i + keep < n; i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (unlink(path) && errno != ENOENT)
			log_warn("cannot remove the old window '%s': %s", path, strerror(errno));
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

/* One pprof file per type and window: DIR/TYPE-YYYYMMDDTHHMMSSZ.pb.gz (UTC, the window's
 * start), then the oldest beyond keep_files are removed. */
static int write_window(struct deliverer *d, const struct profile *const *profiles, size_t n)
{
	int first_err = 0;

	for (size_t i = 0; i < n; i++) {
		const struct profile_desc *desc = profile__desc(profiles[i]);
		time_t start = (time_t)(desc->time_nanos / 1000000000ULL);
		char type[32], stamp[32], path[PATH_MAX];
		size_t t = 0;
		struct tm tm;
		int err;

		for (const char *c = desc->sample_type; *c && t + 1 < sizeof(type); c++)
			if (*c != '_')
				type[t++] = *c;
		type[t] = '\0';
		gmtime_r(&start, &tm);
		strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm);
		snprintf(path, sizeof(path), "%s/%s-%s.pb.gz", d->opts.window_dir, type, stamp);
		err = enc_pprof__write(profiles[i], path);
		if (err) {
			log_warn("writing '%s' failed: %s", path, strerror(-err));
			d->files_failed++;
			first_err = first_err ? first_err : err;
			continue;
		}
		d->files_written++;
		prune_windows(d->opts.window_dir, type, d->opts.keep_files);
	}
	return first_err;
}

static size_t count_samples(const struct profile *p)
{
	return profile__nr_samples(p) > 0 ? profile__nr_samples(p) - 1 : 0;
}

static int queue_otlp(struct deliverer *d, const struct profile *const *profiles, size_t n)
{
	struct export_payload pl = {0};
	char what[128];
	int err;

	if (d->opts.otlp->protocol == EXPORT_OTLP_HTTP_JSON)
		err = enc_otlp__encode_json(profiles, n, &d->opts.otlp_opts, (char **)&pl.body,
					    &pl.len);
	else
		err = enc_otlp__encode(profiles, n, &d->opts.otlp_opts, &pl.body, &pl.len);
	if (err) {
		log_error("encoding the OTLP request failed: %s", strerror(-err));
		return err;
	}
	snprintf(what, sizeof(what), "profile of %zu processes",
		 profile__nr_processes(profiles[0]));
	pl.what = strdup(what);
	return exporter__submit(d->otlp, &pl);
}

static int queue_pyroscope(struct deliverer *d, const struct profile *p)
{
	struct export_payload *many = NULL;
	size_t nr = 0;
	int err = 0;

	if (d->opts.pyroscope->protocol == EXPORT_PYROSCOPE_INGEST) {
		err = enc_pyroscope__ingest(p, d->opts.pyroscope_app_name, &many, &nr);
		for (size_t i = 0; i < nr && !err; i++) {
			err = exporter__submit(d->pyroscope, &many[i]);
			/* The exporter owns the buffers now, whatever it answered. */
			memset(&many[i], 0, sizeof(many[i]));
		}
		enc_pyroscope__free_payloads(many, nr);
	} else {
		struct export_payload pl = {0};

		err = enc_pyroscope__push(p, d->opts.pyroscope_profile_name, &pl.body, &pl.len);
		if (!err) {
			pl.what = strdup("push request");
			err = exporter__submit(d->pyroscope, &pl);
		}
	}
	if (err)
		log_error("queueing the Pyroscope request failed: %s", strerror(-err));
	return err;
}

/*
 * An output that could not be written after the capture (its directory gone, the disk full) is
 * written under $TMPDIR (else /tmp) instead, as hostprof-PID-NAME, and named: a capture is never
 * lost to a path.
 */
static void rescue_file(const struct deliverer *d, const struct output *o,
			const struct profile *const *profiles, size_t n, int err)
{
	const char *tmp = getenv("TMPDIR"), *base = strrchr(o->path, '/');
	char path[PATH_MAX];
	struct output rescue = *o;

	snprintf(path, sizeof(path), "%s/hostprof-%d-%s", tmp && *tmp ? tmp : "/tmp", (int)getpid(),
		 base ? base + 1 : o->path);
	rescue.path = path;
	if (write_file(d, &rescue, profiles, n) == 0)
		log_error("writing '%s' failed: %s; the profile was saved as %s instead", o->path,
			  strerror(-err), path);
	else
		log_error("writing '%s' failed: %s, and so did writing %s", o->path, strerror(-err),
			  path);
}

int deliverer__deliver(struct deliverer *d, const struct profile *const *profiles, size_t n)
{
	int first_err = 0, err;

	for (size_t i = 0; i < d->opts.nr_outputs; i++) {
		err = write_file(d, &d->opts.outputs[i], profiles, n);
		if (err) {
			rescue_file(d, &d->opts.outputs[i], profiles, n, err);
			first_err = first_err ? first_err : err;
			d->files_failed++;
		} else {
			/* Files split by type said their own names. */
			bool split = n > 1 && (d->opts.outputs[i].format == OUTPUT_PPROF ||
					       d->opts.outputs[i].format == OUTPUT_FOLDED);

			if (!split)
				printf("Wrote %s\n", d->opts.outputs[i].path);
			d->files_written++;
		}
	}
	if (d->opts.window_dir && (err = write_window(d, profiles, n)))
		first_err = first_err ? first_err : err;
	/* Receivers are told nothing rather than an empty profile (the spec: SHOULD NOT send). */
	if (!n || !count_samples(profiles[0]))
		return first_err;
	if (d->otlp && (err = queue_otlp(d, profiles, n)))
		first_err = first_err ? first_err : err;
	if (d->pyroscope && (err = queue_pyroscope(d, profiles[0])))
		first_err = first_err ? first_err : err;
	return first_err;
}

void deliverer__stats(struct deliverer *d, struct delivery_report *out)
{
	memset(out, 0, sizeof(*out));
	out->otlp_on = d->otlp != NULL;
	out->pyroscope_on = d->pyroscope != NULL;
	out->files_written = d->files_written;
	out->files_failed = d->files_failed;
	if (d->otlp)
		exporter__stats(d->otlp, &out->otlp);
	if (d->pyroscope)
		exporter__stats(d->pyroscope, &out->pyroscope);
}

static int64_t remaining_ms(int64_t end)
{
	int64_t now = clock__mono_ms();

	return now < end ? end - now : 0;
}

void deliverer__shutdown(struct deliverer *d, int64_t deadline_ms, struct delivery_report *report)
{
	struct delivery_report r = {0};
	int64_t end = clock__mono_ms() + (deadline_ms > 0 ? deadline_ms : 0);

	if (!d)
		return;
	r.otlp_on = d->otlp != NULL;
	r.pyroscope_on = d->pyroscope != NULL;
	r.files_written = d->files_written;
	r.files_failed = d->files_failed;
	/* Both flush within one deadline, in turn: what the first leaves is the second's. */
	if (d->otlp)
		exporter__shutdown(d->otlp, remaining_ms(end), &r.otlp);
	if (d->pyroscope)
		exporter__shutdown(d->pyroscope, remaining_ms(end), &r.pyroscope);
	if (report)
		*report = r;
	free(d);
}
