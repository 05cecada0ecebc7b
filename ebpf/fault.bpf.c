// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* collide's per-packet fault injector: a table of up to 64 rules, evaluated in order for every
 * IP packet on a tc (TCX) hook or XDP, after an allowlist that always passes control traffic.
 *
 * A rule matches on interface, direction, addresses, L4 protocol, ports, DSCP/ECN and, for
 * RoCEv2, on BTH opcode, destination QP and PSN. Inside its time window it chooses packets
 * (always, Bernoulli, Gilbert-Elliott, 4-state Markov, listed PSNs, every Nth, beyond a token
 * bucket) and drops, corrupts, duplicates or ECN-marks them. Ingress can also run on XDP
 * (fault_xdp): the same rules and state, every action but duplicate. A drop ends the evaluation; other
 * actions let later rules see the packet too.
 *
 * Random choices are counter-based: a hash of (seed, rule, flow, the packet's number within its
 * flow for that rule, stream). So the same seed picks the same packets whatever CPU runs them.
 *
 * Everything sits behind a lease: past the expiry user space keeps renewing, all rules are inert
 * and packets pass, so faults never outlive the process that set them. */
#include <linux/bpf.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_helpers.h>

#include "fault_parse.h"
#include "fault_maps.h"

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct collide_fault_config);
} config SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct collide_fault_lease);
} lease SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, COLLIDE_FAULT_MAX_RULES);
  __type(key, __u32);
  __type(value, struct collide_fault_rule);
} rules SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, COLLIDE_FAULT_MAX_RULES);
  __type(key, __u32);
  __type(value, struct collide_fault_counters);
} counters SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct collide_fault_stats);
} stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, COLLIDE_FAULT_MAX_RULES);
  __type(key, __u32);
  __type(value, struct collide_fault_rule_state);
} rule_state SEC(".maps");

/* Matching packets per rule over all CPUs, for "every Nth". */
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, COLLIDE_FAULT_MAX_RULES);
  __type(key, __u32);
  __type(value, __u64);
} rule_seen SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct collide_fault_flow_key);
  __type(value, struct collide_fault_flow_state);
} flow_state SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 65536);
  __type(key, struct collide_fault_psn_key);
  __type(value, __u8);
} psn_list SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 8 << 20);
} events SEC(".maps");

