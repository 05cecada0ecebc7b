#include "orchestrator/testbed/switch_routes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/leaf_spine_spec.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::testbed {
namespace {

// Three leaves, two spines, one host per leaf (host h under leaf h).
v1::VirtualTestbedSpec three_leaves() { return testing::leaf_spine_spec("tb", 3, 3, 2); }

void add_route(v1::VirtualTestbedSpec& s, const std::string& on, uint32_t host, const std::string& via) {
  v1::SwitchRoute* r = s.add_routes();
  r->set_on(on);
  r->set_to_host(host);
  r->set_via(via);
}

// The next hops `netns` has for `prefix`, and how many routes name it there.
std::pair<std::vector<std::string>, int> route_of(const TestbedPlan& plan, const std::string& netns,
                                                  const std::string& prefix) {
  std::pair<std::vector<std::string>, int> out;
  for (const PlannedRoute& r : plan.routes) {
    if (r.netns == netns && r.prefix == prefix) {
      out.first = r.via;
      ++out.second;
    }
  }
  return out;
}

// The address of `to`'s end of the link between `from` and `to`, without its /31.
std::string address_towards(const TestbedPlan& plan, const std::string& from, const std::string& to) {
  for (const PlannedLink& l : plan.links) {
    const LinkEnd* far = l.a.netns == from && l.b.netns == to   ? &l.b
                         : l.b.netns == from && l.a.netns == to ? &l.a
                                                                : nullptr;
    if (far != nullptr) return far->address.substr(0, far->address.find('/'));
  }
  return "";
}

TEST(SwitchRoutesTest, ASpineSendsAHostsTrafficDownToTheWrongLeafAndThatLeafSendsItUpAgain) {
  v1::VirtualTestbedSpec spec = three_leaves();
  const auto plain = plan_testbed(spec);
  ASSERT_TRUE(plain.ok()) << plain.status().to_string();
  add_route(spec, "spine0", 0, "leaf1");
  add_route(spec, "leaf1", 0, "spine1");
  const auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const std::string h0 = plan->nics[0].rank_subnet;

  // spine0 had h0 via leaf0; now via leaf1, in place (one route for the prefix).
  EXPECT_EQ(route_of(*plain, "tb-spine0", h0).first,
            std::vector<std::string>{address_towards(*plain, "tb-spine0", "tb-leaf0")});
  EXPECT_EQ(route_of(*plan, "tb-spine0", h0),
            std::pair(std::vector<std::string>{address_towards(*plan, "tb-spine0", "tb-leaf1")}, 1));
  // leaf1 had no route of h0's own (its default spreads over both spines); now one, to spine1.
  EXPECT_EQ(route_of(*plain, "tb-leaf1", h0).second, 0);
  EXPECT_EQ(route_of(*plan, "tb-leaf1", h0),
            std::pair(std::vector<std::string>{address_towards(*plan, "tb-leaf1", "tb-spine1")}, 1));
  // Nothing else changed.
  EXPECT_EQ(plan->routes.size(), plain->routes.size() + 1);
  EXPECT_EQ(route_of(*plan, "tb-spine1", h0), route_of(*plain, "tb-spine1", h0));
}

TEST(SwitchRoutesTest, EveryNicOfTheHostIsRouted) {
  v1::VirtualTestbedSpec spec = three_leaves();
  spec.set_nics_per_host(3);  // rails: NIC r of every host on leaf r
  spec.set_hosts(2);
  add_route(spec, "spine1", 1, "leaf2");
  const auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const std::string leaf2 = address_towards(*plan, "tb-spine1", "tb-leaf2");
  int routed = 0;
  for (const HostNic& nic : plan->nics) {
    const auto [via, count] = route_of(*plan, "tb-spine1", nic.rank_subnet);
    EXPECT_EQ(count, 1) << nic.rank_subnet;
    if (nic.host == 1) {
      EXPECT_EQ(via, std::vector<std::string>{leaf2}) << nic.nic;
      ++routed;
    } else {
      EXPECT_EQ(via, std::vector<std::string>{address_towards(*plan, "tb-spine1", "tb-leaf" + std::to_string(nic.nic))});
    }
  }
  EXPECT_EQ(routed, 3);
}

TEST(SwitchRoutesTest, RefusesWhatCannotBeRoutedNamingTheField) {
  struct Case {
    std::string on;
    uint32_t host;
    std::string via;
    std::string field, says;
  };
  const std::vector<Case> cases = {
      {"spine7", 0, "leaf1", "routes[0].on", "no switch 'spine7'"},
      {"h0", 0, "leaf1", "routes[0].on", "no switch 'h0'"},
      {"spine0", 0, "leaf9", "routes[0].via", "no switch 'leaf9'"},
      {"spine0", 3, "leaf1", "routes[0].to_host", "3 but the hosts are 0..2"},
      {"leaf0", 1, "leaf1", "routes[0].via", "leaf1 is not cabled to leaf0"},
      {"spine0", 0, "spine1", "routes[0].via", "spine1 is not cabled to spine0"},
  };
  for (const Case& c : cases) {
    v1::VirtualTestbedSpec spec = three_leaves();
    add_route(spec, c.on, c.host, c.via);
    const auto e = check_switch_routes(spec);
    ASSERT_TRUE(e.has_value()) << c.on << " " << c.via;
    EXPECT_EQ(e->field, c.field);
    EXPECT_NE(e->what.find(c.says), std::string::npos) << e->what;
    const auto plan = plan_testbed(spec);
    EXPECT_THAT(plan.status(), StatusIs(StatusCode::kInvalidArgument, c.field + ": " + e->what));
  }

  v1::VirtualTestbedSpec twice = three_leaves();
  add_route(twice, "spine0", 0, "leaf1");
  add_route(twice, "spine0", 0, "leaf2");
  const auto e = check_switch_routes(twice);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->field, "routes[1]");
  EXPECT_NE(e->what.find("spine0 already has a route of its own to host 0"), std::string::npos) << e->what;

  v1::VirtualTestbedSpec sprayed = three_leaves();
  add_route(sprayed, "spine0", 0, "leaf1");
  sprayed.set_load_balancing(v1::VirtualTestbedSpec::LOAD_BALANCING_SPRAY);
  ASSERT_TRUE(check_switch_routes(sprayed).has_value());
  EXPECT_EQ(check_switch_routes(sprayed)->field, "routes");

  EXPECT_FALSE(check_switch_routes(three_leaves()).has_value());
}

}  // namespace
}  // namespace collide::orchestrator::testbed
