// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Map layouts of the fault injector, shared by ebpf/fault.bpf.c and its loader
 * (injectors/fault_injector.*). Plain C with fixed-width fields so both compilers agree on every
 * offset; user space fills these from the rule model in injectors/fault_rules.h. */
#pragma once

#include <linux/bpf.h>
#include <linux/types.h>

#define COLLIDE_FAULT_MAX_RULES 64
#define COLLIDE_FAULT_MAX_ALLOW_PORTS 16
#define COLLIDE_FAULT_MAX_ALLOW_PREFIXES 8
#define COLLIDE_FAULT_ROCE_PORT 4791
/* skb->mark of the copies made by the duplicate action, so the program lets them through instead
 * of acting on them again when they come back through the same hook. */
#define COLLIDE_FAULT_DUP_MARK 0xc011de5eu

/* Which packets a rule acts on: how they are chosen. */
enum collide_fault_decider {
  COLLIDE_FAULT_DECIDE_ALWAYS = 0,    /* every matching packet (blackhole) */
  COLLIDE_FAULT_DECIDE_BERNOULLI = 1, /* independently with probability p */
  COLLIDE_FAULT_DECIDE_GILBERT = 2,   /* Gilbert-Elliott, per flow */
  COLLIDE_FAULT_DECIDE_MARKOV4 = 3,   /* 4-state Markov burst model, per flow */
  COLLIDE_FAULT_DECIDE_PSN_LIST = 4,  /* RoCE PSNs listed in the psn_list map */
  COLLIDE_FAULT_DECIDE_EVERY_NTH = 5, /* the Nth, 2Nth, ... matching packet of the rule */
  COLLIDE_FAULT_DECIDE_POLICE = 6,    /* packets beyond a token bucket (rate, burst) */
};

/* What a rule does to the packets it chose. */
enum collide_fault_action {
  COLLIDE_FAULT_ACT_DROP = 0,
  COLLIDE_FAULT_ACT_CORRUPT = 1,   /* flip one payload byte */
  COLLIDE_FAULT_ACT_DUPLICATE = 2, /* send a copy on the same device and direction */
  COLLIDE_FAULT_ACT_ECN_CE = 3,    /* set the ECN field to CE (11) */
};

#define COLLIDE_FAULT_DIR_INGRESS 1u
#define COLLIDE_FAULT_DIR_EGRESS 2u

/* Rule flags. */
#define COLLIDE_FAULT_F_ROCE 1u           /* match only RoCEv2 (UDP dst 4791 with a BTH) */
#define COLLIDE_FAULT_F_CORRUPT_SILENT 2u /* fix the UDP/TCP checksum after corrupting */
#define COLLIDE_FAULT_F_LOG 4u            /* record each action in the event ring */

/* Addresses are IPv6 or IPv4-mapped IPv6 (::ffff:a.b.c.d), network byte order. A packet matches
 * when (address & mask) == net; an all-zero mask matches everything. */
struct collide_fault_prefix {
  __u64 net[2];  /* the 16 address bytes, as two words in memory order */
  __u64 mask[2];
};

struct collide_fault_match {
  __u32 ifindex;        /* 0: any interface */
  __u8 directions;      /* COLLIDE_FAULT_DIR_* bits; 0: both */
  __u8 l4_proto;        /* IPPROTO_*; 0: any */
  __u8 ecn_mask;        /* bit e set: ECN value e matches (4 bits) */
  __u8 pad0;
  __u64 dscp_mask;      /* bit d set: DSCP d matches */
  struct collide_fault_prefix src;
  struct collide_fault_prefix dst;
  __u16 sport_lo, sport_hi; /* inclusive, host order */
  __u16 dport_lo, dport_hi;
  /* RoCEv2 only (flag COLLIDE_FAULT_F_ROCE). */
  __u64 opcodes[4];     /* bit o set: BTH opcode o matches */
  __u32 qp_lo, qp_hi;   /* destination QP, inclusive */
  __u32 psn_lo, psn_hi; /* PSN, inclusive (no wrap-around) */
};

/* Probabilities are thresholds t = p * 2^32 compared against a 32-bit draw (draw < t), 64 bits
 * wide so that p = 1 is exact. */
struct collide_fault_gilbert {
  __u64 p;      /* good -> bad */
  __u64 r;      /* bad -> good */
  __u64 loss_good; /* 1 - k */
  __u64 loss_bad;  /* 1 - h */
};

