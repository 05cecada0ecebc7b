#include "traces/nccl/nccl_log_writer.h"

#include <fmt/format.h>

#include <cinttypes>
#include <cstdio>
#include <map>
#include <utility>

namespace collide::traces::nccl {
namespace {

struct Civil {
  int64_t year;
  unsigned month;
  unsigned day;
};

Civil civil_from_days(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

std::string_view nccl_op_name(v1::OpKind kind) {
  switch (kind) {
    case v1::OP_KIND_ALL_REDUCE:
      return "AllReduce";
    case v1::OP_KIND_ALL_GATHER:
      return "AllGather";
    case v1::OP_KIND_REDUCE_SCATTER:
      return "ReduceScatter";
    case v1::OP_KIND_BROADCAST:
      return "Broadcast";
    case v1::OP_KIND_REDUCE:
      return "Reduce";
    case v1::OP_KIND_SEND:
      return "Send";
    case v1::OP_KIND_RECV:
      return "Recv";
    case v1::OP_KIND_ALL_TO_ALL:
      return "AlltoAll";
    case v1::OP_KIND_GATHER:
      return "Gather";
    case v1::OP_KIND_SCATTER:
      return "Scatter";
    default:
      return {};
  }
}

struct Process {
  std::string host;
  uint32_t pid;
  int32_t device;
};

}  // namespace

std::string format_timestamp(uint64_t ns) {
  const int64_t seconds = static_cast<int64_t>(ns / 1000000000ull);
  const int64_t days = seconds / 86400;
  const int64_t rest = seconds % 86400;
  const Civil c = civil_from_days(days);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:09}", c.year, c.month, c.day,
                     rest / 3600, rest / 60 % 60, rest % 60, ns % 1000000000ull);
}

