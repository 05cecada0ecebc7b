// A build without eBPF: qp-hash and spray balancing refuse to load and say why and what works.
#include <gtest/gtest.h>

#include "injectors/fabric_balance.h"

namespace collide::injectors {
namespace {

TEST(WithoutEbpfTest, LoadingTheFabricBalancerSaysTheBuildLacksEbpf) {
  for (Balancing mode : {Balancing::kQpHash, Balancing::kSpray}) {
    auto balancer = FabricBalancer::load(mode, 1);
    ASSERT_FALSE(balancer.ok());
    EXPECT_EQ(balancer.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(balancer.status().message().find("without eBPF (-DCOLLIDE_WITH_EBPF=OFF)"),
              std::string::npos)
        << balancer.status().message();
    EXPECT_NE(balancer.status().message().find("load_balancing: ecmp"), std::string::npos);
  }
}

}  // namespace
}  // namespace collide::injectors
