#include "tests/support/bridged_hosts.h"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "tests/support/command.h"

namespace collide::testing {
namespace {

// Host A reaches host B through the fabric (ping, retried for up to 10 s).
Status wait_until_forwarding(const TestNetns& from) {
  Status last;
  for (int attempt = 0; attempt < 20; ++attempt) {
    last = from.exec({"ping", "-c", "1", "-W", "1", "-i", "0.2", "198.18.0.2"});
    if (last.ok()) return {};
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  return last.with_context("the fabric does not forward between the hosts");
}

Result<std::unique_ptr<TestNetns>> make_namespace(std::string_view tag, std::string_view role) {
  return TestNetns::create(fmt::format("{}-{}", tag, role));
}

}  // namespace

Result<BridgedHosts> BridgedHosts::create(std::string_view tag) {
  BridgedHosts t;
  auto a = make_namespace(tag, "a");
  if (!a.ok()) return a.status();
  t.host_a = std::move(a).value();
  auto b = make_namespace(tag, "b");
  if (!b.ok()) return b.status();
  t.host_b = std::move(b).value();
  auto f = make_namespace(tag, "f");
  if (!f.ok()) return f.status();
  t.fabric = std::move(f).value();
  COLLIDE_RETURN_IF_ERROR(create_veth_pair(*t.host_a, "a0", *t.fabric, "fa"));
  COLLIDE_RETURN_IF_ERROR(create_veth_pair(*t.host_b, "b0", *t.fabric, "fb"));
  COLLIDE_RETURN_IF_ERROR(configure_interface(*t.host_a, "a0", "198.18.0.1/24"));
  COLLIDE_RETURN_IF_ERROR(configure_interface(*t.host_b, "b0", "198.18.0.2/24"));
  const std::string fns = t.fabric->name();
  COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "-n", fns, "link", "add", "br0", "type", "bridge"}));
  for (const char* port : {"fa", "fb"}) {
    COLLIDE_RETURN_IF_ERROR(t.fabric->exec({"ethtool", "-K", port, "tso", "off", "gso", "off",
                                            "gro", "off", "tx", "off", "rx", "off"}));
    COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "-n", fns, "link", "set", port, "master", "br0"}));
    COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "-n", fns, "link", "set", port, "up"}));
  }
  COLLIDE_RETURN_IF_ERROR(run_checked({"ip", "-n", fns, "link", "set", "br0", "up"}));
  // A fresh bridge takes a moment before it forwards; a replay that started at once would see
  // its first frames lost and, with short timers, could exhaust its retries before it does.
  COLLIDE_RETURN_IF_ERROR(wait_until_forwarding(*t.host_a));
  auto mac_a = interface_mac(*t.host_a, "a0");
  if (!mac_a.ok()) return mac_a.status();
  auto mac_b = interface_mac(*t.host_b, "b0");
  if (!mac_b.ok()) return mac_b.status();
  t.mac_a = *mac_a;
  t.mac_b = *mac_b;
  return t;
}

}  // namespace collide::testing
