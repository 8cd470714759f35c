// SPDX-License-Identifier: BSD-2-Clause
#include "capture/builder.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/demangle.h"
#include "base/hash.h"
#include "base/hash_index.h"
#include "base/vec.h"
#include "hostprof_abi.h"
#include "process/cmdline.h"
#include "process/identity.h"
#include "process/proc.h"
#include "process/process_context.h"
#include "capture/thread_ctx_link.h"
#include "interp/interp.h"

/* Kernel addresses are shared by every process: they are cached under this pseudo-PID. */
#define KERNEL_PID UINT32_MAX

struct loc_slot {
	uint64_t addr;
	uint32_t pid;
	uint32_t loc; /* 0: empty slot */
	bool is_return_address;
};

struct builder {
	struct profile *profile;
	struct symbolizer *sym;
	struct interp *interp; /* NULL: interpreter frames stay unnamed */
	struct loc_slot *slots;
	size_t nr_slots;  /* a power of two */
	size_t max_slots; /* the cap's table size: the table doubles up to it */
	size_t used;
	struct identity *identity; /* NULL: the plain service name rules, nothing dropped */
	builder_drop_fn drop_fn;   /* NULL: no one to tell of the processes left out */
	void *drop_ctx;
	struct process_identity *scratch;
	enum cmdline_mode cmdline_mode;
	char cmdline[PROC_CMDLINE_MAX];	       /* the exported form of one process's command line */
	struct thread_ctx_fields *ctx_scratch; /* one decoded thread context */
	/* Distinct spans of the window (by their span_id string), up to BUILDER_MAX_LINKS. */
	uint8_t *span_seen;
	size_t cap_span_seen;
	uint32_t nr_links;
	uint64_t links_dropped; /* samples kept without their span, past the cap */
	/* PIDs whose samples a rule leaves out, for as long as the profile window: ids of the
	 * index are the PIDs themselves, and PID 0, which cannot be one, has its own flag. */
	struct hash_index dropped;
	bool dropped_pid0;
	uint64_t samples_dropped;
	uint64_t cache_hits, cache_misses; /* of the location cache */
};

static size_t round_pow2(size_t n)
{
	size_t p = 4;

	while (p < n)
		p <<= 1;
	return p;
}

struct builder *builder__new(struct profile *p, struct symbolizer *sym, size_t max_cached_locations)
{
	struct builder *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->profile = p;
	b->sym = sym;
	/* Open addressing stays fast below ~70% load: the cap's table is sized for it at that
	 * load. A window of the agent sees far fewer addresses than the cap, and the memory is
	 * paid per window: start small and double as addresses come. */
	b->max_slots = round_pow2(max_cached_locations + max_cached_locations / 2);
	b->nr_slots = b->max_slots < 4096 ? b->max_slots : 4096;
	b->slots = calloc(b->nr_slots, sizeof(*b->slots));
	if (!b->slots) {
		free(b);
		errno = ENOMEM;
		return NULL;
	}
	return b;
}

void builder__set_identity(struct builder *b, struct identity *id)
{
	b->identity = id;
}

void builder__set_drop_hook(struct builder *b, builder_drop_fn fn, void *ctx)
{
	b->drop_fn = fn;
	b->drop_ctx = ctx;
}

uint64_t builder__links_dropped(const struct builder *b)
{
	return b->links_dropped;
}

uint64_t builder__samples_dropped(const struct builder *b)
{
	return b->samples_dropped;
}

size_t builder__cache_memory(const struct builder *b, size_t *entries, size_t *capacity)
{
	*entries = b->used;
	*capacity = b->max_slots;
	return b->nr_slots * sizeof(*b->slots) + hash_index__bytes(&b->dropped);
}

void builder__cache_stats(const struct builder *b, uint64_t *hits, uint64_t *misses)
{
	*hits = b->cache_hits;
	*misses = b->cache_misses;
}

static uint32_t pid_hash(uint32_t pid)
{
	return hash_fold(hash_mix64(pid));
}

