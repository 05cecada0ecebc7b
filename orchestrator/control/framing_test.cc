#include "orchestrator/control/framing.h"

#include <gtest/gtest.h>

#include "collide/agent.pb.h"
#include "tests/support/status_matchers.h"

namespace collide::orchestrator::control {
namespace {

TEST(Framing, RoundTripsMessagesFedInAnyPieces) {
  v1::AgentRequest a;
  a.mutable_clock()->set_orchestrator_send_ns(123456789);
  v1::AgentRequest b;
  b.mutable_prepare()->set_trace(std::string(100000, 'x'));
  b.mutable_prepare()->add_ranks(3);
  v1::AgentRequest empty;  // a message of zero bytes is a frame too
  std::string stream;
  for (const auto* m : {&a, &b, &empty}) stream += encode_frame(m->SerializeAsString()).value();

  for (size_t piece : {size_t{1}, size_t{3}, size_t{4096}, stream.size()}) {
    FrameDecoder decoder;
    std::vector<std::string> frames;
    for (size_t i = 0; i < stream.size(); i += piece) {
      ASSERT_TRUE(decoder.feed(std::string_view(stream).substr(i, piece)).ok());
      while (decoder.has_frame()) frames.push_back(decoder.next());
    }
    ASSERT_EQ(frames.size(), 3u) << "piece " << piece;
    v1::AgentRequest got;
    ASSERT_TRUE(got.ParseFromString(frames[0]));
    EXPECT_EQ(got.clock().orchestrator_send_ns(), 123456789u);
    ASSERT_TRUE(got.ParseFromString(frames[1]));
    EXPECT_EQ(got.prepare().trace().size(), 100000u);
    EXPECT_EQ(got.prepare().ranks(0), 3u);
    EXPECT_TRUE(frames[2].empty());
    EXPECT_EQ(decoder.buffered_bytes(), 0u);
  }
}

TEST(Framing, HeaderIsBigEndianLength) {
  const std::string frame = encode_frame("abc").value();
  ASSERT_EQ(frame.size(), 7u);
  EXPECT_EQ(frame.substr(0, 4), std::string("\0\0\0\3", 4));
  EXPECT_EQ(frame.substr(4), "abc");
}

TEST(Framing, RejectsAnAnnouncedLengthAboveTheLimitForGood) {
  FrameDecoder decoder;
  const std::string huge("\xff\xff\xff\xff", 4);
  EXPECT_THAT(decoder.feed(huge), StatusIs(StatusCode::kDataLoss));
  EXPECT_FALSE(decoder.has_frame());
  // Once damaged, the stream stays refused, even if valid frames follow.
  EXPECT_THAT(decoder.feed(encode_frame("ok").value()), StatusIs(StatusCode::kDataLoss));
  EXPECT_FALSE(decoder.has_frame());
}

TEST(Framing, KeepsAPartialFrameUntilItCompletes) {
  FrameDecoder decoder;
  const std::string frame = encode_frame("hello").value();
  ASSERT_TRUE(decoder.feed(frame.substr(0, 6)).ok());
  EXPECT_FALSE(decoder.has_frame());
  ASSERT_TRUE(decoder.feed(frame.substr(6)).ok());
  ASSERT_TRUE(decoder.has_frame());
  EXPECT_EQ(decoder.next(), "hello");
}

}  // namespace
}  // namespace collide::orchestrator::control
