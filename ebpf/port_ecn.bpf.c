// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* WRED-style ECN marking on a switch port's egress, in front of the port's tbf shaper.
 *
 * A switch marks on the depth of the port's queue. The kernel's RED qdisc would see that depth, but
 * not every kernel has it; a tc program cannot read a qdisc's backlog, so it models it instead: the
 * same bytes enter (every frame that reaches the port), the same rate drains it (the shaper's), so
 * the model follows the real queue, less the shaper's burst allowance, which leaves at once. Between
 * Kmin and Kmax an ECN-capable frame is marked CE with a probability rising linearly to Pmax, and a
 * frame that is not ECN-capable is dropped instead; beyond Kmax every such frame is. Frames beyond
 * the buffer are left to the shaper's queue, which drops them at its end.
 *
 * RoCE's own control frames (ACK/NAK and CNP) are never dropped early: a RoCE fabric sets its WRED
 * profile on the data class and carries CNPs in a priority of their own, so congestion notices
 * reach the senders however full the data queue; the replay sends them not ECN-capable. */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "packet_parse.h"
#include "port_ecn.h"

#define IP_CHECKSUM_OFFSET 10
#define ECN_MASK 0x03
#define ECN_CE 0x03
#define MAX_IDLE_NS 1000000000ull /* longer idle drains as much: keeps the product in 64 bits */
#define OPCODE_ACKNOWLEDGE 0x11
#define OPCODE_CNP 0x81

/* Set before loading. */
const volatile __u64 rate_bytes_per_s = 0;
const volatile __u64 burst_bytes = 0;
const volatile __u64 buffer_bytes = 0;
const volatile __u64 kmin_bytes = 0;
const volatile __u64 kmax_bytes = 0;
const volatile __u64 pmax_threshold = 0; /* Pmax * 2^32 */

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct port_ecn_state);
} state SEC(".maps");

static __always_inline int is_roce_control(struct __sk_buff *skb)
{
  struct collide_l4 l4;
  __u8 opcode;

  collide_parse_l4(skb, &l4);
  if (l4.ip_proto != IPPROTO_UDP || l4.dst_port != ROCE_PORT)
    return 0;
  if (bpf_skb_load_bytes(skb, l4.l4_offset + UDP_HEADER, &opcode, 1) < 0)
    return 0;
  return opcode == OPCODE_ACKNOWLEDGE || opcode == OPCODE_CNP;
}

/* The draw below which a frame at `queue` bytes is acted on. */
static __always_inline __u64 threshold_at(__u64 queue)
{
  if (queue < kmin_bytes)
    return 0;
  if (queue >= kmax_bytes || kmax_bytes == kmin_bytes)
    return 1ull << 32;
  return pmax_threshold * (queue - kmin_bytes) / (kmax_bytes - kmin_bytes);
}

SEC("tc")
int port_ecn_egress(struct __sk_buff *skb)
{
  __u32 zero = 0;
  struct port_ecn_state *s = bpf_map_lookup_elem(&state, &zero);
  __u64 now = bpf_ktime_get_ns();
  __u64 len = skb->len;
  __u64 queue, elapsed, drained;
  int fits;

  if (!s)
    return TC_ACT_UNSPEC;
  bpf_spin_lock(&s->lock);
  elapsed = now - s->last_ns;
  if (elapsed > MAX_IDLE_NS)
    elapsed = MAX_IDLE_NS;
  drained = elapsed * rate_bytes_per_s / 1000000000ull;
  s->depth = s->depth > drained ? s->depth - drained : 0;
  s->last_ns = now;
  queue = s->depth > burst_bytes ? s->depth - burst_bytes : 0;
  fits = queue + len <= buffer_bytes;
  if (fits)
    s->depth += len;
  bpf_spin_unlock(&s->lock);
  if (!fits || (__u64)bpf_get_prandom_u32() >= threshold_at(queue))
    return TC_ACT_UNSPEC;

  if (skb->protocol != bpf_htons(ETH_P_IP))
    return TC_ACT_UNSPEC;
  /* The IPv4 header's first 16-bit word: version/IHL, then TOS (DSCP and ECN). */
  __u16 word, marked_word;
  if (bpf_skb_load_bytes(skb, ETH_HLEN, &word, sizeof(word)) < 0)
    return TC_ACT_UNSPEC;
  __u8 *tos = (__u8 *)&marked_word;
  marked_word = word;
  if ((tos[1] & ECN_MASK) == 0) {
    if (is_roce_control(skb))
      return TC_ACT_UNSPEC;
    /* Not ECN-capable: WRED drops it; it never enters the queue. */
    bpf_spin_lock(&s->lock);
    s->depth = s->depth > len ? s->depth - len : 0;
    s->early_drops++;
    bpf_spin_unlock(&s->lock);
    return TC_ACT_SHOT;
  }
  if ((tos[1] & ECN_MASK) == ECN_CE)
    return TC_ACT_UNSPEC; /* marked upstream already */
  tos[1] |= ECN_CE;
  if (bpf_skb_store_bytes(skb, ETH_HLEN, &marked_word, sizeof(marked_word), 0) < 0)
    return TC_ACT_UNSPEC;
  bpf_l3_csum_replace(skb, ETH_HLEN + IP_CHECKSUM_OFFSET, word, marked_word, sizeof(word));
  __sync_fetch_and_add(&s->marked, 1);
  return TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
