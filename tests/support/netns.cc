#include "tests/support/netns.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include <fmt/format.h>

#include "common/parse_number.h"
#include "tests/support/command.h"

namespace collide::testing {

Result<std::unique_ptr<TestNetns>> TestNetns::create(std::string_view tag) {
  const std::string name = fmt::format("cl-{}-{}", tag, getpid());
  // A namespace of the same name left by a killed earlier run of this pid is ours to replace.
  run_command({"ip", "netns", "del", name}).ok();
  COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "netns", "add", name}));
  std::unique_ptr<TestNetns> ns(new TestNetns(name));
  COLLIDE_RETURN_IF_ERROR(ns->exec({"sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"}));
  COLLIDE_RETURN_IF_ERROR(ns->exec({"sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"}));
  COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "-n", name, "link", "set", "lo", "up"}));
  return ns;
}

TestNetns::~TestNetns() { run_command({"ip", "netns", "del", name_}).ok(); }

Status TestNetns::exec(const std::vector<std::string>& argv) const {
  std::vector<std::string> full = {"ip", "netns", "exec", name_};
  full.insert(full.end(), argv.begin(), argv.end());
  return run_checked(full);
}

Status create_veth_pair(const TestNetns& a, const std::string& a_if, const TestNetns& b,
                        const std::string& b_if) {
  return run_checked({"ip", "link", "add", a_if, "netns", a.name(), "type", "veth", "peer", "name",
                      b_if, "netns", b.name()});
}

Status configure_interface(const TestNetns& ns, const std::string& ifname,
                           const std::string& cidr) {
  COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "-n", ns.name(), "addr", "add", cidr, "dev", ifname}));
  COLLIDE_RETURN_IF_ERROR(ns.exec({"ethtool", "-K", ifname, "tso", "off", "gso", "off", "gro",
                                   "off", "tx", "off", "rx", "off"}));
  return run_checked({"ip", "-n", ns.name(), "link", "set", ifname, "up"});
}

Result<std::string> interface_mac(const TestNetns& ns, const std::string& ifname) {
  auto result = run_command({"ip", "-n", ns.name(), "-br", "link", "show", "dev", ifname});
  if (!result.ok()) return result.status();
  // "veth0@if5   UP   aa:bb:cc:dd:ee:ff <BROADCAST,...>"
  std::istringstream fields(result->output);
  std::string name, state, mac;
  if (result->exit_code != 0 || !(fields >> name >> state >> mac)) {
    return not_found(fmt::format("no interface {} in netns {}: {}", ifname, ns.name(),
                                 result->output));
  }
  return mac;
}

Result<int> interface_index(const TestNetns& ns, const std::string& ifname) {
  auto result = run_command({"ip", "-n", ns.name(), "-o", "link", "show", "dev", ifname});
  if (!result.ok()) return result.status();
  // "7: veth0@if6: <...>"
  if (result->exit_code != 0) return not_found(result->output);
  return parse_number<int>(result->output.substr(0, result->output.find(':')),
                           "interface index of " + ifname);
}

int udp_socket(const TestNetns& ns, const char* ip, uint16_t port, const char* peer,
               uint16_t peer_port, int rcvbuf, std::chrono::microseconds timeout) {
  auto scope = NetnsScope::enter(ns.name());
  if (!scope.ok()) return -1;
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return -1;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
  const timeval receive_timeout{static_cast<time_t>(timeout.count() / 1000000),
                                static_cast<suseconds_t>(timeout.count() % 1000000)};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &receive_timeout, sizeof(receive_timeout));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) return -1;
  if (peer != nullptr) {
    sockaddr_in p{};
    p.sin_family = AF_INET;
    p.sin_port = htons(peer_port);
    inet_pton(AF_INET, peer, &p.sin_addr);
    if (connect(fd, reinterpret_cast<sockaddr*>(&p), sizeof(p)) != 0) return -1;
  }
  return fd;
}

}  // namespace collide::testing
