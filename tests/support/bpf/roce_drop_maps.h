// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Layout shared by roce_drop.bpf.c and its loader (tests/support/bpf/roce_drop.h). */
#pragma once

#include <linux/types.h>

/* Counters, one slot per CPU (summed by the reader). */
struct roce_drop_counters {
  __u64 matched; /* RoCEv2 data packets (RDMA WRITE) seen */
  __u64 dropped;
};
