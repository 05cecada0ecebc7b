#include "traces/trace_io.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "tests/support/status_matchers.h"
#include "traces/op_types.h"

namespace collide::traces {
namespace {

class TraceIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("collide-trace-io-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;
};

v1::TraceHeader sample_header() {
  v1::TraceHeader h;
  h.set_source_format(v1::SOURCE_FORMAT_SYNTHETIC);
  h.set_world_size(4);
  auto* comm = h.add_communicators();
  comm->set_id("world");
  for (uint32_t r = 0; r < 4; ++r) comm->add_ranks(r);
  (*h.mutable_metadata())["model"] = "test";
  return h;
}

v1::Op sample_op(uint32_t rank, uint64_t index) {
  v1::Op op;
  op.set_rank(rank);
  op.set_index(index);
  op.set_kind(v1::OP_KIND_ALL_REDUCE);
  op.set_comm("world");
  op.set_count(1024 * (index + 1));
  op.set_datatype(v1::DATA_TYPE_BFLOAT16);
  op.set_bytes(op.count() * 2);
  op.set_root(-1);
  if (index % 2 == 0) op.set_enqueue_time_ns(index * 1000);
  return op;
}

TEST_F(TraceIoTest, RoundTripsHeaderAndOps) {
  constexpr uint64_t kOps = 100000;
  {
    auto writer = TraceWriter::create(path("t.trace"), sample_header());
    ASSERT_TRUE(writer.ok()) << writer.status().to_string();
    for (uint64_t i = 0; i < kOps; ++i) {
      ASSERT_TRUE((*writer)->write(sample_op(i % 4, i / 4)).ok());
    }
    ASSERT_TRUE((*writer)->close().ok());
    EXPECT_EQ((*writer)->ops_written(), kOps);
  }
  auto reader = TraceReader::open(path("t.trace"));
  ASSERT_TRUE(reader.ok()) << reader.status().to_string();
  EXPECT_EQ((*reader)->header().magic(), kTraceMagic);
  EXPECT_EQ((*reader)->header().world_size(), 4u);
  EXPECT_EQ((*reader)->header().metadata().at("model"), "test");
  v1::Op op;
  uint64_t n = 0;
  while (true) {
    auto more = (*reader)->next(op);
    ASSERT_TRUE(more.ok()) << more.status().to_string();
    if (!*more) break;
    const v1::Op expected = sample_op(n % 4, n / 4);
    ASSERT_EQ(op.SerializeAsString(), expected.SerializeAsString()) << "op " << n;
    EXPECT_EQ(op.has_enqueue_time_ns(), expected.has_enqueue_time_ns());
    ++n;
  }
  EXPECT_EQ(n, kOps);
}

TEST_F(TraceIoTest, TruncatedFileNamesOpAndOffset) {
  {
    auto writer = TraceWriter::create(path("t.trace"), sample_header());
    ASSERT_TRUE(writer.ok());
    for (uint64_t i = 0; i < 10; ++i) ASSERT_TRUE((*writer)->write(sample_op(0, i)).ok());
  }
  const auto size = std::filesystem::file_size(path("t.trace"));
  std::filesystem::resize_file(path("t.trace"), size - 3);
  auto reader = TraceReader::open(path("t.trace"));
  ASSERT_TRUE(reader.ok());
  v1::Op op;
  Result<bool> more = true;
  int read = 0;
  while ((more = (*reader)->next(op)).ok() && *more) ++read;
  EXPECT_EQ(read, 9);
  ASSERT_THAT(more, StatusIs(StatusCode::kDataLoss));
  EXPECT_EQ(more.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(more.status().message().find("op #10"), std::string::npos) << more.status().message();
  EXPECT_NE(more.status().message().find("t.trace"), std::string::npos);
}

TEST_F(TraceIoTest, RejectsFilesThatAreNotTraces) {
  std::ofstream(path("garbage")) << "NCCL INFO this is a log, not a trace\n";
  auto reader = TraceReader::open(path("garbage"));
  ASSERT_THAT(reader, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(reader.status().message().find("not a collide trace"), std::string::npos);

  std::ofstream(path("empty")).close();
  EXPECT_THAT(TraceReader::open(path("empty")), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(TraceReader::open(path("missing")).status().code(), StatusCode::kNotFound);
}

TEST_F(TraceIoTest, RejectsNewerSchema) {
  {
    auto writer = TraceWriter::create(path("t.trace"), sample_header());
    ASSERT_TRUE(writer.ok());
  }
  // Rewrite the header with a schema from the future.
  v1::TraceHeader h = sample_header();
  h.set_magic(std::string(kTraceMagic));
  h.set_schema_version(kTraceSchemaVersion + 1);
  std::string bytes = h.SerializeAsString();
  std::ofstream out(path("future.trace"), std::ios::binary);
  out.put(static_cast<char>(bytes.size()));
  out << bytes;
  out.close();
  auto reader = TraceReader::open(path("future.trace"));
  ASSERT_THAT(reader, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(reader.status().message().find("newer"), std::string::npos);
}

TEST(OpTypesTest, NcclIdsSizesAndNames) {
  EXPECT_EQ(*datatype_from_nccl_id(9), v1::DATA_TYPE_BFLOAT16);
  EXPECT_EQ(datatype_size(v1::DATA_TYPE_BFLOAT16), 2u);
  EXPECT_EQ(datatype_size(*datatype_from_nccl_id(11)), 1u);
  EXPECT_EQ(datatype_size(*datatype_from_nccl_id(8)), 8u);
  EXPECT_THAT(datatype_from_nccl_id(12), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_EQ(*reduce_op_from_nccl_id(4), v1::REDUCE_OP_AVG);
  EXPECT_EQ(*reduce_op_from_nccl_id(17), v1::REDUCE_OP_USER);
  EXPECT_EQ(op_kind_name(v1::OP_KIND_REDUCE_SCATTER), "reduce_scatter");
  EXPECT_EQ(*parse_op_kind("all_to_all"), v1::OP_KIND_ALL_TO_ALL);
  EXPECT_EQ(*parse_datatype("float32"), v1::DATA_TYPE_FLOAT32);
  EXPECT_THAT(parse_datatype("float128"), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_TRUE(is_point_to_point(v1::OP_KIND_RECV));
  EXPECT_FALSE(is_point_to_point(v1::OP_KIND_ALL_REDUCE));
}

}  // namespace
}  // namespace collide::traces
