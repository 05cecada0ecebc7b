// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* SplitMix64's finalizer, shared by collide's tc programs that draw seeded pseudo-random numbers:
 * a strong 64-bit mix of (seed, counter), so draws repeat with their seed and need no state but a
 * counter. */
#pragma once

#include <linux/types.h>

static __always_inline __u64 collide_mix64(__u64 z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
