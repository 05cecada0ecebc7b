#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "collide/agent.pb.h"
#include "common/result.h"

// What a real host's agent offers: the interfaces it may use, with their IPv4 addresses, MAC and
// MTU, read from the kernel (getifaddrs and SIOCGIFMTU) in the calling thread's namespace, and
// their link speed (sysfs).
namespace collide::orchestrator::agent {

// Where the kernel lists network devices, one directory per interface.
inline const std::filesystem::path kSysfsNet = "/sys/class/net";

// The link speed of `ifname` in Mb/s, as `<sysfs_net>/<ifname>/speed` gives it; 0 when unknown:
// the file is missing or unreadable (a link that is down), says -1 (no link), or is no number.
// sysfs shows the devices of the namespace it was mounted in, which need not be the calling
// thread's: the entry counts only when its `address` is `mac`, the MAC this namespace's kernel
// gave for the interface ("" skips that check).
uint32_t link_speed_mbps(const std::filesystem::path& sysfs_net, const std::string& ifname,
                         const std::string& mac);

// The interfaces the run may use: those `requested` by the orchestrator (all of `allowed` when it
// names none), each of which must be among `allowed` when the agent was given a list. An
// interface that does not exist, or is not allowed, is an error naming it.
Result<v1::HostDescription> describe_host(const std::vector<std::string>& allowed,
                                          const std::vector<std::string>& requested,
                                          const std::filesystem::path& sysfs_net = kSysfsNet);

}  // namespace collide::orchestrator::agent
