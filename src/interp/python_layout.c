/* SPDX-License-Identifier: BSD-2-Clause */
#include "interp/python_layout.h"

#include <stddef.h>
#include <string.h>

#define NONE HP_PY_NO_OFFSET

/* FRAME_OWNED_BY_CSTACK in Include/internal/pycore_frame.h, 3.12 and 3.13. */
#define OWNED_BY_CSTACK 3

static const struct python_layout layouts[] = {
	{
		.minor = 10,
		.thread_match = HP_PY_MATCH_PTHREAD,
		.frames = HP_PY_FRAMES_OBJECT,
		.runtime_interp_head = 32,
		.interp_tstate_head = 8,
		.tstate_next = 8,
		.tstate_interp = 16,
		.tstate_thread = 176, /* thread_id */
		.tstate_frame = 24,   /* frame */
		.cframe_frame = NONE,
		.frame_previous = 24, /* PyFrameObject.f_back */
		.frame_code = 32,
		.frame_instr = 96, /* f_lasti */
		.frame_entry = NONE,
		.code_size = 176,
		.code_units = NONE,
		.code_bytes = 48,
		.code_filename = 104,
		.code_name = 112,
		.code_qualname = NONE,
		.code_firstlineno = 40,
		.code_linetable = 120,
		.lines = PYTHON_LINES_310,
	},
	{
		.minor = 11,
		.thread_match = HP_PY_MATCH_TID,
		.frames = HP_PY_FRAMES_IS_ENTRY,
		.runtime_interp_head = 40,
		.interp_tstate_head = 16,
		.tstate_next = 8,
		.tstate_interp = 16,
		.tstate_thread = 160, /* native_thread_id */
		.tstate_frame = 56,   /* cframe */
		.cframe_frame = 8,
		.frame_previous = 48,
		.frame_code = 32,
		.frame_instr = 56, /* prev_instr */
		.frame_entry = 68, /* is_entry */
		.code_size = 192,
		.code_units = 184,
		.code_bytes = NONE,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_firstlineno = 72,
		.code_linetable = 136,
		.lines = PYTHON_LINES_311,
	},
	{
		.minor = 12,
		.thread_match = HP_PY_MATCH_TID,
		.frames = HP_PY_FRAMES_CSTACK,
		.owner_cstack = OWNED_BY_CSTACK,
		.runtime_interp_head = 40,
		.interp_tstate_head = 72,
		.tstate_next = 8,
		.tstate_interp = 16,
		.tstate_thread = 144,
		.tstate_frame = 56, /* cframe */
		.cframe_frame = 0,
		.frame_previous = 8,
		.frame_code = 0,
		.frame_instr = 56, /* prev_instr */
		.frame_entry = 70, /* owner */
		.code_size = 200,
		.code_units = 192,
		.code_bytes = NONE,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_firstlineno = 68,
		.code_linetable = 136,
		.lines = PYTHON_LINES_311,
	},
	{
		.minor = 13,
		.thread_match = HP_PY_MATCH_TID,
		.frames = HP_PY_FRAMES_CSTACK,
		.owner_cstack = OWNED_BY_CSTACK,
		.runtime_interp_head = 632,
		.interp_tstate_head = 7344,
		.tstate_next = 8,
		.tstate_interp = 16,
		.tstate_thread = 160,
		.tstate_frame = 72, /* current_frame */
		.cframe_frame = NONE,
		.frame_previous = 8,
		.frame_code = 0,   /* f_executable */
		.frame_instr = 56, /* instr_ptr */
		.frame_entry = 70, /* owner */
		.code_size = 208,
		.code_units = 200,
		.code_bytes = NONE,
		.code_filename = 112,
		.code_name = 120,
		.code_qualname = 128,
		.code_firstlineno = 68,
		.code_linetable = 136,
		.lines = PYTHON_LINES_311,
	},
};

const struct python_layout *python_layout__get(int minor)
{
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

void python_layout__to_bpf(const struct python_layout *l, uint64_t runtime, uint64_t eval_start,
			   uint64_t eval_end, struct hp_py_proc *out)
{
	memset(out, 0, sizeof(*out));
	out->runtime = runtime;
	out->eval_start = eval_start;
	out->eval_end = eval_end;
	out->version = (uint16_t)(0x0300 | l->minor);
	out->thread_match = (uint8_t)l->thread_match;
	out->frames = (uint8_t)l->frames;
	out->owner_cstack = l->owner_cstack;
	out->runtime_interp_head = l->runtime_interp_head;
	out->interp_tstate_head = l->interp_tstate_head;
	out->tstate_next = l->tstate_next;
	out->tstate_thread = l->tstate_thread;
	out->tstate_frame = l->tstate_frame;
	out->cframe_frame = l->cframe_frame;
	out->frame_previous = l->frame_previous;
	out->frame_code = l->frame_code;
	out->frame_instr = l->frame_instr;
	out->frame_entry = l->frame_entry;
	out->code_units = l->code_units;
}
