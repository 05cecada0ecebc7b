// The virtual fabric for real: a leaf-spine testbed is built, carries traffic between the rank
// addresses of two hosts across the spines, and leaves nothing behind.
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "common/process.h"
#include "orchestrator/testbed/virtual_testbed.h"
#include "tests/support/leaf_spine_spec.h"
#include "tests/support/privileged.h"

namespace collide::orchestrator::testbed {
namespace {

using process::run_checked;
using process::run_command;

v1::VirtualTestbedSpec small_fabric() { return testing::leaf_spine_spec("cltb", 2, 2, 2); }

std::string ip_string(uint32_t a) {
  return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." +
         std::to_string((a >> 8) & 0xff) + "." + std::to_string(a & 0xff);
}

TEST(VirtualTestbedTest, RoutesRankAddressesAcrossTheSpinesAndCleansUp) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  COLLIDE_REQUIRE(testing::missing_tool("ping"));
  (void)remove_testbed("cltb");  // a crashed earlier run's leftovers
  auto plan = plan_testbed(small_fabric());
  ASSERT_TRUE(plan.ok());
  {
    auto tb = VirtualTestbed::create(*plan);
    ASSERT_TRUE(tb.ok()) << tb.status().to_string();
    auto listed = list_testbeds();
    ASSERT_TRUE(listed.ok());
    EXPECT_NE(std::find(listed->begin(), listed->end(), "cltb"), listed->end());

    // Give each host's kernel its first rank address so ping can stand in for the replayer:
    // the hosts reach each other only through leaf -> spine -> leaf.
    for (const HostNic& nic : (*tb)->plan().nics) {
      const std::string rank_ip = ip_string(rank_address(nic.host, nic.nic, 0));
      std::string gateway;
      for (const PlannedLink& l : (*tb)->plan().links) {
        if (l.a.mac == nic.mac) gateway = l.b.address.substr(0, l.b.address.find('/'));
      }
      ASSERT_TRUE(run_checked({"ip", "-n", nic.netns, "addr", "add", rank_ip + "/32", "dev", nic.ifname}).ok());
      ASSERT_TRUE(run_checked({"ip", "-n", nic.netns, "route", "add", "198.19.0.0/16", "via", gateway,
                               "src", rank_ip}).ok());
    }
    auto ping = run_command({"ip", "netns", "exec", "cltb-h0", "ping", "-c", "3", "-i", "0.2", "-W",
                             "2", ip_string(rank_address(1, 0, 0))});
    ASSERT_TRUE(ping.ok());
    EXPECT_EQ(ping->exit_code, 0) << ping->output;
    EXPECT_NE(ping->output.find("ttl=61"), std::string::npos)  // three routers: leaf, spine, leaf
        << ping->output;
  }
  auto after = list_testbeds();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(std::find(after->begin(), after->end(), "cltb"), after->end());
  EXPECT_EQ(remove_testbed("cltb").code(), StatusCode::kNotFound);
}

TEST(VirtualTestbedTest, RefusesASecondTestbedOfTheSameName) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  (void)remove_testbed("cltb");
  auto plan = plan_testbed(small_fabric());
  auto first = VirtualTestbed::create(*plan);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  auto second = VirtualTestbed::create(*plan);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("already exists"), std::string::npos);
}


// Builds the testbed in a child that then dies without removing it, as a killed run would.
void build_in_a_process_that_dies(const TestbedPlan& plan) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto orphaned = VirtualTestbed::create(plan);
    _exit(orphaned.ok() ? 0 : 1);  // no destructor runs: as if killed
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// A run killed before it could remove its fabric leaves the namespaces; the next run of the same
// name finds their owner gone and sweeps them, where a live owner's testbed is refused above.
TEST(VirtualTestbedTest, SweepsATestbedWhoseRunDied) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  (void)remove_testbed("cltb");
  auto plan = plan_testbed(small_fabric());
  ASSERT_NO_FATAL_FAILURE(build_in_a_process_that_dies(*plan));
  auto left = list_testbeds();
  ASSERT_TRUE(left.ok());
  ASSERT_NE(std::find(left->begin(), left->end(), "cltb"), left->end()) << "nothing was left";

  auto next = VirtualTestbed::create(*plan);
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  next->reset();
  auto after = list_testbeds();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(std::find(after->begin(), after->end(), "cltb"), after->end());
}

bool testbed_listed(const std::string& name) {
  auto listed = list_testbeds();
  return listed.ok() && std::find(listed->begin(), listed->end(), name) != listed->end();
}

