#include "orchestrator/run/op_catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

TEST(OpCatalogTest, KeepsEachOpsProductionTime) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("collide_op_catalog_" + std::to_string(getpid()) + ".trace"))
                               .string();
  v1::TraceHeader header;
  header.set_world_size(2);
  v1::Communicator* world = header.add_communicators();
  world->set_id("world");
  world->add_ranks(0);
  world->add_ranks(1);
  auto writer = traces::TraceWriter::create(path, header);
  ASSERT_TRUE(writer.ok()) << writer.status().message();
  for (uint32_t rank = 0; rank < 2; ++rank) {
    for (uint64_t index = 0; index < 2; ++index) {
      v1::Op op;
      op.set_rank(rank);
      op.set_index(index);
      op.set_kind(v1::OP_KIND_ALL_REDUCE);
      op.set_comm("world");
      op.set_datatype(v1::DATA_TYPE_FLOAT32);
      // Rank 1's second op was not measured (e.g. a Flight Recorder entry never completed).
      if (rank == 0 || index == 0) op.set_measured_duration_ns(1000 * (rank + 1) + index);
      ASSERT_TRUE((*writer)->write(op).ok());
    }
  }
  ASSERT_TRUE((*writer)->close().ok());
  auto catalog = OpCatalog::read(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(catalog.ok()) << catalog.status().message();
  ASSERT_NE(catalog->find(0, 1), nullptr);
  EXPECT_EQ(catalog->find(0, 1)->production_ns, 1001u);
  EXPECT_EQ(catalog->find(1, 0)->production_ns, 2000u);
  EXPECT_EQ(catalog->find(1, 1)->production_ns, 0u);
  EXPECT_EQ(catalog->find(1, 1)->comm_size, 2u);
}

}  // namespace
}  // namespace collide::orchestrator
