#include "orchestrator/run/workload.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "orchestrator/scenario/incast_workload.h"
#include "orchestrator/scenario/jobs.h"
#include "orchestrator/scenario/synth_workload.h"
#include "traces/op_types.h"
#include "traces/synth/model_spec.h"
#include "traces/synth/synthesizer.h"
#include "traces/scale_trace.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

// A generated trace's header: `world` ranks in one communicator, "world", and what the workload is.
v1::TraceHeader world_trace_header(uint32_t world, const std::string& workload) {
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_SYNTHETIC);
  header.set_world_size(world);
  (*header.mutable_metadata())["workload"] = workload;
  auto* comm = header.add_communicators();
  comm->set_id("world");
  comm->set_name("world");
  for (uint32_t r = 0; r < world; ++r) comm->add_ranks(r);
  return header;
}

// `bytes` times the workload's bytes_scale, whole bfloat16 elements, at least one.
uint64_t scaled_bytes(uint64_t bytes, const v1::Workload& w) {
  const double scale = w.bytes_scale() > 0 ? w.bytes_scale() : 1.0;
  return std::max<uint64_t>(2, static_cast<uint64_t>(std::llround(static_cast<double>(bytes) * scale)) & ~uint64_t{1});
}

Result<std::string> write_collectives(const v1::Scenario& s, uint32_t world,
                                      const std::filesystem::path& dir) {
  const v1::Collectives& c = s.workload().collectives();
  const std::string path = (dir / "workload.trace").string();
  auto writer = traces::TraceWriter::create(
      path, world_trace_header(world, fmt::format("{} x {} of {} bytes", std::max(1u, c.count()),
                                                  traces::op_kind_name(c.kind()), c.bytes())));
  if (!writer.ok()) return writer.status();
  const uint64_t bytes = scaled_bytes(c.bytes(), s.workload());
  const bool rooted = c.kind() == v1::OP_KIND_BROADCAST || c.kind() == v1::OP_KIND_REDUCE ||
                      c.kind() == v1::OP_KIND_GATHER || c.kind() == v1::OP_KIND_SCATTER;
  if (traces::is_point_to_point(c.kind()) || c.kind() == v1::OP_KIND_ALL_TO_ALLV) {
    return invalid_argument(fmt::format("workload.collectives: {} is not a collective every rank "
                                        "issues alike", traces::op_kind_name(c.kind())));
  }
  const uint32_t iterations = std::max(1u, s.workload().iterations());
  const uint32_t count = std::max(1u, c.count());
  for (uint32_t r = 0; r < world; ++r) {
    uint64_t index = 0;
    for (uint32_t it = 0; it < iterations; ++it) {
      for (uint32_t k = 0; k < count; ++k) {
        v1::Op op;
        op.set_rank(r);
        op.set_index(index++);
        op.set_kind(c.kind());
        op.set_comm("world");
        op.set_datatype(v1::DATA_TYPE_BFLOAT16);
        op.set_count(bytes / 2);
        op.set_bytes(bytes);
        op.set_root(rooted ? 0 : -1);
        op.set_reduce_op(v1::REDUCE_OP_SUM);
        op.set_iteration(it);
        COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
      }
    }
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  return path;
}

// The incast as a trace: every rank in one world communicator, the senders' and the receiver's
// point-to-point ops (incast_ops), sizes scaled like the collectives'.
Result<std::string> write_incast(const v1::Scenario& s, uint32_t world, const std::filesystem::path& dir) {
  const v1::Incast& incast = s.workload().incast();
  COLLIDE_RETURN_IF_ERROR(check_incast(incast, world));
  const std::string path = (dir / "workload.trace").string();
  const std::vector<uint32_t> senders = incast_senders(incast, world, s.testbed().ranks_per_host());
  auto writer = traces::TraceWriter::create(
      path, world_trace_header(world, fmt::format("{} x incast of {} senders ({}) to rank {}, {} bytes each",
                                                  std::max(1u, incast.count()), senders.size(),
                                                  fmt::join(senders, ","), incast.receiver(), incast.bytes())));
  if (!writer.ok()) return writer.status();
  const uint32_t iterations = std::max(1u, s.workload().iterations());
  for (const v1::Op& op : incast_ops(incast, world, s.testbed().ranks_per_host(),
                                     scaled_bytes(incast.bytes(), s.workload()), iterations)) {
    COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
  }
  COLLIDE_RETURN_IF_ERROR((*writer)->close());
  return path;
}

// The trace a run replays, shrunk by bytes_scale when asked (compute gaps shrink with it).
Result<std::string> scaled(const std::string& trace, const v1::Workload& w,
                           const std::filesystem::path& dir) {
  if (w.bytes_scale() == 0 || w.bytes_scale() == 1) return trace;
  const std::string out = (dir / "workload.scaled.trace").string();
  COLLIDE_RETURN_IF_ERROR(traces::scale_trace(trace, out, w.bytes_scale()));
  return out;
}

Result<std::string> synthesize(const v1::Workload& w, uint32_t world,
                               const std::filesystem::path& dir) {
  auto spec = synth_model_spec(w.synth(), w.iterations());
  if (!spec.ok()) return spec.status().with_context("workload.synth");
  if (traces::synth::world_size(*spec) != world) {
    return invalid_argument(fmt::format("workload.synth: the job has {} ranks but the testbed holds {}",
                                        traces::synth::world_size(*spec), world));
  }
  const std::string path = (dir / "workload.synth.trace").string();
  auto made = traces::synth::synthesize(*spec, path);
  if (!made.ok()) return made.status().with_context("workload.synth");
  return scaled(path, w, dir);
}

}  // namespace