// `collide testbed down` must not pull a running run's fabric from under it (the run would hang
// until its own timeouts), and a second build of the name must say who holds it rather than
// recommend that very command.
TEST(VirtualTestbedTest, TestbedDownRefusesATestbedWhoseOwnerRunsUnlessForced) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  (void)remove_testbed("cltb");
  auto plan = plan_testbed(small_fabric());
  auto live = VirtualTestbed::create(*plan);  // this test's process owns it, and runs
  ASSERT_TRUE(live.ok()) << live.status().to_string();
  const std::string pid = "pid " + std::to_string(getpid());

  auto down = run_command({COLLIDE_BIN, "testbed", "down", "cltb"});
  ASSERT_TRUE(down.ok());
  EXPECT_NE(down->exit_code, 0) << down->output;
  EXPECT_NE(down->output.find(pid), std::string::npos) << down->output;
  EXPECT_NE(down->output.find("--force"), std::string::npos) << down->output;
  EXPECT_TRUE(testbed_listed("cltb"));

  auto second = VirtualTestbed::create(*plan);
  ASSERT_FALSE(second.ok());
  const std::string& m = second.status().message();
  EXPECT_NE(m.find(pid), std::string::npos) << m;
  EXPECT_NE(m.find("stop it"), std::string::npos) << m;
  EXPECT_EQ(m.find("collide testbed down"), std::string::npos) << m;

  auto forced = run_command({COLLIDE_BIN, "testbed", "down", "--force", "cltb"});
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ(forced->exit_code, 0) << forced->output;
  EXPECT_FALSE(testbed_listed("cltb"));
}

// A testbed whose run died is anybody's to remove.
TEST(VirtualTestbedTest, TestbedDownRemovesATestbedWhoseOwnerDied) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  (void)remove_testbed("cltb");
  auto plan = plan_testbed(small_fabric());
  ASSERT_NO_FATAL_FAILURE(build_in_a_process_that_dies(*plan));
  ASSERT_TRUE(testbed_listed("cltb"));
  auto down = run_command({COLLIDE_BIN, "testbed", "down", "cltb"});
  ASSERT_TRUE(down.ok());
  EXPECT_EQ(down->exit_code, 0) << down->output;
  EXPECT_FALSE(testbed_listed("cltb"));
}

// A namespace that cannot be removed (here: its file is mounted over a second time, so
// `ip netns del` detaches one mount and cannot unlink the file) keeps the testbed's owner record:
// once the run is gone, the next run sweeps what it left instead of refusing to start with
// "already exists". Removing it by hand says which namespace stayed and why.
TEST(VirtualTestbedTest, AFailedTeardownIsReportedAndSweptByTheNextRun) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  (void)remove_testbed("cltb");
  auto plan = plan_testbed(small_fabric());
  ASSERT_TRUE(plan.ok());
  const std::string pinned = "/run/netns/cltb-h0";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The run: builds, cannot take down one namespace when it ends, and is gone.
    auto bed = VirtualTestbed::create(*plan);
    if (!bed.ok()) _exit(2);
    if (!run_checked({"mount", "--bind", pinned, pinned}).ok()) _exit(3);
    bed->reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  auto left = list_testbeds();
  ASSERT_TRUE(left.ok());
  ASSERT_NE(std::find(left->begin(), left->end(), "cltb"), left->end()) << "nothing was left";

  // The next run finds the owner gone and sweeps the leftovers.
  auto next = VirtualTestbed::create(*plan);
  ASSERT_TRUE(next.ok()) << next.status().to_string();
  ASSERT_TRUE(run_checked({"mount", "--bind", pinned, pinned}).ok());
  const Status removed = (*next)->remove();
  EXPECT_FALSE(removed.ok());
  EXPECT_NE(removed.message().find("cltb-h0"), std::string::npos) << removed.to_string();
  EXPECT_NE(removed.message().find("busy"), std::string::npos) << removed.to_string();
  EXPECT_TRUE((*next)->remove().ok()) << "the second try finds one mount left and removes it";
  auto after = list_testbeds();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(std::find(after->begin(), after->end(), "cltb"), after->end());
}

// `collide testbed up` keeps its fabric on purpose: no later run may take it away.
TEST(VirtualTestbedTest, KeptTestbedIsNotSwept) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  (void)remove_testbed("cltb");
  auto plan = plan_testbed(small_fabric());
  {
    auto kept = VirtualTestbed::create(*plan);
    ASSERT_TRUE(kept.ok()) << kept.status().to_string();
    (*kept)->keep();
  }
  auto second = VirtualTestbed::create(*plan);
  EXPECT_FALSE(second.ok());
  EXPECT_TRUE(remove_testbed("cltb").ok());
}

