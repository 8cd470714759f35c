// SPDX-License-Identifier: BSD-2-Clause
#include "collect/bpf_session.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "collect/bpf_session_impl.h"
#include "base/log.h"

#define NSEC_PER_SEC 1000000000ULL

/* Not in every libc's headers; numbers are the kernel's (include/uapi/linux/capability.h). */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1U << (cap % 32));
}

int bpf_session__preflight(const char *btf_path, char *msg, size_t len)
{
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {};

	if (access(btf_path, R_OK) != 0) {
		snprintf(msg, len,
			 "this kernel has no BTF (%s is missing): hostprof's CO-RE programs need a "
			 "kernel built with CONFIG_DEBUG_INFO_BTF=y (Linux 5.8 or later; most "
			 "distribution kernels have it)",
			 btf_path);
		return -ENOTSUP;
	}
	if (syscall(SYS_capget, &hdr, data) != 0) {
		int err = -errno;

		snprintf(msg, len, "cannot read this process's capabilities: %s", strerror(-err));
		return err;
	}
	if (has_cap(data, CAP_SYS_ADMIN))
		return 0;
	if (!has_cap(data, CAP_BPF) || !has_cap(data, CAP_PERFMON)) {
		snprintf(msg, len,
			 "missing capabilities:%s%s. Run as root, or grant them: sudo setcap "
			 "cap_bpf,cap_perfmon,cap_sys_ptrace,cap_dac_read_search,cap_sys_resource,"
			 "cap_syslog,cap_checkpoint_restore+ep hostprof (the README says what each "
			 "is for)",
			 has_cap(data, CAP_BPF) ? "" : " CAP_BPF",
			 has_cap(data, CAP_PERFMON) ? "" : " CAP_PERFMON");
		return -EPERM;
	}
	return 0;
}

static bool kernel_has_helper(enum bpf_func_id id)
{
	return libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, id, NULL) == 1;
}

/*
 * How user stacks are walked with the tables. bpf_loop (Linux 5.17) runs the walk in one program.
 * Without it, the cpu sampler walks across tail calls (hp_cpu_walk), its binary searches as plain
 * loops; samples taken in the kernel need bpf_task_pt_regs (5.15) to find the user registers and
 * take frame pointers before it, as the off-CPU and lock programs always do without bpf_loop. A
 * kernel that refuses the tail-call walker gets frame pointers: see cpu_load().
 * HOSTPROF_UNWIND_WALKER=tailcall forces the tail calls on any kernel, to test them where bpf_loop
 * exists.
 */
static void pick_walker(struct bpf_session *s, const struct bpf_session_opts *opts)
{
	const char *force = getenv("HOSTPROF_UNWIND_WALKER");
	bool has_loop = kernel_has_helper(BPF_FUNC_loop);

	s->unwinding = false;
	s->tail_calls = false;
	if (!opts->unwind)
		return;
	s->unwinding = true;
	if (has_loop && !(force && !strcmp(force, "tailcall")))
		return;
	s->tail_calls = true;
	if (!has_loop)
		log_info("this kernel has no bpf_loop (Linux 5.17+): CPU samples walk user stacks "
			 "with tail calls%s; off-CPU and lock stacks use frame pointers",
			 kernel_has_helper(BPF_FUNC_task_pt_regs)
				 ? ""
				 : " (those taken in the kernel use frame pointers: "
				   "bpf_task_pt_regs is Linux 5.15)");
}

/* The walker's maps of one object (bpf/unwind.bpf.h, bpf/python.bpf.h). */
struct walker_maps {
	struct bpf_map *rows, *procs, *refresh, *events, *announced, *py_procs;
};

#define WALKER_MAPS(o)                                                                             \
	((struct walker_maps){(o)->maps.unwind_rows, (o)->maps.unwind_procs,                       \
			      (o)->maps.unwind_refresh, (o)->maps.unwind_events,                   \
			      (o)->maps.unwind_announced, (o)->maps.py_procs})

/*
 * The walker's maps of one object: the rows and processes maps are sized here for the cpu object,
 * which creates them, and shared with the others (owner set) before they load.
 */
static int configure_unwind(struct walker_maps m, const struct bpf_session_opts *opts, bool on,
			    const struct cpu_bpf *owner)
{
	struct walker_maps own;
	int err;

	if (owner && on) {
		own = WALKER_MAPS(owner);
		err = bpf_map__reuse_fd(m.rows, bpf_map__fd(own.rows));
		if (!err)
			err = bpf_map__reuse_fd(m.procs, bpf_map__fd(own.procs));
		if (!err)
			err = bpf_map__reuse_fd(m.refresh, bpf_map__fd(own.refresh));
		if (!err)
			err = bpf_map__reuse_fd(m.events, bpf_map__fd(own.events));
		if (!err)
			err = bpf_map__reuse_fd(m.announced, bpf_map__fd(own.announced));
		if (!err)
			err = bpf_map__reuse_fd(m.py_procs, bpf_map__fd(own.py_procs));
		return err;
	}
	/* A ring buffer is a whole number of pages (64 KiB ones on some arm64 kernels). */
	err = bpf_map__set_max_entries(m.events, 16 * (uint32_t)sysconf(_SC_PAGESIZE));
	if (!err)
		err = bpf_map__set_max_entries(m.rows, on ? opts->unwind_rows : 1);
	if (!err)
		err = bpf_map__set_max_entries(m.procs, on ? opts->unwind_procs : 1);
	return err;
}

/*
 * Can a perf_event program use a hash map allocated at run time (BPF_F_NO_PREALLOC)? Only from
 * Linux 6.1 on; before, the verifier rejects any perf_event program that references one, used or
 * not. Probed by loading a program that only loads such a map's address.
 */
