/* SPDX-License-Identifier: BSD-2-Clause */
/* The sleeping steps of a wait (sync/backoff.h). */
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sync/backoff.h"

__attribute__((cold)) void backoff_wait(unsigned int *spins)
{
	backoff(spins);
}

void backoff_sleep(unsigned int *spins)
{
	unsigned int step = *spins - (BACKOFF_SPINS + BACKOFF_YIELDS);
	unsigned int us = 1u << (step < 7 ? step : 7); /* up to BACKOFF_SLEEP_MAX_US */
	struct timespec ts = { 0, (long)us * 1000 };

	if (step < 7)
		++*spins;
	/* The system call itself: glibc's nanosleep is a cancellation point,
	 * and a waiter may hold locks. */
	(void)syscall(SYS_nanosleep, &ts, NULL);
}
