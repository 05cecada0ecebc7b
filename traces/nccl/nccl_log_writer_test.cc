#include "traces/nccl/nccl_log_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "tests/support/status_matchers.h"
#include "traces/nccl/nccl_test_util.h"

namespace collide::traces::nccl {
namespace {

using testing::import_files;
using testing::Imported;
using testing::testdata;
using testing::write_file;

// Everything the trace says about the job (not where each op was read from).
void expect_same_trace(const Imported& a, const Imported& b) {
  EXPECT_EQ(a.header.world_size(), b.header.world_size());
  ASSERT_EQ(a.header.communicators_size(), b.header.communicators_size());
  for (int c = 0; c < a.header.communicators_size(); ++c) {
    EXPECT_EQ(a.header.communicators(c).SerializeAsString(),
              b.header.communicators(c).SerializeAsString())
        << a.header.communicators(c).DebugString() << " vs "
        << b.header.communicators(c).DebugString();
  }
  ASSERT_EQ(a.header.ranks_size(), b.header.ranks_size());
  for (int r = 0; r < a.header.ranks_size(); ++r) {
    EXPECT_EQ(a.header.ranks(r).SerializeAsString(), b.header.ranks(r).SerializeAsString())
        << a.header.ranks(r).DebugString() << " vs " << b.header.ranks(r).DebugString();
  }
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    v1::Op x = a.ops[i];
    v1::Op y = b.ops[i];
    for (v1::Op* op : {&x, &y}) {  // lines of different files
      op->clear_source_line();
      op->clear_source_file();
    }
    ASSERT_EQ(x.SerializeAsString(), y.SerializeAsString())
        << "op " << i << ": " << x.DebugString() << " vs " << y.DebugString();
  }
}

class NcclRoundTrip : public ::testing::TestWithParam<std::string> {};

TEST_P(NcclRoundTrip, ImportWriteImportGivesTheSameTrace) {
  auto first = import_files({testdata(GetParam())});
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_GT(first->ops.size(), 0u);
  for (const bool comm_ids : {true, false}) {
    NcclLogWriterOptions options;
    options.comm_ids = comm_ids;
    options.new_send_buffers = !comm_ids;
    std::ostringstream log;
    ASSERT_TRUE(write_nccl_log(first->header, first->ops, log, options).ok());
    auto second = import_files({write_file("again.log", log.str())}, /*strict=*/true);
    ASSERT_TRUE(second.ok()) << second.status().to_string();
    SCOPED_TRACE(comm_ids ? "with commId" : "without commId");
    expect_same_trace(*first, *second);
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, NcclRoundTrip,
                         ::testing::Values("nccl_2_4.log", "nccl_2_7_send.log",
                                           "nccl_2_12_send.log", "nccl_2_18.log", "nccl_2_21.log",
                                           "nccl_2_26.log", "nccl_2_28.log", "nccl_2_29.log",
                                           "rccl.log", "groups_no_commid.log"),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name) {
                             if (c == '-' || c == '.') c = '_';
                           }
                           return name;
                         });

TEST(NcclLogWriter, TimestampsAreUtcWithNanoseconds) {
  EXPECT_EQ(format_timestamp(0), "1970-01-01 00:00:00.000000000");
  EXPECT_EQ(format_timestamp(1741610100123456789ull), "2025-03-10 12:35:00.123456789");
}

TEST(NcclLogWriter, RejectsOpsItCannotPlace) {
  v1::TraceHeader header;
  header.set_world_size(1);
  v1::Op op;
  op.set_kind(v1::OP_KIND_ALL_REDUCE);
  op.set_comm("nowhere");
  std::ostringstream out;
  EXPECT_THAT(write_nccl_log(header, {op}, out), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::traces::nccl
