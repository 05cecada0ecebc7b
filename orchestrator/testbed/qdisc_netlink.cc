#include "orchestrator/testbed/qdisc_netlink.h"

#include <libmnl/libmnl.h>
#include <linux/gen_stats.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include <fmt/format.h>

namespace collide::orchestrator::testbed {
namespace {

nlmsghdr* put_tcmsg_header(std::span<char> buffer, uint16_t type, uint16_t flags, uint32_t seq,
                           int ifindex, uint32_t handle, uint32_t parent) {
  std::fill(buffer.begin(), buffer.end(), 0);
  nlmsghdr* nlh = mnl_nlmsg_put_header(buffer.data());
  nlh->nlmsg_type = type;
  nlh->nlmsg_flags = flags;
  nlh->nlmsg_seq = seq;
  auto* tcm = static_cast<tcmsg*>(mnl_nlmsg_put_extra_header(nlh, sizeof(tcmsg)));
  tcm->tcm_family = AF_UNSPEC;
  tcm->tcm_ifindex = ifindex;
  tcm->tcm_handle = handle;
  tcm->tcm_parent = parent;
  return nlh;
}

// Attributes of one nesting level by type; a type beyond `Max` is skipped (newer kernels add some).
template <size_t Max>
struct Attributes {
  std::array<const nlattr*, Max + 1> by_type{};
};

template <size_t Max>
int keep_attribute(const nlattr* attr, void* data) {
  auto* attrs = static_cast<Attributes<Max>*>(data);
  const int type = mnl_attr_get_type(attr);
  if (mnl_attr_type_valid(attr, Max) > 0) attrs->by_type[type] = attr;
  return MNL_CB_OK;
}

template <typename T>
std::optional<T> payload_of(const nlattr* attr) {
  if (attr == nullptr || mnl_attr_get_payload_len(attr) < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, mnl_attr_get_payload(attr), sizeof(T));
  return value;
}

}  // namespace

TbfShape held_shape(const TbfShape& shape) {
  TbfShape held = shape;
  held.rate_bytes_per_s = kHeldRateBytesPerSecond;
  held.burst_bytes = shape.max_frame_bytes;
  return held;
}

nlmsghdr* put_tbf_change(std::span<char> buffer, uint32_t seq, int ifindex, const PauseGate& gate,
                         const TbfShape& shape) {
  nlmsghdr* nlh = put_tcmsg_header(buffer, RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK, seq, ifindex,
                                   gate.handle, gate.parent);
  mnl_attr_put_strz(nlh, TCA_KIND, "tbf");
  nlattr* options = mnl_attr_nest_start(nlh, TCA_OPTIONS);
  tc_tbf_qopt qopt{};
  // An Ethernet link layer: the kernel computes transmit times from the rate itself and needs no
  // rate table. The burst goes in bytes (TCA_TBF_BURST), which makes qopt.buffer unused.
  qopt.rate.linklayer = TC_LINKLAYER_ETHERNET;
  qopt.rate.rate = static_cast<uint32_t>(
      std::min<uint64_t>(shape.rate_bytes_per_s, std::numeric_limits<uint32_t>::max()));
  qopt.limit = shape.limit_bytes;
  mnl_attr_put(nlh, TCA_TBF_PARMS, sizeof(qopt), &qopt);
  if (shape.rate_bytes_per_s > std::numeric_limits<uint32_t>::max()) {
    mnl_attr_put_u64(nlh, TCA_TBF_RATE64, shape.rate_bytes_per_s);
  }
  mnl_attr_put_u32(nlh, TCA_TBF_BURST, shape.burst_bytes);
  mnl_attr_nest_end(nlh, options);
  return nlh;
}

nlmsghdr* put_qdisc_dump(std::span<char> buffer, uint32_t seq) {
  return put_tcmsg_header(buffer, RTM_GETQDISC, NLM_F_REQUEST | NLM_F_DUMP, seq, 0, 0, 0);
}

Result<std::optional<QdiscCounters>> parse_qdisc(const nlmsghdr* message) {
  if (message->nlmsg_type != RTM_NEWQDISC) {
    return data_loss(fmt::format("qdisc dump: message of type {}, not RTM_NEWQDISC", message->nlmsg_type));
  }
  if (mnl_nlmsg_get_payload_len(message) < sizeof(tcmsg)) {
    return data_loss("qdisc dump: a message shorter than its tcmsg");
  }
  const auto* tcm = static_cast<const tcmsg*>(mnl_nlmsg_get_payload(message));
  // clsact shares ingress's parent: neither holds a queue.
  if (tcm->tcm_parent == TC_H_INGRESS) return std::optional<QdiscCounters>{};

  Attributes<TCA_MAX> top;
  if (mnl_attr_parse(message, sizeof(tcmsg), keep_attribute<TCA_MAX>, &top) < 0) {
    return data_loss("qdisc dump: malformed attributes");
  }
  QdiscCounters stats;
  stats.ifindex = tcm->tcm_ifindex;
  stats.handle = tcm->tcm_handle;
  stats.parent = tcm->tcm_parent;
  if (const nlattr* kind = top.by_type[TCA_KIND]; kind != nullptr) {
    if (mnl_attr_validate(kind, MNL_TYPE_NUL_STRING) < 0) return data_loss("qdisc dump: TCA_KIND is not a string");
    stats.kind = mnl_attr_get_str(kind);
  }
  const nlattr* stats2 = top.by_type[TCA_STATS2];
  if (stats2 == nullptr) return data_loss(fmt::format("qdisc dump: {} on ifindex {} has no TCA_STATS2", stats.kind, stats.ifindex));
  Attributes<TCA_STATS_MAX> nested;
  if (mnl_attr_parse_nested(stats2, keep_attribute<TCA_STATS_MAX>, &nested) < 0) {
    return data_loss("qdisc dump: malformed TCA_STATS2");
  }
  const auto basic = payload_of<gnet_stats_basic>(nested.by_type[TCA_STATS_BASIC]);
  const auto queue = payload_of<gnet_stats_queue>(nested.by_type[TCA_STATS_QUEUE]);
  if (!basic || !queue) {
    return data_loss(fmt::format("qdisc dump: {} on ifindex {} lacks basic or queue stats", stats.kind,
                                 stats.ifindex));
  }
  stats.bytes = basic->bytes;
  // The 64-bit packet count where the kernel gives one; the basic stats' count is 32 bits.
  const auto packets64 = payload_of<uint64_t>(nested.by_type[TCA_STATS_PKT64]);
  stats.packets = packets64 ? *packets64 : basic->packets;
  stats.drops = queue->drops;
  stats.backlog_bytes = queue->backlog;
  stats.qlen = queue->qlen;
  return std::optional<QdiscCounters>{stats};
}

}  // namespace collide::orchestrator::testbed
