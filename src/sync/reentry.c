/* SPDX-License-Identifier: BSD-2-Clause */
/* The per-thread mark of sync/reentry.h. */
#include "sync/reentry.h"

__thread uint32_t reentry_mark __attribute__((tls_model("initial-exec")));
