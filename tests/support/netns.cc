#include "tests/support/netns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <sstream>

#include <fmt/format.h>

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
  return std::stoi(result->output);
}

}  // namespace collide::testing
