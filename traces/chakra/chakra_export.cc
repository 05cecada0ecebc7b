#include "traces/chakra/chakra_export.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <optional>
#include <unordered_map>

#include "chakra/et_def.pb.h"
#include "traces/chakra/chakra_import.h"
#include "traces/chakra/comm_groups.h"
#include "traces/chakra/comm_size.h"
#include "traces/chakra/et_stream.h"
#include "traces/chakra/node_attrs.h"
#include "traces/chakra/rank_converter.h"
#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::traces::chakra {
namespace {

// Per-rank output is buffered and appended to its file in chunks, so a trace of thousands of
// ranks needs neither thousands of open files nor the whole trace in memory.
constexpr size_t kFlushBytes = 256 * 1024;

struct RankOut {
  std::string path;
  std::string buffer;
  bool started = false;
  uint64_t next_id = 0;
  std::vector<uint64_t> op_nodes;  // node id of each op index
  std::optional<uint64_t> last_node;
};

Status write_all(const std::string& path, bool append, const std::string& bytes) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) return errno_status(errno, fmt::format("creating {}", path));
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return errno_status(err, fmt::format("writing {}", path));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0) return errno_status(errno, fmt::format("closing {}", path));
  return {};
}

class Exporter {
 public:
  Exporter(const v1::TraceHeader& header, std::string prefix) : prefix_(std::move(prefix)) {
    metadata_.set_version(kExportVersion);
    for (const auto& [key, value] : header.metadata()) {
      if (key == kVersionKey) {
        if (!value.empty()) metadata_.set_version(value);
        continue;
      }
      sorted_metadata_.emplace(key, value);
    }
    for (const auto& [key, value] : sorted_metadata_) {
      auto* attr = metadata_.add_attr();
      attr->set_name(key);
      attr->set_string_val(value);
    }
    for (const v1::Communicator& c : header.communicators()) {
      comms_.emplace(c.id(), std::vector<uint32_t>(c.ranks().begin(), c.ranks().end()));
    }
    *sources_.mutable_source_files() = header.source_files();
  }

  Status add(const v1::Op& op) {
    auto comm = comms_.find(op.comm());
    if (comm == comms_.end()) {
      return invalid_argument(fmt::format("{}: op {} of rank {} uses unknown communicator '{}'",
                                          op_source(sources_, op), op.index(), op.rank(),
                                          op.comm()));
    }
    RankOut& out = rank(op.rank());
    if (op.index() != out.op_nodes.size()) {
      note(fmt::format("rank {}: op index {} follows {} ops; exported in file order", op.rank(),
                       op.index(), out.op_nodes.size()));
    }
    ChakraProtoMsg::Node node;
    if (op.has_compute_before_ns()) {
      if (op.compute_before_ns() % 1000 != 0) {
        note(fmt::format("rank {} op {}: compute_before_ns {} rounded down to whole microseconds",
                         op.rank(), op.index(), op.compute_before_ns()));
      }
      node.set_id(out.next_id++);
      node.set_name("compute");
      node.set_type(ChakraProtoMsg::COMP_NODE);
      if (out.last_node) node.add_ctrl_deps(*out.last_node);
      node.set_duration_micros(op.compute_before_ns() / 1000);
      out.last_node = node.id();
      append_delimited(node, out.buffer);
      node.Clear();
    }
    node.set_id(out.next_id++);
    node.set_name(op.label());
    if (out.last_node) node.add_ctrl_deps(*out.last_node);
    for (uint64_t d : op.deps()) {
      // Issue-order deps would be a ctrl dep already; keep the explicit ones as data deps.
      if (d < out.op_nodes.size()) {
        node.add_data_deps(out.op_nodes[d]);
      } else {
        note(fmt::format("rank {} op {}: dependency on op {} that is not earlier; dropped",
                         op.rank(), op.index(), d));
      }
    }
    if (op.has_enqueue_time_ns()) node.set_start_time_micros(op.enqueue_time_ns() / 1000);
    const std::vector<uint32_t>& members = comm->second;
    if (op.kind() == v1::OP_KIND_SEND || op.kind() == v1::OP_KIND_RECV) {
      if (op.root() < 0 || static_cast<size_t>(op.root()) >= members.size()) {
        return invalid_argument(fmt::format("{}: peer {} outside communicator '{}' of {} ranks",
                                            op_source(sources_, op), op.root(), op.comm(),
                                            members.size()));
      }
      const bool send = op.kind() == v1::OP_KIND_SEND;
      const uint32_t peer = members[static_cast<size_t>(op.root())];
      const uint32_t src = send ? op.rank() : peer;
      const uint32_t dst = send ? peer : op.rank();
      node.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      add_int32_attr(node, "comm_src", static_cast<int32_t>(src));
      add_int32_attr(node, "comm_dst", static_cast<int32_t>(dst));
      auto& tags = send ? send_tags_ : recv_tags_;
      add_int32_attr(node, "comm_tag", static_cast<int32_t>(tags[{src, dst}]++));
    } else {
      auto type = comm_type_from_op_kind(op.kind());
      if (!type.ok())
        return invalid_argument(
            fmt::format("{}: {}", op_source(sources_, op), type.status().message()));
      if (op.kind() == v1::OP_KIND_ALL_TO_ALLV) {
        note(fmt::format("rank {} op {}: all-to-allv exported as all-to-all of {} bytes", op.rank(),
                         op.index(), comm_size_from_op(op, static_cast<uint32_t>(members.size()))));
      }
      node.set_type(ChakraProtoMsg::COMM_COLL_NODE);
      add_int64_attr(node, "comm_type", *type);
      if (has_root(op.kind())) add_int32_attr(node, "root", op.root());
    }
    add_int64_attr(node, "comm_size", static_cast<int64_t>(comm_size_from_op(
                                          op, static_cast<uint32_t>(members.size()))));
    add_string_attr(node, "pg_name", op.comm());
    out.op_nodes.push_back(node.id());
    out.last_node = node.id();
    append_delimited(node, out.buffer);
    ++ops_;
    if (out.buffer.size() >= kFlushBytes) return flush(out);
    return {};
  }