static bool pid_eq(const void *ctx, uint32_t id, const void *key)
{
	return id == *(const uint32_t *)key;
}

static bool is_dropped(const struct builder *b, uint32_t pid)
{
	if (!pid)
		return b->dropped_pid0;
	return hash_index__find(&b->dropped, pid_hash(pid), pid_eq, NULL, &pid) != 0;
}

static int mark_dropped(struct builder *b, uint32_t pid)
{
	if (!pid) {
		b->dropped_pid0 = true;
		return 0;
	}
	if (is_dropped(b, pid))
		return 0;
	if (hash_index__reserve(&b->dropped))
		return -ENOMEM;
	hash_index__insert(&b->dropped, pid, pid_hash(pid));
	return 0;
}

void builder__delete(struct builder *b)
{
	if (!b)
		return;
	free(b->slots);
	hash_index__free(&b->dropped);
	free(b->scratch);
	free(b->ctx_scratch);
	free(b->span_seen);
	free(b);
}

static struct loc_slot *cache_slot(struct builder *b, uint32_t pid, uint64_t addr, bool ret)
{
	size_t mask = b->nr_slots - 1;
	size_t i = hash_mix64(addr ^ ((uint64_t)pid << 32) ^ ret) & mask;

	while (b->slots[i].loc && !(b->slots[i].pid == pid && b->slots[i].addr == addr &&
				    b->slots[i].is_return_address == ret))
		i = (i + 1) & mask;
	return &b->slots[i];
}

/* Double the location cache, rehashing what it holds. 0, or -ENOMEM (the old one stays). */
static int grow_cache(struct builder *b)
{
	struct loc_slot *old = b->slots;
	size_t old_n = b->nr_slots;

	b->slots = calloc(old_n * 2, sizeof(*b->slots));
	if (!b->slots) {
		b->slots = old;
		return -ENOMEM;
	}
	b->nr_slots = old_n * 2;
	for (size_t i = 0; i < old_n; i++)
		if (old[i].loc)
			*cache_slot(b, old[i].pid, old[i].addr, old[i].is_return_address) = old[i];
	free(old);
	return 0;
}

/*
 * A function: the readable name in `name`, the symbol as the binary spells it in `system_name`
 * (the same string when it is not mangled). Demangling costs a malloc, but it runs once per
 * address: the location cache above keeps it off the per-sample path.
 */
static int64_t intern_function(struct builder *b, const char *symbol, const char *file)
{
	struct profile_function fn = {0};
	char *readable = demangle__name(symbol);
	int64_t idx;

	idx = profile__string(b->profile, symbol);
	if (idx < 0)
		goto out;
	fn.system_name = fn.name = idx;
	if (readable) {
		idx = profile__string(b->profile, readable);
		if (idx < 0)
			goto out;
		fn.name = idx;
	}
	idx = profile__string(b->profile, file ? file : "");
	if (idx < 0)
		goto out;
	fn.filename = idx;
	idx = profile__function(b->profile, &fn);
out:
	free(readable);
	return idx;
}

