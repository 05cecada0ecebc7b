#include "traces/kineto/kineto_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/status_matchers.h"
#include "traces/analysis/trace_validator.h"
#include "traces/trace_test_util.h"

namespace collide::traces::kineto {
namespace {

namespace fs = std::filesystem;

const std::string kData = COLLIDE_KINETO_TESTDATA;

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("collide_kineto_" + std::to_string(::getpid()) + name);
}

TEST(KinetoImport, CpuAndKernelEventsOfACollectiveMakeOneOp) {
  const std::string out = temp("a.trace").string();
  auto report = import_kineto({kData}, out, {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->problems_total, 0u);
  EXPECT_EQ(report->ranks, 2u);
  EXPECT_EQ(report->units_read, 20u);  // 5 collectives x 2 events x 2 ranks
  EXPECT_EQ(report->ops, 10u);
  const LoadedTrace l = load_trace(out);
  EXPECT_EQ(l.header.source_format(), v1::SOURCE_FORMAT_KINETO);
  ASSERT_EQ(l.header.communicators_size(), 1);
  EXPECT_EQ(l.header.communicators(0).ranks_size(), 2);
  ASSERT_EQ(l.ops.size(), 10u);
  const v1::Op& ar = l.ops[0];
  EXPECT_EQ(ar.rank(), 0u);
  EXPECT_EQ(ar.kind(), v1::OP_KIND_ALL_REDUCE);
  EXPECT_EQ(ar.bytes(), 4u * 1048576u);
  EXPECT_EQ(ar.enqueue_time_ns(), 10'000'000u);   // the CPU event's ts
  EXPECT_EQ(ar.measured_duration_ns(), 851'250u);  // the kernel's dur
  EXPECT_EQ(l.ops[2].kind(), v1::OP_KIND_ALL_GATHER);
  EXPECT_EQ(l.ops[2].bytes(), 4096u * 2u);
  EXPECT_EQ(l.ops[3].kind(), v1::OP_KIND_REDUCE_SCATTER);
  EXPECT_EQ(l.ops[3].count(), 4096u);
  EXPECT_EQ(l.ops[4].kind(), v1::OP_KIND_SEND);
  EXPECT_EQ(l.ops[4].root(), 1);
  EXPECT_EQ(l.ops[9].kind(), v1::OP_KIND_RECV);
  EXPECT_EQ(l.ops[9].root(), 0);
  // The two ranks agree: every collective and the send/recv pair match.
  auto valid = analysis::validate_trace(out, {});
  ASSERT_TRUE(valid.ok());
  EXPECT_TRUE(valid->valid()) << (valid->issues.empty() ? "" : valid->issues[0].to_string());
  fs::remove(out);
}

TEST(KinetoImport, BadEventsNameFileEventAndField) {
  const fs::path dir = temp("bad");
  fs::create_directories(dir);
  std::ifstream in(kData + "/rank0.pt.trace.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  doc["traceEvents"][1]["args"]["In msg nelems"] = -4;
  std::ofstream(dir / "r0.json") << doc.dump();
  const std::string out = temp("b.trace").string();
  ImportOptions strict;
  strict.strict = true;
  auto failed = import_kineto({(dir / "r0.json").string()}, out, strict);
  ASSERT_THAT(failed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(failed.status().message().find("r0.json:traceEvents[1]: args[\"In msg nelems\"]: "
                                           "negative"),
            std::string::npos)
      << failed.status().message();
  doc.erase("distributedInfo");
  std::ofstream(dir / "r1.json") << doc.dump();
  failed = import_kineto({(dir / "r1.json").string()}, out, {});
  ASSERT_THAT(failed, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(failed.status().message().find("r1.json: distributedInfo: missing"), std::string::npos);
  fs::remove_all(dir);
  fs::remove(out);
}

}  // namespace
}  // namespace collide::traces::kineto
