// `collide trace synth`: generates the collectives of a Megatron-style training job from a model
// and parallelism spec (configs/models/*.yaml); flags override the spec's fields.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <unistd.h>

#include "orchestrator/cli/commands.h"
#include "orchestrator/cli/trace_commands.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/synthesizer.h"

namespace collide::cli {
namespace {

struct SynthCommandOptions {
  std::string model;
  std::string output;
  bool quiet = false;
  uint32_t tp = 0, pp = 0, dp = 0, ep = 0, vpp = 0, zero_stage = 0;
  uint32_t micro_batch = 0, global_batch = 0, iterations = 0;
  bool sequence_parallel = false;
  uint64_t bucket_bytes = 0;
  // Which of the above were given (a flag's value may legitimately be 0 or false).
  std::map<std::string, CLI::Option*> given;
};

template <typename T>
std::optional<T> if_given(const SynthCommandOptions& o, const std::string& name, T value) {
  if (o.given.at(name)->count() == 0) return std::nullopt;
  return value;
}

std::string human_bytes(double bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  size_t u = 0;
  while (bytes >= 1000 && u + 1 < std::size(units)) {
    bytes /= 1000;
    ++u;
  }
  return fmt::format("{:.1f} {}", bytes, units[u]);
}

void run_synth(const SynthCommandOptions& opt) {
  traces::synth::SpecOverrides o;
  o.tp = if_given(opt, "tp", opt.tp);
  o.pp = if_given(opt, "pp", opt.pp);
  o.dp = if_given(opt, "dp", opt.dp);
  o.ep = if_given(opt, "ep", opt.ep);
  o.virtual_pipeline_stages = if_given(opt, "vpp", opt.vpp);
  o.zero_stage = if_given(opt, "zero-stage", opt.zero_stage);
  o.micro_batch_size = if_given(opt, "micro-batch", opt.micro_batch);
  o.global_batch_size = if_given(opt, "global-batch", opt.global_batch);
  o.iterations = if_given(opt, "iterations", opt.iterations);
  o.sequence_parallel = if_given(opt, "sequence-parallel", opt.sequence_parallel);
  o.dp_bucket_bytes = if_given(opt, "bucket-bytes", opt.bucket_bytes);
  auto spec = traces::synth::load_model_spec(opt.model, o);
  if (!spec.ok()) fail("trace synth", kExitUsage, spec.status().message());

  // Progress: a 16k-rank job takes a while. On a terminal one line redrawn at most twice a
  // second; in a log (CI, a pipe) a plain line every ten seconds and one at the end, so the log
  // holds no carriage returns or terminal escapes.
  const bool terminal = isatty(STDERR_FILENO) == 1;
  const auto every = terminal ? std::chrono::milliseconds(500) : std::chrono::milliseconds(10000);
  auto last = std::chrono::steady_clock::now();
  traces::synth::SynthProgress progress;
  if (!opt.quiet) {
    progress = [&last, every, terminal](uint32_t done, uint32_t total) {
      const auto now = std::chrono::steady_clock::now();
      if (now - last < every && done != total) return;
      last = now;
      std::cerr << (terminal ? "\r" : "")
                << fmt::format("synth: {} of {} ranks ({:.0f}%)", done, total,
                               100.0 * done / total)
                << (terminal ? "" : "\n") << std::flush;
    };
  }
  const auto started = std::chrono::steady_clock::now();
  auto report = traces::synth::synthesize(*spec, opt.output, progress);
  if (progress && terminal) std::cerr << "\r\033[K" << std::flush;
  if (!report.ok()) fail("trace synth", kExitFailed, report.status().message());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string by_group;
  for (size_t g = 0; g < report->ops_by_group.size(); ++g) {
    if (report->ops_by_group[g] == 0) continue;
    by_group += fmt::format(
        "{}{} {} ops {}", by_group.empty() ? "" : ", ",
        traces::synth::group_kind_name(static_cast<traces::synth::GroupKind>(g)),
        report->ops_by_group[g], human_bytes(static_cast<double>(report->bytes_by_group[g])));
  }
  const v1::ParallelismSpec& p = spec->parallelism();
  std::cout << fmt::format(
      "synthesized {} ops of {} ranks ({}, tp{} pp{} dp{} ep{}, {} micro-batches x {} "
      "iteration{}) in {:.2f} s: {}; wrote {}\n",
      report->ops, report->ranks, spec->model().name(), p.tp(), p.pp(), p.dp(), p.ep(),
      traces::synth::micro_batches(*spec), spec->training().iterations(),
      spec->training().iterations() == 1 ? "" : "s", seconds,
      by_group.empty() ? "no communication" : by_group, opt.output);
}

}  // namespace

void add_trace_synth_command(CLI::App& trace) {
  auto opt = std::make_shared<SynthCommandOptions>();
  CLI::App* cmd = trace.add_subcommand(
      "synth", "Generate the collectives of a training job from a model and parallelism spec");
  cmd->add_option("--model,-m", opt->model,
                  "model spec (YAML, e.g. configs/models/llama3-405b.yaml)")
      ->required();
  cmd->add_option("--output,-o", opt->output, "the collide trace to write (- for stdout)")
      ->required();
  auto& g = opt->given;
  g["tp"] = cmd->add_option("--tp", opt->tp, "tensor-parallel degree");
  g["pp"] = cmd->add_option("--pp", opt->pp, "pipeline stages");
  g["dp"] = cmd->add_option("--dp", opt->dp, "data-parallel replicas");
  g["ep"] = cmd->add_option("--ep", opt->ep, "expert-parallel degree (within dp)");
  g["vpp"] = cmd->add_option("--vpp", opt->vpp, "virtual pipeline stages");
  g["zero-stage"] = cmd->add_option("--zero-stage", opt->zero_stage, "ZeRO/FSDP stage 0-3");
  g["sequence-parallel"] = cmd->add_flag("--sequence-parallel,!--no-sequence-parallel",
                                         opt->sequence_parallel, "sequence parallelism on/off");
  g["micro-batch"] =
      cmd->add_option("--micro-batch", opt->micro_batch, "sequences per micro-batch");
  g["global-batch"] = cmd->add_option("--global-batch", opt->global_batch,
                                      "sequences per iteration (all replicas)");
  g["iterations"] = cmd->add_option("--iterations", opt->iterations, "training iterations");
  g["bucket-bytes"] = cmd->add_option("--bucket-bytes", opt->bucket_bytes,
                                      "data-parallel gradient bucket in bytes");
  cmd->add_flag("--quiet,-q", opt->quiet, "no progress on stderr");
  cmd->callback([opt] { run_synth(*opt); });
}

}  // namespace collide::cli
