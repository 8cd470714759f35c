// SPDX-License-Identifier: BSD-2-Clause
/*
 * Docker container names from <root>/containers/<id>/config.v2.json. No cache here: the process
 * table keeps each process's identity, so this runs once per new containerised process, and a
 * config file is small.
 */
#include "process/docker.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ID_LEN 128

static bool id_ok(const char *id)
{
	size_t n = 0;

	for (; id[n]; n++)
		if (n >= MAX_ID_LEN || !isxdigit((unsigned char)id[n]))
			return false;
	return n > 0;
}

/* The whole file into a malloc'ed buffer. 0 or -errno (-EFBIG past the bound). */
static int read_bounded(const char *path, char **buf, size_t *len)
{
	struct stat st;
	char *b = NULL;
	size_t n = 0, cap;
	int fd, err = 0;

	*buf = NULL;
	*len = 0;
	/* O_NONBLOCK: a FIFO planted in place of the file must not hang us; O_NOFOLLOW: nor may a
	 * symlink send us elsewhere (the directories above are Docker's, root's). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return errno == ELOOP ? -EINVAL : -errno;
	if (fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
		goto out;
	}
	if (st.st_size > (off_t)DOCKER_CONFIG_MAX_BYTES) {
		err = -EFBIG;
		goto out;
	}
	/* Sized by fstat(), but the file may change under us: grow up to one byte past the bound,
	 * which is how a file that grew too large is noticed. */
	cap = (size_t)st.st_size + 1;
	b = malloc(cap);
	if (!b) {
		err = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t r;

		if (n == cap) {
			char *nb;

			if (cap > DOCKER_CONFIG_MAX_BYTES)
				break;
			cap = cap * 2 > DOCKER_CONFIG_MAX_BYTES + 1 ? DOCKER_CONFIG_MAX_BYTES + 1
								    : cap * 2;
			nb = realloc(b, cap);
			if (!nb) {
				err = -ENOMEM;
				goto out;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (n > DOCKER_CONFIG_MAX_BYTES) {
		err = -EFBIG;
		goto out;
	}
	*buf = b;
	*len = n;
	b = NULL;
out:
	free(b);
	close(fd);
	return err;
}

int docker__name_from_config(const char *json, size_t len, char *out, size_t outlen)
{
	struct json_object *root = NULL, *name;
	struct json_tokener *tok;
	const char *s;
	size_t n, end;
	int err = 0;

	if (outlen)
		out[0] = '\0';
	/* json-c takes an int length; docker__container_name() never reads that much. */
	if (len > INT_MAX)
		return -EINVAL;
	tok = json_tokener_new();
	if (!tok)
		return -ENOMEM;
	root = json_tokener_parse_ex(tok, json, (int)len);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root || !json_object_is_type(root, json_type_object)) {
		err = -EINVAL;
		goto out;
	}
	while (end < len && isspace((unsigned char)json[end]))
		end++;
	if (end < len) {
		err = -EINVAL; /* trailing garbage: not the file Docker wrote */
		goto out;
	}
	if (!json_object_object_get_ex(root, "Name", &name) ||
	    !json_object_is_type(name, json_type_string)) {
		err = -ENOENT;
		goto out;
	}
	s = json_object_get_string(name);
	n = (size_t)json_object_get_string_len(name);
	if (n && s[0] == '/') {
		s++;
		n--;
	}
	if (!n) {
		err = -ENOENT;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) {
			err = -EINVAL;
			goto out;
		}
	if (n >= outlen) {
		err = -E2BIG;
		goto out;
	}
	memcpy(out, s, n);
	out[n] = '\0';
out:
	json_object_put(root);
	if (err && outlen)
		out[0] = '\0';
	return err;
}

int docker__container_name(const char *docker_root, const char *container_id, char *out, size_t len)
{
	char path[PATH_MAX];
	char *buf = NULL;
	size_t n;
	int w, err;

	if (out && len)
		out[0] = '\0';
	if (!docker_root || !*docker_root || !container_id || !out || !len)
		return -EINVAL;
	/* Hex only: the ID becomes a path component, so "../../etc" must never get that far. */
	if (!id_ok(container_id))
		return -EINVAL;
	w = snprintf(path, sizeof(path), "%s/containers/%s/config.v2.json", docker_root,
		     container_id);
	if (w < 0 || (size_t)w >= sizeof(path))
		return -ENAMETOOLONG;
	err = read_bounded(path, &buf, &n);
	if (err)
		return err;
	err = docker__name_from_config(buf, n, out, len);
	free(buf);
	return err;
}
