// Round trips: Chakra -> collide -> Chakra -> collide gives the same trace, and
// collide -> Chakra -> collide keeps everything Chakra can carry.
#include <fmt/format.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include <map>

#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_import.h"
#include "traces/chakra/chakra_test_util.h"
#include "traces/trace_io.h"
#include "traces/trace_test_util.h"

namespace collide::traces::chakra {
namespace {

namespace fs = std::filesystem;
using namespace testing;

// Chakra names the files it came from; nothing else may differ.
void expect_same_trace(LoadedTrace a, LoadedTrace b) {
  a.header.clear_source_files();
  b.header.clear_source_files();
  std::string diff;
  google::protobuf::util::MessageDifferencer header_diff;
  header_diff.ReportDifferencesToString(&diff);
  EXPECT_TRUE(header_diff.Compare(a.header, b.header)) << diff;
  ASSERT_EQ(a.ops.size(), b.ops.size());
  for (size_t i = 0; i < a.ops.size(); ++i) {
    for (v1::Op* op : {&a.ops[i], &b.ops[i]}) {
      op->clear_source();
      op->clear_source_line();
      op->clear_source_file();
    }
    std::string op_diff;
    google::protobuf::util::MessageDifferencer d;
    d.ReportDifferencesToString(&op_diff);
    EXPECT_TRUE(d.Compare(a.ops[i], b.ops[i])) << "op " << i << ": " << op_diff;
  }
}

TEST(ChakraRoundTrip, ChakraToCollideToChakraToCollide) {
  const TempDir tmp("rt1");
  const fs::path& dir = tmp.path;
  fs::create_directories(dir / "in");
  write_two_rank_job(dir / "in");
  ASSERT_TRUE(import_chakra({(dir / "in").string()}, (dir / "a.trace").string(), {}).ok());
  auto exported = export_chakra((dir / "a.trace").string(), (dir / "out" / "job").string());
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_EQ(exported->files, 2u);
  EXPECT_EQ(exported->ops, 8u);
  EXPECT_EQ(exported->notes_total, 0u);
  auto again = import_chakra({(dir / "out").string()}, (dir / "b.trace").string(), {});
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->problems_total, 0u);
  expect_same_trace(load_trace((dir / "a.trace").string()), load_trace((dir / "b.trace").string()));
}

v1::Op make_op(uint32_t rank, uint64_t index, v1::OpKind kind, const std::string& comm,
               uint64_t bytes, int32_t root = -1) {
  v1::Op op;
  op.set_rank(rank);
  op.set_index(index);
  op.set_kind(kind);
  op.set_comm(comm);
  op.set_bytes(bytes);
  op.set_count(bytes / 2);
  op.set_datatype(v1::DATA_TYPE_BFLOAT16);
  op.set_reduce_op(v1::REDUCE_OP_SUM);
  op.set_root(root);
  op.set_label(fmt::format("r{}.op{}", rank, index));
  return op;
}

TEST(ChakraRoundTrip, CollideToChakraToCollideKeepsWhatChakraCarries) {
  const TempDir tmp("rt2");
  const fs::path& dir = tmp.path;
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_SYNTHETIC);
  header.set_world_size(4);
  (*header.mutable_metadata())["model"] = "llama-7b";
  (*header.mutable_metadata())["tp"] = "2";
  auto add_comm = [&](const std::string& id, std::vector<uint32_t> ranks) {
    v1::Communicator* c = header.add_communicators();
    c->set_id(id);
    c->set_name("label-" + id);  // not carried: Chakra knows only the pg name
    for (uint32_t r : ranks) c->add_ranks(r);
  };
  add_comm("world", {0, 1, 2, 3});
  add_comm("tp0", {1, 0});  // comm ranks need not follow global ranks
  add_comm("tp1", {2, 3});
  add_comm("pp", {0, 2});

  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < 4; ++r) {
    const std::string tp = r < 2 ? "tp0" : "tp1";
    uint64_t i = 0;
    v1::Op a = make_op(r, i++, v1::OP_KIND_ALL_REDUCE, tp, 1 << 20);
    a.set_compute_before_ns(250'000);
    a.set_enqueue_time_ns(1'000'000 + r * 1000);
    ops.push_back(a);
    v1::Op b = make_op(r, i++, v1::OP_KIND_BROADCAST, "world", 4096, 3);
    b.add_deps(0);  // an explicit dependency on the op just before is kept
    ops.push_back(b);
    v1::Op c = make_op(r, i++, v1::OP_KIND_ALL_TO_ALL, "world", 3000);
    c.set_compute_before_ns(0);
    ops.push_back(c);
    if (r == 0 || r == 2) {
      const bool send = r == 0;
      v1::Op p =
          make_op(r, i++, send ? v1::OP_KIND_SEND : v1::OP_KIND_RECV, "pp", 777, send ? 1 : 0);
      ops.push_back(p);
    }
    v1::Op d = make_op(r, i++, v1::OP_KIND_REDUCE_SCATTER, tp, 2048);
    d.add_deps(0);
    d.add_deps(1);
    d.set_compute_before_ns(3'000'000);
    ops.push_back(d);
    ops.push_back(make_op(r, i++, v1::OP_KIND_BARRIER, "world", 0));
    ops.push_back(make_op(r, i++, v1::OP_KIND_GATHER, tp, 64, 1));
  }
  {
    auto writer = TraceWriter::create((dir / "orig.trace").string(), header);
    ASSERT_TRUE(writer.ok());
    for (const v1::Op& op : ops) ASSERT_TRUE((*writer)->write(op).ok());
    ASSERT_TRUE((*writer)->close().ok());
  }
  auto exported = export_chakra((dir / "orig.trace").string(), (dir / "et" / "job").string());
  ASSERT_TRUE(exported.ok()) << exported.status().message();
  EXPECT_EQ(exported->files, 4u);
  EXPECT_EQ(exported->notes_total, 0u);
  EXPECT_TRUE(fs::exists(dir / "et" / "job.3.et"));
  EXPECT_TRUE(fs::exists(dir / "et" / "job.comm_groups.json"));
  // The files say comm_size as Chakra's readers mean it: the whole buffer for reduce-scatter (tp0
  // has 2 ranks) and all-to-all (world has 4), one rank's part for all-gather and the rest.
  {
    auto decoder = EtDecoder::open((dir / "et" / "job.0.et").string());
    ASSERT_TRUE(decoder.ok()) << decoder.status().message();
    ChakraProtoMsg::GlobalMetadata metadata;
    ASSERT_TRUE((*decoder)->read_metadata(metadata).ok());
    std::map<int64_t, int64_t> size_of_type;
    ChakraProtoMsg::Node node;
    while (*(*decoder)->next(node)) {
      if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
      bool ok = true;
      size_of_type[*int_attr(node, "comm_type", ok)] = *int_attr(node, "comm_size", ok);
    }
    EXPECT_EQ(size_of_type[ChakraProtoMsg::REDUCE_SCATTER], 2 * 2048);
    EXPECT_EQ(size_of_type[ChakraProtoMsg::ALL_TO_ALL], 4 * 3000);
    EXPECT_EQ(size_of_type[ChakraProtoMsg::ALL_REDUCE], 1 << 20);
    EXPECT_EQ(size_of_type[ChakraProtoMsg::BROADCAST], 4096);
    EXPECT_EQ(size_of_type[ChakraProtoMsg::GATHER], 64);
  }
  auto report = import_chakra({(dir / "et").string()}, (dir / "back.trace").string(), {});
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->problems_total, 0u);

  const LoadedTrace back = load_trace((dir / "back.trace").string());
  EXPECT_EQ(back.header.world_size(), 4u);
  ASSERT_EQ(back.header.communicators_size(), header.communicators_size());
  for (int i = 0; i < header.communicators_size(); ++i) {
    EXPECT_EQ(back.header.communicators(i).id(), header.communicators(i).id());
    EXPECT_EQ(std::vector<uint32_t>(back.header.communicators(i).ranks().begin(),
                                    back.header.communicators(i).ranks().end()),
              std::vector<uint32_t>(header.communicators(i).ranks().begin(),
                                    header.communicators(i).ranks().end()));
  }
  EXPECT_EQ(back.header.metadata().at("model"), "llama-7b");
  EXPECT_EQ(back.header.metadata().at("tp"), "2");

  ASSERT_EQ(back.ops.size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const v1::Op& o = ops[i];
    const v1::Op& g = back.ops[i];
    SCOPED_TRACE(o.label());
    EXPECT_EQ(g.rank(), o.rank());
    EXPECT_EQ(g.index(), o.index());
    EXPECT_EQ(g.kind(), o.kind());
    EXPECT_EQ(g.comm(), o.comm());
    EXPECT_EQ(g.bytes(), o.bytes());
    EXPECT_EQ(g.root(), o.root());
    EXPECT_EQ(g.has_enqueue_time_ns(), o.has_enqueue_time_ns());
    EXPECT_EQ(g.enqueue_time_ns(), o.enqueue_time_ns());
    EXPECT_EQ(g.has_compute_before_ns(), o.has_compute_before_ns());
    EXPECT_EQ(g.compute_before_ns(), o.compute_before_ns());
    EXPECT_EQ(std::vector<uint64_t>(g.deps().begin(), g.deps().end()),
              std::vector<uint64_t>(o.deps().begin(), o.deps().end()));
    EXPECT_EQ(g.label(), o.label());
    // Chakra carries bytes only.
    EXPECT_EQ(g.datatype(), v1::DATA_TYPE_UINT8);
    EXPECT_EQ(g.count(), o.bytes());
  }
}

}  // namespace
}  // namespace collide::traces::chakra