static bool perf_event_takes_runtime_maps(void)
{
	struct bpf_map_create_opts mopts = {.sz = sizeof(mopts), .map_flags = BPF_F_NO_PREALLOC};
	int map_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "hp_probe", 4, 4, 1, &mopts), prog_fd;

	if (map_fd < 0)
		return false;
	struct bpf_insn insns[] = {
		{.code = BPF_LD | BPF_DW | BPF_IMM,
		 .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD,
		 .imm = map_fd},
		{0}, /* the second half of the 64-bit immediate */
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	prog_fd = bpf_prog_load(BPF_PROG_TYPE_PERF_EVENT, "hp_probe", "GPL", insns,
				sizeof(insns) / sizeof(insns[0]), NULL);
	if (prog_fd >= 0)
		close(prog_fd);
	close(map_fd);
	return prog_fd >= 0;
}

/* Caps of the cpu object's walker maps when they must be preallocated (see above). */
#define PREALLOC_UNWIND_PROCS 1024 /* 8 MiB */
#define PREALLOC_USTACKS 4096	   /* 4 MiB per buffer */

/*
 * The cpu object's run-time allocated maps, preallocated where the kernel demands it, and always
 * when the walker is off (they then hold one entry: the verifier still sees them).
 */
static int cpu_prealloc(struct cpu_bpf *skel, bool unwind)
{
	struct bpf_map *maps[] = {skel->maps.unwind_procs, skel->maps.ustacks_0,
				  skel->maps.ustacks_1};
	int err = 0;

	if (unwind && perf_event_takes_runtime_maps())
		return 0;
	if (unwind)
		log_info("this kernel's perf_event programs need preallocated maps (before Linux "
			 "6.1): unwinding keeps tables for at most %d processes",
			 PREALLOC_UNWIND_PROCS);
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]) && !err; i++) {
		uint32_t cap = i == 0 ? PREALLOC_UNWIND_PROCS : PREALLOC_USTACKS;

		err = bpf_map__set_map_flags(maps[i],
					     bpf_map__map_flags(maps[i]) & ~BPF_F_NO_PREALLOC);
		if (!err && bpf_map__max_entries(maps[i]) > cap)
			err = bpf_map__set_max_entries(maps[i], cap);
	}
	return err;
}

/*
 * The drop filter's maps: the cpu object's, sized for the filter or to nothing without it; the
 * other objects share them (owner set), as they share target_pids.
 */
static int configure_drops(struct bpf_map *pids, struct bpf_map *cgroups,
			   const struct bpf_session_opts *opts, const struct cpu_bpf *owner)
{
	int err;

	if (owner) {
		err = bpf_map__reuse_fd(pids, bpf_map__fd(owner->maps.drop_pids));
		return err ? err
			   : bpf_map__reuse_fd(cgroups, bpf_map__fd(owner->maps.drop_cgroups));
	}
	if (opts->drop_filter)
		return 0;
	err = bpf_map__set_max_entries(pids, 1);
	return err ? err : bpf_map__set_max_entries(cgroups, 1);
}

static int configure(struct cpu_bpf *skel, const struct bpf_session_opts *opts, bool unwind,
		     bool tail_calls)
{
	struct bpf_map *stacks[] = {skel->maps.stacks_0, skel->maps.stacks_1};
	struct bpf_map *ustacks[] = {skel->maps.ustacks_0, skel->maps.ustacks_1};
	struct bpf_map *counts[] = {skel->maps.counts_0, skel->maps.counts_1};
	struct bpf_map *tctx[] = {skel->maps.tctx_0, skel->maps.tctx_1};
	int err;

	skel->rodata->filter_pids = opts->filter_pids;
	skel->rodata->follow_children = opts->filter_pids && opts->follow_children;
	bpf_program__set_autoload(skel->progs.hp_follow_fork, skel->rodata->follow_children);
	bpf_program__set_autoload(skel->progs.hp_follow_exit, skel->rodata->follow_children);
	skel->rodata->include_idle = opts->include_idle;
	skel->rodata->unwind_tables = unwind;
	skel->rodata->unwind_tail_calls = tail_calls;
	/* One sampler: with the bpf_loop walker, or without (frame pointers or tail calls). */
	bpf_program__set_autoload(skel->progs.hp_cpu_sample_loop, unwind && !tail_calls);
	bpf_program__set_autoload(skel->progs.hp_cpu_sample, !unwind || tail_calls);
	bpf_program__set_autoload(skel->progs.hp_cpu_walk, tail_calls);
	skel->rodata->unwind_depth = opts->unwind_depth;
	bpf_program__set_autoload(skel->progs.hp_unwind_exec, unwind);
	bpf_program__set_autoload(skel->progs.hp_unwind_exit, unwind);
	bpf_program__set_autoload(skel->progs.hp_drop_exec, opts->drop_filter);
	bpf_program__set_autoload(skel->progs.hp_drop_exit, opts->drop_filter);
	err = configure_drops(skel->maps.drop_pids, skel->maps.drop_cgroups, opts, NULL);
	if (err)
		return err;
	for (int i = 0; i < HP_NR_BUFFERS; i++) {
		err = bpf_map__set_max_entries(tctx[i], HP_TCTX_ENTRIES);
		if (err)
			return err;
		/* Frame-pointer stacks or walked ones: the other map needs no room. */
		err = bpf_map__set_max_entries(stacks[i], opts->stack_map_entries);
		if (!err)
			err = bpf_map__set_max_entries(ustacks[i],
						       unwind ? opts->stack_map_entries : 1);
		if (!err)
			err = bpf_map__set_max_entries(counts[i], opts->counts_map_entries);
		if (err)
			return err;
	}
	err = configure_unwind(WALKER_MAPS(skel), opts, unwind, NULL);
	return err ? err : cpu_prealloc(skel, unwind);
}

