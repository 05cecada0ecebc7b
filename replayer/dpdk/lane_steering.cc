#include "replayer/dpdk/lane_steering.h"

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_flow.h>

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "replayer/engine/entropy_port.h"
#include "replayer/wire/roce_frame.h"

namespace collide::replayer::dpdk {

Result<std::vector<LaneRule>> lane_rules(uint32_t queues) {
  if (queues < 2) return std::vector<LaneRule>{};
  if (!std::has_single_bit(queues) || queues > engine::kMaxSteeredLanes) {
    return invalid_argument(fmt::format(
        "{} queues cannot be steered by flow rules: a QP's source port names its lane in {} bits, "
        "so the queues must be a power of two up to {} (or queue_steering: none)",
        queues, engine::kSteeringBits, engine::kMaxSteeredLanes));
  }
  std::vector<LaneRule> rules;
  for (uint32_t q = 0; q < queues; ++q) {
    rules.push_back({static_cast<uint16_t>(q), static_cast<uint16_t>(q),
                     static_cast<uint16_t>(queues - 1)});
  }
  return rules;
}

namespace {

// One rule: Ethernet / IPv4 / UDP (destination 4791, source under the mask) -> the queue. The
// device validates it as it creates it; nullptr with `error` set when it refuses.
rte_flow* make_rule(uint16_t port_id, const LaneRule& rule, rte_flow_error& error) {
  rte_flow_attr attr{};
  attr.ingress = 1;
  rte_flow_item_udp udp_spec{};
  rte_flow_item_udp udp_mask{};
  udp_spec.hdr.dst_port = rte_cpu_to_be_16(wire::kRoceUdpPort);
  udp_mask.hdr.dst_port = 0xffff;
  udp_spec.hdr.src_port = rte_cpu_to_be_16(rule.source_value);
  udp_mask.hdr.src_port = rte_cpu_to_be_16(rule.source_mask);
  rte_flow_item pattern[4]{};
  pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
  pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
  pattern[2].type = RTE_FLOW_ITEM_TYPE_UDP;
  pattern[2].spec = &udp_spec;
  pattern[2].mask = &udp_mask;
  pattern[3].type = RTE_FLOW_ITEM_TYPE_END;
  rte_flow_action_queue queue{};
  queue.index = rule.queue;
  rte_flow_action actions[2]{};
  actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
  actions[0].conf = &queue;
  actions[1].type = RTE_FLOW_ACTION_TYPE_END;
  return rte_flow_create(port_id, &attr, pattern, actions, &error);
}

}  // namespace

Result<std::vector<rte_flow*>> install_lane_rules(uint16_t port_id, const std::string& port_name,
                                                  const std::string& driver,
                                                  const std::vector<LaneRule>& rules) {
  std::vector<rte_flow*> flows;
  for (const LaneRule& rule : rules) {
    rte_flow_error error{};
    rte_flow* flow = make_rule(port_id, rule, error);
    if (flow == nullptr) {
      const int rc = rte_errno;
      remove_lane_rules(port_id, flows);
      return unavailable(fmt::format(
          "DPDK port '{}' ({}) cannot steer RoCE frames to queue {} by their UDP source port "
          "(source {:#x} under mask {:#x}): {} ({}); set queue_steering: none only where the "
          "device keeps frames on their sender's queue, or use one queue",
          port_name, driver, rule.queue, rule.source_value, rule.source_mask,
          error.message != nullptr ? error.message : "no reason given",
          rc != 0 ? std::strerror(rc) : "refused"));
    }
    flows.push_back(flow);
  }
  return flows;
}

void remove_lane_rules(uint16_t port_id, std::vector<rte_flow*>& flows) {
  for (rte_flow* flow : flows) {
    rte_flow_error error{};
    rte_flow_destroy(port_id, flow, &error);
  }
  flows.clear();
}

}  // namespace collide::replayer::dpdk
