#include "traces/analysis/test_traces.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::traces::analysis::testing {

v1::TraceHeader make_header(uint32_t world_size, const std::vector<CommSpec>& comms) {
  v1::TraceHeader header;
  header.set_world_size(world_size);
  header.add_source_files("gen.log");
  for (uint32_t r = 0; r < world_size; ++r) header.add_ranks()->set_rank(r);
  for (const CommSpec& spec : comms) {
    v1::Communicator* c = header.add_communicators();
    c->set_id(spec.id);
    c->set_name(spec.id);
    for (uint32_t r : spec.ranks) c->add_ranks(r);
  }
  return header;
}

v1::Op make_op(uint32_t rank, uint64_t index, v1::OpKind kind, const std::string& comm,
               uint64_t bytes, int32_t root, v1::DataType datatype) {
  v1::Op op;
  op.set_rank(rank);
  op.set_index(index);
  op.set_kind(kind);
  op.set_comm(comm);
  op.set_datatype(datatype);
  op.set_bytes(bytes);
  op.set_count(bytes / std::max<uint32_t>(1, datatype_size(datatype)));
  op.set_root(root);
  if (kind == v1::OP_KIND_ALL_REDUCE || kind == v1::OP_KIND_REDUCE_SCATTER ||
      kind == v1::OP_KIND_REDUCE) {
    op.set_reduce_op(v1::REDUCE_OP_SUM);
  }
  op.set_source_line(rank * 1000000 + index + 1);  // of source file 0, gen.log
  return op;
}

std::string temp_trace_path(const std::string& tag) {
  return (std::filesystem::temp_directory_path() /
          fmt::format("collide-analysis-{}-{}.trace", getpid(), tag))
      .string();
}

Status write_trace(const std::string& path, const v1::TraceHeader& header,
                   const std::vector<v1::Op>& ops) {
  auto writer = TraceWriter::create(path, header);
  if (!writer.ok()) return writer.status();
  for (const v1::Op& op : ops) COLLIDE_RETURN_IF_ERROR((*writer)->write(op));
  return (*writer)->close();
}

void renumber(std::vector<v1::Op>& ops) {
  std::map<uint32_t, uint64_t> next;
  for (v1::Op& op : ops) op.set_index(next[op.rank()]++);
}

}  // namespace collide::traces::analysis::testing
