#include "traces/chakra/et_stream.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"
#include "traces/chakra/chakra_test_util.h"

namespace collide::traces::chakra {
namespace {

using google::protobuf::io::ArrayInputStream;
using testing::coll;
using testing::comp;
using testing::et_bytes;

Result<std::vector<ChakraProtoMsg::Node>> decode_all(const std::string& bytes) {
  ArrayInputStream in(bytes.data(), static_cast<int>(bytes.size()));
  EtDecoder decoder(&in, "x.0.et");
  ChakraProtoMsg::GlobalMetadata meta;
  COLLIDE_RETURN_IF_ERROR(decoder.read_metadata(meta));
  std::vector<ChakraProtoMsg::Node> nodes;
  ChakraProtoMsg::Node node;
  for (;;) {
    auto more = decoder.next(node);
    if (!more.ok()) return more.status();
    if (!*more) break;
    nodes.push_back(node);
  }
  return nodes;
}

TEST(EtStream, DecodesWhatWasWritten) {
  const std::string bytes =
      et_bytes({comp(1, 10), coll(2, ChakraProtoMsg::ALL_REDUCE, 64, "0", {1})});
  auto nodes = decode_all(bytes);
  ASSERT_TRUE(nodes.ok()) << nodes.status().message();
  ASSERT_EQ(nodes->size(), 2u);
  EXPECT_EQ((*nodes)[0].duration_micros(), 10u);
  EXPECT_EQ((*nodes)[1].ctrl_deps(0), 1u);
}

TEST(EtStream, TruncatedRecordNamesFileRecordAndOffset) {
  const std::string bytes = et_bytes({comp(1, 10), coll(2, ChakraProtoMsg::ALL_REDUCE, 64, "0")});
  for (size_t cut = 1; cut < 6; ++cut) {
    auto nodes = decode_all(bytes.substr(0, bytes.size() - cut));
    ASSERT_THAT(nodes, StatusIs(StatusCode::kDataLoss));
    EXPECT_NE(nodes.status().message().find("x.0.et: record 2"), std::string::npos)
        << nodes.status().message();
    EXPECT_NE(nodes.status().message().find("truncated"), std::string::npos);
  }
}

TEST(EtStream, EveryTruncationIsAnErrorOrACleanPrefix) {
  const std::string bytes =
      et_bytes({comp(1, 10), coll(2, ChakraProtoMsg::ALL_GATHER, 1 << 30, "tp", {1})});
  ChakraProtoMsg::GlobalMetadata meta;
  std::string head;
  meta.set_version("0.0.4");
  append_delimited(meta, head);
  for (size_t len = 0; len < bytes.size(); ++len) {
    auto nodes = decode_all(bytes.substr(0, len));
    // Only cuts exactly on a record boundary decode; every other cut is reported.
    if (nodes.ok()) {
      EXPECT_TRUE(len == head.size() || len == head.size() + 1 + comp(1, 10).ByteSizeLong()) << len;
    }
  }
}

TEST(EtStream, TextIsNotAChakraFile) {
  auto nodes = decode_all(
      "# NCCL INFO comm 0x1234 rank 0 nranks 8 cudaDev 0 busId 1000 - Init COMPLETE\n"
      "all_reduce_perf: size 1024 time 12.5 us\n");
  ASSERT_THAT(nodes, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(nodes.status().message().find("x.0.et"), std::string::npos);
  EXPECT_NE(nodes.status().message().find("not a Chakra .et file"), std::string::npos)
      << nodes.status().message();
}

TEST(EtStream, EmptyAndGarbageAreErrors) {
  EXPECT_THAT(decode_all(""), StatusIs(StatusCode::kInvalidArgument));
  std::string garbage;
  for (int i = 0; i < 300; ++i) garbage.push_back(static_cast<char>((i * 131 + 7) & 0xff));
  auto nodes = decode_all(garbage);
  EXPECT_THAT(nodes, StatusIs(StatusCode::kInvalidArgument));
  auto huge = decode_all(std::string("\xff\xff\xff\xff\x0f", 5));
  ASSERT_THAT(huge, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(huge.status().message().find("limit"), std::string::npos) << huge.status().message();
  auto overflow = decode_all(std::string("\xff\xff\xff\xff\xff\x01", 6));
  EXPECT_THAT(overflow, StatusIs(StatusCode::kInvalidArgument));
}

TEST(EtStream, GarbageRecordAfterMetadataIsAnError) {
  std::string bytes = et_bytes({});
  bytes += std::string("\x03\xff\xff\xff", 4);  // a record whose field tags are nonsense
  auto nodes = decode_all(bytes);
  ASSERT_THAT(nodes, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(nodes.status().message().find("record 1"), std::string::npos)
      << nodes.status().message();
}

}  // namespace
}  // namespace collide::traces::chakra
