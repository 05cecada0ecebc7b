#include "traces/chakra/comm_groups.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace collide::traces::chakra {
namespace {

TEST(CommGroups, NameToRanks) {
  auto groups = parse_comm_groups(R"({"tp0": [0, 1], "dp": [0, 2]})", "g.json");
  ASSERT_TRUE(groups.ok()) << groups.status().message();
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ((*groups)[0].name, "tp0");  // file order is kept
  EXPECT_EQ((*groups)[1].ranks, (std::vector<uint32_t>{0, 2}));
}

TEST(CommGroups, PgIdObjectsAndPgConfigList) {
  auto keyed =
      parse_comm_groups(R"({"3": {"pg_name": "3", "pg_desc": "tp", "ranks": [4, 5]}})", "g.json");
  ASSERT_TRUE(keyed.ok()) << keyed.status().message();
  EXPECT_EQ((*keyed)[0].name, "3");
  EXPECT_EQ((*keyed)[0].ranks, (std::vector<uint32_t>{4, 5}));
  auto list = parse_comm_groups(
      R"([{"pg_name": "0", "ranks": [0,1,2]}, {"pg_id": 7, "ranks": [1]}])", "g.json");
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ((*list)[1].name, "7");
}

TEST(CommGroups, ErrorsNameFileAndLine) {
  auto bad = parse_comm_groups("{\n \"a\": [0,\n 1,,]\n}", "g.json");
  ASSERT_THAT(bad, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(bad.status().message().find("g.json:3"), std::string::npos) << bad.status().message();
  auto neg = parse_comm_groups(R"({"a": [0, -1]})", "g.json");
  ASSERT_THAT(neg, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(neg.status().message().find("'a'"), std::string::npos);
  EXPECT_THAT(parse_comm_groups(R"({"a": [1, 1]})", "g.json"),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(parse_comm_groups(R"(42)", "g.json"), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::traces::chakra
