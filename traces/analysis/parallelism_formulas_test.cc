// FACTS.md section 7's per-epoch formulas for tensor-parallel gradients and for 3D (TP x PP x DP)
// parallelism, checked against `stats` on traces built op by op from what each rank of such a
// job issues. The traces are laid out from the parallel structure (groups, shards, layers per
// stage, tokens per replica), not from the formulas, so a wrong traffic model, a wrong
// communicator size or a lost term shows as a difference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traces/analysis/test_traces.h"
#include "traces/analysis/trace_stats.h"

namespace collide::traces::analysis {
namespace {

using testing::CommSpec;
using testing::make_header;
using testing::make_op;

TraceStats stats_of(const v1::TraceHeader& header, const std::vector<v1::Op>& ops) {
  StatsAccumulator acc(header);
  for (const v1::Op& op : ops) acc.add(op);
  return std::move(acc).finish();
}

const CommunicatorStats& comm_named(const TraceStats& s, const std::string& id) {
  for (const CommunicatorStats& c : s.by_communicator) {
    if (c.id == id) return c;
  }
  ADD_FAILURE() << "no communicator " << id;
  static const CommunicatorStats kNone;
  return kNone;
}

// Sum of a traffic figure over the communicators whose id starts with `prefix`.
uint64_t full_mesh_of(const TraceStats& s, const std::string& prefix) {
  uint64_t sum = 0;
  for (const CommunicatorStats& c : s.by_communicator) {
    if (c.id.rfind(prefix, 0) == 0) sum += c.totals.full_mesh_bytes;
  }
  return sum;
}
uint64_t nccl_of(const TraceStats& s, const std::string& prefix) {
  uint64_t sum = 0;
  for (const CommunicatorStats& c : s.by_communicator) {
    if (c.id.rfind(prefix, 0) == 0) sum += c.totals.nccl_bytes;
  }
  return sum;
}

TEST(ParallelismFormulas, TensorParallelGradientsAreFourNLPTimesGMinusOne) {
  // The articles' gradient term of tensor parallelism: each of the G ranks holds a 1/G shard of
  // the P parameters (2 P / G bytes in bf16) and, in each of the L layers of each of the N
  // mini-batches, all-reduces that shard twice (forward and backward). Per epoch:
  // 4 N L P (G-1) under the full-mesh model.
  constexpr uint32_t kG = 4;
  constexpr uint32_t kL = 5;
  constexpr uint64_t kP = 6'000'000;
  constexpr uint32_t kN = 3;
  std::vector<uint32_t> members;
  for (uint32_t r = 0; r < kG; ++r) members.push_back(r);
  const auto header = make_header(kG, {{"tp", members}});
  std::vector<v1::Op> ops;
  for (uint32_t r = 0; r < kG; ++r) {
    uint64_t index = 0;
    for (uint32_t mb = 0; mb < kN; ++mb) {
      for (uint32_t pass = 0; pass < 2; ++pass) {
        for (uint32_t l = 0; l < kL; ++l) {
          v1::Op op = make_op(r, index++, v1::OP_KIND_ALL_REDUCE, "tp", 2 * kP / kG);
          op.set_iteration(mb);
          ops.push_back(op);
        }
      }
    }
  }
  const TraceStats s = stats_of(header, ops);
  const uint64_t formula = 4ull * kN * kL * kP * (kG - 1);
  EXPECT_EQ(s.job.full_mesh_bytes, formula);
  EXPECT_EQ(s.job.full_mesh_bytes, 1'080'000'000u);  // the formula, worked by hand
  // A ring all-reduce sends 2(G-1)/G of each buffer per rank: 2/G of the full-mesh figure.
  EXPECT_EQ(s.job.nccl_bytes * kG, formula * 2);
  EXPECT_EQ(s.job.instances, 2u * kN * kL);
  // One traced mini-batch projected to the epoch gives the same figure.
  std::vector<v1::Op> first;
  for (const v1::Op& op : ops) {
    if (op.iteration() == 0) first.push_back(op);
  }
  EXPECT_DOUBLE_EQ(project_to_epoch(stats_of(header, first), kN).full_mesh_bytes,
                   static_cast<double>(formula));
}

// A 3D-parallel job: rank = tp + Gtp (pp + Gpp dp), tensor parallel innermost (Megatron's layout).
struct ThreeD {
  uint32_t gtp, gpp, gdp;
  uint32_t layers;           // L, split evenly over the Gpp stages
  uint64_t hidden;           // H
  uint64_t params;           // P
  uint64_t tokens;           // t per mini-batch, split evenly over the Gdp replicas
  uint32_t minibatches;      // N

  uint32_t rank(uint32_t tp, uint32_t pp, uint32_t dp) const { return tp + gtp * (pp + gpp * dp); }
  uint32_t world() const { return gtp * gpp * gdp; }
};

v1::TraceHeader three_d_header(const ThreeD& j) {
  std::vector<CommSpec> comms;
  for (uint32_t dp = 0; dp < j.gdp; ++dp) {
    for (uint32_t pp = 0; pp < j.gpp; ++pp) {
      CommSpec c{"tp-" + std::to_string(dp) + "-" + std::to_string(pp), {}};
      for (uint32_t tp = 0; tp < j.gtp; ++tp) c.ranks.push_back(j.rank(tp, pp, dp));
      comms.push_back(c);
    }
  }
  for (uint32_t dp = 0; dp < j.gdp; ++dp) {
    for (uint32_t tp = 0; tp < j.gtp; ++tp) {
      CommSpec c{"pp-" + std::to_string(dp) + "-" + std::to_string(tp), {}};
      for (uint32_t pp = 0; pp < j.gpp; ++pp) c.ranks.push_back(j.rank(tp, pp, dp));
      comms.push_back(c);
    }
  }
  for (uint32_t pp = 0; pp < j.gpp; ++pp) {
    for (uint32_t tp = 0; tp < j.gtp; ++tp) {
      CommSpec c{"dp-" + std::to_string(pp) + "-" + std::to_string(tp), {}};
      for (uint32_t dp = 0; dp < j.gdp; ++dp) c.ranks.push_back(j.rank(tp, pp, dp));
      comms.push_back(c);
    }
  }
  return make_header(j.world(), comms);
}

// What every rank issues, mini-batch by mini-batch (ranks one after another, as importers write):
//  - forward: receive the replica's activations from the previous stage (each TP rank its 1/Gtp
//    share, Megatron's scatter/gather of the pipeline message), then per layer of its stage an
//    all-reduce of the activations (2 t/Gdp H bytes) and one of its parameter shard's gradients
//    (2 P / (Gtp Gpp) bytes; the articles' TP gradient term, once forward and once backward),
//    then send its share to the next stage;
//  - backward: the same in reverse, with the activation gradients;
//  - the data-parallel all-reduce of its parameter shard's gradients.
std::vector<v1::Op> three_d_ops(const ThreeD& j) {
  const uint64_t activations = 2 * (j.tokens / j.gdp) * j.hidden;  // one replica, bf16
  const uint64_t shard = 2 * j.params / (j.gtp * j.gpp);           // one rank's parameters, bf16
  const uint32_t stage_layers = j.layers / j.gpp;
  std::vector<v1::Op> ops;
  for (uint32_t dp = 0; dp < j.gdp; ++dp) {
    for (uint32_t pp = 0; pp < j.gpp; ++pp) {
      for (uint32_t tp = 0; tp < j.gtp; ++tp) {
        const uint32_t r = j.rank(tp, pp, dp);
        const std::string tp_comm = "tp-" + std::to_string(dp) + "-" + std::to_string(pp);
        const std::string pp_comm = "pp-" + std::to_string(dp) + "-" + std::to_string(tp);
        const std::string dp_comm = "dp-" + std::to_string(pp) + "-" + std::to_string(tp);
        uint64_t index = 0;
        auto issue = [&](v1::OpKind kind, const std::string& comm, uint64_t bytes, int32_t peer,
                         uint32_t mb) {
          v1::Op op = make_op(r, index++, kind, comm, bytes, peer);
          op.set_iteration(mb);
          ops.push_back(op);
        };
        for (uint32_t mb = 0; mb < j.minibatches; ++mb) {
          // Forward; in the pipeline communicator a rank's comm rank is its stage.
          if (pp > 0) issue(v1::OP_KIND_RECV, pp_comm, activations / j.gtp, pp - 1, mb);
          for (uint32_t l = 0; l < stage_layers; ++l) {
            issue(v1::OP_KIND_ALL_REDUCE, tp_comm, activations, -1, mb);
            issue(v1::OP_KIND_ALL_REDUCE, tp_comm, shard, -1, mb);
          }
          if (pp + 1 < j.gpp) issue(v1::OP_KIND_SEND, pp_comm, activations / j.gtp, pp + 1, mb);
          // Backward.
          if (pp + 1 < j.gpp) issue(v1::OP_KIND_RECV, pp_comm, activations / j.gtp, pp + 1, mb);
          for (uint32_t l = 0; l < stage_layers; ++l) {
            issue(v1::OP_KIND_ALL_REDUCE, tp_comm, activations, -1, mb);
            issue(v1::OP_KIND_ALL_REDUCE, tp_comm, shard, -1, mb);
          }
          if (pp > 0) issue(v1::OP_KIND_SEND, pp_comm, activations / j.gtp, pp - 1, mb);
          issue(v1::OP_KIND_ALL_REDUCE, dp_comm, shard, -1, mb);
        }
      }
    }
  }
  return ops;
}

TEST(ParallelismFormulas, ThreeDPerEpochIsTheArticlesFormula) {
  // Unequal degrees, so swapping two of them in a term changes the figure.
  const ThreeD j{.gtp = 4,
                 .gpp = 3,
                 .gdp = 2,
                 .layers = 6,
                 .hidden = 256,
                 .params = 1'200'000,
                 .tokens = 1024,
                 .minibatches = 2};
  const TraceStats s = stats_of(three_d_header(j), three_d_ops(j));
  const uint64_t N = j.minibatches, P = j.params, L = j.layers, H = j.hidden;
  const uint64_t T = N * j.tokens;  // tokens per epoch, when the trace is the epoch
  const uint64_t gtp = j.gtp, gpp = j.gpp, gdp = j.gdp;

  // 2 N P Gdp [2 L (Gtp-1)/Gpp + (Gdp-1)] + 4 T H L Gtp (Gtp-1) + 4 T H (Gpp-1), term by term
  // (the first bracket multiplied out so every step is an integer).
  const uint64_t tp_gradients = 4 * N * P * gdp * L * (gtp - 1) / gpp;
  const uint64_t dp_gradients = 2 * N * P * gdp * (gdp - 1);
  const uint64_t tp_activations = 4 * T * H * L * gtp * (gtp - 1);
  const uint64_t pp_activations = 4 * T * H * (gpp - 1);
  // The same terms worked by hand for these degrees.
  EXPECT_EQ(tp_gradients, 115'200'000u);
  EXPECT_EQ(dp_gradients, 9'600'000u);
  EXPECT_EQ(tp_activations, 150'994'944u);
  EXPECT_EQ(pp_activations, 4'194'304u);

  EXPECT_EQ(full_mesh_of(s, "tp-"), tp_gradients + tp_activations);
  EXPECT_EQ(full_mesh_of(s, "dp-"), dp_gradients);
  EXPECT_EQ(full_mesh_of(s, "pp-"), pp_activations);
  EXPECT_EQ(s.job.full_mesh_bytes, tp_gradients + dp_gradients + tp_activations + pp_activations);

  // Beside it, NCCL's rings: all-reduces send 2/n of the full-mesh figure of an n-rank group;
  // pipeline sends are sent once under both models.
  EXPECT_EQ(nccl_of(s, "tp-") * gtp, 2 * (tp_gradients + tp_activations));
  EXPECT_EQ(nccl_of(s, "dp-") * gdp, 2 * dp_gradients);
  EXPECT_EQ(nccl_of(s, "pp-"), pp_activations);

  // Each group's share is its own: one TP group of the 2 x 3 carries 1/6 of the TP traffic.
  EXPECT_EQ(comm_named(s, "tp-1-2").totals.full_mesh_bytes * gdp * gpp,
            tp_gradients + tp_activations);
  EXPECT_EQ(s.ops_unaccounted, 0u);
  EXPECT_EQ(s.by_iteration.size(), j.minibatches);
}

TEST(ParallelismFormulas, ThreeDReducesToEachPureForm) {
  // Gpp = Gdp = 1 is pure tensor parallelism: 4 N L P (G-1) + 4 T L H G (G-1).
  const ThreeD tp{.gtp = 8, .gpp = 1, .gdp = 1, .layers = 2, .hidden = 64, .params = 80'000,
                  .tokens = 32, .minibatches = 1};
  const TraceStats a = stats_of(three_d_header(tp), three_d_ops(tp));
  EXPECT_EQ(a.job.full_mesh_bytes, 4ull * 1 * 2 * 80'000 * 7 + 4ull * 32 * 2 * 64 * 8 * 7);
  // Gtp = Gpp = 1 is pure data parallelism: 2 N P G (G-1), the worked example's form.
  const ThreeD dp{.gtp = 1, .gpp = 1, .gdp = 8, .layers = 2, .hidden = 64, .params = 80'000,
                  .tokens = 32, .minibatches = 1};
  const TraceStats b = stats_of(three_d_header(dp), three_d_ops(dp));
  EXPECT_EQ(b.job.full_mesh_bytes, 2ull * 80'000 * 8 * 7);
  // Gtp = Gdp = 1 is pure pipeline parallelism: 4 T H (G-1).
  const ThreeD pp{.gtp = 1, .gpp = 4, .gdp = 1, .layers = 4, .hidden = 64, .params = 80'000,
                  .tokens = 32, .minibatches = 1};
  const TraceStats c = stats_of(three_d_header(pp), three_d_ops(pp));
  EXPECT_EQ(c.job.full_mesh_bytes, 4ull * 32 * 64 * 3);
}

}  // namespace
}  // namespace collide::traces::analysis
