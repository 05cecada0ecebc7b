#include "traces/scale_trace.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::traces {
namespace {

uint64_t scaled(uint64_t value, double factor) {
  if (value == 0) return 0;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(static_cast<double>(value) * factor)));
}

}  // namespace

Status scale_trace(const std::string& in, const std::string& out, double factor) {
  if (!(factor > 0)) return invalid_argument(fmt::format("scale factor {} must be positive", factor));
  auto reader = TraceReader::open(in);
  if (!reader.ok()) return reader.status();
  v1::TraceHeader header = (*reader)->header();
  (*header.mutable_metadata())["bytes_scale"] = fmt::format("{}", factor);
  auto writer = TraceWriter::create(out, header);
  if (!writer.ok()) return writer.status();
  v1::Op op;
  while (true) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    const uint32_t element = std::max<uint32_t>(1, datatype_size(op.datatype()));
    op.set_count(scaled(op.count(), factor));
    op.set_bytes(op.count() > 0 ? op.count() * element : scaled(op.bytes(), factor));
    for (int i = 0; i < op.peer_bytes_size(); ++i) {
      op.set_peer_bytes(i, scaled(op.peer_bytes(i), factor));
    }
    for (int i = 0; i < op.peer_recv_bytes_size(); ++i) {
      op.set_peer_recv_bytes(i, scaled(op.peer_recv_bytes(i), factor));
    }
    if (op.has_compute_before_ns()) op.set_compute_before_ns(scaled(op.compute_before_ns(), factor));
    COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
  }
  return (*writer)->close();
}

}  // namespace collide::traces