static int64_t intern_frame(struct builder *b, const struct frame *f)
{
	struct profile_location loc = {.address = f->address, .kind = f->kind};
	int64_t idx;

	if (f->has_mapping) {
		struct profile_mapping m = {
			.start = f->mapping.start,
			.limit = f->mapping.limit,
			.offset = f->mapping.offset,
		};

		idx = profile__string(b->profile, f->mapping.path ? f->mapping.path : "");
		if (idx < 0)
			return idx;
		m.filename = idx;
		idx = profile__string(b->profile, f->mapping.build_id_hex);
		if (idx < 0)
			return idx;
		m.build_id = idx;
		idx = profile__string(b->profile, f->mapping.htlhash_hex);
		if (idx < 0)
			return idx;
		m.htlhash = idx;
		/* Set when we named the function, so that pprof does not try to re-symbolize. */
		m.has_functions = f->function != NULL;
		idx = profile__mapping(b->profile, &m);
		if (idx < 0)
			return idx;
		loc.mapping = idx;
	}
	if (f->nr_lines) {
		struct profile_line lines[FRAME_MAX_LINES];
		size_t n = f->nr_lines < FRAME_MAX_LINES ? f->nr_lines : FRAME_MAX_LINES;

		for (size_t i = 0; i < n; i++) {
			idx = intern_function(b, f->lines[i].function, f->lines[i].file);
			if (idx < 0)
				return idx;
			lines[i] = (struct profile_line){.function = idx, .line = f->lines[i].line};
		}
		return profile__location_with_lines(b->profile, &loc, lines, n);
	}
	if (f->function) {
		idx = intern_function(b, f->function, NULL);
		if (idx < 0)
			return idx;
		loc.function = idx;
	} else {
		idx = profile__string(b->profile, f->unknown);
		if (idx < 0)
			return idx;
		loc.label = idx;
	}
	return profile__location(b->profile, &loc);
}

/* The profile location of one address, symbolizing it on a cache miss. */
static int64_t location_of(struct builder *b, uint32_t pid, uint64_t addr, bool kernel,
			   bool is_return_address)
{
	uint32_t cache_pid = kernel ? KERNEL_PID : pid;
	struct loc_slot *slot = cache_slot(b, cache_pid, addr, is_return_address);
	struct frame f;
	int64_t idx;

	if (slot->loc) {
		b->cache_hits++;
		return slot->loc;
	}
	b->cache_misses++;
	if (kernel)
		symbolizer__kernel(b->sym, addr, is_return_address, &f);
	else if (interp__is_frame(addr) && b->interp)
		interp__symbolize(b->interp, pid, addr, &f);
	else if (interp__is_frame(addr))
		f = (struct frame){.kind = FRAME_CPYTHON, .unknown = "[unknown] python code"};
	else
		symbolizer__user(b->sym, pid, addr, is_return_address, &f);
	idx = intern_frame(b, &f);
	if (idx <= 0)
		return idx < 0 ? idx : -EINVAL;
	/* Its debug file is on the way: the next lookup symbolizes it again, and gets the lines
	 * once the file has come. Only the binaries being fetched pay, and only meanwhile. */
	if (f.debug_pending)
		return idx;

	/* Full: grow up to the cap, then forget everything rather than grow further; the profile
	 * keeps the locations, only the shortcut to them is lost. */
	if (b->used + 1 > b->nr_slots - b->nr_slots / 4) {
		if (b->nr_slots >= b->max_slots || grow_cache(b)) {
			memset(b->slots, 0, b->nr_slots * sizeof(*b->slots));
			b->used = 0;
		}
		slot = cache_slot(b, cache_pid, addr, is_return_address);
	}
	*slot = (struct loc_slot){
		.addr = addr, .pid = cache_pid, .loc = idx, .is_return_address = is_return_address};
	b->used++;
	return idx;
}

void builder__set_interp(struct builder *b, struct interp *ip)
{
	b->interp = ip;
}

void builder__set_cmdline_mode(struct builder *b, enum cmdline_mode mode)
{
	b->cmdline_mode = mode;
}

/* The command line as it may be exported; NULL when off or unknown. */
static const char *export_cmdline(struct builder *b, const struct process_info *info)
{
	return cmdline__format(info->cmdline, info->cmdline_len, b->cmdline_mode, b->cmdline,
			       sizeof(b->cmdline));
}

static int64_t intern_or_empty(struct profile *p, const char *s)
{
	return profile__string(p, s ? s : "");
}

/* The attributes that have fields of their own in struct profile_process. */
static bool fixed_attr(const char *key)
{
	static const char *const fixed[] = {"service.name",
					    "process.pid",
					    "process.executable.name",
					    "process.executable.path",
					    "process.command_line",
					    "container.id"};

	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(key, fixed[i]))
			return true;
	return false;
}

