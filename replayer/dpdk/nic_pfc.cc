#include "replayer/dpdk/nic_pfc.h"

#include <rte_ethdev.h>

#include <cerrno>

#include <fmt/format.h>

namespace collide::replayer::dpdk {

std::string enable_nic_pfc(uint16_t port_id, const std::string& driver, const v1::DpdkPortConfig::NicPfc& pfc) {
  if (pfc.priority() > 7) return fmt::format("NIC PFC: priority {} is not 0-7", pfc.priority());
  rte_eth_pfc_conf conf{};
  conf.fc.mode = RTE_ETH_FC_FULL;  // send pauses when full, and honour the switch's
  conf.fc.pause_time = static_cast<uint16_t>(pfc.pause_quanta() == 0 || pfc.pause_quanta() > 0xffff ? 0xffff : pfc.pause_quanta());
  conf.fc.high_water = pfc.high_water();
  conf.fc.low_water = pfc.low_water();
  conf.fc.send_xon = 1;  // resume at once rather than let the pause run out
  conf.priority = static_cast<uint8_t>(pfc.priority());
  const int rc = rte_eth_dev_priority_flow_ctrl_set(port_id, &conf);
  if (rc == 0) {
    return fmt::format("NIC PFC on for priority {} ({} quanta)", pfc.priority(), conf.fc.pause_time);
  }
  if (rc == -ENOTSUP || rc == -ENOSYS) {
    return fmt::format("NIC PFC: {} has none (collide's own pause frames only)", driver);
  }
  return fmt::format("NIC PFC: {} refused priority {} ({}; collide's own pause frames only)", driver, pfc.priority(),
                     rte_strerror(-rc));
}

}  // namespace collide::replayer::dpdk
