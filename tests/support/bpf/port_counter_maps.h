// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Map layout of port_counter.bpf.c, shared with the C++ reader (tests/support/bpf/port_counter.h). */
#pragma once

#include <linux/types.h>

enum collide_direction {
  COLLIDE_DIR_INGRESS = 0,
  COLLIDE_DIR_EGRESS = 1,
};

/* One counter per (interface, direction, IP protocol, destination port). Frames that are not IP
 * count under ip_proto 0; IP frames without ports (ICMP, fragments) under dst_port 0. */
struct port_counter_key {
  __u32 ifindex;
  __u8 direction; /* enum collide_direction */
  __u8 ip_proto;
  __u16 dst_port; /* host byte order */
};

struct port_counter_value {
  __u64 packets;
  __u64 bytes; /* skb->len: from the Ethernet header, without FCS */
};

#define PORT_COUNTER_MAX_ENTRIES 4096
