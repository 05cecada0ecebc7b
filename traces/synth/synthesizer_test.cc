#include "traces/synth/synthesizer.h"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/status_matchers.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/rank_generator.h"
#include "traces/trace_io.h"

namespace collide::traces::synth {
namespace {

namespace fs = std::filesystem;

struct Job {
  v1::TraceHeader header;
  std::map<uint32_t, std::vector<v1::Op>> ops;  // per rank, in file order
};

class SynthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("collide_synth_test_{}", ::getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A small dense model: 4 layers, hidden 64, 16-token sequences, micro-batch 2, 16e6 parameters
  // (4e6 per layer), 1 TFLOP/s at 50%, gradient buckets of 3 MB; `extra` adds or replaces YAML.
  static v1::ModelSpec small(const std::string& parallelism, const std::string& model_extra = "",
                             uint32_t micro_batches_per_pipeline = 4, uint32_t dp = 2) {
    const std::string yaml = fmt::format(
        "model: {{name: small, parameters: 16e6, layers: 4, hidden_size: 64, attention_heads: 4,"
        " sequence_length: 16{}}}\n"
        "training: {{micro_batch_size: 2, global_batch_size: {}, datatype: bfloat16}}\n"
        "parallelism: {{dp: {}, dp_bucket_bytes: 3MB, {}}}\n"
        "hardware: {{gpu_tflops: 1, efficiency: 0.5}}\n",
        model_extra, 2 * dp * micro_batches_per_pipeline, dp, parallelism);
    auto spec = parse_model_spec(yaml, "small.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().message();
    return spec.ok() ? *spec : v1::ModelSpec{};
  }

  Job run(const v1::ModelSpec& spec, const std::string& name = "job.trace") {
    auto report = synthesize(spec, path(name));
    EXPECT_TRUE(report.ok()) << report.status().message();
    Job job;
    auto reader = TraceReader::open(path(name));
    EXPECT_TRUE(reader.ok()) << reader.status().message();
    if (!reader.ok()) return job;
    job.header = (*reader)->header();
    v1::Op op;
    while (true) {
      auto more = (*reader)->next(op);
      EXPECT_TRUE(more.ok());
      if (!more.ok() || !*more) break;
      job.ops[op.rank()].push_back(op);
    }
    if (report.ok()) {
      EXPECT_EQ(report->ops, (*reader)->ops_read());
    }
    return job;
  }

  fs::path dir_;
};

// Ops of one rank by (comm kind, op kind).
std::map<std::pair<std::string, v1::OpKind>, int> tally(const std::vector<v1::Op>& ops) {
  std::map<std::pair<std::string, v1::OpKind>, int> out;
  for (const v1::Op& op : ops) {
    ++out[{group_kind_name(group_kind_of(op.comm())), op.kind()}];
  }
  return out;
}

using Tally = std::map<std::pair<std::string, v1::OpKind>, int>;

TEST_F(SynthTest, HandCountedOpsTp2Pp2Dp2) {
  const Job job = run(small("tp: 2, pp: 2"));
  ASSERT_EQ(job.ops.size(), 8u);
  for (const auto& [rank, ops] : job.ops) {
    // 2 layers per stage; per micro-batch 2 all-reduces forward and 2 backward per layer:
    // 2 * 4 * 4 = 32. Each stage sends and receives once per micro-batch each way: 4 + 4.
    // Gradients: 16e6 / (TP2 * PP2) = 4e6 bf16 = 8 MB in 3 MB buckets: 3 all-reduces.
    const bool first_stage = rank < 4;
    EXPECT_EQ(tally(ops), (Tally{{{"tp", v1::OP_KIND_ALL_REDUCE}, 32},
                                 {{"pp", v1::OP_KIND_SEND}, 4},
                                 {{"pp", v1::OP_KIND_RECV}, 4},
                                 {{"dp", v1::OP_KIND_ALL_REDUCE}, 3}}))
        << "rank " << rank;
    ASSERT_EQ(ops.size(), 43u);
    for (size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(ops[i].index(), i);
    for (const v1::Op& op : ops) {
      EXPECT_EQ(op.bytes(), op.count() * 2);
      EXPECT_EQ(op.iteration(), 0u);
      if (op.comm().rfind("tp", 0) == 0 || op.comm().rfind("pp", 0) == 0) {
        EXPECT_EQ(op.count(), 2u * 16 * 64) << op.label();  // b*s*h
      }
      if (op.kind() == v1::OP_KIND_SEND) {
        EXPECT_EQ(op.root(), first_stage ? 1 : 0);
        EXPECT_EQ(
            op.label().find(first_stage ? ".fwd.pp.send" : ".bwd.pp.send") != std::string::npos,
            true)
            << op.label();
      }
    }
    EXPECT_EQ(ops[ops.size() - 3].count(), 1'500'000u);
    EXPECT_EQ(ops[ops.size() - 2].count(), 1'500'000u);
    EXPECT_EQ(ops[ops.size() - 1].count(), 1'000'000u);
    EXPECT_EQ(ops.back().label(), "it0.dp.bucket2.ar");
  }
  const std::vector<v1::Op>& r0 = job.ops.at(0);
  EXPECT_EQ(r0[0].label(), "it0.mb0.layer0.fwd.attn.tp.ar");
  EXPECT_EQ(r0[1].label(), "it0.mb0.layer0.fwd.mlp.tp.ar");
  EXPECT_EQ(r0[4].label(), "it0.mb0.fwd.pp.send");
  // Stage 1 starts with the first layer it owns, after receiving activations.
  EXPECT_EQ(job.ops.at(4)[0].label(), "it0.mb0.fwd.pp.recv");
  EXPECT_EQ(job.ops.at(4)[1].label(), "it0.mb0.layer2.fwd.attn.tp.ar");
  // Forward FLOPs of a layer: 2 * (4e6 / TP2) * (2*16 tokens) + 4*2*16^2*64/2 = 128,065,536, at
  // 0.5 TFLOP/s = 256,131 ns, half of it before each of the layer's two all-reduces.
  EXPECT_EQ(r0[0].compute_before_ns(), 128'065u);
  EXPECT_EQ(r0[1].compute_before_ns(), 128'066u);  // the fractions carry over
}

TEST_F(SynthTest, SequenceParallelAndZero1) {
  const Job job = run(small("tp: 2, pp: 2, sequence_parallel: true, zero_stage: 1"));
  for (const auto& [rank, ops] : job.ops) {
    EXPECT_EQ(tally(ops), (Tally{{{"tp", v1::OP_KIND_ALL_GATHER}, 32},
                                 {{"tp", v1::OP_KIND_REDUCE_SCATTER}, 32},
                                 {{"pp", v1::OP_KIND_SEND}, 4},
                                 {{"pp", v1::OP_KIND_RECV}, 4},
                                 {{"dp", v1::OP_KIND_REDUCE_SCATTER}, 3},
                                 {{"dp", v1::OP_KIND_ALL_GATHER}, 3}}))
        << "rank " << rank;
    for (const v1::Op& op : ops) {
      if (op.comm().rfind("tp", 0) == 0) {
        EXPECT_EQ(op.count(), 2u * 16 * 64 / 2);
      }
    }
    // Each rank owns half of each bucket.
    const size_t n = ops.size();
    EXPECT_EQ(ops[n - 6].label(), "it0.dp.bucket0.rs");
    EXPECT_EQ(ops[n - 6].count(), 750'000u);
    EXPECT_EQ(ops[n - 4].count(), 500'000u);
    EXPECT_EQ(ops[n - 3].label(), "it0.dp.bucket0.ag");
    EXPECT_EQ(ops[n - 1].count(), 500'000u);
  }
}

TEST_F(SynthTest, Zero3GathersParametersPerLayer) {
  const Job job = run(small("tp: 2, pp: 2, zero_stage: 3"));
  for (const auto& [rank, ops] : job.ops) {
    // Per layer and micro-batch: all-gather before forward and backward, reduce-scatter after
    // backward: 3 * 2 layers * 4 micro-batches; no end-of-iteration buckets.
    EXPECT_EQ(tally(ops), (Tally{{{"tp", v1::OP_KIND_ALL_REDUCE}, 32},
                                 {{"pp", v1::OP_KIND_SEND}, 4},
                                 {{"pp", v1::OP_KIND_RECV}, 4},
                                 {{"dp", v1::OP_KIND_ALL_GATHER}, 16},
                                 {{"dp", v1::OP_KIND_REDUCE_SCATTER}, 8}}))
        << "rank " << rank;
    for (const v1::Op& op : ops) {
      if (op.comm().rfind("dp", 0) == 0) {
        EXPECT_EQ(op.count(), 1'000'000u);  // 4e6 / TP2 / DP2
      }
    }
  }
}

TEST_F(SynthTest, MixtureOfExpertsAllToAll) {
  // 4 experts (top 2) hold 8e6 of the 16e6 parameters; EP 2 inside DP 4 leaves expert-data-
  // parallel groups of 2.
  const Job job = run(small("tp: 1, pp: 2, ep: 2",
                            ", experts: 4, experts_top_k: 2, "
                            "expert_parameters: 8e6",
                            4, 4));
  ASSERT_EQ(job.ops.size(), 8u);
  for (const auto& [rank, ops] : job.ops) {
    // Dense gradients: 8e6 / 4 layers * 2 layers = 4e6 = 8 MB: 3 buckets over DP. Experts:
    // 8e6 / 4 * 2 / EP2 = 2e6 = 4 MB: 2 buckets over EDP. Dispatch and combine forward and
    // backward: 4 per layer and micro-batch = 32.
    EXPECT_EQ(tally(ops), (Tally{{{"ep", v1::OP_KIND_ALL_TO_ALL}, 32},
                                 {{"pp", v1::OP_KIND_SEND}, 4},
                                 {{"pp", v1::OP_KIND_RECV}, 4},
                                 {{"dp", v1::OP_KIND_ALL_REDUCE}, 3},
                                 {{"edp", v1::OP_KIND_ALL_REDUCE}, 2}}))
        << "rank " << rank;
    for (const v1::Op& op : ops) {
      if (op.kind() == v1::OP_KIND_ALL_TO_ALL) {
        EXPECT_EQ(op.count(), 2u * 16 * 2 * 64 / 2);  // tokens * top-k * h / EP to each peer
      }
    }
  }
}

// The job's communicators must agree with the ops: every member of a group issues the same
// collectives with the same sizes in the same order, and only members use a group.
void expect_consistent_collectives(const Job& job) {
  std::map<std::string, const v1::Communicator*> comms;
  for (const v1::Communicator& c : job.header.communicators()) comms[c.id()] = &c;
  using Entry = std::tuple<v1::OpKind, uint64_t, uint64_t, std::string>;
  std::map<std::string, std::map<uint32_t, std::vector<Entry>>> by_comm;
  for (const auto& [rank, ops] : job.ops) {
    for (const v1::Op& op : ops) {
      auto it = comms.find(op.comm());
      ASSERT_NE(it, comms.end()) << op.comm();
      const auto& members = it->second->ranks();
      ASSERT_NE(std::find(members.begin(), members.end(), rank), members.end())
          << "rank " << rank << " is not in " << op.comm();
      if (op.kind() == v1::OP_KIND_SEND || op.kind() == v1::OP_KIND_RECV) continue;
      by_comm[op.comm()][rank].emplace_back(op.kind(), op.count(), op.bytes(), op.label());
    }
  }
  EXPECT_FALSE(by_comm.empty());
  for (const auto& [comm, per_rank] : by_comm) {
    ASSERT_EQ(per_rank.size(), static_cast<size_t>(comms[comm]->ranks_size())) << comm;
    const auto& reference = per_rank.begin()->second;
    for (const auto& [rank, seq] : per_rank) {
      EXPECT_EQ(seq, reference) << "rank " << rank << " differs on " << comm;
    }
  }
}

// Sends from a to b and receives at b from a, in order: same sizes, same micro-batch and phase.
void expect_paired_sends(const Job& job) {
  std::map<std::pair<uint32_t, uint32_t>, std::vector<std::pair<uint64_t, std::string>>> sent,
      received;
  std::map<std::string, const v1::Communicator*> comms;
  for (const v1::Communicator& c : job.header.communicators()) comms[c.id()] = &c;
  size_t total = 0;
  for (const auto& [rank, ops] : job.ops) {
    for (const v1::Op& op : ops) {
      if (op.kind() != v1::OP_KIND_SEND && op.kind() != v1::OP_KIND_RECV) continue;
      const uint32_t peer = comms.at(op.comm())->ranks(op.root());
      std::string what = op.label();
      what.resize(what.rfind('.'));  // "it0.mb3.fwd.pp"
      if (op.kind() == v1::OP_KIND_SEND) {
        sent[{rank, peer}].emplace_back(op.bytes(), what);
        ++total;
      } else {
        received[{peer, rank}].emplace_back(op.bytes(), what);
      }
    }
  }
  EXPECT_GT(total, 0u);
  EXPECT_EQ(sent, received);
}

// Runs every rank's ops with rendezvous semantics (a collective completes once every member has
// posted it, a send once its receive is posted; ops of one group are posted together) and
// expects every rank to finish: the schedule cannot deadlock.
void expect_no_deadlock(const Job& job) {
  std::map<std::string, int> comm_size;
  for (const v1::Communicator& c : job.header.communicators()) comm_size[c.id()] = c.ranks_size();
  std::map<std::string, const v1::Communicator*> comms;
  for (const v1::Communicator& c : job.header.communicators()) comms[c.id()] = &c;
  // Each op's match key: "comm#seq" for collectives, "comm:a>b#seq" for point-to-point.
  std::map<uint32_t, std::vector<std::string>> keys;
  for (const auto& [rank, ops] : job.ops) {
    std::map<std::string, int> seq;
    for (const v1::Op& op : ops) {
      std::string base = op.comm();
      if (op.kind() == v1::OP_KIND_SEND || op.kind() == v1::OP_KIND_RECV) {
        const uint32_t peer = comms.at(op.comm())->ranks(op.root());
        const bool send = op.kind() == v1::OP_KIND_SEND;
        base += fmt::format(":{}>{}", send ? rank : peer, send ? peer : rank);
      }
      keys[rank].push_back(fmt::format("{}#{}", base, seq[base]++));
    }
  }
  std::map<uint32_t, size_t> pos, end;
  std::map<std::string, int> posted;
  std::set<std::pair<uint32_t, size_t>> done;
  auto post = [&](uint32_t rank) {
    const auto& ops = job.ops.at(rank);
    size_t e = pos[rank];
    if (e < ops.size()) {
      const uint32_t g = ops[e].group();
      ++e;
      while (g != 0 && e < ops.size() && ops[e].group() == g) ++e;
    }
    end[rank] = e;
    for (size_t i = pos[rank]; i < e; ++i) ++posted[keys[rank][i]];
  };
  for (const auto& [rank, ops] : job.ops) post(rank);
  bool progress = true;
  while (progress) {
    progress = false;
    for (const auto& [rank, ops] : job.ops) {
      for (size_t i = pos[rank]; i < end[rank]; ++i) {
        const bool p2p = ops[i].kind() == v1::OP_KIND_SEND || ops[i].kind() == v1::OP_KIND_RECV;
        const int needed = p2p ? 2 : comm_size[ops[i].comm()];
        if (posted[keys[rank][i]] >= needed) done.insert({rank, i});
      }
    }
    for (const auto& [rank, ops] : job.ops) {
      if (pos[rank] == ops.size()) continue;
      bool all = true;
      for (size_t i = pos[rank]; i < end[rank]; ++i) all = all && done.count({rank, i}) > 0;
      if (!all) continue;
      for (size_t i = pos[rank]; i < end[rank]; ++i) --posted[keys[rank][i]];
      pos[rank] = end[rank];
      post(rank);
      progress = true;
    }
  }
  for (const auto& [rank, ops] : job.ops) {
    EXPECT_EQ(pos[rank], ops.size())
        << "rank " << rank << " stuck at " << ops[std::min(pos[rank], ops.size() - 1)].label();
  }
}

TEST_F(SynthTest, GroupsAgreeSendsPairAndNothingDeadlocks) {
  const std::vector<std::tuple<std::string, std::string, uint32_t, uint32_t>> configs = {
      {"tp: 2, pp: 2", "", 4, 2},
      {"tp: 2, pp: 4, sequence_parallel: true, zero_stage: 1", "", 6, 2},
      {"tp: 1, pp: 3, zero_stage: 3", "", 2, 2},
      {"tp: 2, pp: 2, ep: 2, sequence_parallel: true, zero_stage: 1",
       ", experts: 4, experts_top_k: 2, expert_parameters: 8e6", 5, 4},
  };
  for (const auto& [parallelism, model, mbs, dp] : configs) {
    SCOPED_TRACE(parallelism);
    v1::ModelSpec spec = small(parallelism, model, mbs, dp);
    spec.mutable_training()->set_iterations(2);
    const Job job = run(spec);
    EXPECT_EQ(job.ops.size(), world_size(spec));
    expect_consistent_collectives(job);
    expect_paired_sends(job);
    expect_no_deadlock(job);
  }
}

TEST_F(SynthTest, TwoIterationsRepeatTheFirst) {
  v1::ModelSpec spec = small("tp: 2, pp: 2");
  spec.mutable_training()->set_iterations(2);
  const Job job = run(spec);
  const std::vector<v1::Op>& ops = job.ops.at(5);
  ASSERT_EQ(ops.size(), 86u);
  EXPECT_EQ(ops[42].iteration(), 0u);
  EXPECT_EQ(ops[43].iteration(), 1u);
  EXPECT_EQ(ops[43].label(), "it1.mb0.fwd.pp.recv");
  // Group ids stay unique per rank across iterations.
  std::set<uint32_t> first, second;
  for (size_t i = 0; i < 43; ++i) {
    if (ops[i].group()) first.insert(ops[i].group());
    if (ops[43 + i].group()) second.insert(ops[43 + i].group());
  }
  EXPECT_FALSE(first.empty());
  for (uint32_t g : second) EXPECT_EQ(first.count(g), 0u);
}

TEST_F(SynthTest, HeaderDescribesTheJob) {
  const Job job = run(small("tp: 2, pp: 2"));
  const v1::TraceHeader& h = job.header;
  EXPECT_EQ(h.source_format(), v1::SOURCE_FORMAT_SYNTHETIC);
  EXPECT_EQ(h.world_size(), 8u);
  ASSERT_EQ(h.ranks_size(), 8);
  EXPECT_EQ(h.metadata().at("model"), "small");
  EXPECT_EQ(h.metadata().at("parallelism"), "tp2 pp2 dp2 ep1 zero0");
  EXPECT_EQ(h.metadata().at("synthesizer"), kSynthesizerVersion);
  // world, 4 TP groups, 4 DP groups, 4 PP groups.
  std::map<std::string, int> names;
  for (const v1::Communicator& c : h.communicators()) ++names[c.name()];
  EXPECT_EQ(names, (std::map<std::string, int>{{"world", 1}, {"tp", 4}, {"dp", 4}, {"pp", 4}}));
  // Megatron order: rank = tp + TP * (dp + DP * pp).
  std::map<std::string, std::vector<uint32_t>> members;
  for (const v1::Communicator& c : h.communicators()) {
    members[c.id()].assign(c.ranks().begin(), c.ranks().end());
  }
  EXPECT_EQ(members["tp1"], (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(members["dp1"], (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(members["pp1"], (std::vector<uint32_t>{1, 5}));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The header record's length and the header, parsed.
std::pair<size_t, v1::TraceHeader> split_header(const std::string& file) {
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(file.data()),
                                            static_cast<int>(file.size()));
  uint32_t length = 0;
  EXPECT_TRUE(in.ReadVarint32(&length));
  const auto start = static_cast<size_t>(in.CurrentPosition());
  v1::TraceHeader header;
  EXPECT_TRUE(header.ParseFromArray(file.data() + start, static_cast<int>(length)));
  return {start + length, header};
}

std::string deterministic(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::io::StringOutputStream stream(&out);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  m.SerializeToCodedStream(&coded);
  return out;
}

TEST_F(SynthTest, SameSpecSameBytes) {
  const v1::ModelSpec spec = small("tp: 2, pp: 2, ep: 2, sequence_parallel: true",
                                   ", experts: 4, experts_top_k: 2, expert_parameters: 8e6", 4, 4);
  ASSERT_TRUE(synthesize(spec, path("a.trace")).ok());
  ASSERT_TRUE(synthesize(spec, path("b.trace")).ok());
  const std::string a = slurp(path("a.trace"));
  const std::string b = slurp(path("b.trace"));
  ASSERT_GT(a.size(), 10'000u);
  ASSERT_EQ(a.size(), b.size());
  // Every op record is byte for byte the same. The header is the same message, but TraceWriter
  // serializes its metadata map in protobuf's per-process hash order, so its bytes are compared
  // in protobuf's deterministic (key-sorted) serialization.
  const auto [a_end, a_header] = split_header(a);
  const auto [b_end, b_header] = split_header(b);
  ASSERT_EQ(a_end, b_end);
  EXPECT_EQ(deterministic(a_header), deterministic(b_header));
  EXPECT_TRUE(a.compare(a_end, std::string::npos, b, b_end, std::string::npos) == 0);
}

TEST(JobShape, UnevenLayersGoToTheFirstStages) {
  v1::ModelSpec spec;
  spec.mutable_model()->set_layers(126);
  spec.mutable_parallelism()->set_pp(16);
  spec.mutable_parallelism()->set_tp(8);
  spec.mutable_parallelism()->set_dp(1);
  spec.mutable_training()->set_micro_batch_size(1);
  spec.mutable_training()->set_global_batch_size(16);
  const JobShape shape = job_shape(spec);
  ASSERT_EQ(shape.stage_layers.size(), 16u);
  EXPECT_EQ(shape.stage_layers[0], std::make_pair(0u, 8u));
  EXPECT_EQ(shape.stage_layers[13], std::make_pair(104u, 112u));
  EXPECT_EQ(shape.stage_layers[14], std::make_pair(112u, 119u));
  EXPECT_EQ(shape.stage_layers[15], std::make_pair(119u, 126u));
}

TEST(RankGenerator, RefusesARankOutsideTheJob) {
  auto spec = parse_model_spec(
      "model: {name: m, parameters: 1e6, layers: 2, hidden_size: 8, attention_heads: 1,"
      " sequence_length: 4}\n",
      "m.yaml");
  ASSERT_TRUE(spec.ok());
  const RankGenerator gen(*spec);
  EXPECT_THAT(gen.generate(1, [](const v1::Op&) { return Status{}; }),
              StatusIs(StatusCode::kInvalidArgument));
  // An unchecked spec is refused, not divided by zero.
  const RankGenerator unchecked{v1::ModelSpec{}};
  EXPECT_THAT(unchecked.generate(0, [](const v1::Op&) { return Status{}; }),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(synthesize(v1::ModelSpec{}, "/dev/null"), StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace collide::traces::synth