/* The sched_switch programs, best first: offcpu_open() takes the first that loads. */
enum offcpu_entry {
	OFFCPU_AT_RETURN, /* tp_btf, the bpf_loop walker, and task work (Linux 6.18) */
	OFFCPU_TYPED,	  /* tp_btf, with the bpf_loop walker or frame pointers */
	OFFCPU_RAW,	  /* raw_tp, where the tracepoint has no BTF */
};

static bool kernel_has_kfunc(const char *name)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool found = btf && btf__find_by_name_kind(btf, name, BTF_KIND_FUNC) >= 0;

	btf__free(btf);
	return found;
}

/*
 * Are the contention profile's futex waits taken by the sched_switch program (bpf/offcpu.bpf.c
 * futex_waits) rather than at the futex calls? Where it runs anyway, with the bpf_loop walker
 * (whose programs read a sleeper's registers when its wait is kept) and with no shortest wait
 * of its own, which would drop short futex waits. HOSTPROF_FUTEX_WAITS=syscalls keeps the futex
 * calls' programs, to compare the two.
 */
static bool futex_waits_at_switches(const struct bpf_session_opts *opts, bool loop)
{
	const char *force = getenv("HOSTPROF_FUTEX_WAITS");

	if (force && strcmp(force, "syscalls") != 0) {
		log_warn("HOSTPROF_FUTEX_WAITS=%s ignored: the one value it takes is 'syscalls'",
			 force);
		force = NULL;
	}
	return loop && opts->lock && !opts->offcpu_min_ns && !force;
}

static int offcpu_configure(struct offcpu_bpf *o, const struct bpf_session_opts *opts,
			    enum offcpu_entry entry, const struct bpf_session *s)
{
	struct bpf_map *sized[] = {o->maps.offcpu_stacks_0, o->maps.offcpu_stacks_1,
				   o->maps.offcpu_counts_0, o->maps.offcpu_counts_1};
	bool btf = entry != OFFCPU_RAW, at_return = entry == OFFCPU_AT_RETURN;
	bool loop = btf && s->unwinding && !s->tail_calls;
	/* The programs with the bpf_loop walker keep their start records in task storage; the
	 * others in offcpu_start, preallocated for --offcpu-threads threads. */
	int err = bpf_map__set_max_entries(o->maps.offcpu_start, loop ? 1 : opts->offcpu_threads);

	if (!err)
		err = bpf_map__set_autocreate(o->maps.offcpu_task, loop);
	o->rodata->filter_pids = opts->filter_pids;
	if (!err)
		err = bpf_map__reuse_fd(o->maps.target_pids,
					bpf_map__fd(s->skel->maps.target_pids));
	/* One list of where processes keep their thread context, which the cpu object's user
	 * (capture/thread_ctx_link.h) writes. */
	if (!err)
		err = bpf_map__reuse_fd(o->maps.thread_ctx_procs,
					bpf_map__fd(s->skel->maps.thread_ctx_procs));
	if (!err)
		err = configure_drops(o->maps.drop_pids, o->maps.drop_cgroups, opts, s->skel);
	o->rodata->min_block_ns = opts->offcpu_min_ns;
	o->rodata->sample_ns = opts->wait_sample_ns;
	o->rodata->futex_waits = futex_waits_at_switches(opts, loop);
	o->rodata->unwind_tables = s->unwinding && !s->tail_calls;
	o->rodata->unwind_depth = opts->unwind_depth;
	if (!err)
		err = configure_unwind(WALKER_MAPS(o), opts, s->unwinding, s->skel);
	if (!err)
		err = bpf_map__set_max_entries(o->maps.offcpu_return_work,
					       at_return ? opts->offcpu_threads : 1);
	for (size_t i = 0; i < sizeof(sized) / sizeof(sized[0]) && !err; i++)
		err = bpf_map__set_max_entries(sized[i], opts->offcpu_map_entries);
	/* One pair of entry points: typed tp_btf where the kernel has it (with the bpf_loop walker,
	 * and task work, or without), raw_tp otherwise. */
	bpf_program__set_autoload(o->progs.hp_offcpu_switch, btf && !o->rodata->unwind_tables);
	bpf_program__set_autoload(o->progs.hp_offcpu_switch_loop,
				  btf && !at_return && o->rodata->unwind_tables);
	bpf_program__set_autoload(o->progs.hp_offcpu_switch_return, at_return);
	bpf_program__set_autoload(o->progs.hp_offcpu_exit, btf && !loop);
	bpf_program__set_autoload(o->progs.hp_offcpu_exit_return, at_return);
	bpf_program__set_autoload(o->progs.hp_offcpu_switch_raw, !btf);
	bpf_program__set_autoload(o->progs.hp_offcpu_exit_raw, !btf);
	bpf_program__set_autoload(o->progs.hp_offcpu_pending, loop);
	bpf_program__set_autoload(o->progs.hp_offcpu_seed, loop);
	/* Run on demand: at the start (offcpu_seed()) and the end
	 * (bpf_session__drain_pending_offcpu()). */
	bpf_program__set_autoattach(o->progs.hp_offcpu_pending, false);
	bpf_program__set_autoattach(o->progs.hp_offcpu_seed, false);
	return err;
}

/*
 * Open and load the sched_switch program. Probing is by trying, best first (enum offcpu_entry):
 * task work needs Linux 6.18 (asked of the kernel's BTF first, a failed load is slow) and the
 * bpf_loop walker; tp_btf needs BTF for the tracepoint's arguments (Linux 5.5+); when that load
 * fails, the raw tracepoint does the same work with probe-reads.
 */
