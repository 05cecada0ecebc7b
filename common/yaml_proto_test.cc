#include "common/yaml_proto.h"

#include <gtest/gtest.h>

#include "collide/port.pb.h"
#include "collide/scenario.pb.h"
#include "collide/testbed.pb.h"
#include "collide/trace.pb.h"
#include "common/units.h"
#include "tests/support/status_matchers.h"

namespace collide::config {
namespace {

TEST(YamlProtoTest, FillsScalarsListsMapsEnumsAndNestedMessages) {
  v1::TraceHeader h;
  const Status s = parse_yaml_string(R"(
source_format: nccl-log
world_size: 4
source_files: [a.log, b.log]
metadata:
  model: llama3-70b
  tp: "8"
communicators:
  - id: world
    ranks: [0, 1, 2, 3]
    rings:
      - {channel: 0, ranks: [0, 2, 1, 3]}
)", "test.yaml", h);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(h.source_format(), v1::SOURCE_FORMAT_NCCL_LOG);
  EXPECT_EQ(h.world_size(), 4u);
  EXPECT_EQ(h.source_files_size(), 2);
  EXPECT_EQ(h.metadata().at("model"), "llama3-70b");
  ASSERT_EQ(h.communicators_size(), 1);
  EXPECT_EQ(h.communicators(0).rings(0).ranks(1), 2u);
}

// A size typed in a scenario and on the command line (common/units.h) means the same bytes.
TEST(YamlProtoTest, OneKbMeansTheSameInYamlAndOnTheCommandLine) {
  for (const std::string text : {"1KB", "1KiB", "1MB", "1MiB", "64k", "1500"}) {
    v1::TransportSettings t;
    ASSERT_TRUE(parse_yaml_string("slice_bytes: " + text, "t.yaml", t).ok()) << text;
    auto cli = units::parse_bytes(text);
    ASSERT_TRUE(cli.ok()) << text;
    EXPECT_EQ(t.slice_bytes(), *cli) << text;
  }
  v1::TransportSettings t;
  ASSERT_TRUE(parse_yaml_string("slice_bytes: 1KB", "t.yaml", t).ok());
  EXPECT_EQ(t.slice_bytes(), 1000u);
}

TEST(YamlProtoTest, RecordsTheLineOfEveryField) {
  v1::TraceHeader h;
  FieldLines lines;
  ASSERT_TRUE(parse_yaml_string("world_size: 2\ncommunicators:\n  - id: a\n    ranks: [0, 1]\n",
                                "l.yaml", h, &lines).ok());
  EXPECT_EQ(lines.at("world_size"), 1);
  EXPECT_EQ(lines.at("communicators[0].ranks"), 4);
}

// YAML readers differ on a key given twice (most keep the last); a config's author meant one.
TEST(YamlProtoTest, RefusesAKeyGivenTwiceNamingBothLines) {
  v1::VirtualTestbedSpec t;
  const Status s = parse_yaml_string("hosts: 2\nleaves: 1\nhosts: 8\n", "dup.yaml", t);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.message().find("dup.yaml:3: hosts: given twice (first on line 1)"), std::string::npos)
      << s.message();
  v1::Scenario nested;
  const Status n = parse_yaml_string("transport:\n  channels: 2\n  channels: 4\n", "n.yaml", nested);
  ASSERT_THAT(n, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(n.message().find("n.yaml:3: transport.channels: given twice (first on line 2)"), std::string::npos)
      << n.message();
}

TEST(YamlProtoTest, UnitsFollowTheFieldName) {
  v1::Op op;
  const Status s = parse_yaml_string(R"(
peer_bytes: [4KiB, 1.5GB, 12]
compute_before_ns: 10ms
enqueue_time_ns: 250us
)", "units.yaml", op);
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_EQ(op.peer_bytes(0), 4096u);
  EXPECT_EQ(op.peer_bytes(1), 1500000000u);
  EXPECT_EQ(op.peer_bytes(2), 12u);
  EXPECT_EQ(op.compute_before_ns(), 10000000u);
  EXPECT_EQ(op.enqueue_time_ns(), 250000u);
  v1::VirtualTestbedSpec t;
  EXPECT_THAT(parse_yaml_string("hosts: 4KiB", "u.yaml", t), StatusIs(StatusCode::kInvalidArgument))
      << "no size units on a count";
}

TEST(YamlProtoTest, ErrorsNameFileLineAndFieldAndChangeNothing) {
  v1::VirtualTestbedSpec t;
  t.set_hosts(7);
  Status s = parse_yaml_string("name: demo\nhosts: 2\nleafs: 2\n", "fabric.yaml", t);
  ASSERT_THAT(s, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(s.message().find("fabric.yaml:3: leafs: unknown field"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("leaves"), std::string::npos) << "lists the known fields";
  EXPECT_EQ(t.hosts(), 7u) << "nothing half-filled";

  s = parse_yaml_string("name: demo\nhosts: two\n", "fabric.yaml", t);
  EXPECT_NE(s.message().find("fabric.yaml:2: hosts: 'two' is not a number"), std::string::npos)
      << s.message();
  s = parse_yaml_string("hosts: -1\n", "f.yaml", t);
  EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
  s = parse_yaml_string("hosts: [1, 2]\n", "f.yaml", t);
  EXPECT_NE(s.message().find("expected a single value"), std::string::npos) << s.message();
  s = parse_yaml_string("hosts: 2\n  bad indent: [\n", "f.yaml", t);
  EXPECT_NE(s.message().find("not valid YAML"), std::string::npos) << s.message();

  v1::TraceHeader h;
  s = parse_yaml_string("source_format: csv\n", "h.yaml", h);
  EXPECT_NE(s.message().find("'csv' is not one of"), std::string::npos) << s.message();
  v1::DpdkPortConfig p;
  s = parse_yaml_string("promiscuous: maybe\n", "p.yaml", p);
  EXPECT_NE(s.message().find("not true or false"), std::string::npos) << s.message();
  EXPECT_EQ(parse_yaml_file("/nonexistent.yaml", p).code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace collide::config