/* The resource attributes the process's SDK published, beside the fixed fields (profile's path;
 * the agent's goes through the identity rules). */
static int add_context_attrs(struct builder *b, const struct process_context *c,
			     struct profile_process *proc)
{
	for (size_t i = 0; c && i < c->nr_attrs && proc->nr_attrs < PROFILE_MAX_PROCESS_ATTRS;
	     i++) {
		int64_t k, v;

		if (fixed_attr(c->attrs[i].key))
			continue;
		k = profile__string(b->profile, c->attrs[i].key);
		v = profile__string(b->profile, c->attrs[i].value);
		if (k < 0 || v < 0)
			return -ENOMEM;
		proc->attrs[proc->nr_attrs++] = (struct profile_attr){(uint32_t)k, (uint32_t)v};
	}
	return 0;
}

/* The process entry from the identity rules: 1 when a rule leaves the process out. */
static int record_identity(struct builder *b, const struct raw_sample *s,
			   const struct process_info *info, struct profile_process *proc)
{
	struct process_identity *pi = b->scratch;
	struct identity_input in = {
		.pid = s->pid,
		.comm = info->comm && info->comm[0] ? info->comm : s->process_name,
		.exe_path = info->exe_path,
		.cmdline = export_cmdline(b, info),
		.env_service = info->service_name,
		.container_id = info->container_id,
		.systemd_unit = info->systemd_unit,
		.otel_ctx = info->otel_ctx,
	};
	int64_t idx[5];
	static const char *const keys[5] = {"service.name", "process.executable.name",
					    "process.executable.path", "process.command_line",
					    "container.id"};

	if (!pi) {
		pi = b->scratch = malloc(sizeof(*pi));
		if (!pi)
			return -ENOMEM;
	}
	if (!identity__resolve(b->identity, &in, pi)) {
		if (b->drop_fn)
			b->drop_fn(b->drop_ctx, s->pid, pi->drop);
		return mark_dropped(b, s->pid) ?: 1;
	}
	for (int i = 0; i < 5; i++) {
		idx[i] = intern_or_empty(b->profile, process_identity__get(pi, keys[i]));
		if (idx[i] < 0)
			return (int)idx[i];
	}
	proc->service_name = idx[0];
	proc->exe_name = idx[1];
	proc->exe_path = idx[2];
	proc->command_line = idx[3];
	proc->container_id = idx[4];
	for (size_t i = 0; i < pi->nr && proc->nr_attrs < PROFILE_MAX_PROCESS_ATTRS; i++) {
		int64_t k, v;

		if (!pi->attrs[i].exported || fixed_attr(pi->attrs[i].key))
			continue;
		k = profile__string(b->profile, pi->attrs[i].key);
		v = profile__string(b->profile, pi->attrs[i].value);
		if (k < 0 || v < 0)
			return -ENOMEM;
		proc->attrs[proc->nr_attrs++] = (struct profile_attr){(uint32_t)k, (uint32_t)v};
	}
	return 0;
}

/*
 * Record who a process is the first time one of its samples arrives, while it most likely still
 * runs. The service name falls back to the executable's name, then to the process name.
 * Returns 1 when the identity rules leave the process out: its samples are skipped.
 */
