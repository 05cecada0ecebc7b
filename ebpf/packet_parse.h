// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Header parsing shared by collide's tc programs. Reads through bpf_skb_load_bytes so that
 * non-linear skbs (GRO, veth with offloads) parse the same as linear ones. */
#pragma once

#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

struct collide_l4 {
  __u8 ip_proto;  /* 0 when the frame is not IPv4/IPv6 */
  __u16 dst_port; /* host order; 0 without a UDP/TCP header */
  __u32 l4_offset;
  __be32 dst_ip;  /* IPv4 destination; 0 for IPv6 and non-IP frames */
};

#define COLLIDE_ETH_P_8021Q 0x8100

/* RoCEv2: the BTH follows the UDP header, on this destination port. */
#define ROCE_PORT 4791
#define UDP_HEADER 8

static __always_inline void collide_parse_l4(struct __sk_buff *skb, struct collide_l4 *out)
{
  __u32 off = ETH_HLEN;
  __be16 proto;

  out->ip_proto = 0;
  out->dst_port = 0;
  out->l4_offset = 0;
  out->dst_ip = 0;
  if (bpf_skb_load_bytes(skb, 12, &proto, sizeof(proto)) < 0)
    return;
  if (proto == bpf_htons(COLLIDE_ETH_P_8021Q)) {
    if (bpf_skb_load_bytes(skb, 16, &proto, sizeof(proto)) < 0)
      return;
    off += 4;
  }
  if (proto == bpf_htons(ETH_P_IP)) {
    struct iphdr ip;
    if (bpf_skb_load_bytes(skb, off, &ip, sizeof(ip)) < 0)
      return;
    out->ip_proto = ip.protocol;
    out->dst_ip = ip.daddr;
    /* Only the first fragment carries the ports. */
    if (ip.frag_off & bpf_htons(0x1fff))
      return;
    off += ip.ihl * 4;
  } else if (proto == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr ip6;
    if (bpf_skb_load_bytes(skb, off, &ip6, sizeof(ip6)) < 0)
      return;
    out->ip_proto = ip6.nexthdr;
    off += sizeof(ip6);
  } else {
    return;
  }
  if (out->ip_proto == IPPROTO_UDP || out->ip_proto == IPPROTO_TCP) {
    __be16 ports[2];
    if (bpf_skb_load_bytes(skb, off, ports, sizeof(ports)) < 0)
      return;
    out->dst_port = bpf_ntohs(ports[1]);
    out->l4_offset = off;
  }
}
