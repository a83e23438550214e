/* SPDX-License-Identifier: BSD-2-Clause */
/* The test hook of the bpfmap_hooked library (util/test_hook.h); nothing in
 * other builds. */
#include "util/test_hook.h"

#ifdef BPFMAP_TEST_HOOKS
void (*bpfmap_test_hook)(enum test_hook_point point, const void *obj);
#endif
