/* SPDX-License-Identifier: BSD-2-Clause */
/* Small compiler helpers shared by every source file. */
#ifndef BPFMAP_UTIL_COMPILER_H
#define BPFMAP_UTIL_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define ROUND_UP(x, a) (((x) + (a) - 1) / (a) * (a))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#if defined(__SANITIZE_THREAD__)
#define BPFMAP_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BPFMAP_TSAN 1
#endif
#endif

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax() __asm__ __volatile__("" ::: "memory")
#endif

static inline uint32_t roundup_pow_of_two_u32(uint32_t v)
{
	if (v <= 1)
		return 1;
	return 1U << (32 - __builtin_clz(v - 1));
}

#endif
