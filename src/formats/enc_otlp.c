// SPDX-License-Identifier: BSD-2-Clause
/*
 * The OTLP profiles encoder: profile models to one ExportProfilesServiceRequest
 * (opentelemetry-proto v1.10/v1.11 shape), binary or OTLP/JSON.
 *
 * The request carries one ProfilesDictionary that is this encoder's own: every string, mapping,
 * function, location, stack and attribute is re-interned from each input profile's tables on
 * first use, so several profiles (several profile types) share one deduplicated dictionary and
 * nothing that no sample reaches ends up in it. Every table starts with its zero entry.
 *
 * Receivers decide what we may use (see the OTLP notes in the spec): resource attributes are plain
 * `key` + `string_value`/`int_value`, attribute_table values too, never the *_strindex forms; the
 * dictionary is always present with all seven zero entries. Strings are made valid UTF-8 before
 * they enter the message, because proto3 parsers (the Collector's, Pyroscope's, protoc's) reject a
 * whole request over one bad byte in a command line or a symbol name.
 *
 * The binary and the JSON forms are produced from the same protobuf-c structs: the JSON writer
 * (pb_json.c) walks the generated descriptors, so the two can never disagree on a field.
 *
 * The work is split by stage (otlp_build.h): interning (otlp_dict.c), the inputs into the
 * dictionary and resources (otlp_collect.c), the protobuf-c structs (otlp_request.c); this file
 * runs them and holds the entry points.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats/encode.h"
#include "formats/encode_common.h"
#include "formats/otlp_build.h"
#include "formats/pb_json.h"

static void otlp_build__free(struct otlp_build *b)
{
	for (size_t k = 0; k < b->nr_srcs; k++) {
		struct otlp_src *src = &b->srcs[k];

		free(src->res_off);
		TABLE_FREE(&src->samples);
		free(src->thread_name_map);
		free(src->stack_map);
		free(src->location_map);
		free(src->mapping_map);
		free(src->str_map);
	}
	free(b->srcs);
	TABLE_FREE(&b->res);
	TABLE_FREE(&b->attrs);
	TABLE_FREE(&b->links);
	TABLE_FREE(&b->stacks);
	free(b->stack_locs);
	TABLE_FREE(&b->locs);
	free(b->lines);
	TABLE_FREE(&b->funcs);
	TABLE_FREE(&b->maps);
	TABLE_FREE(&b->strs);
	arena__free(&b->arena);
}

/* Builds b->req; the caller frees b with otlp_build__free() whatever this returns. */
static int otlp_build__run(struct otlp_build *b, const struct profile *const *profiles, size_t n,
			   const struct otlp_opts *o)
{
	static const struct otlp_opts defaults;
	int err;

	if (n && !profiles)
		return -EINVAL;
	for (size_t k = 0; k < n; k++) {
		if (!profiles[k])
			return -EINVAL;
	}
	b->o = o ? o : &defaults;
	err = otlp_dict__init(b);
	if (err)
		return err;
	/* Each contention profile also gives a contentions/count Profile, from the same samples. */
	b->srcs = calloc(2 * n + 1, sizeof(*b->srcs));
	if (!b->srcs)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		b->srcs[b->nr_srcs++].p = profiles[k];
		if (!strcmp(or_empty(profile__desc(profiles[k])->sample_type), "contention")) {
			b->srcs[b->nr_srcs].p = profiles[k];
			b->srcs[b->nr_srcs++].contentions = true;
		}
	}

	err = otlp_collect__processes(b);
	for (size_t k = 0; !err && k < b->nr_srcs; k++)
		err = otlp_collect__samples(b, k);
	if (!err)
		err = otlp_request__dictionary(b);
	if (!err)
		err = otlp_request__build(b);
	return err;
}

/* --- entry points --- */

/* The request packed into *bin when bin is not NULL, else as OTLP/JSON into *text. */
static int otlp_encode(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		       uint8_t **bin, char **text, size_t *len)
{
	struct otlp_build b = {0};
	int err = otlp_build__run(&b, profiles, n, o);

	if (!err)
		err = bin ? encode__pack(&b.req.base, bin, len)
			  : pb_json__encode(&b.req.base, text, len);
	otlp_build__free(&b);
	return err;
}

int enc_otlp__encode(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		     uint8_t **out, size_t *len)
{
	if (!out || !len)
		return -EINVAL;
	return otlp_encode(profiles, n, o, out, NULL, len);
}

int enc_otlp__encode_json(const struct profile *const *profiles, size_t n,
			  const struct otlp_opts *o, char **out, size_t *len)
{
	if (!out || !len)
		return -EINVAL;
	return otlp_encode(profiles, n, o, NULL, out, len);
}

/* The request, binary or OTLP/JSON, written to path in one go. */
static int otlp_write(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		      const char *path, bool json)
{
	uint8_t *bin = NULL;
	char *text = NULL;
	size_t len = 0;
	int err;

	if (!path)
		return -EINVAL;
	err = json ? enc_otlp__encode_json(profiles, n, o, &text, &len)
		   : enc_otlp__encode(profiles, n, o, &bin, &len);
	return encode__write_file(err, json ? (void *)text : bin, len, path);
}

int enc_otlp__write(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
		    const char *path)
{
	return otlp_write(profiles, n, o, path, false);
}

int enc_otlp__write_json(const struct profile *const *profiles, size_t n, const struct otlp_opts *o,
			 const char *path)
{
	return otlp_write(profiles, n, o, path, true);
}