static int offcpu_open(struct bpf_session *s, const struct bpf_session_opts *opts)
{
	enum offcpu_entry first = OFFCPU_TYPED;
	int err = -EINVAL;

	s->max_offcpu = opts->offcpu_map_entries;
	s->max_offcpu_threads = opts->offcpu_threads;
	s->offcpu_keys = calloc(s->max_offcpu, sizeof(*s->offcpu_keys));
	s->offcpu_hashes = calloc(s->max_offcpu, sizeof(*s->offcpu_hashes));
	if (!s->offcpu_keys || !s->offcpu_hashes)
		return -ENOMEM;
	if (s->unwinding && !s->tail_calls &&
	    kernel_has_kfunc("bpf_task_work_schedule_resume_impl"))
		first = OFFCPU_AT_RETURN;
	for (enum offcpu_entry e = first; e <= OFFCPU_RAW; e++) {
		s->offcpu = offcpu_bpf__open();
		if (!s->offcpu)
			return -errno;
		err = offcpu_configure(s->offcpu, opts, e, s);
		if (!err)
			err = offcpu_bpf__load(s->offcpu);
		if (!err) {
			s->offcpu_task_storage =
				bpf_program__autoload(s->offcpu->progs.hp_offcpu_pending);
			s->futex_from_switch = s->offcpu->rodata->futex_waits;
			if (e == OFFCPU_RAW)
				log_info("the tp_btf/sched_switch program did not load (no BTF for "
					 "the tracepoint, or the verifier refused it; -v says "
					 "which): "
					 "using the raw tracepoint");
			else if (e != OFFCPU_AT_RETURN && first == OFFCPU_AT_RETURN)
				log_info("the off-CPU program with task work did not load (-v says "
					 "why): a long wait whose thread was not walked when it "
					 "left the CPU keeps its kernel stack only");
			return 0;
		}
		offcpu_bpf__destroy(s->offcpu);
		s->offcpu = NULL;
	}
	log_error("BPF object 'offcpu': load failed: %s (--types wall and offcpu need it; "
		  "hostprof profile -v shows the verifier's reason)",
		  strerror(-err));
	return err;
}

/* What the off-CPU profile cannot say on this kernel, said once. */
static void offcpu_explain(void)
{
	if (!kernel_has_helper(BPF_FUNC_task_pt_regs))
		log_info("this kernel has no bpf_task_pt_regs (Linux 5.15+): off-CPU waits on a "
			 "user-space mutex are thread_state sleeping, not lock");
}

/* The futex system calls whose tracepoints end and begin waits, in the kernels that have them. */
static const char *const futex_calls[HP_FUTEX_CALLS] = {"futex", "futex_waitv", "futex_wait"};

/*
 * The directory libbpf attaches tracepoints through: debugfs's tracing where it is there, else
 * tracefs (libbpf's own order).
 */
static const char *tracefs_dir(void)
{
	return access("/sys/kernel/debug/tracing", F_OK) == 0 ? "/sys/kernel/debug/tracing"
							      : "/sys/kernel/tracing";
}

/* Can syscalls:sys_enter_CALL be attached to (tracefs mounted, the call traced)? */
static bool syscall_tracepoint_exists(const char *call)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_%s/id", tracefs_dir(), call);
	return access(path, R_OK) == 0;
}

/*
 * Which ends of a wait are loaded: with the bpf_loop walker or without; futex waits at the futex
 * calls only where the sched_switch program does not take them (futex_from_switch), then through
 * the calls' own tracepoints where tracefs has them, so that the host's other system calls run no
 * program (each one ran two, a measured tenth of a ping-pong load's throughput); and the kernel
 * lock tracepoints only where the kernel has them (lock:contention_begin, Linux 5.19+).
 */
static void lock_pick_programs(struct bpf_session *s, struct lock_bpf *o)
{
	bool walk = o->rodata->unwind_tables, at_calls = !s->futex_from_switch;
	bool kernel_locks = libbpf_find_vmlinux_btf_id("contention_begin", BPF_TRACE_RAW_TP) > 0;
	bool futex_tp = at_calls && syscall_tracepoint_exists("futex");
	bool raw = at_calls && !futex_tp;

	s->lock_futex_tracepoints = futex_tp;
	bpf_program__set_autoload(o->progs.hp_lock_futex_enter, futex_tp);
	bpf_program__set_autoload(o->progs.hp_lock_futex_exit, futex_tp && !walk);
	bpf_program__set_autoload(o->progs.hp_lock_futex_exit_loop, futex_tp && walk);
	/* Attached per call by lock_attach_futex(), not by their section name. */
	bpf_program__set_autoattach(o->progs.hp_lock_futex_enter, false);
	bpf_program__set_autoattach(o->progs.hp_lock_futex_exit, false);
	bpf_program__set_autoattach(o->progs.hp_lock_futex_exit_loop, false);
	bpf_program__set_autoload(o->progs.hp_lock_sys_enter, raw);
	bpf_program__set_autoload(o->progs.hp_lock_sys_exit, raw && !walk);
	bpf_program__set_autoload(o->progs.hp_lock_sys_exit_loop, raw && walk);
	if (raw)
		log_info("no syscalls:sys_enter_futex tracepoint in %s (tracefs not mounted?): "
			 "futex waits are followed at every system call's entry and exit, which "
			 "costs more (mount tracefs there to avoid it)",
			 tracefs_dir());
	bpf_program__set_autoload(o->progs.hp_lock_contention_begin, kernel_locks);
	bpf_program__set_autoload(o->progs.hp_lock_contention_end, kernel_locks && !walk);
	bpf_program__set_autoload(o->progs.hp_lock_contention_end_loop, kernel_locks && walk);
	if (!kernel_locks)
		log_info("this kernel has no lock:contention_begin tracepoint (Linux 5.19+): the "
			 "contention profile has futex waits only, no kernel locks");
}

