#include "orchestrator/agent/next_hop.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "common/parse_number.h"

namespace collide::orchestrator::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr unsigned kRouteUp = 0x1;       // RTF_UP
constexpr unsigned kRouteGateway = 0x2;  // RTF_GATEWAY
constexpr unsigned kArpComplete = 0x2;   // ATF_COM

std::string ip_text(uint32_t host_order) {
  in_addr a{htonl(host_order)};
  char text[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &a, text, sizeof text);
  return text;
}

// /proc/net/route prints each address as the hex of its network-order bytes read as a native
// integer.
Result<uint32_t> route_field(const std::string& hex) {
  auto v = parse_number<uint32_t>(hex, "/proc/net/route address", 16);
  if (!v.ok()) return v.status();
  return ntohl(*v);
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The tables of the calling thread's namespace (it may have entered one; /proc/net is the
// process's).
std::string proc_net(const std::string& file) {
  std::string text = read_all("/proc/thread-self/net/" + file);
  return text.empty() ? read_all("/proc/net/" + file) : text;
}

// Makes the kernel resolve the next hop towards `peer`: one datagram to the discard port, sent
// out of `ifname` whatever the routes prefer.
void poke(uint32_t peer, const std::string& ifname) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  (void)setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname.c_str(),
                   static_cast<socklen_t>(ifname.size()));
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);
  to.sin_addr.s_addr = htonl(peer);
  const char byte = 0;
  (void)sendto(fd, &byte, 1, MSG_DONTWAIT, reinterpret_cast<const sockaddr*>(&to), sizeof to);
  close(fd);
}

}  // namespace

Result<uint32_t> next_hop_from_routes(const std::string& route_table, const std::string& ifname,
                                      uint32_t peer) {
  std::istringstream lines(route_table);
  std::string line;
  std::getline(lines, line);  // the header
  int best_prefix = -1;
  unsigned best_metric = 0;
  uint32_t best_hop = 0;
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string iface, dest, gateway, flags, refcnt, use, metric, mask;
    if (!(f >> iface >> dest >> gateway >> flags >> refcnt >> use >> metric >> mask)) continue;
    if (iface != ifname) continue;
    // A line whose numbers do not read is skipped, as one whose fields do not scan.
    auto fl_read = parse_number<unsigned>(flags, "/proc/net/route flags", 16);
    auto m_read = route_field(mask);
    auto dest_read = route_field(dest);
    auto gateway_read = route_field(gateway);
    auto me_read = parse_number<unsigned>(metric, "/proc/net/route metric");
    if (!fl_read.ok() || !m_read.ok() || !dest_read.ok() || !gateway_read.ok() || !me_read.ok()) {
      continue;
    }
    const unsigned fl = *fl_read;
    if ((fl & kRouteUp) == 0) continue;
    const uint32_t m = *m_read;
    if ((peer & m) != *dest_read) continue;
    const int prefix = __builtin_popcount(m);
    const unsigned me = *me_read;
    if (prefix < best_prefix || (prefix == best_prefix && me >= best_metric)) continue;
    best_prefix = prefix;
    best_metric = me;
    best_hop = (fl & kRouteGateway) != 0 ? *gateway_read : peer;
  }
  if (best_prefix < 0) {
    return not_found(fmt::format("no route to {} leaves by {}", ip_text(peer), ifname));
  }
  return best_hop;
}

std::optional<std::string> mac_from_arp(const std::string& arp_table, const std::string& ifname,
                                        uint32_t ip) {
  std::istringstream lines(arp_table);
  std::string line;
  std::getline(lines, line);  // the header
  const std::string wanted = ip_text(ip);
  while (std::getline(lines, line)) {
    std::istringstream f(line);
    std::string address, hw_type, flags, mac, mask, device;
    if (!(f >> address >> hw_type >> flags >> mac >> mask >> device)) continue;
    if (address != wanted || device != ifname) continue;
    auto fl = parse_number<unsigned>(flags, "/proc/net/arp flags", 16);
    if (!fl.ok() || (*fl & kArpComplete) == 0) return std::nullopt;
    return mac;
  }
  return std::nullopt;
}

Result<std::string> resolve_next_hop_mac(const std::string& peer, const std::string& ifname,
                                         std::chrono::milliseconds timeout) {
  in_addr a{};
  if (inet_pton(AF_INET, peer.c_str(), &a) != 1) {
    return invalid_argument(fmt::format("peer address '{}' is not IPv4", peer));
  }
  const uint32_t peer_ip = ntohl(a.s_addr);
  auto hop = next_hop_from_routes(proc_net("route"), ifname, peer_ip);
  if (!hop.ok()) return hop.status().with_context(fmt::format("peer {} on {}", peer, ifname));
  const auto deadline = Clock::now() + timeout;
  auto next_poke = Clock::now();
  while (true) {
    if (auto mac = mac_from_arp(proc_net("arp"), ifname, *hop)) return *mac;
    if (Clock::now() >= deadline) break;
    if (Clock::now() >= next_poke) {
      poke(peer_ip, ifname);
      next_poke = Clock::now() + std::chrono::milliseconds(300);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return unavailable(fmt::format(
      "cannot resolve the MAC of next hop {} towards peer {} on interface {} within {} ms (no ARP "
      "answer)",
      ip_text(*hop), peer, ifname, timeout.count()));
}

Result<std::vector<std::map<uint32_t, std::string>>> peer_macs_of_nics(
    const std::vector<std::string>& interfaces, uint32_t host, const std::vector<v1::RankEndpoint>& endpoints,
    const MacResolver& resolve) {
  std::vector<std::map<uint32_t, std::string>> out(interfaces.size());
  for (size_t nic = 0; nic < interfaces.size(); ++nic) {
    std::map<std::string, std::string> mac_of_address;
    for (const v1::RankEndpoint& e : endpoints) {
      if (e.host() == host) continue;
      auto known = mac_of_address.find(e.ipv4());
      if (known == mac_of_address.end()) {
        auto mac = resolve(e.ipv4(), interfaces[nic]);
        if (!mac.ok()) {
          return mac.status().with_context(
              fmt::format("host {} NIC {} ({}), peer rank {} on host {}", host, nic, interfaces[nic], e.rank(), e.host()));
        }
        known = mac_of_address.emplace(e.ipv4(), *mac).first;
      }
      out[nic][e.rank()] = known->second;
    }
  }
  return out;
}

}  // namespace collide::orchestrator::agent
