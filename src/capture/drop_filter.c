// SPDX-License-Identifier: BSD-2-Clause
#include "capture/drop_filter.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "hostprof_abi.h"
#include "process/cgroup.h"

/* PIDs put in lately, direct-mapped: every builder of a window reports the same process. */
#define RECENT_SLOTS 256

struct dropped_cgroup {
	uint64_t id;
	char *path; /* under the cgroup2fs root, to tell when it is gone */
};

struct drop_filter {
	struct bpf_session *session;
	const char *proc_root;
	const char *v2_root; /* NULL: no cgroup2fs, PIDs only */
	pid_t recent[RECENT_SLOTS];
	struct dropped_cgroup *cgroups; /* HP_DROP_CGROUPS_ENTRIES at most */
	size_t nr_cgroups;
	struct drop_filter_stats stats;
	bool warned_full;
};

struct drop_filter *drop_filter__new(struct bpf_session *s, const char *proc_root)
{
	struct drop_filter *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->cgroups = calloc(HP_DROP_CGROUPS_ENTRIES, sizeof(*f->cgroups));
	if (!f->cgroups) {
		free(f);
		errno = ENOMEM;
		return NULL;
	}
	f->session = s;
	f->proc_root = proc_root ? proc_root : "/proc";
	f->v2_root = cgroup__v2_root();
	return f;
}

static void forget_cgroups(struct drop_filter *f)
{
	for (size_t i = 0; i < f->nr_cgroups; i++)
		free(f->cgroups[i].path);
	f->nr_cgroups = 0;
}

void drop_filter__delete(struct drop_filter *f)
{
	if (!f)
		return;
	forget_cgroups(f);
	free(f->cgroups);
	free(f);
}

/* A map that was full: counted, and said once, for the filter is only a saving. */
static void count_failure(struct drop_filter *f, int err, const char *what)
{
	if (err != -E2BIG) {
		f->stats.failed++;
		log_debug("drop filter: %s not added: %s", what, strerror(-err));
		return;
	}
	f->stats.full++;
	if (!f->warned_full)
		log_warn("drop filter: the kernel's %s map is full; further processes that relabel "
			 "rules drop are left out after their samples were taken",
			 what);
	f->warned_full = true;
}

static bool have_cgroup(const struct drop_filter *f, uint64_t id)
{
	for (size_t i = 0; i < f->nr_cgroups; i++)
		if (f->cgroups[i].id == id)
			return true;
	return false;
}

static void add_cgroup(struct drop_filter *f, pid_t pid)
{
	char path[PATH_MAX];
	uint64_t id;
	int err;

	if (!f->v2_root)
		return;
	err = cgroup__id(f->proc_root, f->v2_root, pid, &id, path, sizeof(path));
	/* The root cgroup holds whatever no manager placed: never the whole host for one rule. */
	if (!err && !strcmp(path, "/"))
		return;
	if (!err && have_cgroup(f, id))
		return;
	if (!err && f->nr_cgroups == HP_DROP_CGROUPS_ENTRIES)
		err = -E2BIG;
	if (!err)
		err = bpf_session__drop_cgroup(f->session, id);
	if (err) {
		count_failure(f, err, "cgroup");
		return;
	}
	f->cgroups[f->nr_cgroups].path = strdup(path);
	if (!f->cgroups[f->nr_cgroups].path) {
		/* Without its path it could never be swept: out of the kernel again. */
		bpf_session__undrop_cgroup(f->session, id);
		f->stats.failed++;
		return;
	}
	f->cgroups[f->nr_cgroups++].id = id;
	f->stats.cgroups++;
	log_debug("drop filter: cgroup %s (id %llu) of PID %d", path, (unsigned long long)id,
		  (int)pid);
}

void drop_filter__add(void *ctx, pid_t pid, enum identity_drop drop)
{
	struct drop_filter *f = ctx;
	pid_t *slot = &f->recent[(unsigned int)pid % RECENT_SLOTS];
	int err;

	if (drop == IDENTITY_DROP_NONE || pid <= 0 || *slot == pid)
		return;
	*slot = pid;
	err = bpf_session__drop_pid(f->session, pid);
	if (err)
		count_failure(f, err, "PID");
	else
		f->stats.pids++;
	if (drop == IDENTITY_DROP_CGROUP)
		add_cgroup(f, pid);
}

void drop_filter__clear(struct drop_filter *f)
{
	if (!f)
		return;
	bpf_session__clear_drops(f->session);
	forget_cgroups(f);
	memset(f->recent, 0, sizeof(f->recent));
	f->warned_full = false;
}

void drop_filter__sweep(struct drop_filter *f)
{
	size_t kept = 0;

	if (!f)
		return;
	for (size_t i = 0; i < f->nr_cgroups; i++) {
		struct dropped_cgroup *c = &f->cgroups[i];

		if (cgroup__alive(f->v2_root, c->path, c->id)) {
			f->cgroups[kept++] = *c;
			continue;
		}
		bpf_session__undrop_cgroup(f->session, c->id);
		free(c->path);
	}
	f->nr_cgroups = kept;
	/* A PID seen again after its exec or exit must reach the kernel again. */
	memset(f->recent, 0, sizeof(f->recent));
}

void drop_filter__stats(const struct drop_filter *f, struct drop_filter_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!f)
		return;
	*out = f->stats;
	out->cgroups_held = f->nr_cgroups;
}
