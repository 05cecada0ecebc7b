#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "traces/nccl/nccl_import.h"
#include "traces/trace_io.h"

// Shared by the NCCL importer's tests: import files to a scratch trace and read it back.
namespace collide::traces::nccl::testing {

struct Imported {
  ImportReport report;
  v1::TraceHeader header;
  std::vector<v1::Op> ops;
};

inline std::string testdata(const std::string& name) {
  return std::string(COLLIDE_NCCL_TESTDATA) + "/" + name;
}

// Every scratch file of this test process lives under one folder, removed when the tests end
// (COLLIDE_KEEP_TEST_FILES=1 keeps it for a look afterwards).
inline std::filesystem::path process_scratch_root() {
  return std::filesystem::temp_directory_path() / ("collide-nccl-" + std::to_string(getpid()));
}

class ScratchCleanup : public ::testing::Environment {
 public:
  void TearDown() override {
    if (std::getenv("COLLIDE_KEEP_TEST_FILES") == nullptr) {
      std::error_code ignored;
      std::filesystem::remove_all(process_scratch_root(), ignored);
    }
  }
};

inline const bool kScratchCleanupRegistered =
    (::testing::AddGlobalTestEnvironment(new ScratchCleanup), true);

inline std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto dir = process_scratch_root() /
             (std::string(info->test_suite_name()) + "-" + info->name());
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

inline Result<Imported> import_files(const std::vector<std::string>& files,
                                     const ImportOptions& options) {
  const std::string out = (scratch_dir() / "out.trace").string();
  auto report = import_nccl_logs(files, out, options);
  if (!report.ok()) return report.status();
  Imported imported;
  imported.report = std::move(*report);
  auto reader = TraceReader::open(out);
  if (!reader.ok()) return reader.status();
  imported.header = (*reader)->header();
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    imported.ops.push_back(op);
  }
  return imported;
}

inline Result<Imported> import_files(const std::vector<std::string>& files, bool strict = false) {
  ImportOptions options;
  options.strict = strict;
  return import_files(files, options);
}

// Ops of one rank, in trace order.
inline std::vector<v1::Op> ops_of(const Imported& t, uint32_t rank) {
  std::vector<v1::Op> out;
  for (const v1::Op& op : t.ops) {
    if (op.rank() == rank) out.push_back(op);
  }
  return out;
}

inline const v1::Communicator* comm_by_id(const Imported& t, const std::string& id) {
  for (const v1::Communicator& c : t.header.communicators()) {
    if (c.id() == id) return &c;
  }
  return nullptr;
}

inline std::vector<uint32_t> ranks_of(const v1::Communicator& c) {
  return {c.ranks().begin(), c.ranks().end()};
}

}  // namespace collide::traces::nccl::testing
