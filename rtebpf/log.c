// SPDX-License-Identifier: BSD-2-Clause
/*
 * The explanation a failed load leaves in the caller's log buffer: lines
 * appended in order, cut at the buffer's end, always NUL-terminated.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include "rtebpf.h"

void rtebpf_log_init(struct rtebpf_log *log, char *buf, size_t size)
{
	log->buf = size ? buf : NULL;
	log->size = buf ? size : 0;
	log->len = 0;
	if (log->buf)
		log->buf[0] = '\0';
}

int rtebpf_log(struct rtebpf_log *log, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!log->buf || log->len + 1 >= log->size)
		return -EINVAL;
	va_start(ap, fmt);
	n = vsnprintf(log->buf + log->len, log->size - log->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	log->len += (size_t)n;
	if (log->len + 1 >= log->size) {
		log->len = log->size - 1;
		return -EINVAL;
	}
	log->buf[log->len++] = '\n';
	log->buf[log->len] = '\0';
	return -EINVAL;
}

const char *rtebpf_insn_str(const struct ebpf_insn *ins, char *buf, size_t size)
{
	static const char *const classes[8] = { "ld", "ldx", "st", "stx", "alu32", "jmp",
						"jmp32", "alu64" };

	snprintf(buf, size, "%s op 0x%02x dst r%u src r%u off %d imm %d",
		 classes[ins->code & 7], ins->code, ins->dst_reg, ins->src_reg, ins->off, ins->imm);
	return buf;
}
