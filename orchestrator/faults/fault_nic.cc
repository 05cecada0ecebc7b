#include "orchestrator/faults/fault_nic.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/parse_number.h"

namespace collide::orchestrator::faults {

Result<std::string> own_nic_of_fault(const v1::Fault& fault, const std::vector<std::string>& interfaces) {
  const std::string& link = fault.link();
  const auto dot = link.find('.');
  const auto nic_count = static_cast<uint32_t>(interfaces.size());
  const auto choices = [&] {
    return fmt::format("this host's NICs are {}.nic0 to {}.nic{} ({})", link.substr(0, dot), link.substr(0, dot),
                       nic_count - 1, fmt::join(interfaces, ", "));
  };
  if (interfaces.empty()) return invalid_argument(fmt::format("fault {}: the run names no interface", fault.name()));
  if (dot == std::string::npos) return interfaces.front();
  const std::string part = link.substr(dot + 1);
  if (std::find(interfaces.begin(), interfaces.end(), part) != interfaces.end()) return part;
  if (part.rfind("nic", 0) == 0) {
    auto nic = parse_number<uint32_t>(part.substr(3), fmt::format("fault {}: link '{}': NIC", fault.name(), link));
    if (!nic.ok()) return nic.status();
    if (*nic >= nic_count) {
      return not_found(fmt::format("fault {}: link '{}': no NIC {}: {}", fault.name(), link, *nic, choices()));
    }
    return interfaces[*nic];
  }
  return not_found(fmt::format("fault {}: link '{}' names neither a NIC nor an interface of the run: {}",
                               fault.name(), link, choices()));
}

}  // namespace collide::orchestrator::faults
