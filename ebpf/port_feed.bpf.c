// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counts, on a switch port's egress, the bytes and frames handed to the port's queue by each
 * ingress port of the switch, so that a switch can do ingress accounting for PFC: a qdisc knows
 * only its own backlog, not which port the frames in it came from.
 *
 * The ingress port is skb->skb_iif (__sk_buff.ingress_ifindex): the device the frame was
 * received on before the kernel forwarded it, 0 for frames the switch's own stack sent.
 *
 * The counts live in one array shared by all CPUs, added to atomically, and mapped into the
 * reader's memory (BPF_F_MMAPABLE), which reads every pair every few hundred microseconds without
 * a system call. The program never changes a frame's fate: TC_ACT_UNSPEC hands the frame to the
 * next program on the hook (e.g. the ECN marker) or to the default action.
 *
 * A port with a queue per priority holds only its lossless queue when paused, so only the frames
 * of that queue count: IPv4 frames whose TOS byte, masked with tos_mask, is tos_value (the
 * port's u32 filter, port_queue.h). A mask of 0 counts every frame. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "port_feed.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, PORT_FEED_SLOTS * PORT_FEED_SLOTS);
  __type(key, __u32);
  __type(value, struct port_feed_count);
} feeds SEC(".maps");

static __always_inline __u32 slot_of(__u32 ifindex)
{
  return ifindex < PORT_FEED_MAX_IFINDEX ? ifindex : PORT_FEED_OVERFLOW_SLOT;
}

const volatile __u8 tos_mask = 0;
const volatile __u8 tos_value = 0;

/* Whether the frame goes to the queue the counts are for. */
static __always_inline int counted(struct __sk_buff *skb)
{
  __u8 tos;

  if (tos_mask == 0)
    return 1;
  if (skb->protocol != bpf_htons(ETH_P_IP))
    return 0;
  /* The TOS is the IPv4 header's second byte. */
  if (bpf_skb_load_bytes(skb, ETH_HLEN + 1, &tos, sizeof(tos)) < 0)
    return 0;
  return (tos & tos_mask) == tos_value;
}

SEC("tc")
int port_feed_egress(struct __sk_buff *skb)
{
  if (!counted(skb))
    return TC_ACT_UNSPEC;
  __u32 key = slot_of(skb->ifindex) * PORT_FEED_SLOTS + slot_of(skb->ingress_ifindex);
  struct port_feed_count *count = bpf_map_lookup_elem(&feeds, &key);

  if (count) {
    __sync_fetch_and_add(&count->bytes, skb->len);
    __sync_fetch_and_add(&count->frames, 1);
  }
  return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