/* SplitMix64's finalizer: a strong 64-bit mix. */
static __always_inline __u64 mix64(__u64 z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* 32 random bits for (seed, rule, flow, index, stream); no state, so no CPU dependence. */
static __always_inline __u64 draw32(__u64 seed, __u32 rule_id, __u64 flow_hash, __u64 index,
                                    __u32 stream)
{
  __u64 key = mix64(seed ^ (((__u64)rule_id << 32) | stream));
  return mix64(mix64(key ^ flow_hash) + index) >> 32;
}

static __always_inline __u64 flow_hash_of(const struct fault_pkt *p)
{
  __u64 h = mix64(p->src[0] ^ 0x5eed);
  h = mix64(h ^ p->src[1]);
  h = mix64(h ^ p->dst[0]);
  h = mix64(h ^ p->dst[1]);
  return mix64(h ^ (((__u64)p->sport << 24) | ((__u64)p->dport << 8) | p->l4_proto));
}

static __always_inline int in_prefix(const __u64 *addr, const struct collide_fault_prefix *pfx)
{
  return (addr[0] & pfx->mask[0]) == pfx->net[0] && (addr[1] & pfx->mask[1]) == pfx->net[1];
}

struct eval_ctx {
  struct fault_pkt pkt;
  __u64 now;
  __u64 flow_hash;
  __u32 rule_count;
  __u32 ifindex;
  __u8 direction;
  __u8 events;
  /* What the rules decided, applied after the loop. */
  __u8 drop;
  __u8 corrupt;
  __u8 corrupt_silent;
  __u8 corrupt_xor;
  __u8 ecn;
  __u8 duplicate;
  __u16 corrupt_offset;
};

static __always_inline int rule_matches(const struct collide_fault_rule *r,
                                        const struct eval_ctx *c)
{
  const struct collide_fault_match *m = &r->match;
  const struct fault_pkt *p = &c->pkt;

  if (m->directions && !(m->directions & c->direction))
    return 0;
  if (m->ifindex && m->ifindex != c->ifindex)
    return 0;
  if (m->l4_proto && m->l4_proto != p->l4_proto)
    return 0;
  if (!((m->dscp_mask >> (p->tos >> 2)) & 1))
    return 0;
  if (!((m->ecn_mask >> (p->tos & 3)) & 1))
    return 0;
  if (!in_prefix(p->src, &m->src) || !in_prefix(p->dst, &m->dst))
    return 0;
  if (p->sport < m->sport_lo || p->sport > m->sport_hi)
    return 0;
  if (p->dport < m->dport_lo || p->dport > m->dport_hi)
    return 0;
  if (r->flags & COLLIDE_FAULT_F_ROCE) {
    if (!p->roce)
      return 0;
    if (!((m->opcodes[(p->opcode >> 6) & 3] >> (p->opcode & 63)) & 1))
      return 0;
    if (p->qp < m->qp_lo || p->qp > m->qp_hi)
      return 0;
    if (p->psn < m->psn_lo || p->psn > m->psn_hi)
      return 0;
  }
  return 1;
}

/* Whether the token bucket lacks room for `len` bytes (the packet is beyond the rate). */
static __always_inline int police_exceeds(__u32 index, const struct collide_fault_rule *r,
                                          __u64 now, __u32 len)
{
  struct collide_fault_rule_state *s = bpf_map_lookup_elem(&rule_state, &index);
  const __u64 cap = r->police.burst_bytes * 1000000ULL;
  const __u64 need = (__u64)len * 1000000ULL;
  int exceeds = 0;

  if (!s)
    return 0;
  bpf_spin_lock(&s->lock);
  if (s->last_ns == 0) {
    s->tokens_micro = cap; /* a bucket starts full */
    s->last_ns = now;
  } else if (now > s->last_ns) {
    __u64 elapsed_us = (now - s->last_ns) / 1000;
    /* Past 100 s any sane bucket is full; the cap also keeps rate x time within 64 bits. */
    if (elapsed_us > 100000000ULL)
      elapsed_us = 100000000ULL;
    s->tokens_micro += elapsed_us * r->police.rate_bytes_per_s;
    if (s->tokens_micro > cap)
      s->tokens_micro = cap;
    s->last_ns += elapsed_us * 1000;
  }
  if (s->tokens_micro >= need)
    s->tokens_micro -= need;
  else
    exceeds = 1;
  bpf_spin_unlock(&s->lock);
  return exceeds;
}

static __always_inline __u32 gilbert_step(const struct collide_fault_rule *r, __u32 state,
                                          __u64 u)
{
  if (state == 0)
    return u < r->gilbert.p ? 1 : 0;
  return u < r->gilbert.r ? 0 : 1;
}

static __always_inline __u32 markov4_step(const struct collide_fault_rule *r, __u32 state,
                                          __u64 u)
{
  const struct collide_fault_markov4 *m = &r->markov4;

  switch (state) {
  case 2:
    return u < m->p23 ? 3 : 2;
  case 3:
    if (u < m->p31)
      return 1;
    return u < m->p31 + m->p32 ? 2 : 3;
  case 4:
    return 1;
  default:
    if (u < m->p13)
      return 3;
    return u < m->p13 + m->p14 ? 4 : 1;
  }
}

static __always_inline void record_event(const struct eval_ctx *c,
                                         const struct collide_fault_rule *r, __u64 flow_index)
{
  struct collide_fault_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

  if (!e) {
    __u32 zero = 0;
    struct collide_fault_stats *st = bpf_map_lookup_elem(&stats, &zero);
    if (st)
      st->events_lost++;
    return;
  }
  e->time_ns = c->now;
  e->flow_hash = c->flow_hash;
  e->flow_index = flow_index;
  e->rule_id = r->id;
  e->ifindex = c->ifindex;
  e->psn = c->pkt.roce ? c->pkt.psn : 0;
  e->qp = c->pkt.roce ? c->pkt.qp : 0;
  e->length = c->pkt.len;
  e->action = r->action;
  e->direction = c->direction;
  e->l4_proto = c->pkt.l4_proto;
  e->roce = c->pkt.roce;
  bpf_ringbuf_submit(e, 0);
}

/* One rule for one packet (a bpf_loop callback). Returns 1 to stop: the packet is dropped. */
static long eval_rule(__u32 index, struct eval_ctx *c)
{
  struct collide_fault_rule *r;
  struct collide_fault_counters *cnt;
  struct collide_fault_flow_state *fs;
  struct collide_fault_flow_key key = {};
  __u64 flow_index;
  int act = 0;

  if (index >= COLLIDE_FAULT_MAX_RULES || index >= c->rule_count)
    return 1;
  r = bpf_map_lookup_elem(&rules, &index);
  if (!r)
    return 1;
  if (!rule_matches(r, c))
    return 0;
  if ((r->start_ns && c->now < r->start_ns) || (r->end_ns && c->now >= r->end_ns))
    return 0;
  cnt = bpf_map_lookup_elem(&counters, &index);
  if (!cnt)
    return 0;
  cnt->matched++;

  key.flow_hash = c->flow_hash;
  key.rule = index;
  fs = bpf_map_lookup_elem(&flow_state, &key);
  if (!fs) {
    struct collide_fault_flow_state fresh = {};
    fresh.state = r->decider == COLLIDE_FAULT_DECIDE_MARKOV4 ? 1 : 0;
    bpf_map_update_elem(&flow_state, &key, &fresh, BPF_NOEXIST);
    fs = bpf_map_lookup_elem(&flow_state, &key);
    if (!fs)
      return 0;
  }
  flow_index = __sync_fetch_and_add(&fs->packets, 1);

  switch (r->decider) {
  case COLLIDE_FAULT_DECIDE_ALWAYS:
    act = 1;
    break;
  case COLLIDE_FAULT_DECIDE_BERNOULLI:
    act = draw32(r->seed, r->id, c->flow_hash, flow_index, 0) < r->probability;
    break;
  case COLLIDE_FAULT_DECIDE_GILBERT: {
    /* Move first, then lose with the loss probability of the state moved to. */
    __u32 s = gilbert_step(r, fs->state, draw32(r->seed, r->id, c->flow_hash, flow_index, 0));
    fs->state = s;
    act = draw32(r->seed, r->id, c->flow_hash, flow_index, 1) <
          (s ? r->gilbert.loss_bad : r->gilbert.loss_good);
    break;
  }
  case COLLIDE_FAULT_DECIDE_MARKOV4: {
    __u32 s = markov4_step(r, fs->state, draw32(r->seed, r->id, c->flow_hash, flow_index, 0));
    fs->state = s;
    act = s == 3 || s == 4;
    break;
  }
  case COLLIDE_FAULT_DECIDE_PSN_LIST: {
    struct collide_fault_psn_key pk = {.rule = index, .psn = c->pkt.psn};
    act = c->pkt.roce && bpf_map_lookup_elem(&psn_list, &pk) != 0;
    break;
  }
  case COLLIDE_FAULT_DECIDE_EVERY_NTH: {
    __u64 *seen = bpf_map_lookup_elem(&rule_seen, &index);
    if (seen && r->every_nth) {
      __u64 n = __sync_fetch_and_add(seen, 1) + 1;
      act = n % r->every_nth == 0;
    }
    break;
  }
  case COLLIDE_FAULT_DECIDE_POLICE:
    act = police_exceeds(index, r, c->now, c->pkt.len);
    break;
  default:
    break;
  }
  /* Corruption needs a byte beyond the L4 header to flip (and a whole 16-bit word). */
  if (act && r->action == COLLIDE_FAULT_ACT_CORRUPT &&
      (!c->pkt.payload_off || c->pkt.len < c->pkt.payload_off + 2))
    act = 0;
  if (!act)
    return 0;

  cnt->acted++;
  cnt->bytes_acted += c->pkt.len;
  if (!cnt->first_ns)
    cnt->first_ns = c->now;
  cnt->last_ns = c->now;
  if (c->events && (r->flags & COLLIDE_FAULT_F_LOG))
    record_event(c, r, flow_index);

  switch (r->action) {
  case COLLIDE_FAULT_ACT_DROP:
    c->drop = 1;
    return 1;
  case COLLIDE_FAULT_ACT_CORRUPT:
    if (!c->corrupt) {
      c->corrupt = 1;
      c->corrupt_silent = (r->flags & COLLIDE_FAULT_F_CORRUPT_SILENT) != 0;
      c->corrupt_offset = r->corrupt_offset;
      c->corrupt_xor = r->corrupt_xor ? r->corrupt_xor : 0xff;
    }
    return 0;
  case COLLIDE_FAULT_ACT_DUPLICATE:
    c->duplicate = 1;
    return 0;
  case COLLIDE_FAULT_ACT_ECN_CE:
    c->ecn = 1;
    return 0;
  }
  return 0;
}

static __always_inline int allowlisted(const struct fault_pkt *p,
                                       const struct collide_fault_allowlist *a)
{
  /* IPv6 neighbour discovery (router/neighbour solicitations and advertisements, redirects). */
  if (p->l4_proto == IPPROTO_ICMPV6 && p->icmp6_type >= 133 && p->icmp6_type <= 137)
    return 1;
  if (p->l4_off && p->l4_proto == IPPROTO_TCP) {
    for (int i = 0; i < COLLIDE_FAULT_MAX_ALLOW_PORTS; i++) {
      if (i >= a->tcp_port_count)
        break;
      if (a->tcp_ports[i] == p->sport || a->tcp_ports[i] == p->dport)
        return 1;
    }
  }
  if (p->l4_off && p->l4_proto == IPPROTO_UDP) {
    for (int i = 0; i < COLLIDE_FAULT_MAX_ALLOW_PORTS; i++) {
      if (i >= a->udp_port_count)
        break;
      if (a->udp_ports[i] == p->sport || a->udp_ports[i] == p->dport)
        return 1;
    }
  }
  for (int i = 0; i < COLLIDE_FAULT_MAX_ALLOW_PREFIXES; i++) {
    if (i >= a->prefix_count)
      break;
    if (in_prefix(p->src, &a->prefixes[i]) || in_prefix(p->dst, &a->prefixes[i]))
      return 1;
  }
  return 0;
}

/* RFC 1624's incremental update of a one's-complement checksum for one 16-bit word. Every value
 * is in the same (memory) byte order, which one's-complement sums do not care about. */
static __always_inline __u16 csum_replace_word(__u16 csum, __u16 old_word, __u16 new_word)
{
  __u32 sum = (__u32)(__u16)~csum + (__u16)~old_word + new_word;

  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return (__u16)~sum;
}

/* XDP has no checksum helpers and no skb->csum to keep: the checksum is patched by hand. */
static __always_inline void xdp_fix_l4_csum(void *ctx, const struct fault_pkt *p, __u16 old_word,
                                            __u16 new_word)
{
  __u16 csum;

  if (fault_load(ctx, 1, p->csum_off, &csum, 2) < 0)
    return;
  /* A zero UDP checksum means none (RoCEv2 senders leave it so): it stays zero. */
  if (p->l4_proto == IPPROTO_UDP && csum == 0)
    return;
  csum = csum_replace_word(csum, old_word, new_word);
  if (p->l4_proto == IPPROTO_UDP && csum == 0)
    csum = 0xffff; /* UDP sends a computed zero as all ones */
  fault_store(ctx, 1, p->csum_off, &csum, 2, 0);
}

static __always_inline void apply_corrupt(void *ctx, const int xdp, const struct eval_ctx *c)
{
  const struct fault_pkt *p = &c->pkt;
  __u32 payload_len = p->len - p->payload_off; /* >= 2, checked by the rule */
  __u32 rel = c->corrupt_offset == 0xffff ? payload_len / 2 : c->corrupt_offset;
  __u32 word_off;
  __u16 old_word, new_word;

  if (rel > payload_len - 1)
    rel = payload_len - 1;
  rel += p->payload_off - p->l4_off; /* from the L4 header, whose length is even */
  word_off = p->l4_off + (rel & ~1u);
  if (word_off + 2 > p->len) {
    rel -= 1; /* the last byte at an even offset has no partner: flip the one before */
    word_off = p->l4_off + (rel & ~1u);
  }
  if (fault_load(ctx, xdp, word_off, &old_word, 2) < 0)
    return;
  /* Words are loaded in memory order onto a little-endian machine: byte 1 is the high half. */
  new_word = old_word ^ ((rel & 1) ? (__u16)c->corrupt_xor << 8 : (__u16)c->corrupt_xor);
  if (xdp) {
    /* Before any skb exists, so there is no skb->csum to keep consistent: a stale checksum
     * reaches the receiver's UDP/TCP layer as it is. */
    fault_store(ctx, 1, word_off, &new_word, 2, 0);
    if (c->corrupt_silent && p->csum_off)
      xdp_fix_l4_csum(ctx, p, old_word, new_word);
  } else if (c->corrupt_silent && p->csum_off) {
    /* The word's change and the checksum's change cancel in the packet's sum, so a
     * CHECKSUM_COMPLETE skb stays consistent without recomputing. A zero UDP checksum (none,
     * as RoCEv2 senders leave it) stays zero. */
    bpf_skb_store_bytes(ctx, word_off, &new_word, 2, 0);
    bpf_l4_csum_replace(ctx, p->csum_off, old_word, new_word,
                        2 | (p->l4_proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0));
  } else {
    /* Stale checksum: the receiver's UDP/TCP layer sees the damage. Recompute skb->csum so a
     * CHECKSUM_COMPLETE skb does not hide it. */
    bpf_skb_store_bytes(ctx, word_off, &new_word, 2, BPF_F_RECOMPUTE_CSUM);
  }
}

static __always_inline void apply_ecn_ce(void *ctx, const int xdp, const struct fault_pkt *p)
{
  __u16 old_word, new_word;

  /* Loaded in memory order onto a little-endian machine: byte 1 is the high half. */
  if (fault_load(ctx, xdp, p->l3_off, &old_word, 2) < 0)
    return;
  if (p->family == 4) {
    new_word = old_word | 0x0300; /* TOS byte: ECN is its low two bits */
    fault_store(ctx, xdp, p->l3_off, &new_word, 2, 0);
    if (xdp) {
      __u16 csum;
      if (fault_load(ctx, 1, p->l3_off + 10, &csum, 2) < 0)
        return;
      csum = csum_replace_word(csum, old_word, new_word);
      fault_store(ctx, 1, p->l3_off + 10, &csum, 2, 0);
    } else {
      bpf_l3_csum_replace(ctx, p->l3_off + 10, old_word, new_word, 2);
    }
  } else {
    new_word = old_word | 0x3000; /* traffic class straddles bytes 0 and 1; ECN is 0x30 of byte 1 */
    fault_store(ctx, xdp, p->l3_off, &new_word, 2, 0);
  }
}

static __always_inline void apply_duplicate(struct __sk_buff *skb, __u8 direction)
{
  __u32 mark = skb->mark;

  /* The copy carries our mark through the hook it re-enters; the original keeps its own. */
  skb->mark = COLLIDE_FAULT_DUP_MARK;
  bpf_clone_redirect(skb, skb->ifindex,
                     direction == COLLIDE_FAULT_DIR_INGRESS ? BPF_F_INGRESS : 0);
  skb->mark = mark;
}

/* Verdicts of the two hook types. */
#define FAULT_PASS(xdp) ((xdp) ? XDP_PASS : TC_ACT_UNSPEC)
#define FAULT_DROP(xdp) ((xdp) ? XDP_DROP : TC_ACT_SHOT)

/* The whole per-packet path for tc (`xdp` 0, ctx a __sk_buff) and XDP (ctx an xdp_md); always
 * inlined with a constant `xdp`, so each program holds only its own half of every branch on it.
 * The rule evaluation (eval_rule) and the maps are one and the same for both. */
static __always_inline int fault_run(void *ctx, const int xdp, __u8 direction)
{
  __u32 zero = 0;
  struct collide_fault_stats *st = bpf_map_lookup_elem(&stats, &zero);
  struct collide_fault_config *cfg;
  struct collide_fault_lease *l;
  struct eval_ctx c = {};

  if (!st)
    return FAULT_PASS(xdp);
  st->packets++;
  /* XDP runs before any skb, so no copy of ours can come back through it. */
  if (!xdp && ((struct __sk_buff *)ctx)->mark == COLLIDE_FAULT_DUP_MARK)
    return FAULT_PASS(xdp);
  fault_parse(ctx, xdp,
              xdp ? (__u32)bpf_xdp_get_buff_len(ctx) : ((struct __sk_buff *)ctx)->len, &c.pkt);
  /* Not IP (ARP, LLDP, ...): rules match IP packets only. */
  if (!c.pkt.family) {
    st->allowed++;
    return FAULT_PASS(xdp);
  }
  cfg = bpf_map_lookup_elem(&config, &zero);
  if (!cfg)
    return FAULT_PASS(xdp);
  if (allowlisted(&c.pkt, &cfg->allow)) {
    st->allowed++;
    return FAULT_PASS(xdp);
  }
  c.now = bpf_ktime_get_ns();
  l = bpf_map_lookup_elem(&lease, &zero);
  if (!l || c.now >= l->expiry_ns) {
    st->inert++;
    return FAULT_PASS(xdp);
  }
  c.rule_count = cfg->rule_count;
  if (c.rule_count > COLLIDE_FAULT_MAX_RULES)
    c.rule_count = COLLIDE_FAULT_MAX_RULES;
  c.events = cfg->events != 0;
  c.ifindex = xdp ? ((struct xdp_md *)ctx)->ingress_ifindex : ((struct __sk_buff *)ctx)->ifindex;
  c.direction = direction;
  c.flow_hash = flow_hash_of(&c.pkt);

  bpf_loop(c.rule_count, eval_rule, &c, 0);

  if (c.drop)
    return FAULT_DROP(xdp);
  if (c.corrupt)
    apply_corrupt(ctx, xdp, &c);
  if (c.ecn)
    apply_ecn_ce(ctx, xdp, &c.pkt);
  /* XDP cannot copy a frame: the loader refuses duplicate rules for it. */
  if (!xdp && c.duplicate)
    apply_duplicate(ctx, direction);
  return FAULT_PASS(xdp);
}

SEC("tc")
int fault_ingress(struct __sk_buff *skb)
{
  return fault_run(skb, 0, COLLIDE_FAULT_DIR_INGRESS);
}

SEC("tc")
int fault_egress(struct __sk_buff *skb)
{
  return fault_run(skb, 0, COLLIDE_FAULT_DIR_EGRESS);
}

/* Ingress on XDP: drops cost no skb, which matters at line rate. Same rules, same state.
 * Multi-buffer aware ("xdp.frags"): every packet access goes through the load/store helpers, so
 * jumbo-MTU devices (RoCE fabrics run 4200 or 9000) can take it too. */
SEC("xdp.frags")
int fault_xdp(struct xdp_md *xdp)
{
  return fault_run(xdp, 1, COLLIDE_FAULT_DIR_INGRESS);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
