// `collide trace convert`: between collide traces and Chakra execution traces.
//   --to chakra:  a collide trace -> <out>.<rank>.et per rank + <out>.comm_groups.json
//   --to collide: Chakra .et files (or a directory of them, with an optional comm-group .json)
//                 -> a collide trace; the same as `collide trace import --format chakra` (the
//                 same --world-size, the same report of problems and notes).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_import.h"

namespace collide::cli {
namespace {

struct ConvertOptions {
  std::vector<std::string> inputs;
  std::string output;
  std::string to;
  bool strict = false;
  uint32_t world_size = 0;
};

void run_convert(const ConvertOptions& opt) {
  if (opt.to == "chakra") {
    if (opt.inputs.size() != 1) {
      fail("trace convert", kExitUsage, "--to chakra converts one collide trace");
    }
    auto report = traces::chakra::export_chakra(opt.inputs[0], opt.output);
    if (!report.ok()) fail("trace convert", kExitUsage, report.status().message());
    // What Chakra cannot carry exactly: a few examples, then the count.
    constexpr size_t kNotesShown = 5;
    for (size_t i = 0; i < std::min(kNotesShown, report->notes.size()); ++i) {
      std::cerr << report->notes[i] << "\n";
    }
    if (report->notes_total > std::min(kNotesShown, report->notes.size())) {
      std::cerr << fmt::format("... {} such notes in all\n", report->notes_total);
    }
    std::cout << fmt::format("wrote {} ops into {} Chakra files {}.<rank>.et and {}\n", report->ops,
                             report->files, opt.output, report->comm_groups_path);
    return;
  }
  if (opt.to == "collide") {
    traces::ImportOptions options;
    options.strict = opt.strict;
    options.world_size = opt.world_size;
    const auto started = std::chrono::steady_clock::now();
    auto report = traces::chakra::import_chakra(opt.inputs, opt.output, options);
    if (!report.ok()) fail("trace convert", kExitUsage, report.status().message());
    print_import_report(
        *report, opt.output,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    return;
  }
  fail("trace convert", kExitUsage,
       fmt::format("--to must be chakra or collide, not '{}'", opt.to));
}

}  // namespace

void add_trace_convert_command(CLI::App& trace) {
  auto opt = std::make_shared<ConvertOptions>();
  CLI::App* cmd =
      trace.add_subcommand("convert", "Convert between collide traces and Chakra execution traces");
  cmd->add_option("inputs", opt->inputs,
                  "a collide trace (--to chakra), or Chakra .et files / a directory (--to collide)")
      ->required();
  cmd->add_option("--output,-o", opt->output,
                  "the Chakra file prefix (--to chakra) or the collide trace to write")
      ->required();
  cmd->add_option("--to", opt->to, "chakra or collide")->required();
  cmd->add_flag("--strict", opt->strict,
                "--to collide: fail on the first node that cannot be used");
  cmd->add_option("--world-size", opt->world_size,
                  "--to collide: the job's rank count, for traces of some ranks only (as "
                  "`trace import -f chakra --world-size`)")
      ->check(CLI::Range(1u, 1u << 24));
  cmd->callback([opt] { run_convert(*opt); });
}

}  // namespace collide::cli