Result<std::string> prepare_workload(const v1::Scenario& s, uint32_t world,
                                     const std::filesystem::path& dir) {
  const v1::Workload& w = s.workload();
  if (w.has_collectives()) return write_collectives(s, world, dir);
  if (w.has_incast()) return write_incast(s, world, dir);
  if (w.has_synth() || !w.synth_model().empty()) {
    v1::Workload with_model = w;
    v1::Synth& synth = *with_model.mutable_synth();
    if (synth.model().empty()) synth.set_model(w.synth_model());
    auto model = resolve_model_spec(synth.model(), std::filesystem::current_path());
    if (!model.ok()) return model.status().with_context("workload.synth.model");
    synth.set_model(*model);
    return synthesize(with_model, world, dir);
  }
  auto reader = traces::TraceReader::open(w.trace());
  if (!reader.ok()) return reader.status();
  if ((*reader)->header().world_size() != world) {
    return invalid_argument(fmt::format("{} has {} ranks but the testbed holds {}", w.trace(),
                                        (*reader)->header().world_size(), world));
  }
  return scaled(w.trace(), w, dir);
}

namespace {

// Each job's own trace, written under `dir` (job-<i>/), with the global ranks it runs on.
Result<std::vector<JobTrace>> prepare_job_traces(const v1::Scenario& s, const std::filesystem::path& dir) {
  std::vector<JobTrace> traces;
  for (int i = 0; i < s.jobs_size(); ++i) {
    const v1::Job& job = s.jobs(i);
    // The job as a scenario of its own, on its own ranks: every workload source works as it does alone.
    v1::Scenario as_one = s;
    as_one.clear_jobs();
    *as_one.mutable_workload() = job.workload();
    const std::filesystem::path own = dir / fmt::format("job-{}", i);
    std::error_code made;
    std::filesystem::create_directories(own, made);
    if (made) return unavailable(fmt::format("cannot create {}: {}", own.string(), made.message()));
    const std::vector<uint32_t> ranks = job_global_ranks(job, s.testbed().ranks_per_host());
    auto path = prepare_workload(as_one, static_cast<uint32_t>(ranks.size()), own);
    if (!path.ok()) return path.status().with_context(fmt::format("jobs[{}] ({})", i, job.name()));
    traces.push_back({job.name(), *path, ranks});
  }
  return traces;
}

}  // namespace

Result<JobsWorkload> prepare_jobs_workload(const v1::Scenario& s, uint32_t world, const std::filesystem::path& dir) {
  auto jobs = prepare_job_traces(s, dir);
  if (!jobs.ok()) return jobs.status();
  JobsWorkload out;
  out.together = (dir / "jobs.trace").string();
  COLLIDE_RETURN_IF_ERROR(merge_job_traces(*jobs, world, out.together));
  if (s.runs().alone()) {
    for (size_t i = 0; i < jobs->size(); ++i) {
      const std::string path = (dir / fmt::format("alone-{}.trace", i)).string();
      COLLIDE_RETURN_IF_ERROR(merge_job_traces({(*jobs)[i]}, world, path));
      out.alone.emplace_back((*jobs)[i].name, path);
    }
  }
  return out;
}

}  // namespace collide::orchestrator
