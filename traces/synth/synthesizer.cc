#include "traces/synth/synthesizer.h"

#include <fmt/format.h>

#include "traces/op_types.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/rank_generator.h"
#include "traces/trace_io.h"

namespace collide::traces::synth {

const char* group_kind_name(GroupKind kind) {
  switch (kind) {
    case GroupKind::kTp:
      return "tp";
    case GroupKind::kDp:
      return "dp";
    case GroupKind::kPp:
      return "pp";
    case GroupKind::kEp:
      return "ep";
    case GroupKind::kEdp:
      return "edp";
    case GroupKind::kCount:
      break;
  }
  return "?";
}

GroupKind group_kind_of(const std::string& comm) {
  if (comm.rfind("tp", 0) == 0) return GroupKind::kTp;
  if (comm.rfind("dp", 0) == 0) return GroupKind::kDp;
  if (comm.rfind("pp", 0) == 0) return GroupKind::kPp;
  if (comm.rfind("edp", 0) == 0) return GroupKind::kEdp;
  return GroupKind::kEp;
}

v1::TraceHeader make_header(const v1::ModelSpec& spec) {
  const v1::ModelArchitecture& m = spec.model();
  const v1::ParallelismSpec& p = spec.parallelism();
  const v1::TrainingSpec& t = spec.training();
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_SYNTHETIC);
  const uint32_t world = world_size(spec);
  header.set_world_size(world);
  const uint32_t per_host = spec.hardware().gpus_per_host();
  for (uint32_t r = 0; r < world; ++r) {
    v1::RankInfo* info = header.add_ranks();
    info->set_rank(r);
    info->set_node(r / per_host);
    info->set_host(fmt::format("host{}", r / per_host));
    info->set_device(static_cast<int32_t>(r % per_host));
  }
  RankLayout(p).add_communicators(header);
  auto& meta = *header.mutable_metadata();
  meta["synthesizer"] = kSynthesizerVersion;
  meta["model"] = m.name();
  meta["parameters"] = std::to_string(m.parameters());
  meta["layers"] = std::to_string(m.layers());
  meta["hidden_size"] = std::to_string(m.hidden_size());
  meta["sequence_length"] = std::to_string(m.sequence_length());
  if (m.experts() > 1) {
    meta["experts"] = fmt::format("{} (top {})", m.experts(), m.experts_top_k());
  }
  meta["parallelism"] = fmt::format("tp{} pp{} dp{} ep{}{} zero{}", p.tp(), p.pp(), p.dp(), p.ep(),
                                    p.sequence_parallel() ? " sp" : "", p.zero_stage());
  meta["rank_order"] = "megatron tp-dp-pp: rank = tp + TP*(dp + DP*pp)";
  meta["schedule"] = "1f1b";
  meta["micro_batch_size"] = std::to_string(t.micro_batch_size());
  meta["global_batch_size"] = std::to_string(t.global_batch_size());
  meta["micro_batches"] = std::to_string(micro_batches(spec));
  meta["datatype"] = std::string(datatype_name(t.datatype()));
  meta["iterations"] = std::to_string(t.iterations());
  meta["dp_bucket_bytes"] = std::to_string(p.dp_bucket_bytes());
  if (spec.hardware().gpu_tflops() > 0) {
    meta["compute_model"] = fmt::format("{} TFLOP/s x {} efficiency", spec.hardware().gpu_tflops(),
                                        spec.hardware().efficiency());
  }
  return header;
}

Result<SynthReport> synthesize(const v1::ModelSpec& spec, const std::string& path,
                               const SynthProgress& progress) {
  COLLIDE_RETURN_IF_ERROR(validate(spec));
  auto writer = TraceWriter::create(path, make_header(spec));
  if (!writer.ok()) return writer.status();
  const RankGenerator generator(spec);
  SynthReport report;
  report.ranks = generator.layout().world();
  TraceWriter& w = **writer;
  const RankGenerator::Sink sink = [&w, &report](const v1::Op& op) -> Status {
    const auto g = static_cast<size_t>(group_kind_of(op.comm()));
    ++report.ops_by_group[g];
    report.bytes_by_group[g] += op.bytes();
    report.bytes += op.bytes();
    return w.write(op);
  };
  for (uint32_t rank = 0; rank < report.ranks; ++rank) {
    COLLIDE_RETURN_IF_ERROR(generator.generate(rank, sink));
    if (progress) progress(rank + 1, report.ranks);
  }
  COLLIDE_RETURN_IF_ERROR(w.close());
  report.ops = w.ops_written();
  return report;
}

}  // namespace collide::traces::synth
