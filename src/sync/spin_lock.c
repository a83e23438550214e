/* SPDX-License-Identifier: BSD-2-Clause */
/* Contended path of the spin lock, and the public value-lock functions. */

#include <bpfmap.h>

#include "sync/spin_lock.h"
#include "sync/backoff.h"

/* Wait while @word & @held. */
static void wait_while(const uint32_t *word, uint32_t held)
{
	unsigned int spins = 0;

	while (__atomic_load_n(word, __ATOMIC_RELAXED) & held)
		backoff(&spins);
}

void spin_lock_slow(uint32_t *word)
{
	do
		wait_while(word, UINT32_MAX);
	while (__atomic_exchange_n(word, 1, __ATOMIC_ACQUIRE));
}

void seq_spin_lock_slow(uint32_t *word)
{
	do
		wait_while(word, 1);
	while (__atomic_fetch_or(word, 1, __ATOMIC_ACQUIRE) & 1);
}

void seq_spin_lock_eager(uint32_t *word)
{
	for (unsigned int tries = 0; tries < 512; tries++)
		if (!(__atomic_fetch_or(word, 1, __ATOMIC_ACQUIRE) & 1))
			return;
	seq_spin_lock(word);
}

void value_lock_wait_free(const uint32_t *word)
{
	wait_while(word, 1);
}

void bpfmap_spin_lock(struct bpfmap_spin_lock *lock)
{
	value_lock_take(&lock->val);
}

void bpfmap_spin_unlock(struct bpfmap_spin_lock *lock)
{
	value_lock_drop(&lock->val);
}