static int record_process(struct builder *b, const struct raw_sample *s)
{
	struct profile_process proc = {.pid = s->pid};
	struct process_info info;
	const char *exe_name, *service;
	int64_t idx[5];
	int rc;

	if (is_dropped(b, s->pid))
		return 1;
	if (profile__find_process(b->profile, s->pid))
		return 0;
	symbolizer__process_info(b->sym, s->pid, &info);
	if (b->identity) {
		rc = record_identity(b, s, &info, &proc);
		return rc ? rc : profile__set_process(b->profile, &proc);
	}
	exe_name = info.exe_path ? strrchr(info.exe_path, '/') : NULL;
	exe_name = exe_name ? exe_name + 1 : info.exe_path;
	service = process_context__get(info.otel_ctx, "service.name");
	if (!service)
		service = info.service_name ? info.service_name
			  : exe_name	    ? exe_name
					    : s->process_name;
	idx[0] = intern_or_empty(b->profile, service);
	idx[1] = intern_or_empty(b->profile, exe_name);
	idx[2] = intern_or_empty(b->profile, info.exe_path);
	idx[3] = intern_or_empty(b->profile, export_cmdline(b, &info));
	idx[4] = intern_or_empty(b->profile, info.container_id);
	for (int i = 0; i < 5; i++)
		if (idx[i] < 0)
			return (int)idx[i];
	proc.service_name = idx[0];
	proc.exe_name = idx[1];
	proc.exe_path = idx[2];
	proc.command_line = idx[3];
	proc.container_id = idx[4];
	rc = add_context_attrs(b, info.otel_ctx, &proc);
	return rc ? rc : profile__set_process(b->profile, &proc);
}

static int64_t intern_labels(struct builder *b, const struct raw_sample *s,
			     struct profile_labels *labels)
{
	int64_t idx;

	labels->pid = s->pid;
	labels->tid = s->tid;
	idx = profile__string(b->profile, s->process_name);
	if (idx < 0)
		return idx;
	labels->comm = idx;
	idx = profile__string(b->profile, s->thread_name);
	if (idx < 0)
		return idx;
	labels->thread_name = idx;
	return 0;
}

/* The span the sample served and the attributes its SDK attached (OTEP 4947). */
/*
 * Is this span (its span_id string) one the window may link? A window links at most
 * BUILDER_MAX_LINKS spans: past them, samples are kept without theirs and counted, so that a
 * service with a span per request cannot grow the link table without bound.
 */
static int admit_span(struct builder *b, uint32_t span, uint64_t count, bool *ok)
{
	*ok = true;
	if (span < b->cap_span_seen && b->span_seen[span])
		return 0;
	if (b->nr_links >= BUILDER_MAX_LINKS) {
		*ok = false;
		b->links_dropped += count;
		return 0;
	}
	if (span >= b->cap_span_seen) {
		size_t had = b->cap_span_seen;

		if (VEC_RESERVE(b->span_seen, b->cap_span_seen, (size_t)span + 1))
			return -ENOMEM;
		memset(b->span_seen + had, 0, b->cap_span_seen - had);
	}
	b->span_seen[span] = 1;
	b->nr_links++;
	return 0;
}

static int intern_thread_ctx(struct builder *b, pid_t pid, const struct hp_thread_ctx *rec,
			     uint64_t count, struct profile_labels *labels)
{
	bool admitted;
	struct thread_ctx_fields *f = b->ctx_scratch;
	int64_t idx;

	if (!f && !(f = b->ctx_scratch = malloc(sizeof(*f))))
		return -ENOMEM;
	if (thread_ctx__decode(rec, symbolizer__process_context(b->sym, pid), f))
		return 0;
	if (f->trace_id[0]) {
		if ((idx = profile__string(b->profile, f->trace_id)) < 0)
			return (int)idx;
		labels->trace_id = (uint32_t)idx;
	}
	if (f->span_id[0]) {
		if ((idx = profile__string(b->profile, f->span_id)) < 0)
			return (int)idx;
		if (admit_span(b, (uint32_t)idx, count, &admitted))
			return -ENOMEM;
		labels->span_id = admitted ? (uint32_t)idx : 0;
		labels->trace_id = admitted ? labels->trace_id : 0;
	}
	for (size_t i = 0; i < f->nr_attrs; i++) {
		int64_t k = profile__string(b->profile, f->attrs[i].key);
		int64_t v = profile__string(b->profile, f->attrs[i].value);

		if (k < 0 || v < 0)
			return -ENOMEM;
		labels->ctx_attrs[labels->nr_ctx_attrs++] =
			(struct profile_attr){(uint32_t)k, (uint32_t)v};
	}
	return 0;
}

