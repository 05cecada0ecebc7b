#include "orchestrator/testbed/ip_batch.h"

#include <gtest/gtest.h>

namespace collide::orchestrator::testbed {
namespace {

// A namespace no testbed creates: `ip -n` fails to enter it, with or without root.
constexpr const char* kMissingNamespace = "collide-ip-batch-test-no-such-namespace";

TEST(IpBatchTest, NoLinesRunNothing) {
  // Nothing to do succeeds without starting ip, even where ip could not enter the namespace.
  EXPECT_TRUE(ip_batch(kMissingNamespace, {}).ok());
}

TEST(IpBatchTest, AFailureNamesTheNamespaceAndQuotesIp) {
  const Status s = ip_batch(kMissingNamespace, {"route replace 198.18.0.0/24 via 198.18.1.1"});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(kMissingNamespace), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("-batch -` exited with"), std::string::npos) << s.message();
  // What ip itself said about the namespace it could not open.
  EXPECT_NE(s.message().find("network namespace"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace collide::orchestrator::testbed