// The output of `argv`, which must succeed.
std::string output_of(const std::vector<std::string>& argv) {
  auto out = run_command(argv);
  EXPECT_TRUE(out.ok() && out->exit_code == 0) << argv.back() << ": " << (out.ok() ? out->output : "");
  return out.ok() ? out->output : "";
}

// Rails for real: every host namespace gets one interface per NIC with the plan's MTU, shaping and
// no IPv6 (so the links' counters count only what the replay sends), NIC r of both hosts meets
// under leaf r, and a cross-rail path climbs through the spine.
TEST(VirtualTestbedTest, RailsGiveEachHostOneShapedInterfacePerNicOnItsRailLeaf) {
  COLLIDE_REQUIRE(testing::missing_netns());
  COLLIDE_REQUIRE(testing::missing_tool("ethtool"));
  COLLIDE_REQUIRE(testing::missing_tool("ping"));
  v1::VirtualTestbedSpec spec;
  spec.set_name("railtb");
  spec.set_hosts(2);
  spec.set_nics_per_host(2);
  spec.set_leaves(2);
  spec.set_spines(1);
  spec.set_mtu(4200);
  spec.set_host_link_gbps(5);
  (void)remove_testbed("railtb");
  auto plan = plan_testbed(spec);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  auto tb = VirtualTestbed::create(*plan);
  ASSERT_TRUE(tb.ok()) << tb.status().to_string();
  for (const HostNic& nic : (*tb)->plan().nics) {
    const std::string link = output_of({"ip", "-n", nic.netns, "-o", "link", "show", nic.ifname});
    EXPECT_NE(link.find("mtu 4200"), std::string::npos) << link;
    EXPECT_NE(link.find(nic.mac), std::string::npos) << link;
    EXPECT_NE(link.find("state UP"), std::string::npos) << link;
    EXPECT_NE(output_of({"tc", "-n", nic.netns, "qdisc", "show", "dev", nic.ifname}).find("tbf"),
              std::string::npos);
    EXPECT_EQ(output_of({"ip", "netns", "exec", nic.netns, "cat",
                         "/proc/sys/net/ipv6/conf/" + nic.ifname + "/disable_ipv6"}), "1\n");
    EXPECT_EQ(output_of({"ip", "-n", nic.netns, "-6", "addr", "show", "dev", nic.ifname}), "");
  }
  for (const PlannedNamespace& ns : (*tb)->plan().namespaces) {
    EXPECT_EQ(output_of({"ip", "-n", ns.name, "-6", "addr", "show"}), "") << ns.name;
  }
  // Each NIC's kernel gets its first rank address and a route via its own leaf.
  for (const HostNic& nic : (*tb)->plan().nics) {
    const std::string rank_ip = ip_string(rank_address(nic.host, nic.nic, 0));
    std::string gateway;
    for (const PlannedLink& l : (*tb)->plan().links) {
      if (l.a.mac == nic.mac) gateway = l.b.address.substr(0, l.b.address.find('/'));
    }
    ASSERT_TRUE(run_checked({"ip", "-n", nic.netns, "addr", "add", rank_ip + "/32", "dev", nic.ifname}).ok());
    ASSERT_TRUE(run_checked({"ip", "-n", nic.netns, "route", "add",
                             ip_string(rank_address(1 - nic.host, 0, 0) & ~0xffu) + "/24", "via", gateway,
                             "dev", nic.ifname, "src", rank_ip, "table", std::to_string(100 + nic.nic)}).ok());
    ASSERT_TRUE(run_checked({"ip", "-n", nic.netns, "rule", "add", "from", rank_ip, "table",
                             std::to_string(100 + nic.nic)}).ok());
  }
  const auto ping = [](const std::string& from, const std::string& to) {
    return output_of({"ip", "netns", "exec", "railtb-h0", "ping", "-c", "2", "-i", "0.2", "-W", "2",
                      "-I", from, to});
  };
  // Same rail: one router (its leaf). Across rails: leaf, spine, leaf.
  EXPECT_NE(ping(ip_string(rank_address(0, 1, 0)), ip_string(rank_address(1, 1, 0))).find("ttl=63"),
            std::string::npos);
  EXPECT_NE(ping(ip_string(rank_address(0, 0, 0)), ip_string(rank_address(1, 1, 0))).find("ttl=61"),
            std::string::npos);
}

}  // namespace
}  // namespace collide::orchestrator::testbed
