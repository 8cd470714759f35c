/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The OTLP encoder's own state, shared only by its files (include it from formats/enc_otlp.c and
 * formats/otlp_*.c, nowhere else): the dictionary in its compact form, the inputs, the resources,
 * and the functions by which each file hands its part to the next.
 *
 *   otlp_dict.c     interning into the request's one deduplicated ProfilesDictionary
 *   otlp_collect.c  each input profile's tables and samples into it, grouped by process
 *   otlp_request.c  the dictionary, resources, scopes and Profiles as protobuf-c structs
 *   enc_otlp.c      the entry points: run the above in order, pack or write JSON (pb_json.c)
 */
#ifndef HOSTPROF_FORMATS_OTLP_BUILD_H
#define HOSTPROF_FORMATS_OTLP_BUILD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/hash_index.h"
#include "base/vec.h"
#include "formats/encode.h"
#include "base/table.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/*
 * The generated names run past 80 columns on their own; these aliases keep the code readable.
 * They name the generated structs and nothing else.
 */
typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceRequest
	pb_request;
typedef Opentelemetry__Proto__Profiles__V1development__ProfilesDictionary pb_dictionary;
typedef Opentelemetry__Proto__Profiles__V1development__ResourceProfiles pb_resource_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__ScopeProfiles pb_scope_profiles;
typedef Opentelemetry__Proto__Profiles__V1development__Profile pb_profile;
typedef Opentelemetry__Proto__Profiles__V1development__ValueType pb_value_type;
typedef Opentelemetry__Proto__Profiles__V1development__Sample pb_sample;
typedef Opentelemetry__Proto__Profiles__V1development__Mapping pb_mapping;
typedef Opentelemetry__Proto__Profiles__V1development__Location pb_location;
typedef Opentelemetry__Proto__Profiles__V1development__Line pb_line;
typedef Opentelemetry__Proto__Profiles__V1development__Function pb_function;
typedef Opentelemetry__Proto__Profiles__V1development__Link pb_link;
typedef Opentelemetry__Proto__Profiles__V1development__Stack pb_stack;
typedef Opentelemetry__Proto__Profiles__V1development__KeyValueAndUnit pb_kvu;
typedef Opentelemetry__Proto__Resource__V1__Resource pb_resource;
typedef Opentelemetry__Proto__Common__V1__InstrumentationScope pb_scope;
typedef Opentelemetry__Proto__Common__V1__KeyValue pb_key_value;
typedef Opentelemetry__Proto__Common__V1__AnyValue pb_any_value;

/* Dictionary indices are int32 on the wire. */
#define DICT_MAX_ENTRIES ((size_t)INT32_MAX)

/* VEC_RESERVE() of need elements, -E2BIG past what an int32 index can name. */
#define DICT_RESERVE(arr, cap, need)                                                               \
	((need) > DICT_MAX_ENTRIES ? -E2BIG : VEC_RESERVE(arr, cap, need))

/* Room for one more entry in a TABLE() t and for its id in the table's index. */
#define TABLE_ROOM(t)                                                                              \
	(hash_index__reserve(&(t)->idx) ?: DICT_RESERVE((t)->arr, (t)->cap, (t)->nr + 1))

/* thread.name, thread.id, thread.state, a lock wait's kind and address, and the attributes of
 * the sample's thread context */
#define MAX_SAMPLE_ATTRS (5 + PROFILE_MAX_CTX_ATTRS)

/* Attribute keys, interned on first use so that an unused key leaves no orphan string. */
enum key {
	KEY_THREAD_NAME,
	KEY_THREAD_ID,
	KEY_THREAD_STATE,
	KEY_LOCK_KIND,
	KEY_LOCK_ADDR,
	KEY_FRAME_TYPE,
	KEY_BUILD_ID_GNU,
	KEY_BUILD_ID_HTLHASH,
	NR_KEYS,
};

/* --- the dictionary, in our own compact form until it is laid out as protobuf-c structs --- */

struct dict_string {
	const char *s; /* NUL-terminated; in a profile, the arena, or static */
	size_t len;
};

struct dict_mapping {
	uint64_t start, limit, offset;
	uint32_t filename;
	uint32_t build_id; /* attribute indices; 0 = none */
	uint32_t htlhash;
};

struct dict_function {
	uint32_t name, system_name, filename;
};

struct dict_location {
	uint32_t mapping;
	uint64_t address;
	uint32_t function;   /* the innermost function when the location has lines */
	uint32_t frame_type; /* attribute index */
	size_t lines_off;    /* into otlp_build::lines */
	size_t nr_lines;     /* 0: one Line with `function` and no line number */
};

/* One level of a location's inline chain, innermost first. */
struct dict_line {
	uint32_t function;
	int64_t line;
};

struct dict_stack {
	size_t off; /* into otlp_build::stack_locs */
	size_t n;
};

enum attr_kind {
	ATTR_STRING,
	ATTR_INT,
};

/* A string value stays inline (string_value), so it is not a string_table entry. */
struct dict_attr {
	uint32_t key; /* string index */
	enum attr_kind kind;
	int64_t ival;
	const char *sval;
	size_t slen;
};

