// SPDX-License-Identifier: BSD-2-Clause
#include "base/log.h"
#include "base/log_text.h"

#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

static enum log_level current_level = LOG_INFO;

static const char *const level_prefix[] = {
	[LOG_ERROR] = "error: ",
	[LOG_WARN] = "warning: ",
	[LOG_INFO] = "",
	[LOG_DEBUG] = "debug: ",
};

void log_set_level(enum log_level level)
{
	current_level = level;
}

enum log_level log_get_level(void)
{
	return current_level;
}

static void log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char msg[1024], line[1024];
	size_t len;
	int n;

	if (level > current_level)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* The message's own line end is ours; everything else, process names included, is data. */
	len = strlen(msg);
	if (len && msg[len - 1] == '\n')
		msg[len - 1] = '\0';
	/* One write per line: the export thread logs too, and lines must not interleave. */
	n = snprintf(line, sizeof(line), "hostprof: %s", level_prefix[level]);
	log_text__escape(line + n, sizeof(line) - n, msg);
	n = strlen(line);
	if (n == 0 || line[n - 1] != '\n') {
		if ((size_t)n + 1 >= sizeof(line))
			n = sizeof(line) - 2;
		line[n++] = '\n';
		line[n] = '\0';
	}
	fputs(line, stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

void log_warn_once(struct log_ratelimit *rl, const char *fmt, ...)
{
	va_list ap;

	if (rl->printed) {
		rl->suppressed++;
		return;
	}
	rl->printed = 1;
	va_start(ap, fmt);
	log_vmsg(LOG_WARN, fmt, ap);
	va_end(ap);
}

void log_ratelimit_flush(struct log_ratelimit *rl)
{
	if (rl->suppressed)
		log_warn("%s: repeated %lu more times", rl->key, rl->suppressed);
	rl->suppressed = 0;
	rl->printed = 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	enum log_level ours = level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG;

	if (ours > current_level)
		return 0;
	/* libbpf starts its own messages with "libbpf: ". */
	fputs("hostprof: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

void log_bridge_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
