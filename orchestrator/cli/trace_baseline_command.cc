// `collide trace baseline`: reads nccl-tests output (its text table or its --output_file JSON) and
// prints the normalized baseline record, as a table or (--json) as JSON.
#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include <iostream>
#include <memory>
#include <string>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/nccl_tests/nccl_tests_parse.h"
#include "traces/op_types.h"

namespace collide::cli {
namespace {

struct BaselineOptions {
  std::string path;
  bool json = false;
};

std::string half_text(const v1::NcclTestsRow& row, bool in_place) {
  const bool has = in_place ? row.has_in_place() : row.has_out_of_place();
  if (!has) return fmt::format("{:>10} {:>8} {:>8}", "-", "-", "-");
  const v1::NcclTestsResult& r = in_place ? row.in_place() : row.out_of_place();
  return fmt::format("{:>10.2f} {:>8.2f} {:>8.2f}", r.time_us(), r.algbw_gbps(), r.busbw_gbps());
}

void run_baseline(const BaselineOptions& opt) {
  auto parsed = traces::nccl_tests::read_baseline(opt.path);
  if (!parsed.ok()) fail("trace baseline", kExitUsage, parsed.status().message());
  for (const std::string& p : parsed->problems) std::cerr << p << "\n";
  const v1::NcclTestsBaseline& b = parsed->baseline;
  if (opt.json) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;  // a 0.00 GB/s row still shows its zero
    (void)google::protobuf::util::MessageToJsonString(b, &json, options);
    std::cout << json << "\n";
    return;
  }
  std::cout << fmt::format("{} ({}), {} ranks, NCCL {}, {} iterations; {} rows from {} ({})\n",
                           b.test().empty() ? "unknown test" : b.test(),
                           traces::op_kind_name(b.kind()), b.ranks(),
                           b.nccl_version().empty() ? "?" : b.nccl_version(), b.iterations(),
                           b.rows_size(), b.source_file(), b.source_format());
  std::cout << fmt::format(
      "{:>12} {:>12} {:>8} {:>6} {:>5} | {:>10} {:>8} {:>8} | {:>10} {:>8} {:>8}\n", "size(B)",
      "count", "type", "redop", "root", "oop us", "algbw", "busbw", "ip us", "algbw", "busbw");
  for (const v1::NcclTestsRow& row : b.rows()) {
    std::cout << fmt::format("{:>12} {:>12} {:>8} {:>6} {:>5} | {} | {}\n", row.size_bytes(),
                             row.count(), row.type(), row.redop(), row.root(),
                             half_text(row, false), half_text(row, true));
  }
  if (b.has_avg_busbw_gbps())
    std::cout << fmt::format("avg bus bandwidth {} GB/s\n", b.avg_busbw_gbps());
}

}  // namespace

void add_trace_baseline_command(CLI::App& trace) {
  auto opt = std::make_shared<BaselineOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "baseline", "Read nccl-tests output (text or JSON) as a baseline record");
  cmd->add_option("file", opt->path,
                  "nccl-tests output: the printed table or the --output_file JSON")
      ->required();
  cmd->add_flag("--json", opt->json, "print the record as JSON");
  cmd->callback([opt] { run_baseline(*opt); });
}

}  // namespace collide::cli
