// SPDX-License-Identifier: BSD-2-Clause
#include "process/cmdline.h"

#include <stdbool.h>
#include <string.h>
#include <strings.h>

/* Appends to out, never past size - 1 bytes; *n counts what was written. */
struct sink {
	char *out;
	size_t size, n;
};

static void put(struct sink *s, const char *p, size_t len)
{
	size_t room = s->size - 1 - s->n;

	if (len > room)
		len = room;
	memcpy(s->out + s->n, p, len);
	s->n += len;
	s->out[s->n] = '\0';
}

static void put_str(struct sink *s, const char *p)
{
	put(s, p, strlen(p));
}

/* Case-insensitive search of a word in the first len bytes of p. */
static bool has_word(const char *p, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= len; i++)
		if (!strncasecmp(p + i, word, w))
			return true;
	return false;
}

static bool secret_name(const char *p, size_t len)
{
	static const char *const words[] = {"token", "secret",	   "passw", "pwd",
					    "key",   "credential", "auth"};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (has_word(p, len, words[i]))
			return true;
	return false;
}

/* scheme://user:PASSWORD@host: the password's span in arg, or false. */
static bool url_password(const char *arg, size_t *start, size_t *end)
{
	const char *scheme = strstr(arg, "://");
	const char *auth, *at, *colon;
	size_t host_end;

	if (!scheme)
		return false;
	auth = scheme + 3;
	host_end = strcspn(auth, "/?#");
	at = memrchr(auth, '@', host_end);
	if (!at)
		return false;
	colon = memchr(auth, ':', at - auth);
	if (!colon)
		return false;
	*start = colon + 1 - arg;
	*end = at - arg;
	return true;
}

/* One argument in redacted mode. Returns true when the next argument is a secret's value. */
static bool put_redacted(struct sink *s, const char *arg)
{
	const char *name = arg, *eq;
	size_t start, end;
	bool secret_flag;

	while (*name == '-')
		name++;
	eq = strchr(name, '=');
	if (eq && eq > name && secret_name(name, eq - name)) {
		put(s, arg, eq + 1 - arg);
		put_str(s, CMDLINE_REDACTED_TEXT);
		return false;
	}
	secret_flag = arg[0] == '-' && !eq && secret_name(name, strlen(name));
	if (arg[0] == '-' && arg[1] == 'p' && arg[2] != '\0') {
		/* -pVALUE: mysql and friends take the password glued to the flag. A single-dash
		 * long flag (-port, -password) loses its name too, and -password its next
		 * argument as well: -pTOKEN cannot be told from -password. */
		put(s, arg, arg[2] == '=' ? 3 : 2);
		put_str(s, CMDLINE_REDACTED_TEXT);
		return secret_flag;
	}
	if (url_password(arg, &start, &end)) {
		put(s, arg, start);
		put_str(s, CMDLINE_REDACTED_TEXT);
		put_str(s, arg + end);
		return false;
	}
	put_str(s, arg);
	return secret_flag || !strcmp(arg, "-p");
}

const char *cmdline__format(const char *argv, size_t argv_len, enum cmdline_mode mode, char *out,
			    size_t size)
{
	struct sink s = {.out = out, .size = size};
	bool hide_next = false;
	size_t i = 0;

	if (mode == CMDLINE_OFF || !argv || !argv_len || !size)
		return NULL;
	out[0] = '\0';
	while (i < argv_len) {
		const char *arg = argv + i;
		size_t len = strnlen(arg, argv_len - i);
		char one[4096];
		bool first = i == 0;

		i += len + 1;
		if (!first)
			put(&s, " ", 1);
		if (mode == CMDLINE_FULL || first) {
			put(&s, arg, len);
			continue;
		}
		if (hide_next) {
			put_str(&s, CMDLINE_REDACTED_TEXT);
			hide_next = false;
			continue;
		}
		/* An argument without its NUL (argv cut at PROC_CMDLINE_MAX) is copied to end it.
		 */
		if (len >= sizeof(one))
			len = sizeof(one) - 1;
		memcpy(one, arg, len);
		one[len] = '\0';
		hide_next = put_redacted(&s, one);
	}
	return out;
}