  Result<ExportReport> finish(const v1::TraceHeader& header) {
    uint32_t world = header.world_size();
    if (!ranks_.empty()) world = std::max(world, ranks_.rbegin()->first + 1);
    ExportReport report;
    for (uint32_t r = 0; r < world; ++r) {
      COLLIDE_RETURN_IF_ERROR(flush(rank(r)));
      ++report.files;
    }
    std::vector<CommGroup> groups;
    for (const v1::Communicator& c : header.communicators()) {
      groups.push_back({c.id(), std::vector<uint32_t>(c.ranks().begin(), c.ranks().end())});
    }
    report.comm_groups_path = prefix_ + ".comm_groups.json";
    COLLIDE_RETURN_IF_ERROR(write_comm_groups(report.comm_groups_path, groups));
    report.ops = ops_;
    report.notes = std::move(notes_);
    report.notes_total = notes_total_;
    return report;
  }

 private:
  RankOut& rank(uint32_t r) {
    auto [it, fresh] = ranks_.try_emplace(r);
    if (fresh) it->second.path = fmt::format("{}.{}.et", prefix_, r);
    return it->second;
  }

  Status flush(RankOut& out) {
    if (!out.started) {
      std::string head;
      append_delimited(metadata_, head);
      out.buffer.insert(0, head);
    }
    COLLIDE_RETURN_IF_ERROR(write_all(out.path, out.started, out.buffer));
    out.started = true;
    out.buffer.clear();
    return {};
  }

  void note(std::string text) {
    ++notes_total_;
    if (notes_.size() < 100) notes_.push_back(std::move(text));
  }

  std::string prefix_;
  ChakraProtoMsg::GlobalMetadata metadata_;
  std::map<std::string, std::string> sorted_metadata_;
  std::unordered_map<std::string, std::vector<uint32_t>> comms_;
  v1::TraceHeader sources_;  // only the header's source_files, which ops' source lines refer to
  std::map<uint32_t, RankOut> ranks_;
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> send_tags_, recv_tags_;
  uint64_t ops_ = 0;
  uint64_t notes_total_ = 0;
  std::vector<std::string> notes_;
};

}  // namespace

Result<ExportReport> export_chakra(const std::string& trace_path, const std::string& prefix) {
  auto reader = TraceReader::open(trace_path);
  if (!reader.ok()) return reader.status();
  const std::filesystem::path parent = std::filesystem::path(prefix).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) return errno_status(ec.value(), fmt::format("creating {}", parent.string()));
  }
  const v1::TraceHeader header = (*reader)->header();
  Exporter exporter(header, prefix);
  v1::Op op;
  for (;;) {
    auto more = (*reader)->next(op);
    if (!more.ok()) return more.status();
    if (!*more) break;
    COLLIDE_RETURN_IF_ERROR(exporter.add(op));
  }
  return exporter.finish(header);
}

}  // namespace collide::traces::chakra
