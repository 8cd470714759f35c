/* SPDX-License-Identifier: BSD-2-Clause */
/* The subcommands, one file each (cmd_<name>.c), dispatched from main.c. */
#ifndef HOSTPROF_CMDS_H
#define HOSTPROF_CMDS_H

/* Each returns the process exit status. argv[0] is the subcommand's name. */
int do_profile(int argc, char **argv);
/* Continuous whole-host profiling with periodic export (cmd_agent.c). */
int do_agent(int argc, char **argv);
/* Convert profile files between formats through the model (cmd_render.c). */
int do_render(int argc, char **argv);

#endif /* HOSTPROF_CMDS_H */
