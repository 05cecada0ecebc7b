#include "injectors/sweep.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace collide::injectors {
namespace {

using Argv = std::vector<std::string>;

// Recorded with iproute2 6.1: a collide tbf at the root, a clsact, and someone else's tbf.
constexpr const char* kQdiscs = R"([
{"kind":"tbf","handle":"c011:","root":true,"refcnt":3,"options":{"rate":25000000}},
{"kind":"clsact","handle":"ffff:","parent":"ffff:fff1","options":{}}])";
constexpr const char* kNestedQdiscs = R"([
{"kind":"tbf","handle":"8001:","root":true,"options":{}},
{"kind":"tbf","handle":"c011:","parent":"8001:1","options":{}}])";
constexpr const char* kIngressFilters = R"([
{"protocol":"all","pref":49169,"kind":"u32","chain":0},
{"protocol":"all","pref":49169,"kind":"u32","chain":0,"options":{"fh":"800:","ht_divisor":1}},
{"protocol":"all","pref":49169,"kind":"u32","chain":0,"options":{"fh":"800::800","order":2048}},
{"protocol":"all","pref":7,"kind":"bpf","chain":0,"options":{"handle":"0xc011de",
 "bpf_name":"roce_drop.bpf.o:[tc]","direct-action":true}},
{"protocol":"all","pref":8,"kind":"bpf","chain":0,"options":{"handle":"0x1","bpf_name":"theirs"}},
{"protocol":"all","pref":100,"kind":"u32","chain":0}])";

TEST(SweepScan, FindsCollideQdiscsOnly) {
  auto found = collide_qdiscs("a", "veth0", kQdiscs);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].command,
            (Argv{"tc", "-n", "a", "qdisc", "del", "dev", "veth0", "root", "handle", "c011:"}));
  auto nested = collide_qdiscs("", "eth0", kNestedQdiscs);
  ASSERT_EQ(nested.size(), 1u);
  EXPECT_EQ(nested[0].command,
            (Argv{"tc", "qdisc", "del", "dev", "eth0", "parent", "8001:1", "handle", "c011:"}));
  EXPECT_TRUE(collide_qdiscs("", "eth0", R"([{"kind":"tbf","handle":"8001:","root":true}])")
                  .empty());
  EXPECT_TRUE(collide_qdiscs("", "eth0", "not json").empty());
}

TEST(SweepScan, FindsCollideFiltersOnceEach) {
  auto found = collide_filters("", "veth0", "ingress", kIngressFilters);
  ASSERT_EQ(found.size(), 2u) << "the u32 pref once, our bpf filter, nobody else's";
  EXPECT_EQ(found[0].command, (Argv{"tc", "filter", "del", "dev", "veth0", "ingress", "pref",
                                    "49169"}));
  EXPECT_EQ(found[1].command, (Argv{"tc", "filter", "del", "dev", "veth0", "ingress", "pref", "7",
                                    "handle", "0xc011de", "bpf"}));
  EXPECT_NE(found[1].what.find("roce_drop"), std::string::npos);
  // collide never puts a u32 filter on egress: one there at our pref is not ours.
  EXPECT_EQ(collide_filters("", "veth0", "egress", kIngressFilters).size(), 1u);
}

TEST(SweepScan, FindsIfbsByNameAndKind) {
  constexpr const char* kLinks = R"([
{"ifname":"lo","linkinfo":null},
{"ifname":"collide-ifb0","linkinfo":{"info_kind":"ifb"}},
{"ifname":"collide-ifb12","linkinfo":{"info_kind":"ifb"}},
{"ifname":"collide-ifb3","linkinfo":{"info_kind":"veth"}},
{"ifname":"collide-ifbx","linkinfo":{"info_kind":"ifb"}},
{"ifname":"my-ifb0","linkinfo":{"info_kind":"ifb"}}])";
  auto found = collide_ifbs("b", kLinks);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].device, "collide-ifb0");
  EXPECT_EQ(found[1].command, (Argv{"ip", "-n", "b", "link", "del", "dev", "collide-ifb12"}));
}

// A state directory whose owner's pid or record id is too large for its type is reported as an
// error and skipped; the sweep goes on instead of aborting.
TEST(SweepStateDir, NumbersThatDoNotFitAreErrors) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("collide-sweep-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "99999999999.5");
  fs::create_directories(dir / "1.5");
  std::ofstream(dir / "1.5" / "99999999999999999999999.json") << "{}";
  SweepOptions options;
  options.state_dir = dir;
  options.namespaces = std::vector<std::string>{};
  auto report = sweep(options);
  fs::remove_all(dir);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->errors.size(), 2u) << ::testing::PrintToString(report->errors);
  std::string all = report->errors[0] + "\n" + report->errors[1];
  EXPECT_NE(all.find("99999999999.5: owner pid: 99999999999 is out of range"), std::string::npos)
      << all;
  EXPECT_NE(all.find("99999999999999999999999.json: record id: 99999999999999999999999 is out of "
                     "range"),
            std::string::npos)
      << all;
  EXPECT_TRUE(report->removed.empty());
}

}  // namespace
}  // namespace collide::injectors
