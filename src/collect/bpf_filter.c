// SPDX-License-Identifier: BSD-2-Clause
/*
 * The drop filter's entries (bpf/common.bpf.h): the cpu object's drop_pids and drop_cgroups,
 * which the other objects share, and the drop_active bits that every object reads first.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>

#include "collect/bpf_session_impl.h"

/* Tell every object which maps hold entries: a program reads the bits before any lookup. */
static void set_active(struct bpf_session *s, uint32_t active)
{
	s->drop_active = active;
	__atomic_store_n(&s->skel->bss->drop_active, active, __ATOMIC_SEQ_CST);
	if (s->offcpu)
		__atomic_store_n(&s->offcpu->bss->drop_active, active, __ATOMIC_SEQ_CST);
	if (s->lock)
		__atomic_store_n(&s->lock->bss->drop_active, active, __ATOMIC_SEQ_CST);
}

static bool filter_loaded(const struct bpf_session *s)
{
	return bpf_program__autoload(s->skel->progs.hp_drop_exec);
}

int bpf_session__drop_pid(struct bpf_session *s, pid_t pid)
{
	__u32 key = (__u32)pid;
	__u8 one = 1;

	if (!filter_loaded(s))
		return -ENOTSUP;
	if (pid <= 0)
		return -EINVAL;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.drop_pids), &key, &one, BPF_ANY))
		return -errno;
	if (!(s->drop_active & HP_DROP_PIDS))
		set_active(s, s->drop_active | HP_DROP_PIDS);
	return 0;
}

int bpf_session__drop_cgroup(struct bpf_session *s, uint64_t cgroup_id)
{
	__u64 key = cgroup_id;
	__u8 one = 1;

	if (!filter_loaded(s))
		return -ENOTSUP;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.drop_cgroups), &key, &one, BPF_ANY))
		return -errno;
	if (!(s->drop_active & HP_DROP_CGROUPS))
		set_active(s, s->drop_active | HP_DROP_CGROUPS);
	return 0;
}

int bpf_session__undrop_cgroup(struct bpf_session *s, uint64_t cgroup_id)
{
	__u64 key = cgroup_id;

	if (!filter_loaded(s))
		return -ENOTSUP;
	return bpf_map_delete_elem(bpf_map__fd(s->skel->maps.drop_cgroups), &key) ? -errno : 0;
}

/* Delete every key of a hash map (keys of at most 8 bytes), one at a time: it holds at most a few
 * thousand. */
static void empty_map(int fd)
{
	uint64_t key = 0;

	while (bpf_map_get_next_key(fd, NULL, &key) == 0)
		if (bpf_map_delete_elem(fd, &key))
			break;
}

void bpf_session__clear_drops(struct bpf_session *s)
{
	if (!filter_loaded(s))
		return;
	/* Off first: no program looks at a map while it is being emptied. */
	set_active(s, 0);
	empty_map(bpf_map__fd(s->skel->maps.drop_pids));
	empty_map(bpf_map__fd(s->skel->maps.drop_cgroups));
}
