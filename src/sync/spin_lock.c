/* SPDX-License-Identifier: BSD-2-Clause */
/* Contended path of the spin lock, and the public value-lock functions. */
#include <sched.h>

#include <bpfmap.h>

#include "sync/spin_lock.h"

void spin_wait_free(uint32_t *word)
{
	unsigned int spins = 0;

	while (__atomic_load_n(word, __ATOMIC_RELAXED)) {
		if (++spins < 128)
			cpu_relax();
		else
			sched_yield();
	}
}

void spin_lock_slow(uint32_t *word)
{
	do
		spin_wait_free(word);
	while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE));
}

void seq_spin_lock_slow(uint32_t *word)
{
	unsigned int spins = 0;

	for (;;) {
		while (__atomic_load_n(word, __ATOMIC_RELAXED) & 1) {
			if (++spins < 128)
				cpu_relax();
			else
				sched_yield();
		}
		if (!(__atomic_fetch_or(word, 1, __ATOMIC_ACQUIRE) & 1))
			return;
	}
}

void bpfmap_spin_lock(struct bpfmap_spin_lock *lock)
{
	spin_lock_word(&lock->val);
}

void bpfmap_spin_unlock(struct bpfmap_spin_lock *lock)
{
	spin_unlock_word(&lock->val);
}
