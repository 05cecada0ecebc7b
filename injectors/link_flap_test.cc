#include "injectors/link_flap.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::injectors {
namespace {

using std::chrono::nanoseconds;
using Argv = std::vector<std::string>;

// Recorded from `ip -j addr show dev va` and `ip -j -4 route show table all` (iproute2 6.1) on a
// veth with an address, a static route, a multipath route, the kernel's own routes and one BGP
// installed (left to BGP).
constexpr const char* kAddrJson = R"([{"ifindex":4,"link":"vb","ifname":"va","flags":["BROADCAST",
"MULTICAST","UP","LOWER_UP"],"mtu":1500,"qdisc":"noqueue","operstate":"UP","addr_info":[
{"family":"inet","local":"10.9.0.1","prefixlen":24,"scope":"global","label":"va"},
{"family":"inet6","local":"fd00::1","prefixlen":64,"scope":"global"},
{"family":"inet6","local":"fe80::4b2:cbff:fe19:28","prefixlen":64,"scope":"link"}]}])";
constexpr const char* kRoutes4Json = R"([
{"dst":"10.7.0.0/16","flags":[],"nexthops":[{"gateway":"10.9.0.3","dev":"va","weight":1,"flags":[]},
 {"gateway":"10.9.0.4","dev":"va","weight":2,"flags":[]}]},
{"dst":"10.8.0.0/16","gateway":"10.9.0.2","dev":"va","metric":5,"flags":[]},
{"dst":"default","gateway":"10.9.0.254","dev":"va","table":"100","flags":["onlink"]},
{"dst":"10.6.0.0/16","gateway":"10.5.0.2","dev":"other","flags":[]},
{"dst":"10.5.0.0/27","nhid":21,"gateway":"10.9.0.5","dev":"va","protocol":"bgp","metric":20,"flags":[]},
{"dst":"10.4.0.0/16","gateway":"10.9.0.6","dev":"va","protocol":"static","flags":[]},
{"dst":"10.9.0.0/24","dev":"va","protocol":"kernel","scope":"link","prefsrc":"10.9.0.1","flags":[]},
{"type":"local","dst":"10.9.0.1","dev":"va","table":"local","protocol":"kernel","scope":"host",
 "prefsrc":"10.9.0.1","flags":[]}])";
constexpr const char* kRoutes6Json = R"([
{"dst":"fd01::/64","gateway":"fd00::2","dev":"va","metric":1024,"flags":[],"pref":"medium"},
{"dst":"fd00::/64","dev":"va","protocol":"kernel","metric":256,"flags":[],"pref":"medium"}])";
// `ip -j neigh show dev va nud permanent`: an entry without a link-layer address (noarp) is left.
constexpr const char* kNeighJson = R"([
{"dst":"10.9.0.5","lladdr":"02:00:00:00:00:05","state":["PERMANENT"]},
{"dst":"fd00::5","lladdr":"02:00:00:00:00:06","state":["PERMANENT"]},
{"dst":"10.9.0.7","state":["PERMANENT"]}])";

