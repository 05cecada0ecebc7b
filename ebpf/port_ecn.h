// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Layout shared by port_ecn.bpf.c and its loader (orchestrator/testbed/port_ecn_marker.h). */
#pragma once

#include <linux/types.h>

/* One port's modeled queue and what the marker did; one slot, shared by all CPUs. */
struct port_ecn_state {
  struct bpf_spin_lock lock;
  __u32 pad;
  __u64 depth;       /* bytes the port's shaper holds or is about to send at once */
  __u64 last_ns;     /* when depth was last drained */
  __u64 marked;      /* ECN-capable frames marked CE */
  __u64 early_drops; /* other frames dropped between Kmin and the buffer's end */
};
