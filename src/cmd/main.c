// SPDX-License-Identifier: BSD-2-Clause
/* hostprof: argv → subcommand. */
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"

static void print_version(void)
{
	printf("hostprof %s (%s)\n", HOSTPROF_VERSION, HOSTPROF_GIT_REV);
}

static void print_usage(FILE *out)
{
	fprintf(out,
		"hostprof: a whole-host eBPF profiler (cpu, wall, off-CPU, lock contention)\n"
		"\n"
		"Usage: hostprof <command> [options]\n"
		"\n"
		"Commands:\n"
		"  profile   capture profiles of processes, a command, or the whole host\n"
		"  agent     profile the whole host continuously and export every interval\n"
		"  render    convert profile files: pprof or folded to HTML, pprof, folded, OTLP\n"
		"\n"
		"Options:\n"
		"  -h, --help      show this help (and 'hostprof <command> --help' for a command)\n"
		"  -V, --version   print the version\n"
		"\n"
		"Examples:\n"
		"  sudo hostprof profile --pid 1234 --duration 10 -o cpu.pb.gz\n"
		"  sudo hostprof profile --all --duration 5 -o host.folded\n"
		"  sudo hostprof profile -o build.pb.gz -- make -j2\n"
		"  hostprof render cpu.pb.gz -o cpu.html\n"
		"  sudo hostprof agent --config /etc/hostprof/config.yaml\n"
		"\n"
		"Open a .pb.gz with 'go tool pprof -http=: FILE'; feed a .folded file to any\n"
		"flame graph tool. hostprof needs root, or CAP_BPF and CAP_PERFMON.\n");
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
} commands[] = {
	{"profile", do_profile},
	{"agent", do_agent},
	{"render", do_render},
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version") ||
	    !strcmp(argv[1], "version")) {
		print_version();
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "hostprof: unknown command '%s'. See 'hostprof --help'.\n", argv[1]);
	return 2;
}
