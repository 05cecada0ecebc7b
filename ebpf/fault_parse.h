// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Packet parsing for the fault injector: everything a rule can match on, read once per packet
 * through bpf_skb_load_bytes on tc and bpf_xdp_load_bytes on XDP (so non-linear skbs and
 * multi-buffer frames parse the same as linear ones, and both hooks share one parser). IPv6
 * extension headers are not walked: a packet whose next header is one has no ports for the
 * rules. */
#pragma once

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "fault_maps.h"

#define FAULT_ETH_P_8021Q 0x8100
#define FAULT_UDP_HEADER 8
#define FAULT_BTH_SIZE 12

struct fault_pkt {
  __u64 src[2]; /* IPv6, or IPv4-mapped IPv6, as in collide_fault_prefix */
  __u64 dst[2];
  __u32 len;         /* the frame's length from the Ethernet header (skb->len on tc) */
  __u32 l3_off;
  __u32 l4_off;      /* 0: no UDP/TCP header */
  __u32 payload_off; /* first byte after the UDP/TCP header */
  __u32 qp;
  __u32 psn;
  __u16 sport, dport; /* host order */
  __u16 csum_off;     /* offset of the UDP/TCP checksum; 0 without one */
  __u8 family;        /* 4, 6, or 0 when not IP */
  __u8 l4_proto;
  __u8 tos;           /* DSCP << 2 | ECN */
  __u8 roce;          /* UDP to 4791 with a whole BTH */
  __u8 opcode;
  __u8 icmp6_type;
};

/* ::ffff:a.b.c.d: bytes 10 and 11 are 0xff, the IPv4 address is bytes 12..15. */
static __always_inline void fault_map_v4(__u64 *out, __be32 addr)
{
  __u8 bytes[16] = {0};

  bytes[10] = 0xff;
  bytes[11] = 0xff;
  __builtin_memcpy(&bytes[12], &addr, 4);
  __builtin_memcpy(out, bytes, 16);
}

/* Reads `len` bytes at `off` from a tc (`xdp` 0, ctx a __sk_buff) or XDP (ctx an xdp_md) packet.
 * Every caller passes a constant `xdp` into always-inlined code, so each program keeps only its
 * own helper and the verifier never sees a context of the wrong type. */
static __always_inline long fault_load(void *ctx, const int xdp, __u32 off, void *to, __u32 len)
{
  if (xdp)
    return bpf_xdp_load_bytes(ctx, off, to, len);
  return bpf_skb_load_bytes(ctx, off, to, len);
}

static __always_inline long fault_store(void *ctx, const int xdp, __u32 off, void *from,
                                        __u32 len, __u64 skb_flags)
{
  if (xdp)
    return bpf_xdp_store_bytes(ctx, off, from, len);
  return bpf_skb_store_bytes(ctx, off, from, len, skb_flags);
}

/* `len` is the whole frame's length: skb->len, or bpf_xdp_get_buff_len() on XDP. */
static __always_inline void fault_parse(void *ctx, const int xdp, __u32 len, struct fault_pkt *p)
{
  __u32 off = ETH_HLEN;
  __be16 proto;

  __builtin_memset(p, 0, sizeof(*p));
  p->len = len;
  if (fault_load(ctx, xdp, 12, &proto, sizeof(proto)) < 0)
    return;
  if (proto == bpf_htons(FAULT_ETH_P_8021Q)) {
    if (fault_load(ctx, xdp, 16, &proto, sizeof(proto)) < 0)
      return;
    off += 4;
  }
  p->l3_off = off;
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr ip;
    if (fault_load(ctx, xdp, off, &ip, sizeof(ip)) < 0)
      return;
    p->family = 4;
    p->l4_proto = ip.protocol;
    p->tos = ip.tos;
    fault_map_v4(p->src, ip.saddr);
    fault_map_v4(p->dst, ip.daddr);
    /* Only the first fragment carries the ports. */
    if (ip.frag_off & bpf_htons(0x1fff))
      return;
    off += ip.ihl * 4;
  } else if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr ip6;
    if (fault_load(ctx, xdp, off, &ip6, sizeof(ip6)) < 0)
      return;
    p->family = 6;
    p->l4_proto = ip6.nexthdr;
    p->tos = (ip6.priority << 4) | (ip6.flow_lbl[0] >> 4);
    __builtin_memcpy(p->src, &ip6.saddr, 16);
    __builtin_memcpy(p->dst, &ip6.daddr, 16);
    off += sizeof(ip6);
  } else {
    return;
  }

  if (p->l4_proto == IPPROTO_UDP || p->l4_proto == IPPROTO_TCP) {
    __be16 ports[2];
    if (fault_load(ctx, xdp, off, ports, sizeof(ports)) < 0)
      return;
    p->sport = bpf_ntohs(ports[0]);
    p->dport = bpf_ntohs(ports[1]);
    p->l4_off = off;
    if (p->l4_proto == IPPROTO_UDP) {
      p->csum_off = off + 6;
      p->payload_off = off + FAULT_UDP_HEADER;
    } else {
      __u8 doff;
      if (fault_load(ctx, xdp, off + 12, &doff, 1) < 0)
        return;
      p->csum_off = off + 16;
      p->payload_off = off + (doff >> 4) * 4;
    }
  } else if (p->l4_proto == IPPROTO_ICMPV6) {
    fault_load(ctx, xdp, off, &p->icmp6_type, 1);
    return;
  }

  if (p->l4_proto == IPPROTO_UDP && p->dport == COLLIDE_FAULT_ROCE_PORT) {
    __u8 bth[FAULT_BTH_SIZE];
    if (fault_load(ctx, xdp, p->payload_off, bth, sizeof(bth)) < 0)
      return;
    p->roce = 1;
    p->opcode = bth[0];
    p->qp = ((__u32)bth[5] << 16) | ((__u32)bth[6] << 8) | bth[7];
    p->psn = ((__u32)bth[9] << 16) | ((__u32)bth[10] << 8) | bth[11];
  }
}