/* The contention programs share the cpu sampler's map sizes: stacks and keys per drain. */
static int lock_open(struct bpf_session *s, const struct bpf_session_opts *opts)
{
	struct bpf_map *sized[6];
	int err = 0;

	s->lock_keys = calloc(s->max_keys, sizeof(*s->lock_keys));
	if (!s->lock_keys)
		return -ENOMEM;
	s->lock = lock_bpf__open();
	if (!s->lock)
		return -errno;
	sized[0] = s->lock->maps.lock_stacks_0;
	sized[1] = s->lock->maps.lock_stacks_1;
	sized[2] = s->lock->maps.lock_counts_0;
	sized[3] = s->lock->maps.lock_counts_1;
	sized[4] = s->lock->maps.lock_ustacks_0;
	sized[5] = s->lock->maps.lock_ustacks_1;
	for (int i = 0; i < 6 && !err; i++)
		err = bpf_map__set_max_entries(sized[i], i < 2		? opts->stack_map_entries
							 : i < 4	? opts->counts_map_entries
							 : s->unwinding ? opts->stack_map_entries
									: 1);
	s->lock->rodata->filter_pids = opts->filter_pids;
	if (!err)
		err = bpf_map__reuse_fd(s->lock->maps.target_pids,
					bpf_map__fd(s->skel->maps.target_pids));
	if (!err)
		err = bpf_map__reuse_fd(s->lock->maps.thread_ctx_procs,
					bpf_map__fd(s->skel->maps.thread_ctx_procs));
	if (!err)
		err = configure_drops(s->lock->maps.drop_pids, s->lock->maps.drop_cgroups, opts,
				      s->skel);
	s->lock->rodata->min_wait_ns = opts->lock_min_ns;
	s->lock->rodata->sample_ns = opts->wait_sample_ns;
	s->lock->rodata->unwind_tables = s->unwinding && !s->tail_calls;
	s->lock->rodata->unwind_depth = opts->unwind_depth;
	lock_pick_programs(s, s->lock);
	if (!err)
		err = configure_unwind(WALKER_MAPS(s->lock), opts, s->unwinding, s->skel);
	if (!err)
		err = lock_bpf__load(s->lock);
	if (err)
		log_error(
			"BPF object 'lock': load failed: %s (--types contention needs it; the "
			"syscall tracepoints need kernel BTF for tp_btf; hostprof profile -v shows "
			"the verifier's reason)",
			strerror(-err));
	return err;
}

/*
 * Configure and load the cpu object. A kernel that refuses the tail-call walker gets the sampler
 * with frame-pointer stacks instead, said in one line: a profile without the walker is still a
 * profile.
 */
static int cpu_load(struct bpf_session *s, const struct bpf_session_opts *opts)
{
	int err = configure(s->skel, opts, s->unwinding, s->tail_calls);

	if (!err)
		err = cpu_bpf__load(s->skel);
	if (!err || !s->tail_calls)
		return err;
	log_warn("this kernel did not load the tail-call stack walker (%s): user stacks come from "
		 "frame pointers only, and stop early in code built without them",
		 strerror(-err));
	cpu_bpf__destroy(s->skel);
	s->unwinding = s->tail_calls = false;
	s->skel = cpu_bpf__open();
	if (!s->skel)
		return -errno;
	err = configure(s->skel, opts, false, false);
	return err ? err : cpu_bpf__load(s->skel);
}

struct bpf_session *bpf_session__new(const struct bpf_session_opts *opts)
{
	struct bpf_session *s;
	int err;

	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->task_pt_regs_at_load = kernel_has_helper(BPF_FUNC_task_pt_regs);
	s->nr_cpus_possible = libbpf_num_possible_cpus();
	if (s->nr_cpus_possible <= 0) {
		err = s->nr_cpus_possible ? s->nr_cpus_possible : -EINVAL;
		log_error("cannot count the possible CPUs: %s", strerror(-err));
		goto fail;
	}
	s->max_keys = opts->counts_map_entries;
	s->max_stack_ids = opts->stack_map_entries;
	s->stack_buf = calloc(USER_IPS + HP_MAX_STACK_DEPTH, sizeof(*s->stack_buf));
	s->keys = calloc(s->max_keys, sizeof(*s->keys));
	s->stack_ids = calloc(s->max_stack_ids, sizeof(*s->stack_ids));
	s->ustack_keys = calloc(s->max_stack_ids, sizeof(*s->ustack_keys));
	s->tctx_keys = calloc(HP_TCTX_ENTRIES, sizeof(*s->tctx_keys));
	if (!s->stack_buf || !s->keys || !s->stack_ids || !s->ustack_keys || !s->tctx_keys) {
		err = -ENOMEM;
		goto fail;
	}

	s->skel = cpu_bpf__open();
	if (!s->skel) {
		err = -errno;
		log_error("BPF object 'cpu': open failed: %s", strerror(-err));
		goto fail;
	}
	pick_walker(s, opts);
	err = cpu_load(s, opts);
	if (err) {
		log_error("BPF object 'cpu': load failed: %s%s", strerror(-err),
			  err == -EPERM ? " (need root, or CAP_BPF and CAP_PERFMON)" : "");
		goto fail;
	}
	if (s->tail_calls) {
		__u32 key = 0;
		int fd = bpf_program__fd(s->skel->progs.hp_cpu_walk);

		if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.cpu_walk_progs), &key, &fd,
					BPF_ANY)) {
			err = -errno;
			log_error("BPF tail call to the stack walker: %s", strerror(-err));
			goto fail;
		}
	}
	if (opts->offcpu) {
		err = offcpu_open(s, opts);
		if (err)
			goto fail;
		offcpu_explain();
	}
	if (opts->lock) {
		err = lock_open(s, opts);
		if (err)
			goto fail;
	}
	return s;
fail:
	bpf_session__delete(s);
	errno = -err;
	return NULL;
}

