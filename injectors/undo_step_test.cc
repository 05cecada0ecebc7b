#include "injectors/undo_step.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace collide::injectors {
namespace {

using nlohmann::json;
using Argv = std::vector<std::string>;

std::string refusal(const std::string& text) {
  auto step = decode_step(json::parse(text));
  return step.ok() ? "accepted" : step.status().message();
}

TEST(UndoStep, BuildsTheCommandOfEachOperation) {
  EXPECT_EQ(undo_argv("a", UndoStep::delete_qdisc("v0", "root")),
            (Argv{"tc", "-n", "a", "qdisc", "del", "dev", "v0", "root", "handle", "c011:"}));
  EXPECT_EQ(undo_argv("", UndoStep::delete_qdisc("v0", "1:2")),
            (Argv{"tc", "qdisc", "del", "dev", "v0", "parent", "1:2", "handle", "c011:"}));
  EXPECT_EQ(undo_argv("a", UndoStep::delete_clsact("v0")),
            (Argv{"tc", "-n", "a", "qdisc", "del", "dev", "v0", "clsact"}));
  EXPECT_EQ(undo_argv("a", UndoStep::delete_ingress_redirect("v0")),
            (Argv{"tc", "-n", "a", "filter", "del", "dev", "v0", "ingress", "pref", "49169"}));
  EXPECT_EQ(undo_argv("a", UndoStep::delete_ifb("collide-ifb3")),
            (Argv{"ip", "-n", "a", "link", "del", "dev", "collide-ifb3"}));
  EXPECT_EQ(undo_argv("a", UndoStep::set_link_up("v0")),
            (Argv{"ip", "-n", "a", "link", "set", "dev", "v0", "up"}));
  EXPECT_EQ(undo_argv("a", UndoStep::detach_xdp("v0", 42), 1),
            (Argv{"ip", "-n", "a", "link", "set", "dev", "v0", "xdpdrv", "off"}));
  EXPECT_EQ(undo_argv("a", UndoStep::detach_xdp("v0", 42), 2),
            (Argv{"ip", "-n", "a", "link", "set", "dev", "v0", "xdpgeneric", "off"}));
  EXPECT_EQ(undo_argv("a", UndoStep::delete_route(false, "198.19.0.0/27")),
            (Argv{"ip", "-n", "a", "-4", "route", "del", "198.19.0.0/27"}));
  EXPECT_EQ(undo_argv("a", UndoStep::delete_route(true, "fd00::/64", "100")),
            (Argv{"ip", "-n", "a", "-6", "route", "del", "fd00::/64", "table", "100"}));
  EXPECT_EQ(undo_argv("a", UndoStep::replace_neighbor("v0", {false, "10.0.0.2", "02:00:00:00:00:02"})),
            (Argv{"ip", "-n", "a", "-4", "neigh", "replace", "10.0.0.2", "lladdr",
                  "02:00:00:00:00:02", "dev", "v0", "nud", "permanent"}));
}

TEST(UndoStep, KnowsWhichStepsIpPerformsAndWithWhichFamily) {
  auto up = ip_step(UndoStep::set_link_up("v0"));
  ASSERT_TRUE(up.has_value());
  EXPECT_EQ(up->family, IpStep::Family::kAny);
  EXPECT_EQ(up->args, (Argv{"link", "set", "dev", "v0", "up"}));
  auto route = ip_step(UndoStep::delete_route(true, "fd00::/64"));
  ASSERT_TRUE(route.has_value());
  EXPECT_EQ(route->family, IpStep::Family::kIpv6);
  EXPECT_EQ(route->args, (Argv{"route", "del", "fd00::/64"}));
  EXPECT_FALSE(ip_step(UndoStep::delete_qdisc("v0", "root")).has_value()) << "tc's";
  EXPECT_FALSE(ip_step(UndoStep::detach_xdp("v0", 7)).has_value()) << "its keyword depends on the mode";
}

TEST(UndoStep, RoundTripsEveryOperation) {
  RouteSpec route;
  route.dst = "10.7.0.0/16";
  route.nexthops = {{"10.9.0.3", "va", 1}, {"10.9.0.4", "va", std::nullopt}};
  route.metric = 5;
  route.table = "100";
  const std::vector<UndoStep> steps = {
      UndoStep::delete_qdisc("v0", "root"), UndoStep::delete_clsact("v0"),
      UndoStep::delete_ingress_redirect("v0"), UndoStep::delete_ifb("collide-ifb0"),
      UndoStep::set_link_up("v0"),
      UndoStep::replace_address("v0", {true, "fd00::1/64", "", "link"}),
      UndoStep::replace_route(route), UndoStep::delete_route(false, "198.19.0.32/27", "100"),
      UndoStep::detach_xdp("v0", 42),
      UndoStep::replace_neighbor("v0", {true, "fd00::2", "02:00:00:00:00:02"})};
  for (const UndoStep& step : steps) {
    auto decoded = decode_step(encode_step(step));
    ASSERT_TRUE(decoded.ok()) << encode_step(step).dump() << ": " << decoded.status().message();
    EXPECT_EQ(undo_argv("n", *decoded), undo_argv("n", step));
  }
}

TEST(UndoStep, RefusesAnOperationOutsideTheSet) {
  EXPECT_EQ(refusal(R"({"op":"run","argv":["sh"]})"), "unknown undo operation \"run\"");
  EXPECT_NE(refusal(R"({"dev":"v0"})").find("malformed undo step"), std::string::npos);
}

TEST(UndoStep, RefusesFieldsThatCouldBeReadAsOptionsOrKeywords) {
  EXPECT_EQ(refusal(R"({"op":"set-link-up","dev":"-batch"})"),
            "dev \"-batch\" is not an interface name");
  EXPECT_EQ(refusal(R"({"op":"set-link-up","dev":"a b"})"), "dev \"a b\" is not an interface name");
  EXPECT_EQ(refusal(R"({"op":"set-link-up","dev":"sixteen-chars-xx"})"),
            "dev \"sixteen-chars-xx\" is not an interface name");
  EXPECT_EQ(refusal(R"({"op":"delete-ifb","dev":"eth0"})"),
            "dev \"eth0\" is not a collide ifb device");
  EXPECT_EQ(refusal(R"({"op":"delete-qdisc","dev":"v0","parent":"root handle"})"),
            "parent \"root handle\" is not \"root\" or a qdisc handle");
  EXPECT_EQ(refusal(R"({"op":"replace-address","dev":"v0","family":"inet","cidr":"10.0.0.1"})"),
            "cidr \"10.0.0.1\" is not an address with a prefix length");
  EXPECT_EQ(refusal(R"({"op":"replace-address","dev":"v0","family":"inet","cidr":"10.0.0.1/33"})"),
            "cidr \"10.0.0.1/33\" is not an address with a prefix length");
  EXPECT_EQ(refusal(R"({"op":"replace-route","family":"inet","dst":"10.0.0.0/8","protocol":"-f"})"),
            "protocol \"-f\" is not a name or a number");
  EXPECT_EQ(refusal(R"({"op":"replace-route","family":"inet","dst":"10.0.0.0/8","type":"nat"})"),
            "type \"nat\" is not a route type collide restores");
  EXPECT_EQ(refusal(R"({"op":"replace-route","family":"inet","dst":"fd00::/8"})"),
            "dst \"fd00::/8\" is not \"default\" or an address of the route's family");
  EXPECT_EQ(refusal(R"({"op":"replace-route","family":"inet","dst":"default","metric":-1})"),
            "metric \"-1\" is not a count");
  EXPECT_EQ(refusal(R"({"op":"detach-xdp","dev":"v0","prog_id":0})"),
            "prog_id \"0\" is not a BPF program id");
  EXPECT_EQ(refusal(R"({"op":"detach-xdp","dev":"v0","prog_id":"1; reboot"})"),
            "prog_id \"\"1; reboot\"\" is not a BPF program id");
  EXPECT_EQ(refusal(R"({"op":"replace-route","family":"ipx","dst":"default"})"),
            "family \"ipx\" is not inet or inet6");
  // A deletion names one prefix collide added, never a whole default route.
  EXPECT_EQ(refusal(R"({"op":"delete-route","family":"inet","dst":"default"})"),
            "dst \"default\" is not an address with a prefix length");
  EXPECT_EQ(refusal(R"({"op":"delete-route","family":"inet","dst":"198.19.0.0/27","table":"-batch"})"),
            "table \"-batch\" is not a name or a number");
  EXPECT_EQ(refusal(R"({"op":"replace-neighbor","dev":"v0","family":"inet","ip":"fd00::2","mac":"02:00:00:00:00:02"})"),
            "ip \"fd00::2\" is not an address of the family");
  EXPECT_EQ(refusal(R"({"op":"replace-neighbor","dev":"v0","family":"inet","ip":"10.0.0.2","mac":"02:00 nud"})"),
            "mac \"02:00 nud\" is not a MAC address");
}

}  // namespace
}  // namespace collide::injectors