/* The BPF program and the tracing glue that called it ("bpf_prog_...", "bpf_trace_run4",
 * "__bpf_trace_sched_switch", "__traceiter_sched_switch"), by name: their number differs between
 * tp_btf and raw_tp and across kernel versions. */
static uint32_t probe_frames(struct builder *b, const uint64_t *kern, uint32_t nr)
{
	uint32_t k = 0;

	for (; k < nr; k++) {
		const char *name;
		struct frame f;

		symbolizer__kernel(b->sym, kern[k], k > 0, &f);
		name = f.function ? f.function : "";
		if (strncmp(name, "bpf_", 4) && strncmp(name, "__bpf_", 6) &&
		    strncmp(name, "__traceiter_", 12))
			break;
	}
	return k;
}

int builder__add_batch(struct builder *b, const struct sample_batch *batch, enum batch_kind kind,
		       int64_t period)
{
	uint32_t locs[HP_MAX_STACK_DEPTH + HP_UNWIND_MAX_DEPTH];
	int64_t running = 0;

	/* In a wall profile, time on the CPU is the "running" state beside the off-CPU ones. */
	if (kind == BATCH_CPU_IN_WALL && (running = profile__string(b->profile, "running")) < 0)
		return (int)running;

	for (size_t i = 0; i < batch->n; i++) {
		const struct raw_sample *s = &batch->v[i];
		const uint64_t *kern = batch->ips + s->kern_off;
		const uint64_t *user = batch->ips + s->user_off;
		struct profile_labels labels = {0};
		size_t n = 0;
		int64_t idx;
		int rc = record_process(b, s);

		if (rc < 0)
			return rc;
		if (rc > 0) {
			/* Left out by a rule: not symbolized at all. */
			b->samples_dropped += s->count;
			continue;
		}

		/* Leaf first: the kernel part of the stack sits above the user part. An off-CPU
		 * stack is taken from inside the sched_switch probe: its first frames are the
		 * probe's own, not the thread's. */
		for (uint32_t k = kind >= BATCH_OFFCPU ? probe_frames(b, kern, s->nr_kern) : 0;
		     k < s->nr_kern && n < HP_MAX_STACK_DEPTH + HP_UNWIND_MAX_DEPTH; k++) {
			idx = location_of(b, s->pid, kern[k], true, k > 0);
			if (idx < 0)
				return idx;
			locs[n++] = idx;
		}
		for (uint32_t u = 0; u < s->nr_user && n < HP_MAX_STACK_DEPTH + HP_UNWIND_MAX_DEPTH;
		     u++) {
			idx = location_of(b, s->pid, user[u], false, u > 0);
			if (idx < 0)
				return idx;
			locs[n++] = idx;
		}
		idx = profile__stack(b->profile, locs, n);
		if (idx < 0)
			return idx;
		if (intern_labels(b, s, &labels) < 0 ||
		    (s->thread_ctx && s->thread_ctx <= batch->nr_tctx &&
		     intern_thread_ctx(b, s->pid, &batch->tctx[s->thread_ctx - 1], s->count,
				       &labels) < 0))
			return -ENOMEM;
		labels.thread_state = (uint32_t)running;
		if (kind == BATCH_OFFCPU) {
			int64_t state =
				profile__string(b->profile, collector__state_name(s->state));

			if (state < 0)
				return (int)state;
			labels.thread_state = (uint32_t)state;
		} else if (kind == BATCH_LOCK) {
			int64_t wait = profile__string(b->profile,
						       collector__wait_kind_name(s->wait_kind));

			if (wait < 0)
				return (int)wait;
			labels.wait_kind = (uint32_t)wait;
			labels.wait_addr = s->wait_addr;
		}
		if (profile__add_sample(b->profile, idx, &labels,
					kind >= BATCH_OFFCPU ? (int64_t)s->ns
							     : (int64_t)s->count * period,
					(int64_t)s->count))
			return -ENOMEM;
	}
	return 0;
}