void bpf_session__delete(struct bpf_session *s)
{
	if (!s)
		return;
	/* Every link first (the walker's too): they hold programs of the objects destroyed next. */
	bpf_session__detach(s);
	free(s->links);
	offcpu_bpf__destroy(s->offcpu);
	lock_bpf__destroy(s->lock);
	free(s->lock_keys);
	free(s->offcpu_keys);
	free(s->offcpu_hashes);
	cpu_bpf__destroy(s->skel);
	free(s->stack_buf);
	free(s->keys);
	free(s->stack_ids);
	free(s->ustack_keys);
	free(s->tctx_keys);
	free(s);
}

/* One target_pids for every object: the offcpu and lock objects reuse the cpu object's. */
int bpf_session__set_thread_ctx(struct bpf_session *s, pid_t pid, const struct hp_tls_ref *ref)
{
	int fd = bpf_map__fd(s->skel->maps.thread_ctx_procs);
	__u32 key = (__u32)pid;

	if (!ref)
		return bpf_map_delete_elem(fd, &key) ? -errno : 0;
	/* g in a register is read from the task's saved user registers (see thread_ctx.bpf.h). */
	if (ref->kind == HP_TLS_GO_REG && !s->task_pt_regs_at_load)
		return -ENOTSUP;
	return bpf_map_update_elem(fd, &key, ref, BPF_ANY) ? -errno : 0;
}

int bpf_session__set_python(struct bpf_session *s, pid_t pid, const struct hp_py_proc *py)
{
	int fd = bpf_map__fd(s->skel->maps.py_procs);
	__u32 key = (__u32)pid;

	if (!py)
		return bpf_map_delete_elem(fd, &key) && errno != ENOENT ? -errno : 0;
	/* The Python walk runs in the bpf_loop walker only. */
	if (!s->unwinding || s->tail_calls)
		return -ENOTSUP;
	return bpf_map_update_elem(fd, &key, py, BPF_ANY) ? -errno : 0;
}

int bpf_session__add_pid(struct bpf_session *s, pid_t pid)
{
	__u32 key = pid;
	__u8 one = 1;

	if (bpf_map__update_elem(s->skel->maps.target_pids, &key, sizeof(key), &one, sizeof(one),
				 BPF_ANY))
		return -errno;
	return 0;
}

static int perf_event_open_cpu_clock(int cpu, uint32_t hz)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		/* cpu-clock counts nanoseconds, so a fixed period samples at exactly hz; frequency
		 * mode would let the kernel drift the period to meet its own throttling. */
		.sample_period = NSEC_PER_SEC / hz,
	};

	return syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * Parse a CPU list such as "0-3,5,7-8" (the format of /sys/devices/system/cpu/online) into a
 * bitmap of at most max CPUs. Returns the number of CPUs set, or -EINVAL.
 */
static int parse_cpu_list(const char *text, bool *cpus, int max)
{
	const char *p = text;
	int count = 0;

	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi;

		if (end == p || lo < 0)
			return -EINVAL;
		hi = lo;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -EINVAL;
			p = end;
		}
		for (long c = lo; c <= hi && c < max; c++) {
			count += !cpus[c];
			cpus[c] = true;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -EINVAL;
	}
	return count;
}

static int read_online_cpus(bool *cpus, int max)
{
	char text[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int err;

	if (!f)
		return -errno;
	if (!fgets(text, sizeof(text), f)) {
		err = ferror(f) ? -EIO : -EINVAL;
		fclose(f);
		return err;
	}
	fclose(f);
	return parse_cpu_list(text, cpus, max);
}

/* Attach n programs into links[]; -errno at the first that fails (logged). */
static int attach_programs(struct bpf_program *const *progs, struct bpf_link **links, int n)
{
	for (int i = 0; i < n; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i]) {
			int err = -errno;

			log_error("BPF program '%s': attach failed: %s",
				  bpf_program__name(progs[i]), strerror(-err));
			return err;
		}
	}
	return 0;
}

/*
 * Attach every program of obj that was loaded: the configure step picked, for each hook, the one
 * variant this kernel runs. links has room for HP_MAX_OBJECT_LINKS.
 */
static int attach_loaded(struct bpf_object *obj, struct bpf_link **links)
{
	struct bpf_program *progs[HP_MAX_OBJECT_LINKS], *p;
	int n = 0;

	bpf_object__for_each_program(p, obj)
	{
		if (bpf_program__autoload(p) && bpf_program__autoattach(p) &&
		    n < HP_MAX_OBJECT_LINKS)
			progs[n++] = p;
	}
	return attach_programs(progs, links, n);
}

