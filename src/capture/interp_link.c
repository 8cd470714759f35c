/* SPDX-License-Identifier: BSD-2-Clause */
#include "capture/interp_link.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/pid_records.h"
#include "collect/bpf_session.h"
#include "collect/collector.h"
#include "interp/interp.h"

/* A process whose interpreter is not initialised yet (or not found yet: libpython dlopened by
 * an embedding program) is looked at again this often while it is sampled. */
#define RETRY_NS (2ULL * 1000 * 1000 * 1000)
/* Settled processes (walked, or without an interpreter) are looked at again this often: a PID
 * reused by another program without an exec the sampler saw. */
#define REFRESH_NS (60ULL * 1000 * 1000 * 1000)
#define MAX_TRACKED 8192

struct tracked {
	pid_t pid;
	bool walked;
	bool said; /* its "not walked" was logged */
	uint64_t next_ns;
};

struct interp_link {
	struct bpf_session *session;
	struct interp *ip;
	struct pid_records tracked; /* struct tracked */
	struct interp_link_stats stats;
};

struct interp_link *interp_link__new(struct bpf_session *session, struct interp *ip)
{
	struct interp_link *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->session = session;
	l->ip = ip;
	l->tracked = PID_RECORDS_INIT(sizeof(struct tracked), MAX_TRACKED);
	return l;
}

void interp_link__delete(struct interp_link *l)
{
	if (!l)
		return;
	pid_records__release(&l->tracked);
	free(l);
}

/* At the cap, only the processes BPF walks are kept. */
static bool walked(const void *record)
{
	return ((const struct tracked *)record)->walked;
}

/* Say once per process why its interpreter frames are not walked, and keep it for the summary. */
static void not_walked(struct interp_link *l, struct tracked *t, const char *why)
{
	struct interp_link_stats *s = &l->stats;

	if (t->said)
		return;
	t->said = true;
	s->not_walked++;
	log_info("%s", why);
	if (s->nr_notes < INTERP_LINK_NOTES)
		snprintf(s->notes[s->nr_notes++], sizeof(s->notes[0]), "%s", why);
}

static void look_at(struct interp_link *l, struct tracked *t, uint64_t now)
{
	struct hp_py_proc py;
	char why[256];
	int err = interp__detect(l->ip, t->pid, &py, why, sizeof(why));

	t->next_ns = now + (err == -EAGAIN ? RETRY_NS : REFRESH_NS);
	if (!err) {
		err = bpf_session__set_python(l->session, t->pid, &py);
		if (err == -ENOTSUP)
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 " in PID %d: frames not walked: the walker needs bpf_loop (Linux "
				 "5.17) and --unwind dwarf",
				 t->pid);
		else if (err)
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
				 " in PID %d: frames not walked: map 'py_procs': %s", t->pid,
				 strerror(-err));
		if (err) {
			interp__forget(l->ip, t->pid);
			not_walked(l, t, why);
		} else if (!t->walked) {
			log_debug("PID %d: %s: its frames are walked", t->pid, why);
		}
	} else if (err == -ENOTSUP || err == -EINVAL) {
		not_walked(l, t, why);
	} else if (err != -ENOENT && err != -EAGAIN && err != -ESRCH) {
		log_debug("PID %d: interpreter not read: %s", t->pid, why);
	}
	if (err && t->walked)
		bpf_session__set_python(l->session, t->pid, NULL);
	l->stats.walked -= t->walked;
	t->walked = !err;
	l->stats.walked += t->walked;
}

void interp_link__add(struct interp_link *l, pid_t pid, bool force)
{
	uint64_t now = clock__ns(CLOCK_MONOTONIC);
	struct tracked *t = l && pid > 0 ? pid_records__get(&l->tracked, pid, walked) : NULL;

	if (t && (force || now >= t->next_ns))
		look_at(l, t, now);
}

void interp_link__scan(struct interp_link *l, const struct sample_batch *batch)
{
	size_t at = 0;
	pid_t pid;

	while ((pid = sample_batch__next_pid(batch, &at)) > 0)
		interp_link__add(l, pid, false);
}

void interp_link__forget(struct interp_link *l, pid_t pid)
{
	struct tracked *t = l ? pid_records__find(&l->tracked, pid) : NULL;

	if (!t)
		return;
	l->stats.walked -= t->walked;
	interp__forget(l->ip, pid);
	pid_records__remove(&l->tracked, t);
}

void interp_link__stats(const struct interp_link *l, struct interp_link_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (l)
		*out = l->stats;
}
