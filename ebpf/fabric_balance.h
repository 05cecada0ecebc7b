// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Map layout of fabric_balance.bpf.c, shared with the C++ loader (injectors/fabric_balance.h). */
#pragma once

#include <linux/types.h>

enum fabric_balance_mode {
  FABRIC_BALANCE_ECMP = 0,    /* leave the frame alone: the kernel hashes the five-tuple */
  FABRIC_BALANCE_QP_HASH = 1, /* RoCEv2 frames: a hash of the BTH destination QP and dst IP */
  FABRIC_BALANCE_SPRAY = 2,   /* RoCEv2 frames: a fresh seeded draw for every packet */
};

/* The one entry of the `config` array map: changed while attached, so a run can switch the
 * balancing between variants without reloading or re-attaching. */
struct fabric_balance_config {
  __u32 mode; /* enum fabric_balance_mode */
  __u32 reserved;
  __u64 seed;
};

/* Per CPU; summed by the reader. */
struct fabric_balance_counters {
  __u64 rehashed; /* RoCEv2 frames whose flow hash the program set */
  __u64 passed;   /* every other frame (non-RoCE, or mode ecmp) */
  __u32 last_hash; /* the hash set on this CPU's last rehashed frame: what a test checks */
  __u32 reserved;
};
