#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/netns.h"
#include "common/result.h"

// Network namespaces and veth pairs that a test creates for itself and removes when done, even on
// failure. Nothing here touches the host's own namespace beyond the moment a veth pair is created
// directly inside the test's namespaces.
namespace collide::testing {

class TestNetns {
 public:
  // Creates a namespace named "cl-<tag>-<pid>", IPv6 off (no neighbour discovery chatter), lo up.
  static Result<std::unique_ptr<TestNetns>> create(std::string_view tag);
  ~TestNetns();
  TestNetns(const TestNetns&) = delete;
  TestNetns& operator=(const TestNetns&) = delete;

  const std::string& name() const { return name_; }
  // Runs argv inside the namespace (`ip netns exec`), failing on a non-zero exit.
  Status exec(const std::vector<std::string>& argv) const;

 private:
  explicit TestNetns(std::string name) : name_(std::move(name)) {}
  std::string name_;
};

// Enters a namespace on the calling thread for the lifetime of the object.
using NetnsScope = netns::Scope;

// A veth pair whose ends are created directly inside two test namespaces.
Status create_veth_pair(const TestNetns& a, const std::string& a_if, const TestNetns& b,
                        const std::string& b_if);

// Adds an address, turns offloads off (one skb per frame, so counts are per frame) and sets it up.
Status configure_interface(const TestNetns& ns, const std::string& ifname, const std::string& cidr);

Result<std::string> interface_mac(const TestNetns& ns, const std::string& ifname);
Result<int> interface_index(const TestNetns& ns, const std::string& ifname);

// A UDP socket bound to ip:port inside `ns`, connected to peer:peer_port when `peer` is given,
// with a receive buffer of `rcvbuf` bytes and receives that give up after `timeout`; -1 if not.
int udp_socket(const TestNetns& ns, const char* ip, uint16_t port, const char* peer,
               uint16_t peer_port, int rcvbuf, std::chrono::microseconds timeout);

}  // namespace collide::testing