TEST(LinkSnapshot, RestoresAddressesNeighboursAndTheRoutesTheKernelWillNot) {
  auto snapshot = snapshot_from_json("ns1", "va", {kAddrJson, kRoutes4Json, kRoutes6Json, kNeighJson});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().to_string();
  EXPECT_TRUE(snapshot->was_up);
  EXPECT_EQ(snapshot->addresses, (std::vector<std::string>{"10.9.0.1/24", "fd00::1/64"}));
  EXPECT_EQ(snapshot->routes,
            (std::vector<std::string>{"10.7.0.0/16 nexthop via 10.9.0.3 nexthop via 10.9.0.4",
                                      "10.8.0.0/16 via 10.9.0.2", "default via 10.9.0.254",
                                      "10.4.0.0/16 via 10.9.0.6", "fd01::/64 via fd00::2"}));
  EXPECT_EQ(snapshot->neighbors, (std::vector<std::string>{"10.9.0.5 lladdr 02:00:00:00:00:05",
                                                           "fd00::5 lladdr 02:00:00:00:00:06"}));
  const std::vector<Argv> expected = {
      {"ip", "-n", "ns1", "link", "set", "dev", "va", "up"},
      {"ip", "-n", "ns1", "-4", "addr", "replace", "10.9.0.1/24", "dev", "va"},
      {"ip", "-n", "ns1", "-6", "addr", "replace", "fd00::1/64", "dev", "va"},
      {"ip", "-n", "ns1", "-4", "route", "replace", "10.7.0.0/16", "nexthop", "via", "10.9.0.3",
       "dev", "va", "weight", "1", "nexthop", "via", "10.9.0.4", "dev", "va", "weight", "2"},
      {"ip", "-n", "ns1", "-4", "route", "replace", "10.8.0.0/16", "via", "10.9.0.2", "dev", "va",
       "metric", "5"},
      {"ip", "-n", "ns1", "-4", "route", "replace", "default", "via", "10.9.0.254", "dev", "va",
       "table", "100", "onlink"},
      {"ip", "-n", "ns1", "-4", "route", "replace", "10.4.0.0/16", "via", "10.9.0.6", "dev", "va", "proto",
       "static"},
      {"ip", "-n", "ns1", "-6", "route", "replace", "fd01::/64", "via", "fd00::2", "dev", "va",
       "metric", "1024"},
      {"ip", "-n", "ns1", "-4", "neigh", "replace", "10.9.0.5", "lladdr", "02:00:00:00:00:05", "dev",
       "va", "nud", "permanent"},
      {"ip", "-n", "ns1", "-6", "neigh", "replace", "fd00::5", "lladdr", "02:00:00:00:00:06", "dev",
       "va", "nud", "permanent"},
  };
  std::vector<Argv> restore;
  for (const UndoStep& step : snapshot->restore) {
    EXPECT_TRUE(check_step(step).ok()) << check_step(step).to_string();
    restore.push_back(undo_argv("ns1", step));
  }
  EXPECT_EQ(restore, expected);
}

TEST(LinkSnapshot, KnowsALinkThatIsAlreadyDown) {
  auto snapshot = snapshot_from_json(
      "", "va", {R"([{"ifname":"va","flags":["BROADCAST","MULTICAST"],"addr_info":[]}])", "[]",
                 "[]", "[]"});
  ASSERT_TRUE(snapshot.ok());
  EXPECT_FALSE(snapshot->was_up);
}

TEST(LinkSnapshot, NamesAMissingInterfaceAndRejectsBadJson) {
  auto missing = snapshot_from_json("", "nope", {kAddrJson, "[]", "[]", "[]"});
  ASSERT_THAT(missing, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(missing.status().message().find("nope"), std::string::npos);
  EXPECT_THAT(snapshot_from_json("", "va", {"[{", "[]", "[]", "[]"}),
              StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(snapshot_from_json("", "va", {kAddrJson, "{}", "[]", "[]"}),
              StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(snapshot_from_json("", "va", {kAddrJson, R"([{"dev":"va"}])", "[]", "[]"}),
              StatusIs(StatusCode::kDataLoss))
      << "a route without a destination cannot be restored";
  EXPECT_THAT(snapshot_from_json("", "va", {kAddrJson, "[]", "[]", R"([{"dst":"10.9.0.5","lladdr":"-x"}])"}),
              StatusIs(StatusCode::kInvalidArgument))
      << "a neighbour's address must be one";
}

TEST(FlapSpec, OnceOrPeriodic) {
  auto once = parse_flap_spec("2s");
  ASSERT_TRUE(once.ok());
  EXPECT_EQ(once->down_for, nanoseconds(2'000'000'000));
  EXPECT_FALSE(once->every.has_value());
  auto periodic = parse_flap_spec("500ms,5s");
  ASSERT_TRUE(periodic.ok());
  EXPECT_EQ(periodic->down_for, nanoseconds(500'000'000));
  EXPECT_EQ(periodic->every.value(), nanoseconds(5'000'000'000));
}

TEST(FlapSpec, RejectsNonsense) {
  EXPECT_THAT(parse_flap_spec("0s"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_flap_spec("5s,5s"), StatusIs(StatusCode::kInvalidArgument))
      << "never up is not a flap";
  EXPECT_THAT(parse_flap_spec("1s,"), StatusIs(StatusCode::kInvalidArgument));
  auto bad = parse_flap_spec("1s,soon");
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find("EVERY"), std::string::npos);
}

}  // namespace
}  // namespace collide::injectors
