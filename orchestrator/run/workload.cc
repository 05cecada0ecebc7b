#include "orchestrator/run/workload.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "traces/op_types.h"
#include "traces/scale_trace.h"
#include "traces/trace_io.h"

namespace collide::orchestrator {
namespace {

Result<std::string> write_collectives(const v1::Scenario& s, uint32_t world,
                                      const std::filesystem::path& dir) {
  const v1::Collectives& c = s.workload().collectives();
  const std::string path = (dir / "workload.trace").string();
  v1::TraceHeader header;
  header.set_source_format(v1::SOURCE_FORMAT_SYNTHETIC);
  header.set_world_size(world);
  (*header.mutable_metadata())["workload"] =
      fmt::format("{} x {} of {} bytes", std::max(1u, c.count()), traces::op_kind_name(c.kind()),
                  c.bytes());
  auto* comm = header.add_communicators();
  comm->set_id("world");
  comm->set_name("world");
  for (uint32_t r = 0; r < world; ++r) comm->add_ranks(r);
  auto writer = traces::TraceWriter::create(path, header);
  if (!writer.ok()) return writer.status();
  const double scale = s.workload().bytes_scale() > 0 ? s.workload().bytes_scale() : 1.0;
  const auto bytes = std::max<uint64_t>(2, static_cast<uint64_t>(std::llround(c.bytes() * scale)) & ~uint64_t{1});
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

}  // namespace

Result<std::string> prepare_workload(const v1::Scenario& s, uint32_t world,
                                     const std::filesystem::path& dir) {
  const v1::Workload& w = s.workload();
  if (w.has_collectives()) return write_collectives(s, world, dir);
  if (!w.synth_model().empty()) {
    return unavailable(fmt::format(
        "workload.synth_model: this collide cannot synthesize '{}' yet; make a trace and give "
        "workload.trace", w.synth_model()));
  }
  auto reader = traces::TraceReader::open(w.trace());
  if (!reader.ok()) return reader.status();
  if ((*reader)->header().world_size() != world) {
    return invalid_argument(fmt::format("{} has {} ranks but the testbed holds {}", w.trace(),
                                        (*reader)->header().world_size(), world));
  }
  if (w.bytes_scale() == 0 || w.bytes_scale() == 1) return w.trace();
  const std::string scaled = (dir / "workload.trace").string();
  COLLIDE_RETURN_IF_ERROR(traces::scale_trace(w.trace(), scaled, w.bytes_scale()));
  return scaled;
}

}  // namespace collide::orchestrator
