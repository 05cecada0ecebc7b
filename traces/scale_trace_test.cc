#include "traces/scale_trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/status_matchers.h"
#include "traces/trace_io.h"

namespace collide::traces {
namespace {

TEST(ScaleTraceTest, ScalesSizesCountsAndGapsButKeepsEveryOp) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / ("scale-in-" + std::to_string(getpid()))).string();
  const std::string out = (dir / ("scale-out-" + std::to_string(getpid()))).string();
  {
    v1::TraceHeader h;
    h.set_world_size(2);
    auto w = TraceWriter::create(in, h);
    ASSERT_TRUE(w.ok());
    v1::Op big;
    big.set_kind(v1::OP_KIND_ALL_REDUCE);
    big.set_datatype(v1::DATA_TYPE_BFLOAT16);
    big.set_count(1'000'000);
    big.set_bytes(2'000'000);
    big.set_compute_before_ns(5'000'000);
    ASSERT_TRUE((*w)->write(big).ok());
    v1::Op tiny = big;
    tiny.set_index(1);
    tiny.set_count(10);
    tiny.set_bytes(20);
    ASSERT_TRUE((*w)->write(tiny).ok());
  }
  ASSERT_TRUE(scale_trace(in, out, 0.001).ok());
  auto r = TraceReader::open(out);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)->header().metadata().at("bytes_scale"), "0.001");
  v1::Op op;
  ASSERT_TRUE(*(*r)->next(op));
  EXPECT_EQ(op.count(), 1000u);
  EXPECT_EQ(op.bytes(), 2000u);
  EXPECT_EQ(op.compute_before_ns(), 5000u);
  ASSERT_TRUE(*(*r)->next(op));
  EXPECT_EQ(op.count(), 1u);  // never scaled away
  EXPECT_EQ(op.bytes(), 2u);
  EXPECT_THAT(scale_trace(in, out, 0), StatusIs(StatusCode::kInvalidArgument));
  std::filesystem::remove(in);
  std::filesystem::remove(out);
}

}  // namespace
}  // namespace collide::traces