/* The futex programs to the entry and exit tracepoints of every futex call the kernel has. */
static int lock_attach_futex(struct bpf_session *s)
{
	struct bpf_program *enter = s->lock->progs.hp_lock_futex_enter;
	struct bpf_program *exit = bpf_program__autoload(s->lock->progs.hp_lock_futex_exit)
					   ? s->lock->progs.hp_lock_futex_exit
					   : s->lock->progs.hp_lock_futex_exit_loop;
	struct bpf_link **links = s->lock_futex_links;
	char name[64];

	for (int i = 0; i < HP_FUTEX_CALLS; i++) {
		if (!syscall_tracepoint_exists(futex_calls[i]))
			continue;
		snprintf(name, sizeof(name), "sys_enter_%s", futex_calls[i]);
		links[2 * i] = bpf_program__attach_tracepoint(enter, "syscalls", name);
		snprintf(name, sizeof(name), "sys_exit_%s", futex_calls[i]);
		links[2 * i + 1] = bpf_program__attach_tracepoint(exit, "syscalls", name);
		if (!links[2 * i] || !links[2 * i + 1]) {
			int err = -errno;

			log_error("BPF program '%s': attach to syscalls:%s failed: %s",
				  bpf_program__name(links[2 * i] ? exit : enter), name,
				  strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The walker's exec and exit programs (see hp_unwind_forget() in bpf/unwind.bpf.h). */
static int unwind_attach(struct bpf_session *s)
{
	struct bpf_program *progs[] = {s->skel->progs.hp_unwind_exec,
				       s->skel->progs.hp_unwind_exit};

	return attach_programs(progs, s->unwind_links, 2);
}

/*
 * Give the threads already off the CPU a start record from now (hp_offcpu_seed), once the
 * sched_switch program is attached: a failure loses only their first waits, so it is said and
 * the capture goes on.
 */
static void offcpu_seed(struct bpf_session *s)
{
	struct bpf_link *link;
	int fd = iter_open(s->offcpu->progs.hp_offcpu_seed, &link), err = fd < 0 ? fd : 0;
	char buf[64];
	ssize_t n;

	/* The program runs as the iterator is read; it writes nothing. */
	while (!err && (n = read(fd, buf, sizeof(buf))) != 0)
		if (n < 0 && errno != EINTR)
			err = -errno;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	if (err)
		log_warn("threads already off the CPU are counted only from when they wake: the "
			 "task iterator failed (%s)",
			 strerror(-err));
}

int bpf_session__attach(struct bpf_session *s, uint32_t frequency_hz)
{
	struct bpf_program *sampler = bpf_program__autoload(s->skel->progs.hp_cpu_sample_loop)
					      ? s->skel->progs.hp_cpu_sample_loop
					      : s->skel->progs.hp_cpu_sample;
	bool *online;
	int err, nr_online;

	online = calloc(s->nr_cpus_possible, sizeof(*online));
	s->links = calloc(s->nr_cpus_possible, sizeof(*s->links));
	if (!online || !s->links) {
		free(online);
		return -ENOMEM;
	}
	nr_online = read_online_cpus(online, s->nr_cpus_possible);
	if (nr_online <= 0) {
		err = nr_online ? nr_online : -ENODEV;
		log_error("cannot read the online CPUs from /sys/devices/system/cpu/online: %s",
			  strerror(-err));
		goto out;
	}
	for (int cpu = 0; cpu < s->nr_cpus_possible; cpu++) {
		struct bpf_link *link;
		int fd;

		if (!online[cpu])
			continue;
		fd = perf_event_open_cpu_clock(cpu, frequency_hz);
		if (fd < 0) {
			err = -errno;
			if (err == -ENODEV) /* went offline since we read the list */
				continue;
			log_error("perf_event_open(cpu-clock, cpu %d) failed: %s%s", cpu,
				  strerror(-err),
				  err == -EACCES || err == -EPERM
					  ? " (need root or CAP_PERFMON; or lower "
					    "/proc/sys/kernel/perf_event_paranoid)"
					  : "");
			goto out;
		}
		link = bpf_program__attach_perf_event(sampler, fd);
		if (!link) {
			err = -errno;
			close(fd);
			log_error("BPF program '%s': attach to cpu %d failed: %s",
				  bpf_program__name(sampler), cpu, strerror(-err));
			goto out;
		}
		/* The link owns fd from here: bpf_link__destroy() closes it. */
		s->links[s->nr_links++] = link;
	}
	err = s->nr_links ? 0 : -ENODEV;
	if (err)
		log_error("no online CPU accepted a cpu-clock perf event");
	if (!err && s->unwinding)
		err = unwind_attach(s);
	if (!err && s->skel->rodata->follow_children) {
		struct bpf_program *follow[] = {s->skel->progs.hp_follow_fork,
						s->skel->progs.hp_follow_exit};

		err = attach_programs(follow, s->follow_links, 2);
	}
	if (!err && bpf_program__autoload(s->skel->progs.hp_drop_exec)) {
		struct bpf_program *drop[] = {s->skel->progs.hp_drop_exec,
					      s->skel->progs.hp_drop_exit};

		err = attach_programs(drop, s->drop_links, 2);
	}
	if (!err && s->offcpu)
		err = attach_loaded(s->offcpu->obj, s->offcpu_links);
	if (!err && s->offcpu_task_storage)
		offcpu_seed(s);
	if (!err && s->lock)
		err = attach_loaded(s->lock->obj, s->lock_links);
	if (!err && s->lock && s->lock_futex_tracepoints)
		err = lock_attach_futex(s);
out:
	free(online);
	return err;
}

/* Destroy n links, leaving NULLs: destroying them again is harmless. */
static void links_destroy(struct bpf_link **links, int n)
{
	for (int i = 0; i < n; i++) {
		bpf_link__destroy(links[i]);
		links[i] = NULL;
	}
}

void bpf_session__detach(struct bpf_session *s)
{
	links_destroy(s->links, s->nr_links);
	s->nr_cpus_sampled = s->nr_links;
	s->nr_links = 0;
	links_destroy(s->offcpu_links, HP_MAX_OBJECT_LINKS);
	links_destroy(s->unwind_links, 2);
	links_destroy(s->follow_links, 2);
	links_destroy(s->drop_links, 2);
	links_destroy(s->lock_links, HP_MAX_OBJECT_LINKS);
	links_destroy(s->lock_futex_links, 2 * HP_FUTEX_CALLS);
}

int bpf_session__nr_cpus(const struct bpf_session *s)
{
	return s->nr_links ? s->nr_links : s->nr_cpus_sampled;
}

static int sum_percpu(struct bpf_session *s, struct bpf_map *map, uint32_t nr, uint64_t *out)
{
	uint64_t *vals = calloc(s->nr_cpus_possible, sizeof(*vals));

	if (!vals)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		out[i] = 0;
		if (bpf_map__lookup_elem(map, &i, sizeof(i), vals,
					 sizeof(*vals) * s->nr_cpus_possible, 0))
			continue;
		for (int c = 0; c < s->nr_cpus_possible; c++)
			out[i] += vals[c];
	}
	free(vals);
	return 0;
}

int bpf_session__read_counters(struct bpf_session *s, uint64_t losses[HP_LOSS__COUNT],
			       uint64_t stats[HP_STAT__COUNT])
{
	uint64_t more_losses[HP_LOSS__COUNT], more_stats[HP_STAT__COUNT];
	int err = sum_percpu(s, s->skel->maps.losses, HP_LOSS__COUNT, losses);

	struct bpf_map *more[][2] = {
		{s->offcpu ? s->offcpu->maps.losses : NULL,
		 s->offcpu ? s->offcpu->maps.stats : NULL},
		{s->lock ? s->lock->maps.losses : NULL, s->lock ? s->lock->maps.stats : NULL},
	};

	if (!err)
		err = sum_percpu(s, s->skel->maps.stats, HP_STAT__COUNT, stats);
	/* Every object counts into the same indices: the totals are their sums. */
	for (size_t o = 0; o < sizeof(more) / sizeof(more[0]) && !err; o++) {
		if (!more[o][0])
			continue;
		err = sum_percpu(s, more[o][0], HP_LOSS__COUNT, more_losses);
		if (!err)
			err = sum_percpu(s, more[o][1], HP_STAT__COUNT, more_stats);
		for (int i = 0; !err && i < HP_LOSS__COUNT; i++)
			losses[i] += more_losses[i];
		for (int i = 0; !err && i < HP_STAT__COUNT; i++)
			stats[i] += more_stats[i];
	}
	return err;
}

bool bpf_session__unwinding(const struct bpf_session *s, int *rows_fd, int *procs_fd)
{
	if (!s->unwinding)
		return false;
	*rows_fd = bpf_map__fd(s->skel->maps.unwind_rows);
	*procs_fd = bpf_map__fd(s->skel->maps.unwind_procs);
	return true;
}

int bpf_session__proc_events_fd(const struct bpf_session *s)
{
	return s->unwinding ? bpf_map__fd(s->skel->maps.unwind_events) : -1;
}

/* One request at a time: for kernels whose hash maps have no batch operations (before 5.6). */
static size_t take_requests_one_by_one(int fd, struct unwind_request *out, size_t max)
{
	__u32 key, next, *prev = NULL;
	size_t n = 0;

	while (n < max && bpf_map_get_next_key(fd, prev, &next) == 0) {
		out[n++].pid = (pid_t)next;
		key = next;
		prev = &key;
	}
	/* Read and deleted after the walk (see map_keys()). An exec or exit that lands
	 * between the two is lost; the next walk of that process asks again. */
	for (size_t i = 0; i < n; i++) {
		__u8 kind = HP_UNWIND_REQ_LOAD;

		key = (__u32)out[i].pid;
		bpf_map_lookup_elem(fd, &key, &kind);
		bpf_map_delete_elem(fd, &key);
		out[i].kind = kind;
	}
	return n;
}

/*
 * Every exec and exit on the host leaves a request, a hundred a second on a busy one, and they are
 * taken every tick: one lookup-and-delete batch per TAKE_BATCH of them instead of three calls
 * each (which was a tenth of the agent's CPU). The batch also closes the window in which a request
 * written between the read and the delete was lost.
 */
#define TAKE_BATCH 64

size_t bpf_session__take_unwind_requests(struct bpf_session *s, struct unwind_request *out,
					 size_t max)
{
	__u32 keys[TAKE_BATCH], token, *in = NULL;
	__u8 kinds[TAKE_BATCH];
	size_t n = 0;
	int fd, err = 0;

	if (!s->unwinding)
		return 0;
	fd = bpf_map__fd(s->skel->maps.unwind_refresh);
	if (s->no_batch_take)
		return take_requests_one_by_one(fd, out, max);
	while (n < max && !err) {
		__u32 count = max - n < TAKE_BATCH ? (__u32)(max - n) : TAKE_BATCH;

		err = bpf_map_lookup_and_delete_batch(fd, in, &token, keys, kinds, &count, NULL);
		if (err)
			err = -errno;
		/* -ENOENT ends the map, with the last entries in count; -ENOSPC: a bucket holds
		 * more than count (then nothing was taken, and the slow way takes them). */
		for (__u32 i = 0; (!err || err == -ENOENT) && i < count; i++)
			out[n++] = (struct unwind_request){.pid = (pid_t)keys[i], .kind = kinds[i]};
		in = &token;
	}
	if (err && err != -ENOENT) {
		/* Before 5.6 the command is unknown (-EINVAL); anything but a full bucket
		 * means the batch does not work here: one by one from now on. */
		if (err != -ENOSPC) {
			log_debug("map 'unwind_refresh': batch lookup and delete failed (%s): one "
				  "request at a time",
				  strerror(-err));
			s->no_batch_take = true;
		}
		n += take_requests_one_by_one(fd, out + n, max - n);
	}
	return n;
}

int bpf_session__read_unwind_stops(struct bpf_session *s, uint64_t stops[HP_UNWIND_STOP__COUNT])
{
	struct bpf_map *maps[] = {s->skel->maps.unwind_stops,
				  s->offcpu ? s->offcpu->maps.unwind_stops : NULL,
				  s->lock ? s->lock->maps.unwind_stops : NULL};
	uint64_t more[HP_UNWIND_STOP__COUNT];
	int err = 0;

	memset(stops, 0, sizeof(uint64_t) * HP_UNWIND_STOP__COUNT);
	for (size_t m = 0; m < sizeof(maps) / sizeof(maps[0]) && !err; m++) {
		if (!maps[m])
			continue;
		err = sum_percpu(s, maps[m], HP_UNWIND_STOP__COUNT, more);
		for (int i = 0; !err && i < HP_UNWIND_STOP__COUNT; i++)
			stops[i] += more[i];
	}
	return err;
}