Status write_nccl_log(const v1::TraceHeader& header, const std::vector<v1::Op>& ops,
                      std::ostream& out, const NcclLogWriterOptions& options) {
  const uint32_t world = header.world_size();
  std::vector<Process> procs(world);
  for (uint32_t r = 0; r < world; ++r) {
    procs[r] = {fmt::format("node{}", r), 1000 + r, 0};
  }
  for (const v1::RankInfo& info : header.ranks()) {
    if (info.rank() >= world) return invalid_argument(fmt::format("rank {} >= world", info.rank()));
    Process& p = procs[info.rank()];
    if (!info.host().empty()) p.host = info.host();
    if (info.pid() != 0) p.pid = info.pid();
    p.device = info.device() < 0 ? 0 : info.device();
  }
  auto prefix = [&](uint32_t rank) {
    const Process& p = procs[rank];
    return fmt::format("{}:{}:{} [{}] NCCL INFO ", p.host, p.pid, p.pid, p.device);
  };
  for (uint32_t r = 0; r < world; ++r)
    out << prefix(r) << "NCCL version " << options.version << "\n";
  for (const v1::RankInfo& info : header.ranks()) {
    if (info.nics_size() == 0) continue;
    out << prefix(info.rank()) << "NET/IB : Using";
    for (int i = 0; i < info.nics_size(); ++i) out << " [" << i << "]" << info.nics(i) << "/RoCE";
    out << "; OOB eth0:10.0.0." << info.rank() + 1 << "<0>\n";
  }
  // Comm pointers: one per (rank, communicator).
  std::map<std::pair<uint32_t, std::string>, uint64_t> pointers;
  std::map<std::string, int> comm_size;
  for (int c = 0; c < header.communicators_size(); ++c) {
    const v1::Communicator& comm = header.communicators(c);
    const int n = comm.ranks_size();
    comm_size[comm.id()] = n;
    for (int cr = 0; cr < n; ++cr) {
      const uint32_t rank = comm.ranks(cr);
      if (rank >= world)
        return invalid_argument(fmt::format("comm {} names rank {}", comm.id(), rank));
      const uint64_t pointer = 0x55d000000000ull + (static_cast<uint64_t>(rank) << 24) +
                               (static_cast<uint64_t>(c + 1) << 12);
      pointers[{rank, comm.id()}] = pointer;
      const std::string pre = prefix(rank);
      if (cr == 0) {
        for (const v1::RingOrder& ring : comm.rings()) {
          out << pre << fmt::format("Channel {:02}/{:02} :", ring.channel(), comm.rings_size());
          for (uint32_t v : ring.ranks()) out << fmt::format(" {:>3}", v);
          out << "\n";
        }
      }
      for (const v1::RingOrder& ring : comm.rings()) {
        const int m = ring.ranks_size();
        for (int i = 0; i < m; ++i) {
          if (ring.ranks(i) != static_cast<uint32_t>(cr)) continue;
          out << pre
              << fmt::format("Ring {:02} : {} -> {} -> {}\n", ring.channel(),
                             ring.ranks((i + m - 1) % m), cr, ring.ranks((i + 1) % m));
        }
      }
      std::string trees;
      for (const v1::Tree& tree : comm.trees()) {
        for (const v1::TreeNode& node : tree.nodes()) {
          if (node.rank() != static_cast<uint32_t>(cr)) continue;
          int down[3] = {-1, -1, -1};
          for (int i = 0; i < node.children_size() && i < 3; ++i) {
            down[i] = static_cast<int>(node.children(i));
          }
          trees += fmt::format(" [{}] {}/{}/{}->{}->{}", tree.channel(), down[0], down[1], down[2],
                               cr, node.parent());
        }
      }
      if (!trees.empty()) out << pre << "Trees" << trees << "\n";
      // A communicator the importer named after its ncclCommSplit color is written as a split.
      int64_t color = 0;
      const bool split = std::sscanf(comm.name().c_str(), "split color %" SCNd64, &color) == 1;
      out << pre
          << fmt::format("{}comm {:#x} rank {} nranks {} cudaDev {} busId {:x}000",
                         split ? "ncclCommSplit " : "", pointer, cr, n, procs[rank].device,
                         procs[rank].device + 1);
      if (split) out << fmt::format(" parent 0x0 splitCount 1 color {} key {}", color, cr);
      if (options.comm_ids)
        out << fmt::format(" commId 0x{:x}", 0xc0de0000ull + static_cast<uint64_t>(c));
      out << " - Init COMPLETE\n";
    }
  }
  for (const v1::Op& op : ops) {
    const std::string_view name = nccl_op_name(op.kind());
    if (name.empty())
      return invalid_argument(fmt::format("op kind {} has no NCCL line", op.kind()));
    if (op.rank() >= world)
      return invalid_argument(fmt::format("op of rank {} >= world", op.rank()));
    const auto it = pointers.find({op.rank(), op.comm()});
    if (it == pointers.end()) {
      return invalid_argument(
          fmt::format("op of rank {} on comm '{}' that lacks it", op.rank(), op.comm()));
    }
    const uint64_t buffer = 0x7f0000000000ull + (static_cast<uint64_t>(op.rank()) << 32);
    std::string sendbuff = fmt::format("{:#x}", buffer);
    std::string recvbuff = fmt::format("{:#x}", buffer + 0x100000);
    if (op.kind() == v1::OP_KIND_SEND) {
      (options.new_send_buffers ? sendbuff : recvbuff) = "(nil)";
    } else if (op.kind() == v1::OP_KIND_RECV) {
      sendbuff = "(nil)";
    }
    if (op.has_enqueue_time_ns()) out << "[" << format_timestamp(op.enqueue_time_ns()) << "] ";
    const int red = op.reduce_op() == v1::REDUCE_OP_UNSPECIFIED ? 0 : op.reduce_op() - 1;
    const int datatype = op.datatype() == v1::DATA_TYPE_UNSPECIFIED ? 0 : op.datatype() - 1;
    out << prefix(op.rank())
        << fmt::format(
               "{}: opCount {:x} sendbuff {} recvbuff {} count {} datatype {} op {} root {} "
               "comm {:#x} [nranks={}] stream 0x{:x}\n",
               name, op.op_count(), sendbuff, recvbuff, op.count(), datatype, red,
               op.root() < 0 ? 0 : op.root(), it->second, comm_size[op.comm()],
               0x55e000000000ull + op.rank());
  }
  if (!out) return internal_error("writing the NCCL log failed");
  return {};
}

}  // namespace collide::traces::nccl
