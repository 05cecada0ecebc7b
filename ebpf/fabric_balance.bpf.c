// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Chooses how a virtual switch spreads RoCEv2 frames over its equal-cost uplinks. Attached on tc
 * ingress of a leaf's host-facing ports, before the routing decision.
 *
 * Why a hash and not a redirect: with net.ipv4.fib_multipath_hash_policy=1, the kernel's
 * fib_multipath_hash() returns skb->hash >> 1 without dissecting the packet when skb->l4_hash is
 * set (net/ipv4/route.c, "short-circuit if we already have L4 hash present"), and
 * fib_select_multipath() picks the next hop whose share of the 31-bit hash space holds that
 * value. bpf_set_hash() sets skb->hash and marks it an L4 hash, so the kernel's own ECMP (its
 * routes, next hops, neighbour entries and link-down handling) keeps choosing the path; only its
 * input changes. Frames that are not RoCEv2 keep the kernel's five-tuple hash.
 *
 * qp-hash: the path follows the BTH destination QP, as switches with QP-aware ("enhanced") ECMP
 * do. A connection's QPs have consecutive numbers, so the hash is the QP number bit-reversed
 * (the van der Corput sequence) plus an offset mixed from the destination IP and the seed: a
 * connection's 2^k QPs land on 2^k equally spaced points of the hash space, so any power-of-two
 * number of equal next hops gets exactly its share of them (8 QPs over 2 uplinks: 4 and 4),
 * where a pseudo-random hash of each QP would leave 3 and 5, or worse, about as often as not.
 * spray: every packet gets its own draw (SplitMix64 of the seed and a per-CPU packet count), the
 * per-packet spraying of adaptive-routing fabrics; a flow's packets arrive out of order. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_helpers.h>

#include "fabric_balance.h"
#include "packet_parse.h"
#include "splitmix.h"

#define BTH_DEST_QP_OFFSET 4 /* bytes 4-7: FECN/BECN/reserved, then the 24-bit destination QP */

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct fabric_balance_config);
} config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct fabric_balance_counters);
} counters SEC(".maps");

/* Bit i to bit 31 - i. */
static __always_inline __u32 reverse_bits(__u32 x)
{
  x = ((x >> 1) & 0x55555555U) | ((x & 0x55555555U) << 1);
  x = ((x >> 2) & 0x33333333U) | ((x & 0x33333333U) << 2);
  x = ((x >> 4) & 0x0f0f0f0fU) | ((x & 0x0f0f0f0fU) << 4);
  x = ((x >> 8) & 0x00ff00ffU) | ((x & 0x00ff00ffU) << 8);
  return (x >> 16) | (x << 16);
}

SEC("tc")
int fabric_balance(struct __sk_buff *skb)
{
  struct fabric_balance_config *cfg;
  struct fabric_balance_counters *c;
  struct collide_l4 l4;
  __u32 key = 0;
  __u32 hash;

  c = bpf_map_lookup_elem(&counters, &key);
  cfg = bpf_map_lookup_elem(&config, &key);
  if (!c || !cfg)
    return TC_ACT_UNSPEC;
  collide_parse_l4(skb, &l4);
  if (cfg->mode == FABRIC_BALANCE_ECMP || l4.ip_proto != IPPROTO_UDP || l4.dst_port != ROCE_PORT ||
      l4.dst_ip == 0 /* IPv6: left to the kernel */) {
    c->passed++;
    return TC_ACT_UNSPEC;
  }
  if (cfg->mode == FABRIC_BALANCE_QP_HASH) {
    __be32 word;
    if (bpf_skb_load_bytes(skb, l4.l4_offset + UDP_HEADER + BTH_DEST_QP_OFFSET, &word,
                           sizeof(word)) < 0) {
      c->passed++;
      return TC_ACT_UNSPEC;
    }
    const __u32 dest_qp = bpf_ntohl(word) & 0xffffff;
    hash = (__u32)collide_mix64(cfg->seed ^ (__u64)l4.dst_ip) + reverse_bits(dest_qp);
  } else {
    hash = (__u32)(collide_mix64(cfg->seed ^ (c->rehashed * 0x100000001b3ULL) ^
                       ((__u64)bpf_get_smp_processor_id() << 48)) >> 32);
  }
  /* The kernel treats hash 0 as "none computed yet". */
  hash = hash ? hash : 1;
  c->rehashed++;
  c->last_hash = hash;
  bpf_set_hash(skb, hash);
  return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
