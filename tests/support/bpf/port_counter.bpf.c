// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Counts packets and bytes per (interface, direction, IP protocol, destination port). Attached on
 * tc ingress/egress (TCX or clsact); it never changes a packet's fate, so its counts are the ground
 * truth other components are checked against. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_helpers.h>

#include "packet_parse.h"
#include "port_counter_maps.h"

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
  __uint(max_entries, PORT_COUNTER_MAX_ENTRIES);
  __type(key, struct port_counter_key);
  __type(value, struct port_counter_value);
} port_counters SEC(".maps");

static __always_inline int count_packet(struct __sk_buff *skb, __u8 direction)
{
  struct port_counter_key key = {};
  struct collide_l4 l4;
  struct port_counter_value *value;

  collide_parse_l4(skb, &l4);
  key.ifindex = skb->ifindex;
  key.direction = direction;
  key.ip_proto = l4.ip_proto;
  key.dst_port = l4.dst_port;

  /* Per-CPU values: plain increments are safe. */
  value = bpf_map_lookup_elem(&port_counters, &key);
  if (!value) {
    struct port_counter_value first = {};
    /* Another CPU may insert the key between lookup and update; either way it then exists. */
    bpf_map_update_elem(&port_counters, &key, &first, BPF_NOEXIST);
    value = bpf_map_lookup_elem(&port_counters, &key);
    if (!value)
      return TC_ACT_UNSPEC; /* the map is full */
  }
  value->packets++;
  value->bytes += skb->len;
  /* UNSPEC: let the next program (or the default action) decide, under TCX and clsact alike. */
  return TC_ACT_UNSPEC;
}

SEC("tc")
int count_ingress(struct __sk_buff *skb)
{
  return count_packet(skb, COLLIDE_DIR_INGRESS);
}

SEC("tc")
int count_egress(struct __sk_buff *skb)
{
  return count_packet(skb, COLLIDE_DIR_EGRESS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
