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

void backoff_sleep(void)
{
	struct timespec ts = { 0, BACKOFF_SLEEP_US * 1000 };

	/* The system call itself: glibc's nanosleep is a cancellation point,
	 * and a waiter may hold locks. */
	(void)syscall(SYS_nanosleep, &ts, NULL);
}
