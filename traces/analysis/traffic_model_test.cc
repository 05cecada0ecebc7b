#include "traces/analysis/traffic_model.h"

#include <gtest/gtest.h>

namespace collide::traces::analysis {
namespace {

TEST(TrafficModel, AllReduceFullMeshIsNOverTwoTimesRing) {
  // FACTS section 7: a ring all-reduce sends 2/G of the full-mesh figure.
  for (uint32_t n : {2u, 4u, 8u, 64u}) {
    const uint64_t s = 1 << 20;
    EXPECT_EQ(full_mesh_sent_bytes(v1::OP_KIND_ALL_REDUCE, n, s), uint64_t{n} * (n - 1) * s);
    EXPECT_EQ(total_sent_bytes(v1::OP_KIND_ALL_REDUCE, n, s), 2 * uint64_t{n - 1} * s);
    EXPECT_EQ(full_mesh_sent_bytes(v1::OP_KIND_ALL_REDUCE, n, s) * 2,
              total_sent_bytes(v1::OP_KIND_ALL_REDUCE, n, s) * n);
  }
}

TEST(TrafficModel, ChunkedCollectivesAgreeBetweenModels) {
  // Op.bytes of an all-gather or reduce-scatter is already the per-rank chunk, which goes to
  // each of the n-1 others under both models.
  for (v1::OpKind kind :
       {v1::OP_KIND_ALL_GATHER, v1::OP_KIND_REDUCE_SCATTER, v1::OP_KIND_ALL_TO_ALL}) {
    EXPECT_EQ(full_mesh_sent_bytes(kind, 8, 1000), 8u * 7 * 1000);
    EXPECT_EQ(total_sent_bytes(kind, 8, 1000), 8u * 7 * 1000);
  }
  for (v1::OpKind kind :
       {v1::OP_KIND_BROADCAST, v1::OP_KIND_REDUCE, v1::OP_KIND_GATHER, v1::OP_KIND_SCATTER}) {
    EXPECT_EQ(full_mesh_sent_bytes(kind, 8, 1000), 7u * 1000);
  }
}

TEST(TrafficModel, PointToPointAndDegenerateCommunicators) {
  EXPECT_EQ(full_mesh_sent_bytes(v1::OP_KIND_SEND, 2, 77), 77u);
  EXPECT_EQ(total_sent_bytes(v1::OP_KIND_SEND, 2, 77), 77u);
  EXPECT_EQ(full_mesh_sent_bytes(v1::OP_KIND_RECV, 2, 77), 0u);
  EXPECT_EQ(full_mesh_sent_bytes(v1::OP_KIND_ALL_REDUCE, 1, 77), 0u);
  EXPECT_EQ(total_sent_bytes(v1::OP_KIND_ALL_REDUCE, 1, 77), 0u);
}

TEST(TrafficModel, AllToAllvCountsTheIssuingRanksOwnSizesToOthers) {
  v1::Op op;
  op.set_kind(v1::OP_KIND_ALL_TO_ALLV);
  for (uint64_t b : {10u, 20u, 30u, 40u}) op.add_peer_bytes(b);
  EXPECT_EQ(alltoallv_sent_bytes(op, 2), 70u);  // its own 30 bytes stay local
}

TEST(TrafficModel, NcclTestsConventions) {
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_ALL_REDUCE, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_ALL_GATHER, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor(v1::OP_KIND_BROADCAST, 8), 1.0);
  EXPECT_EQ(nccl_tests_size(v1::OP_KIND_REDUCE_SCATTER, 8, 1024), 8192u);
  EXPECT_EQ(nccl_tests_size(v1::OP_KIND_ALL_REDUCE, 8, 1024), 1024u);
}

}  // namespace
}  // namespace collide::traces::analysis