/* A link_table entry: the trace and span a sample served (entry 0: all zero, none). */
struct dict_link {
	uint8_t trace_id[16];
	uint8_t span_id[8];
};
/* One sample of the output: the model's samples, merged where OTLP sees no difference. */
struct out_sample {
	uint32_t res; /* resource index */
	uint32_t stack;
	uint32_t link; /* link_table index; 0: none */
	uint32_t attrs[MAX_SAMPLE_ATTRS];
	uint32_t nr_attrs;
	int64_t value;
	int64_t count;
};

/* One ResourceProfiles: a process, known from a process entry or only from its samples. */
struct resource {
	uint32_t pid;
	const struct profile *p;	    /* where proc or comm come from */
	const struct profile_process *proc; /* NULL when no profile has an entry for pid */
	uint32_t comm;			    /* model string index, for processes without entry */
	size_t nr_samples;		    /* over all input profiles */
};

/* One input profile: where its tables went in the dictionary, and its samples. */
struct otlp_src {
	const struct profile *p;
	/* Model index -> dictionary index, filled on first use; 0 = not yet. */
	uint32_t *str_map;
	uint32_t *mapping_map;
	uint32_t *location_map;
	uint32_t *stack_map;
	uint32_t *thread_name_map; /* thread name string -> thread.name attribute */

	TABLE(struct out_sample) samples; /* indexed by position + 1 */
	size_t *res_off;	 /* per resource: first sample once sorted; res.nr + 1 entries */
	pb_sample **sample_ptrs; /* sorted by resource */

	bool counts; /* values are sample counts (otlp_opts.samples_count for cpu) */
	/* The contentions/count Profile that goes beside a contention profile: the same samples,
	 * their wait counts as values. */
	bool contentions;
	pb_value_type *sample_type;
	pb_value_type *period_type; /* NULL when the profile has no period type */
};

struct otlp_build {
	const struct otlp_opts *o;
	struct arena arena;

	/* The dictionary's tables; slot 0 of each is its zero entry. */
	TABLE(struct dict_string) strs;
	TABLE(struct dict_mapping) maps;
	TABLE(struct dict_function) funcs;
	TABLE(struct dict_location) locs;
	struct dict_line *lines; /* all locations' lines back to back; new ones staged at the end */
	size_t nr_lines, cap_lines;

	TABLE(struct dict_stack) stacks;
	int32_t *stack_locs;
	size_t nr_stack_locs, cap_stack_locs;

	TABLE(struct dict_attr) attrs;
	TABLE(struct dict_link) links;

	uint32_t keys[NR_KEYS]; /* string indices; 0 = not interned yet */
	uint32_t frame_attr[5]; /* profile.frame.type attribute per type name; 0 = not yet */

	TABLE(struct resource) res; /* indexed by position + 1 */

	struct otlp_src *srcs;
	size_t nr_srcs;

	pb_request req;
	pb_dictionary dict;
	pb_scope scope;
};

static inline const char *or_empty(const char *s)
{
	return s ? s : "";
}

/*
 * s[0..*len) as valid UTF-8: s itself when it is, else a copy in the arena with every byte that
 * starts no well-formed sequence replaced by U+FFFD, and its length in *len. NULL on ENOMEM.
 */
const char *otlp_dict__valid_utf8(struct arena *a, const char *s, size_t *len);

/* otlp_dict.c: each returns the entry's index (0 for a zero entry), or -errno. */

/* Every table starts with its zero entry, which is never in a hash index. */
int otlp_dict__init(struct otlp_build *b);
/* s made valid UTF-8 (a copy in the arena when it was not); it must live until the request is
 * built. */
int64_t otlp_dict__string(struct otlp_build *b, const char *s);
int64_t otlp_dict__attr_string(struct otlp_build *b, enum key k, const char *value);
int64_t otlp_dict__attr_int(struct otlp_build *b, enum key k, int64_t value);
/* An attribute whose key is not one of enum key (a thread context's, named by its SDK). */
int64_t otlp_dict__attr_kv(struct otlp_build *b, const char *key, const char *value);
/* The link of a trace and span given in hex (32 and 16 digits); 0 when either is missing or not
 * hex. */
int64_t otlp_dict__link(struct otlp_build *b, const char *trace_hex, const char *span_hex);
int64_t otlp_dict__mapping(struct otlp_build *b, const struct dict_mapping *m);
int64_t otlp_dict__function(struct otlp_build *b, const struct dict_function *f);
/* l's lines are the ones staged at lines[nr_lines..]: kept when the location is new. */
int64_t otlp_dict__location(struct otlp_build *b, const struct dict_location *l);
int64_t otlp_dict__stack_staged(struct otlp_build *b, size_t n);

/* otlp_collect.c: 0 or -errno. */

/* Every process entry first, in the order of the inputs and of their process tables. */
int otlp_collect__processes(struct otlp_build *b);
/* Input k's samples, and everything they reach, into the dictionary and the resources. */
int otlp_collect__samples(struct otlp_build *b, size_t k);

/* otlp_request.c: 0 or -errno; every struct in b's arena. */

int otlp_request__dictionary(struct otlp_build *b);
/* b->req, pointing at b->dict, once every input has been collected. */
int otlp_request__build(struct otlp_build *b);

#endif /* HOSTPROF_FORMATS_OTLP_BUILD_H */
