#include "traces/analysis/hang_frontier.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <unordered_set>

#include "traces/op_types.h"

namespace collide::traces::analysis {

HangFrontierAccumulator::HangFrontierAccumulator(const v1::TraceHeader& header) {
  // A source that lists only some ranks (Flight Recorder: the ranks that left a dump) says by
  // that which ranks have a record; one that lists none has a record of every rank.
  std::unordered_set<uint32_t> listed;
  for (const v1::RankInfo& r : header.ranks()) listed.insert(r.rank());
  for (const v1::Communicator& c : header.communicators()) {
    if (index_.count(c.id()) != 0) continue;
    index_.emplace(c.id(), static_cast<uint32_t>(comms_.size()));
    Comm& comm = comms_.emplace_back();
    comm.id = c.id();
    comm.name = c.name();
    for (int i = 0; i < c.ranks_size(); ++i) {
      comm.comm_rank.emplace(c.ranks(i), static_cast<uint32_t>(i));
      Member& m = comm.members.emplace_back();
      m.rank = c.ranks(i);
      m.recorded = listed.empty() || listed.count(c.ranks(i)) != 0;
    }
  }
}

void HangFrontierAccumulator::add(const v1::Op& op) {
  if (op.state() == v1::OP_STATE_UNSPECIFIED) return;
  frontier_.has_states = true;
  const bool done = op.state() == v1::OP_STATE_COMPLETED;
  if (is_point_to_point(op.kind())) {
    if (done) return;
    if (frontier_.point_to_point.size() < kMaxStuckPointToPoint) {
      frontier_.point_to_point.push_back(
          {op.rank(), op.comm(), op.kind(), op.root(), op.op_count(), op.state()});
    }
    ++frontier_.point_to_point_total;
    return;
  }
  const auto comm = index_.find(op.comm());
  if (comm == index_.end()) return;  // validate reports ops outside declared communicators
  Comm& c = comms_[comm->second];
  const auto member = c.comm_rank.find(op.rank());
  if (member == c.comm_rank.end()) return;
  Member& m = c.members[member->second];
  const uint64_t seq = op.op_count();
  if (!m.any) {
    m.any = true;
    m.first_seq = m.last_seq = seq;
  }
  m.first_seq = std::min(m.first_seq, seq);
  m.last_seq = std::max(m.last_seq, seq);
  if (!done) m.pending.emplace(seq, Pending{op.kind(), op.bytes(), op.state()});
}

HangFrontier HangFrontierAccumulator::finish() && {
  for (const Comm& c : comms_) {
    bool hangs = false;
    uint64_t frontier = UINT64_MAX;
    for (const Member& m : c.members) {
      if (!m.recorded || !m.any) continue;
      hangs |= !m.pending.empty();
      frontier = std::min(frontier, m.pending.empty() ? m.last_seq + 1 : m.pending.begin()->first);
    }
    if (!hangs) continue;
    FrontierCollective out;
    out.comm = c.id;
    out.name = c.name;
    out.seq = frontier;
    for (const Member& m : c.members) {
      if (!m.recorded) {
        out.no_record.push_back(m.rank);
        continue;
      }
      const auto pending = m.pending.find(frontier);
      if (pending != m.pending.end()) {
        out.kind = pending->second.kind;
        out.bytes = pending->second.bytes;
        (pending->second.state == v1::OP_STATE_STARTED ? out.started : out.scheduled)
            .push_back(m.rank);
      } else if (!m.any || frontier > m.last_seq) {
        out.not_issued.push_back(m.rank);
      } else {
        out.completed.push_back(m.rank);
      }
    }
    frontier_.collectives.push_back(std::move(out));
  }
  return std::move(frontier_);
}

namespace {

std::string rank_list(const std::vector<uint32_t>& ranks) {
  return fmt::format("{}", fmt::join(ranks, ","));
}

}  // namespace

std::string describe(const FrontierCollective& f) {
  std::string text = fmt::format("comm {} ({}): collective #{} {} ({} B) not completed by all:",
                                 f.comm, f.name, f.seq, op_kind_name(f.kind), f.bytes);
  const std::pair<const char*, const std::vector<uint32_t>*> parts[] = {
      {"not issued by ranks", &f.not_issued}, {"only scheduled on", &f.scheduled},
      {"started, not completed on", &f.started}, {"completed on", &f.completed},
      {"no dump of ranks", &f.no_record}};
  const char* separator = " ";
  for (const auto& [what, ranks] : parts) {
    if (ranks->empty()) continue;
    text += fmt::format("{}{} {}", separator, what, rank_list(*ranks));
    separator = "; ";
  }
  return text;
}

std::string describe(const StuckPointToPoint& op) {
  return fmt::format("rank {}: {} #{} with comm rank {} of comm {} {}", op.rank,
                     op_kind_name(op.kind), op.seq, op.peer, op.comm,
                     op.state == v1::OP_STATE_STARTED ? "started, not completed"
                                                      : "only scheduled");
}

std::string frontier_table(const HangFrontier& frontier) {
  if (!frontier.has_states) return {};
  if (!frontier.hung()) return "\nHang frontier: every recorded op completed\n";
  std::string out = "\nHang frontier (first collective each communicator did not complete)\n";
  for (const FrontierCollective& f : frontier.collectives) out += "  " + describe(f) + "\n";
  for (const StuckPointToPoint& p : frontier.point_to_point) out += "  " + describe(p) + "\n";
  if (frontier.point_to_point_total > frontier.point_to_point.size()) {
    out += fmt::format("  ... and {} more send/recv not completed\n",
                       frontier.point_to_point_total - frontier.point_to_point.size());
  }
  return out;
}

nlohmann::json frontier_json(const HangFrontier& frontier) {
  nlohmann::json j = {{"hung", frontier.hung()},
                      {"collectives", nlohmann::json::array()},
                      {"point_to_point", nlohmann::json::array()},
                      {"point_to_point_total", frontier.point_to_point_total}};
  for (const FrontierCollective& f : frontier.collectives) {
    j["collectives"].push_back({{"comm", f.comm},
                                {"name", f.name},
                                {"seq", f.seq},
                                {"kind", std::string(op_kind_name(f.kind))},
                                {"bytes", f.bytes},
                                {"completed", f.completed},
                                {"started", f.started},
                                {"scheduled", f.scheduled},
                                {"not_issued", f.not_issued},
                                {"no_record", f.no_record}});
  }
  for (const StuckPointToPoint& p : frontier.point_to_point) {
    j["point_to_point"].push_back({{"rank", p.rank},
                                   {"comm", p.comm},
                                   {"kind", std::string(op_kind_name(p.kind))},
                                   {"peer", p.peer},
                                   {"seq", p.seq},
                                   {"state", p.state == v1::OP_STATE_STARTED ? "started"
                                                                             : "scheduled"}});
  }
  return j;
}

}  // namespace collide::traces::analysis