/* 4-state model of Salsano et al. (the netem "loss state" model): 1 = received in a gap,
 * 2 = received in a burst, 3 = lost in a burst, 4 = isolated loss in a gap. */
struct collide_fault_markov4 {
  __u64 p13, p14, p31, p32, p23;
};

struct collide_fault_police {
  __u64 rate_bytes_per_s;
  __u64 burst_bytes;
};

struct collide_fault_rule {
  __u32 id;       /* the user's rule number, reported in events */
  __u32 flags;    /* COLLIDE_FAULT_F_* */
  __u8 decider;   /* enum collide_fault_decider */
  __u8 action;    /* enum collide_fault_action */
  __u16 corrupt_offset; /* byte in the L4 payload; 0xffff: the middle of it */
  __u8 corrupt_xor;     /* XORed into that byte (never 0) */
  __u8 pad1[3];
  __u64 seed;
  __u64 start_ns; /* bpf_ktime_get_ns window; 0: open */
  __u64 end_ns;
  struct collide_fault_match match;
  __u64 probability;  /* BERNOULLI threshold */
  __u64 every_nth;    /* EVERY_NTH */
  struct collide_fault_gilbert gilbert;
  struct collide_fault_markov4 markov4;
  struct collide_fault_police police;
};

struct collide_fault_allowlist {
  __u16 tcp_ports[COLLIDE_FAULT_MAX_ALLOW_PORTS]; /* either port of a TCP segment */
  __u16 udp_ports[COLLIDE_FAULT_MAX_ALLOW_PORTS];
  struct collide_fault_prefix prefixes[COLLIDE_FAULT_MAX_ALLOW_PREFIXES]; /* src or dst */
  __u32 tcp_port_count;
  __u32 udp_port_count;
  __u32 prefix_count;
  __u32 pad;
};

/* The single entry of the config map. */
struct collide_fault_config {
  __u32 rule_count;
  __u32 events;   /* non-zero: rules with COLLIDE_FAULT_F_LOG write events */
  struct collide_fault_allowlist allow;
};

/* The single entry of the lease map: past `expiry_ns` (bpf_ktime_get_ns) every rule is inert. */
struct collide_fault_lease {
  __u64 expiry_ns;
};

/* Per rule, one slot per CPU (summed by the reader; first/last by min/max over CPUs). */
struct collide_fault_counters {
  __u64 matched;
  __u64 acted;
  __u64 bytes_acted;
  __u64 first_ns;
  __u64 last_ns;
};

/* Per program, one slot per CPU. */
struct collide_fault_stats {
  __u64 packets;     /* packets the program saw */
  __u64 allowed;     /* passed by the allowlist */
  __u64 inert;       /* passed because the lease had expired */
  __u64 events_lost; /* actions not recorded: the event ring was full */
};

/* Shared per-rule state (one copy for all CPUs). */
struct collide_fault_rule_state {
  struct bpf_spin_lock lock;
  __u32 pad;
  __u64 tokens_micro; /* token bucket fill in millionths of a byte (rate x microseconds) */
  __u64 last_ns;
};

struct collide_fault_flow_key {
  __u64 flow_hash;
  __u32 rule; /* index in the rules map */
  __u32 pad;
};

struct collide_fault_flow_state {
  __u64 packets; /* matching packets of this flow seen by the rule */
  __u32 state;   /* Gilbert: 0 good, 1 bad; Markov4: 1..4 */
  __u32 pad;
};

struct collide_fault_psn_key {
  __u32 rule; /* index in the rules map */
  __u32 psn;
};

/* One record per action, in the event ring. */
struct collide_fault_event {
  __u64 time_ns;
  __u64 flow_hash;
  __u64 flow_index; /* the packet's number within its flow, for this rule (from 0) */
  __u32 rule_id;
  __u32 ifindex;
  __u32 psn;        /* RoCE only; else 0 */
  __u32 qp;         /* RoCE only; else 0 */
  __u32 length;     /* bytes of the packet */
  __u8 action;      /* enum collide_fault_action */
  __u8 direction;   /* COLLIDE_FAULT_DIR_* */
  __u8 l4_proto;
  __u8 roce;        /* 1 when psn/qp are meaningful */
};
