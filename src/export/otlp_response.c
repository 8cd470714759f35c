// SPDX-License-Identifier: BSD-2-Clause
/*
 * ExportProfilesServiceResponse through the libraries that already parse its formats: protoc-c's
 * generated unpack for protobuf, json-c for OTLP/JSON. Both bound what a hostile body can cost:
 * the body itself is bounded by the transports, and json-c's depth limit keeps nesting from
 * exhausting the stack.
 */
#include "export/otlp_response.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/log_text.h"
#include "opentelemetry/proto/collector/profiles/v1development/profiles_service.pb-c.h"

/* Nothing we read is deeper than 2; a receiver's extra fields get some room, no more. */
#define JSON_MAX_DEPTH 32

typedef Opentelemetry__Proto__Collector__Profiles__V1development__ExportProfilesServiceResponse
	pb_response;

static int parse_protobuf(const void *body, size_t len, int64_t *rejected, char *msg, size_t msglen)
{
	pb_response *r;

	r = opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__unpack(
		NULL, len, body);
	if (!r)
		return -EBADMSG;
	if (r->partial_success) {
		const char *m = r->partial_success->error_message;

		*rejected = r->partial_success->rejected_profiles;
		if (m)
			log_text__sanitize(msg, msglen, m, strlen(m));
	}
	opentelemetry__proto__collector__profiles__v1development__export_profiles_service_response__free_unpacked(
		r, NULL);
	return 0;
}

/* int64 as proto3 JSON writes it: a string of digits, or a bare number. */
static int json_int64(struct json_object *v, int64_t *out)
{
	const char *s, *p;
	bool neg = false;
	int64_t r = 0;

	if (json_object_is_type(v, json_type_int)) {
		*out = json_object_get_int64(v);
		return 0;
	}
	if (json_object_is_type(v, json_type_double)) {
		double d = json_object_get_double(v);

		/* Out of int64's range the cast is undefined: a receiver's 1e300 is a bad answer.
		 */
		if (!isfinite(d) || d < -9.2e18 || d > 9.2e18)
			return -1;
		*out = (int64_t)d;
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return -1;
	s = json_object_get_string(v);
	p = s;
	if (*p == '-') {
		neg = true;
		p++;
	}
	if (!isdigit((unsigned char)*p))
		return -1;
	for (; isdigit((unsigned char)*p); p++)
		if (r < INT64_MAX / 10 - 10)
			r = r * 10 + (*p - '0');
	if (*p)
		return -1;
	*out = neg ? -r : r;
	return 0;
}

/*
 * The message, one '?' per character that is not printable ASCII: json-c hands out UTF-8, and a
 * line with "??" for one accented letter reads as two unknown characters.
 */
static void json_message(struct json_object *v, char *msg, size_t msglen)
{
	const char *s = json_object_get_string(v);
	size_t n = (size_t)json_object_get_string_len(v), o = 0;
	char *one = malloc(n + 1);

	if (!one) {
		log_text__sanitize(msg, msglen, s, n);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80) /* not a continuation byte */
			one[o++] = s[i];
	log_text__sanitize(msg, msglen, one, o);
	free(one);
}

/* Either spelling of a member: proto3 JSON writes camelCase and must accept the proto name. */
static struct json_object *member(struct json_object *o, const char *camel, const char *snake)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, camel, &v))
		json_object_object_get_ex(o, snake, &v);
	return v;
}

static int json_partial_success(struct json_object *ps, int64_t *rejected, char *msg, size_t msglen)
{
	struct json_object *v;

	/* null, or anything but an object, says nothing: full success. */
	if (!json_object_is_type(ps, json_type_object))
		return 0;
	v = member(ps, "rejectedProfiles", "rejected_profiles");
	if (v && json_int64(v, rejected))
		return -1;
	v = member(ps, "errorMessage", "error_message");
	if (v && !json_object_is_type(v, json_type_string))
		return -1;
	if (v)
		json_message(v, msg, msglen);
	return 0;
}

static int parse_json(const char *body, size_t len, int64_t *rejected, char *msg, size_t msglen)
{
	struct json_tokener *tok;
	struct json_object *root;
	size_t i = 0, end;
	int err = -EBADMSG;

	while (i < len && isspace((unsigned char)body[i]))
		i++;
	if (i == len)
		return 0; /* an empty body is full success too */
	tok = json_tokener_new_ex(JSON_MAX_DEPTH);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	root = json_tokener_parse_ex(tok, body, (int)len);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	while (end < len && isspace((unsigned char)body[end]))
		end++;
	if (root && end == len && json_object_is_type(root, json_type_object) &&
	    json_partial_success(member(root, "partialSuccess", "partial_success"), rejected, msg,
				 msglen) == 0)
		err = 0;
	json_object_put(root);
	return err;
}

int otlp_response__parse(const void *body, size_t len, bool json, int64_t *rejected, char *msg,
			 size_t msglen)
{
	int err;

	*rejected = 0;
	if (msglen)
		msg[0] = '\0';
	/* json-c takes an int length; no receiver's answer is anywhere near that. */
	if (len > INT32_MAX)
		return -EBADMSG;
	if (json)
		err = parse_json(body, len, rejected, msg, msglen);
	else
		err = parse_protobuf(body, len, rejected, msg, msglen);
	if (err) {
		*rejected = 0;
		if (msglen)
			msg[0] = '\0';
	}
	return err;
}
