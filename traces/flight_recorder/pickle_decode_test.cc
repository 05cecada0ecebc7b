#include "traces/flight_recorder/pickle_decode.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "tests/support/status_matchers.h"

namespace collide::traces::flight_recorder {
namespace {

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string testdata(const std::string& name) { return std::string(COLLIDE_FR_TESTDATA) + "/" + name; }
std::string corpus(const std::string& name) {
  return std::string(COLLIDE_FR_TESTDATA) + "/../fuzz_corpus/" + name;
}

// What Python wrote with pickle (protocols 2 and 5) decodes to what it wrote with json.
TEST(PickleDecode, MatchesPythonsJsonOfTheSameValue) {
  const nlohmann::json expected = nlohmann::json::parse(read_bytes(testdata("sample.json")));
  for (const char* name : {"sample_proto2.pkl", "sample_proto5.pkl"}) {
    auto decoded = decode_pickle(read_bytes(testdata(name)), name);
    ASSERT_TRUE(decoded.ok()) << decoded.status().message();
    EXPECT_EQ(*decoded, expected) << name;
  }
  auto four = decode_pickle(read_bytes(corpus("sample_proto4.pkl")), "sample_proto4.pkl");
  ASSERT_TRUE(four.ok()) << four.status().message();
  EXPECT_EQ(*four, expected);
}

TEST(PickleDecode, SkippedKeysAreLeftOut) {
  PickleLimits limits;
  limits.skipped_keys = {"shared", "k"};
  auto decoded = decode_pickle(read_bytes(testdata("sample_proto2.pkl")), "s", limits);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_FALSE(decoded->contains("shared"));
  EXPECT_EQ((*decoded)["again"], nlohmann::json::parse(R"([1, "two", 3.5])"));
  EXPECT_EQ((*decoded)["nested"], nlohmann::json::object());
}

TEST(PickleDecode, IntegersAtTheEdgesOf64Bits) {
  auto decoded = decode_pickle(read_bytes(testdata("sample_proto2.pkl")), "s");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ((*decoded)["big"].get<uint64_t>(), UINT64_MAX);
  EXPECT_EQ((*decoded)["negative"].get<int64_t>(), INT64_MIN);
  EXPECT_EQ((*decoded)["small"].get<int64_t>(), -5);
  EXPECT_EQ((*decoded)["wide"].get<int64_t>(), 70000);
  auto wide = decode_pickle(read_bytes(corpus("wide_long.pkl")), "wide_long.pkl");
  ASSERT_THAT(wide, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(wide.status().message().find("does not fit 64 bits"), std::string::npos);
}

void expect_refused(const std::string& name, const std::string& words) {
  auto decoded = decode_pickle(read_bytes(corpus(name)), name);
  ASSERT_THAT(decoded, StatusIs(StatusCode::kInvalidArgument)) << name;
  EXPECT_NE(decoded.status().message().find(words), std::string::npos)
      << name << ": " << decoded.status().message();
  EXPECT_NE(decoded.status().message().find(name), std::string::npos) << "names the file";
}

TEST(PickleDecode, RefusesOpcodesThatRunCode) {
  expect_refused("global_reduce.pkl", "opcode GLOBAL (0x63) would import or call Python code");
  expect_refused("stack_global_reduce.pkl", "opcode STACK_GLOBAL (0x93)");
  // REDUCE alone, after plain data: refused all the same.
  auto reduce = decode_pickle(std::string("\x80\x02N)R.", 6), "reduce.pkl");
  ASSERT_THAT(reduce, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(reduce.status().message().find("REDUCE"), std::string::npos);
  for (const char op : {'b', 'i', 'o', 'P', 'Q'}) {
    auto refused = decode_pickle(std::string("\x80\x02N") + op + ".", "op.pkl");
    ASSERT_THAT(refused, StatusIs(StatusCode::kInvalidArgument)) << op;
    EXPECT_NE(refused.status().message().find("would import or call"), std::string::npos) << op;
  }
  for (const char op : {'\x81', '\x82', '\x83', '\x84', '\x92'}) {
    auto refused = decode_pickle(std::string("\x80\x02N") + op + ".", "op.pkl");
    ASSERT_THAT(refused, StatusIs(StatusCode::kInvalidArgument));
    EXPECT_NE(refused.status().message().find("would import or call"), std::string::npos);
  }
}

TEST(PickleDecode, HostileShapesAreErrors) {
  expect_refused("truncated.pkl", "truncated");
  expect_refused("huge_unicode_length.pkl", "runs past the end");
  expect_refused("huge_frame_length.pkl", "runs past the end");
  expect_refused("deep_nesting.pkl", "deeper than 64");
  expect_refused("cyclic_list.pkl", "deeper than 64");
  expect_refused("billion_laughs.pkl", "expands to more than");
  expect_refused("missing_memo.pkl", "memo entry 7 was never stored");
  expect_refused("stack_underflow.pkl", "stack underflow");
  expect_refused("protocol0.pkl", "not one this reader accepts");
  expect_refused("protocol9.pkl", "protocol 9 is not supported");
  expect_refused("deep_marks.pkl", "STOP with nothing decoded");
  expect_refused("empty.pkl", "ends before STOP");
}

// A memo index near 2^32 is only a key: nothing is sized by it.
TEST(PickleDecode, LargeMemoIndexIsJustAKey) {
  auto decoded = decode_pickle(read_bytes(corpus("huge_memo_index.pkl")), "m.pkl");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, nlohmann::json::array());
}

TEST(PickleDecode, RecognisesPickles) {
  EXPECT_TRUE(looks_like_pickle(read_bytes(testdata("fr_pickle/nccl_trace_rank_0"))));
  EXPECT_FALSE(looks_like_pickle(read_bytes(testdata("fr_json/nccl_trace_rank_0.json"))));
  EXPECT_FALSE(looks_like_pickle(""));
}

}  // namespace
}  // namespace collide::traces::flight_recorder
