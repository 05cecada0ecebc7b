#include "orchestrator/agent/host_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/parse_number.h"

namespace collide::orchestrator::agent {
namespace {

std::string mac_text(const unsigned char* b, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += fmt::format("{}{:02x}", i ? ":" : "", b[i]);
  return out;
}

uint32_t mtu_of(const std::string& name) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  ifreq req{};
  std::strncpy(req.ifr_name, name.c_str(), IFNAMSIZ - 1);
  const int rc = ioctl(fd, SIOCGIFMTU, &req);
  close(fd);
  return rc == 0 ? static_cast<uint32_t>(req.ifr_mtu) : 0;
}

// The first line of a sysfs attribute, without its newline; nullopt when it cannot be read.
std::optional<std::string> sysfs_line(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  return line;
}

}  // namespace

uint32_t link_speed_mbps(const std::filesystem::path& sysfs_net, const std::string& ifname,
                         const std::string& mac) {
  const std::filesystem::path dir = sysfs_net / ifname;
  if (!mac.empty() && sysfs_line(dir / "address") != mac) return 0;
  const auto text = sysfs_line(dir / "speed");
  if (!text) return 0;
  auto speed = parse_number<int64_t>(*text, (dir / "speed").string());
  if (!speed.ok() || *speed <= 0 || *speed > INT64_C(0xffffffff)) return 0;
  return static_cast<uint32_t>(*speed);
}

Result<v1::HostDescription> describe_host(const std::vector<std::string>& allowed,
                                          const std::vector<std::string>& requested,
                                          const std::filesystem::path& sysfs_net) {
  const std::vector<std::string>& wanted = requested.empty() ? allowed : requested;
  if (wanted.empty()) {
    return invalid_argument("no interface named: give the agent --interfaces or the scenario's "
                            "testbed.agents[].interfaces");
  }
  for (const std::string& name : requested) {
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return permission_denied(fmt::format("interface {} is not among those this agent may use ({})",
                                           name, fmt::join(allowed, ", ")));
    }
  }
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return errno_status(errno, "getifaddrs");
  std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owned(list, &freeifaddrs);
  std::map<std::string, v1::InterfaceDescription> found;
  for (const ifaddrs* a = list; a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_name == nullptr) continue;
    v1::InterfaceDescription& d = found[a->ifa_name];
    d.set_name(a->ifa_name);
    if (a->ifa_addr->sa_family == AF_INET) {
      char text[INET_ADDRSTRLEN] = {};
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof text);
      d.add_ipv4(text);
    } else if (a->ifa_addr->sa_family == AF_PACKET) {
      const auto* ll = reinterpret_cast<const sockaddr_ll*>(a->ifa_addr);
      d.set_mac(mac_text(ll->sll_addr, ll->sll_halen));
    }
  }
  v1::HostDescription out;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) out.set_hostname(host);
  for (const std::string& name : wanted) {
    auto it = found.find(name);
    if (it == found.end()) return not_found(fmt::format("no interface {} on this host", name));
    it->second.set_mtu(mtu_of(name));
    it->second.set_speed_mbps(link_speed_mbps(sysfs_net, name, it->second.mac()));
    *out.add_interfaces() = it->second;
  }
  return out;
}

}  // namespace collide::orchestrator::agent
