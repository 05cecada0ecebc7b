// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Layout shared by port_feed.bpf.c and its loader (orchestrator/testbed/port_feeds.h). */
#pragma once

#include <linux/types.h>

/* Interface indexes below this have a slot of their own; every larger one shares the last slot.
 * Index 0 is the ingress of frames the switch sent itself (skb_iif 0). */
#define PORT_FEED_MAX_IFINDEX 64
#define PORT_FEED_SLOTS (PORT_FEED_MAX_IFINDEX + 1)
#define PORT_FEED_OVERFLOW_SLOT PORT_FEED_MAX_IFINDEX

/* What one egress port has been handed from one ingress port, cumulative. The map's entry
 * egress_slot * PORT_FEED_SLOTS + ingress_slot. */
struct port_feed_count {
  __u64 bytes; /* skb->len at tc egress: the frame from its Ethernet header on, without FCS */
  __u64 frames;
};
