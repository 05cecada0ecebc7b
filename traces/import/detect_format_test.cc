#include "traces/import/detect_format.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/status_matchers.h"

namespace collide::traces {
namespace {

namespace fs = std::filesystem;

const std::string kTraces = COLLIDE_TRACES_DIR;

TEST(DetectFormat, TellsEachFormatFromItsTestData) {
  const std::pair<std::string, std::string> cases[] = {
      {"nccl/testdata/nccl_2_18.log", "nccl"},
      {"nccl/testdata/rccl.log", "nccl"},
      {"chakra/testdata/two_rank/job.0.et", "chakra"},
      {"chakra/testdata/two_rank", "chakra"},  // the folder starts with its groups.json
      {"aicb/testdata/tp2_pp2_dp2.txt", "aicb"},
      {"flight_recorder/testdata/fr_pickle/nccl_trace_rank_3", "flight-recorder"},
      {"flight_recorder/testdata/fr_pickle", "flight-recorder"},
      {"flight_recorder/testdata/fr_json/nccl_trace_rank_3.json", "flight-recorder"},
      {"inspector/testdata/node-b-pid5201.log", "inspector"},
      {"inspector/testdata", "inspector"},  // its first file by name is the generator script
      {"kineto/testdata/rank1.pt.trace.json", "kineto"},
      {"kineto/testdata", "kineto"},
  };
  for (const auto& [path, want] : cases) {
    auto got = detect_import_format({kTraces + "/" + path});
    ASSERT_TRUE(got.ok()) << path << ": " << got.status().message();
    EXPECT_EQ(*got, want) << path;
  }
}

TEST(DetectFormat, JudgesContentNotNames) {
  EXPECT_EQ(format_of_content(R"({"header": {"id": "x", "rank": 0, "n_ranks": 8, "nnodes": 1}})",
                              "a.log"),
            "inspector");
  EXPECT_EQ(format_of_content(R"({"traceEvents": [{"name": "ncclKernel"}]})", "x"), "kineto");
  EXPECT_EQ(format_of_content("[1,0]<stdout>:# nThread 1 nGpus 1\n#  size  busbw\n", "x"),
            "nccl-tests");
  EXPECT_EQ(format_of_content("host:1:1 [0] NCCL INFO AllReduce: opCount 0", "x.json"), "nccl");
  EXPECT_EQ(format_of_content("A\nsomething", "x"), "");  // text, not a varint length
  EXPECT_EQ(format_of_content("", "x"), "");
  EXPECT_EQ(format_of_content("\x80\x04\x95", "x"), "flight-recorder");
}

TEST(DetectFormat, NothingMatchingIsAClearError) {
  const fs::path file = fs::temp_directory_path() / "collide_detect_plain.txt";
  std::ofstream(file) << "just some words\nof no trace format\n";
  auto got = detect_import_format({file.string()});
  fs::remove(file);
  ASSERT_THAT(got, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_NE(got.status().message().find("collide_detect_plain.txt: cannot tell the trace format "
                                        "from its content; give --format (one of nccl"),
            std::string::npos)
      << got.status().message();
  auto missing = detect_import_format({"/nonexistent/trace.log"});
  ASSERT_THAT(missing, StatusIs(StatusCode::kNotFound));
  EXPECT_NE(missing.status().message().find("/nonexistent/trace.log: cannot open"),
            std::string::npos);
}

}  // namespace
}  // namespace collide::traces
