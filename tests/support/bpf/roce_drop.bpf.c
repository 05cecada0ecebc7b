// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Drops RoCEv2 data packets (RDMA WRITE FIRST..ONLY_IMM) at random with a fixed probability,
 * counting what it saw and what it dropped. Decisions come from a counter-based generator keyed
 * by the seed and the packet's number on this CPU, so a run is repeatable. ACKs, NAKs, CNPs and
 * all other traffic pass untouched. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_helpers.h>

#include "packet_parse.h"
#include "splitmix.h"
#include "roce_drop_maps.h"

#define OPCODE_WRITE_FIRST 0x06
#define OPCODE_WRITE_ONLY_IMM 0x0b

/* Set before loading: drop when the 32-bit draw is below `threshold` = probability * 2^32
 * (64 bits wide, so that probability 1 drops every packet and 0 none). */
const volatile __u64 threshold = 0;
const volatile __u64 seed = 0;

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct roce_drop_counters);
} counters SEC(".maps");

SEC("tc")
int roce_drop(struct __sk_buff *skb)
{
  struct collide_l4 l4;
  __u8 opcode;
  __u32 key = 0;
  struct roce_drop_counters *c;

  collide_parse_l4(skb, &l4);
  if (l4.ip_proto != IPPROTO_UDP || l4.dst_port != ROCE_PORT)
    return TC_ACT_UNSPEC;
  if (bpf_skb_load_bytes(skb, l4.l4_offset + UDP_HEADER, &opcode, 1) < 0)
    return TC_ACT_UNSPEC;
  if (opcode < OPCODE_WRITE_FIRST || opcode > OPCODE_WRITE_ONLY_IMM)
    return TC_ACT_UNSPEC;
  c = bpf_map_lookup_elem(&counters, &key);
  if (!c)
    return TC_ACT_UNSPEC;
  c->matched++;
  if ((collide_mix64(seed ^ (c->matched * 0x100000001b3ULL) ^ bpf_get_smp_processor_id()) >> 32) >=
      threshold)
    return TC_ACT_UNSPEC;
  c->dropped++;
  return TC_ACT_SHOT;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
