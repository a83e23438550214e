/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The flat table's switch of lock-free overwrites (flat_update.c says what
 * they are): the map's state and each bucket's copy of it, which the stores
 * read on the line of the tags they check, and the waits for stores in flight.
 */
#include "sync/store_window.h"
#include "tables/flat.h"

void flat_stores_off(struct flat *f)
{
	if (!stores_stop_begin(&f->stores))
		return;
	for (uint32_t b = 0; b < f->n_buckets; b++)
		__atomic_store_n(&f->buckets[b].stores, STORES_OFF, STORE_WINDOW_ORDER);
	store_windows_wait(store_window_owner(&f->map));
	stores_stop_end(&f->stores);
}

void flat_stores_settle(struct flat *f)
{
	if (stores_may_fly(&f->stores))
		store_windows_wait(store_window_owner(&f->map));
}
