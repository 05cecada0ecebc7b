#include "traces/analysis/trace_validator.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "collide/trace.pb.h"
#include "traces/analysis/alltoallv_matcher.h"
#include "traces/op_types.h"
#include "traces/trace_io.h"

namespace collide::traces::analysis {
namespace {

constexpr uint64_t kProgressEvery = 1 << 16;
constexpr uint32_t kNone = UINT32_MAX;
// Mismatched sequences located op by op in the second pass; beyond this they are only counted,
// so a trace where everything disagrees cannot make the second pass hold many blocks.
constexpr size_t kMaxLocated = 64;

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: cheap, and every input bit matters
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

bool is_rooted(v1::OpKind kind) {
  return kind == v1::OP_KIND_BROADCAST || kind == v1::OP_KIND_REDUCE ||
         kind == v1::OP_KIND_GATHER || kind == v1::OP_KIND_SCATTER;
}

// What must agree between the members of a collective, or between a send and its recv.
uint64_t signature(const v1::Op& op) {
  if (is_point_to_point(op.kind())) return mix(op.bytes());
  uint64_t h = mix(static_cast<uint64_t>(op.kind()));
  h = mix(h ^ static_cast<uint64_t>(op.datatype()));
  if (op.kind() == v1::OP_KIND_ALL_TO_ALLV) {
    // Each rank sends its own sizes; only their number (the communicator size) is shared, and
    // whether receive sizes are given (AllToAllvMatcher compares the sizes themselves).
    h = mix(h ^ static_cast<uint64_t>(op.peer_recv_bytes_size()));
    return mix(h ^ static_cast<uint64_t>(op.peer_bytes_size()));
  }
  h = mix(h ^ op.count());
  h = mix(h ^ op.bytes());
  h = mix(h ^ static_cast<uint64_t>(op.reduce_op()));
  return mix(h ^ static_cast<uint64_t>(static_cast<uint32_t>(op.root())));
}

std::string describe(const v1::Op& op) {
  if (is_point_to_point(op.kind()))
    return fmt::format("{} of {} bytes", op_kind_name(op.kind()), op.bytes());
  if (op.kind() == v1::OP_KIND_ALL_TO_ALLV) {
    return fmt::format("all_to_allv {} over {} peers", datatype_name(op.datatype()),
                       op.peer_bytes_size());
  }
  return fmt::format("{} count {} {} ({} bytes) op {} root {}", op_kind_name(op.kind()), op.count(),
                     datatype_name(op.datatype()), op.bytes(), reduce_op_name(op.reduce_op()),
                     op.root());
}

// One sequence of ops whose order matters: a member's collectives on a communicator, or the
// sends (or the recvs) between an ordered pair of its ranks.
struct Sequence {
  uint64_t count = 0;
  uint64_t hash = 0;
  std::vector<uint64_t> checkpoints;  // hash after every interval-th op

  void push(uint64_t sig, uint32_t interval) {
    hash = mix(hash ^ sig);
    if (++count % interval == 0) checkpoints.push_back(hash);
  }
  bool same_as(const Sequence& other) const { return count == other.count && hash == other.hash; }
};

// An op kept in the second pass, with what a message about it needs.
struct Kept {
  uint64_t sig = 0;
  uint64_t file_position = 0;
  v1::Op op;  // cleared of fields no message uses, to keep the block small
};

struct CommInfo {
  std::string id;
  std::vector<uint32_t> ranks;                       // global rank of each comm rank
  std::unordered_map<uint32_t, uint32_t> comm_rank;  // global rank -> comm rank
  uint32_t first_sequence = 0;                       // its members' collective sequences
};

struct PairKey {
  uint32_t comm, from, to;  // comm index, comm ranks
  bool operator==(const PairKey&) const = default;
};
struct PairKeyHash {
  size_t operator()(const PairKey& k) const {
    return mix((static_cast<uint64_t>(k.comm) << 42) ^ (static_cast<uint64_t>(k.from) << 21) ^
               k.to);
  }
};

// A mismatch found by the first pass, to be located op by op: sequence `a` is the reference
// (a communicator's majority member, or a pair's sends), `b` the one that differs from it.
struct Probe {
  bool collective = true;
  uint32_t comm = 0;
  uint32_t a = 0, b = 0;            // sequence ids
  uint32_t a_rank = 0, b_rank = 0;  // global ranks
  uint32_t agreeing = 0;            // members sharing the reference's sequence (collectives)
  uint64_t block = 0;
};

class Validator {
 public:
  explicit Validator(const ValidateOptions& options) : options_(options) {
    interval_ = std::max<uint32_t>(1, options.checkpoint_interval);
  }

  Result<ValidationReport> run(const std::string& path) {
    COLLIDE_RETURN_IF_ERROR(pass(path, 1));
    report_frontier();
    find_probes();
    find_alltoallv_probes();
    if (!probes_.empty() || !alltoallv_probes_.empty()) {
      COLLIDE_RETURN_IF_ERROR(pass(path, 2));
      locate();
    }
    std::stable_sort(issues_.begin(), issues_.end(), [](const auto& x, const auto& y) {
      return x.file_position < y.file_position;
    });
    if (issues_.size() > options_.max_reported) issues_.resize(options_.max_reported);
    report_.issues = std::move(issues_);
    return std::move(report_);
  }

 private:
  void add_issue(ValidationIssue issue) {
    ++report_.issues_total;
    // The first pass finds issues in file order, so its first max_reported are all a report can
    // show; located mismatches are added on top and the whole sorted and cut at the end.
    if (issues_.size() < options_.max_reported) issues_.push_back(std::move(issue));
  }

  ValidationIssue op_issue(const v1::Op& op, uint64_t position, std::string message) const {
    ValidationIssue issue;
    issue.file_position = position;
    issue.comm = op.comm();
    issue.rank = op.rank();
    issue.op_index = op.index();
    issue.source = op_source(sources_, op);
    issue.message = std::move(message);
    return issue;
  }

  void header_issue(std::string comm, std::string message) {
    ValidationIssue issue;
    issue.comm = std::move(comm);
    issue.message = std::move(message);
    add_issue(std::move(issue));
  }

  void read_header(const v1::TraceHeader& header) {
    *sources_.mutable_source_files() = header.source_files();
    world_size_ = header.world_size();
    if (world_size_ == 0) {
      header_issue("", "the header gives world_size 0");
      for (const v1::RankInfo& r : header.ranks())
        world_size_ = std::max(world_size_, r.rank() + 1);
      for (const v1::Communicator& c : header.communicators()) {
        for (uint32_t r : c.ranks()) world_size_ = std::max(world_size_, r + 1);
      }
    }
    for (const v1::RankInfo& r : header.ranks()) {
      if (r.rank() >= world_size_) {
        header_issue("", fmt::format("rank info for rank {}, outside the job (world size {})",
                                     r.rank(), world_size_));
      }
    }
    next_index_.assign(world_size_, 0);
    for (const v1::Communicator& c : header.communicators()) {
      if (comm_index_.count(c.id()) != 0) {
        header_issue(c.id(), fmt::format("communicator id '{}' is declared twice", c.id()));
        continue;
      }
      if (c.ranks_size() == 0) header_issue(c.id(), "communicator has no ranks");
      if (c.declared_size() > static_cast<uint32_t>(c.ranks_size())) {
        header_issue(c.id(), fmt::format(
            "communicator '{}' has {} ranks in the source but the trace lists {}: the others never "
            "appear in it, so its collectives cannot be replayed as they ran (an NCCL log import "
            "gives them the whole job's collectives with --fill-unobserved-ranks)",
            c.id(), c.declared_size(), c.ranks_size()));
      }
      CommInfo info;
      info.id = c.id();
      info.first_sequence = static_cast<uint32_t>(sequences_.size());
      for (int i = 0; i < c.ranks_size(); ++i) {
        const uint32_t r = c.ranks(i);
        if (r >= world_size_) {
          header_issue(c.id(), fmt::format("communicator '{}' lists rank {}, which is not in the "
                                           "job (world size {})",
                                           c.id(), r, world_size_));
        }
        if (!info.comm_rank.emplace(r, i).second) {
          header_issue(c.id(), fmt::format("communicator '{}' lists rank {} twice", c.id(), r));
        }
        info.ranks.push_back(r);
      }
      sequences_.resize(sequences_.size() + info.ranks.size());
      alltoallv_.add_comm(static_cast<uint32_t>(info.ranks.size()));
      comm_index_.emplace(c.id(), static_cast<uint32_t>(comms_.size()));
      comms_.push_back(std::move(info));
    }
  }

  // The sequence `op` extends, or kNone; in the first pass also checks the op on its own.
  uint32_t classify(const v1::Op& op, uint64_t position, bool check) {
    if (check && op.rank() >= world_size_) {
      add_issue(op_issue(
          op, position,
          fmt::format("rank {} is not in the job (world size {})", op.rank(), world_size_)));
    } else if (check) {
      uint64_t& expected = next_index_[op.rank()];
      if (op.index() != expected) {
        add_issue(op_issue(op, position,
                           fmt::format("op index {} where rank {}'s next is {} "
                                       "(indices run 0, 1, 2, ... per rank)",
                                       op.index(), op.rank(), expected)));
      }
      expected = op.index() + 1;  // resynchronise, so one bad index is one issue
    }
    if (op.kind() == v1::OP_KIND_UNSPECIFIED) {
      if (check) add_issue(op_issue(op, position, "op kind is unspecified"));
      return kNone;
    }
    const auto it = comm_index_.find(op.comm());
    if (it == comm_index_.end()) {
      if (check) {
        add_issue(op_issue(op, position,
                           fmt::format("communicator '{}' is not declared in the "
                                       "header",
                                       op.comm())));
      }
      return kNone;
    }
    const uint32_t comm = it->second;
    const CommInfo& info = comms_[comm];
    const auto member = info.comm_rank.find(op.rank());
    if (member == info.comm_rank.end()) {
      if (check) {
        add_issue(op_issue(op, position,
                           fmt::format("rank {} is not a member of communicator "
                                       "'{}'",
                                       op.rank(), op.comm())));
      }
      return kNone;
    }
    const uint32_t self = member->second;
    const int64_t n = static_cast<int64_t>(info.ranks.size());
    if (is_point_to_point(op.kind())) {
      if (op.root() < 0 || op.root() >= n || op.root() == static_cast<int64_t>(self)) {
        if (check) {
          add_issue(op_issue(op, position,
                             fmt::format("{} peer {} is not another rank of "
                                         "communicator '{}' ({} ranks)",
                                         op_kind_name(op.kind()), op.root(), op.comm(), n)));
        }
        return kNone;
      }
      const uint32_t peer = static_cast<uint32_t>(op.root());
      const bool send = op.kind() == v1::OP_KIND_SEND;
      const PairKey key{comm, send ? self : peer, send ? peer : self};
      auto pair = pairs_.find(key);
      if (pair == pairs_.end()) {
        if (!check) return kNone;  // cannot happen: the first pass created every pair
        pair = pairs_.emplace(key, static_cast<uint32_t>(sequences_.size())).first;
        sequences_.resize(sequences_.size() + 2);
      }
      return pair->second + (send ? 0 : 1);
    }
    if (check && is_rooted(op.kind()) && (op.root() < 0 || op.root() >= n)) {
      add_issue(op_issue(op, position,
                         fmt::format("{} root {} is outside communicator '{}' ({} "
                                     "ranks)",
                                     op_kind_name(op.kind()), op.root(), op.comm(), n)));
    }
    if (op.kind() == v1::OP_KIND_ALL_TO_ALLV) {
      const int sizes = op.peer_bytes_size();
      const int recv_sizes = op.peer_recv_bytes_size();
      if (check && (sizes != n || (recv_sizes != 0 && recv_sizes != n))) {
        add_issue(op_issue(op, position,
                           fmt::format("all_to_allv lists {} send and {} receive sizes for "
                                       "communicator '{}' of {} ranks",
                                       sizes, recv_sizes, op.comm(), n)));
      }
      alltoallv_.observe(comm, self, op, position);
    }
    return info.first_sequence + self;
  }

  Status pass(const std::string& path, int number) {
    auto reader = TraceReader::open(path);
    if (!reader.ok()) return reader.status();
    if (number == 1) {
      read_header((*reader)->header());
      frontier_.emplace((*reader)->header());
    }
    alltoallv_.start_pass(number);
    std::vector<uint64_t> positions(number == 2 ? sequences_.size() : 0);
    v1::Op op;
    while (true) {
      auto more = (*reader)->next(op);
      if (!more.ok()) return more.status();
      if (!*more) break;
      const uint64_t position = (*reader)->ops_read();
      if (options_.progress && position % kProgressEvery == 0) options_.progress(number, position);
      if (number == 1) frontier_->add(op);
      const uint32_t seq = classify(op, position, number == 1);
      if (seq == kNone) continue;
      if (number == 1) {
        sequences_[seq].push(signature(op), interval_);
        continue;
      }
      const uint64_t p = positions[seq]++;
      if (seq >= wanted_.size() || !wanted_[seq]) continue;  // (all-to-allv probes alone)
      const auto window = windows_.find({seq, p / interval_});
      if (window == windows_.end()) continue;
      Kept& kept = window->second.emplace_back();
      kept.sig = signature(op);
      kept.file_position = position;
      kept.op = op;
      kept.op.clear_deps();
      kept.op.clear_peer_bytes();
      kept.op.clear_peer_recv_bytes();
      kept.op.clear_label();
    }
    if (number == 1) report_.ops_read = (*reader)->ops_read();
    return {};
  }

  // The first block whose checkpoints differ, or the one after the shorter's last checkpoint.
  uint64_t first_block(const Sequence& a, const Sequence& b) const {
    const size_t common = std::min(a.checkpoints.size(), b.checkpoints.size());
    for (size_t i = 0; i < common; ++i) {
      if (a.checkpoints[i] != b.checkpoints[i]) return i;
    }
    return common;
  }

  void add_probe(Probe probe) {
    probe.block = first_block(sequences_[probe.a], sequences_[probe.b]);
    ++report_.issues_total;
    if (probes_.size() >= kMaxLocated) return;  // counted, not located
    wanted_.resize(sequences_.size(), false);
    wanted_[probe.a] = wanted_[probe.b] = true;
    windows_[{probe.a, probe.block}];
    windows_[{probe.b, probe.block}];
    probes_.push_back(probe);
  }

  // A hung job's frontier, as issues ahead of the ops' own (file position 0: the whole trace).
  void report_frontier() {
    report_.frontier = std::move(*frontier_).finish();
    frontier_.reset();
    for (const FrontierCollective& f : report_.frontier.collectives) {
      ValidationIssue issue;
      issue.comm = f.comm;
      issue.message = "hang frontier: " + describe(f);
      add_issue(std::move(issue));
    }
    for (const StuckPointToPoint& p : report_.frontier.point_to_point) {
      ValidationIssue issue;
      issue.comm = p.comm;
      issue.rank = p.rank;
      issue.message = "hang frontier: " + describe(p);
      add_issue(std::move(issue));
    }
    // The ones beyond the listed few are counted all the same.
    report_.issues_total +=
        report_.frontier.point_to_point_total - report_.frontier.point_to_point.size();
  }

  void find_probes() {
    for (uint32_t c = 0; c < comms_.size(); ++c) {
      const CommInfo& info = comms_[c];
      // The reference is the (count, hash) most members share; ties go to the lowest comm rank.
      std::map<std::pair<uint64_t, uint64_t>, std::pair<uint32_t, uint32_t>> votes;  // -> n, first
      for (uint32_t m = 0; m < info.ranks.size(); ++m) {
        const Sequence& s = sequences_[info.first_sequence + m];
        ++votes.try_emplace({s.count, s.hash}, 0, m).first->second.first;
      }
      uint32_t reference = 0, best = 0;
      for (const auto& [key, vote] : votes) {
        if (vote.first > best || (vote.first == best && vote.second < reference)) {
          best = vote.first;
          reference = vote.second;
        }
      }
      for (uint32_t m = 0; m < info.ranks.size(); ++m) {
        const Sequence& ref = sequences_[info.first_sequence + reference];
        if (sequences_[info.first_sequence + m].same_as(ref)) continue;
        add_probe({.collective = true,
                   .comm = c,
                   .a = info.first_sequence + reference,
                   .b = info.first_sequence + m,
                   .a_rank = info.ranks[reference],
                   .b_rank = info.ranks[m],
                   .agreeing = best,
                   .block = 0});
      }
    }
    // Pairs in a fixed order, so reports do not depend on hash-table layout.
    std::vector<std::pair<PairKey, uint32_t>> pairs(pairs_.begin(), pairs_.end());
    std::sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
      return std::tie(x.first.comm, x.first.from, x.first.to) <
             std::tie(y.first.comm, y.first.from, y.first.to);
    });
    for (const auto& [key, first] : pairs) {
      if (sequences_[first].same_as(sequences_[first + 1])) continue;
      add_probe({.collective = false,
                 .comm = key.comm,
                 .a = first,
                 .b = first + 1,
                 .a_rank = comms_[key.comm].ranks[key.from],
                 .b_rank = comms_[key.comm].ranks[key.to],
                 .agreeing = 0,
                 .block = 0});
    }
  }

  // All-to-allv blocks whose send and receive sides differ; located in the second pass when
  // their communicator is small enough, else reported by block.
  void find_alltoallv_probes() {
    for (const AllToAllvMatcher::Block& block : alltoallv_.mismatched()) {
      if (alltoallv_.locatable(block.comm) && alltoallv_probes_.size() < kMaxLocated) {
        alltoallv_.want(block);
        alltoallv_probes_.push_back(block);
        continue;
      }
      ValidationIssue issue;
      issue.comm = comms_[block.comm].id;
      issue.message = fmt::format(
          "in block {} of the all_to_allvs on communicator '{}', what ranks send differs from "
          "what their peers expect to receive",
          block.block, issue.comm);
      add_issue(std::move(issue));
    }
  }

  void locate_alltoallv() {
    for (const AllToAllvMatcher::Block& block : alltoallv_probes_) {
      // Nothing located means a rank lacks the op or its sizes: the collective check says so.
      const auto d = alltoallv_.locate(block);
      if (!d) continue;
      const CommInfo& info = comms_[block.comm];
      ++report_.issues_total;
      issues_.push_back(op_issue(
          d->sender->op, d->sender->file_position,
          fmt::format("all_to_allv #{} on communicator '{}': rank {} sends {} bytes to rank {}, "
                      "but rank {} (op {}{}) expects {} bytes from rank {}",
                      d->instance, info.id, info.ranks[d->from], d->sent, info.ranks[d->to],
                      info.ranks[d->to], d->receiver->op.index(), source_suffix(d->receiver->op),
                      d->expected, info.ranks[d->from])));
    }
  }

  void locate() {
    locate_alltoallv();
    for (const Probe& probe : probes_) {
      const std::vector<Kept>& a = windows_[{probe.a, probe.block}];
      const std::vector<Kept>& b = windows_[{probe.b, probe.block}];
      size_t j = 0;
      while (j < a.size() && j < b.size() && a[j].sig == b[j].sig) ++j;
      const Kept* ka = j < a.size() ? &a[j] : nullptr;
      const Kept* kb = j < b.size() ? &b[j] : nullptr;
      if (ka == nullptr && kb == nullptr) continue;          // cannot happen unless hashes collide
      const uint64_t ordinal = probe.block * interval_ + j;  // position in the sequence, from 0
      // Already counted by add_probe.
      issues_.push_back(probe.collective ? collective_issue(probe, ordinal, ka, kb)
                                         : p2p_issue(probe, ordinal, ka, kb));
    }
  }

  std::string source_suffix(const v1::Op& op) const {
    const std::string source = op_source(sources_, op);
    return source.empty() ? "" : ", " + source;
  }

  // `ka` is the reference member's op at `ordinal`, `kb` the differing member's (either may be
  // missing, not both).
  ValidationIssue collective_issue(const Probe& probe, uint64_t ordinal, const Kept* ka,
                                   const Kept* kb) const {
    const std::string& comm = comms_[probe.comm].id;
    const std::string reference = probe.agreeing > 1
                                      ? fmt::format("rank {} (and {} other ranks agreeing with it)",
                                                    probe.a_rank, probe.agreeing - 1)
                                      : fmt::format("rank {}", probe.a_rank);
    if (ka != nullptr && kb != nullptr) {
      return op_issue(kb->op, kb->file_position,
                      fmt::format("collective #{} on communicator '{}' is {}, but {} issues {} "
                                  "(op {}{})",
                                  ordinal, comm, describe(kb->op), reference, describe(ka->op),
                                  ka->op.index(), source_suffix(ka->op)));
    }
    if (kb != nullptr) {
      return op_issue(
          kb->op, kb->file_position,
          fmt::format("collective #{} on communicator '{}' ({}) is extra: {} issues "
                      "only {}",
                      ordinal, comm, describe(kb->op), reference, sequences_[probe.a].count));
    }
    // The missing op of rank b: named by rank, placed at the reference's op, which says where.
    ValidationIssue issue = op_issue(
        ka->op, ka->file_position,
        fmt::format("rank {} issues only {} collectives on communicator '{}'; it lacks #{}, which "
                    "{} issues as op {} ({})",
                    probe.b_rank, sequences_[probe.b].count, comm, ordinal, reference,
                    ka->op.index(), describe(ka->op)));
    issue.rank = probe.b_rank;
    issue.op_index.reset();
    return issue;
  }

  // `ka` is the pair's send at `ordinal`, `kb` the recv (either may be missing, not both).
  ValidationIssue p2p_issue(const Probe& probe, uint64_t ordinal, const Kept* ka,
                            const Kept* kb) const {
    const std::string& comm = comms_[probe.comm].id;
    if (ka != nullptr && kb != nullptr) {
      return op_issue(
          ka->op, ka->file_position,
          fmt::format("send #{} from rank {} to rank {} on communicator '{}' is {} "
                      "bytes, but the matching recv (rank {} op {}{}) is {} bytes",
                      ordinal, probe.a_rank, probe.b_rank, comm, ka->op.bytes(), probe.b_rank,
                      kb->op.index(), source_suffix(kb->op), kb->op.bytes()));
    }
    if (ka != nullptr) {
      return op_issue(ka->op, ka->file_position,
                      fmt::format("send #{} of {} bytes from rank {} to rank {} on communicator "
                                  "'{}' has no matching recv (rank {} posts {} recvs from rank {})",
                                  ordinal, ka->op.bytes(), probe.a_rank, probe.b_rank, comm,
                                  probe.b_rank, sequences_[probe.b].count, probe.a_rank));
    }
    return op_issue(kb->op, kb->file_position,
                    fmt::format("recv #{} of {} bytes by rank {} from rank {} on communicator "
                                "'{}' has no matching send (rank {} sends {} to rank {})",
                                ordinal, kb->op.bytes(), probe.b_rank, probe.a_rank, comm,
                                probe.a_rank, sequences_[probe.a].count, probe.b_rank));
  }

  const ValidateOptions& options_;
  uint32_t interval_ = 1024;
  uint32_t world_size_ = 0;
  v1::TraceHeader sources_;  // only the header's source_files, which ops' source lines refer to
  std::vector<uint64_t> next_index_;
  std::unordered_map<std::string, uint32_t> comm_index_;
  std::vector<CommInfo> comms_;
  std::unordered_map<PairKey, uint32_t, PairKeyHash> pairs_;  // first of its two sequences
  std::vector<Sequence> sequences_;
  std::vector<Probe> probes_;
  AllToAllvMatcher alltoallv_;
  std::vector<AllToAllvMatcher::Block> alltoallv_probes_;
  std::vector<bool> wanted_;
  std::map<std::pair<uint32_t, uint64_t>, std::vector<Kept>> windows_;
  std::vector<ValidationIssue> issues_;
  ValidationReport report_;
  std::optional<HangFrontierAccumulator> frontier_;  // during the first pass
};

}  // namespace

std::string ValidationIssue::to_string() const {
  std::string where;
  auto append = [&where](const std::string& part) {
    if (!where.empty()) where += ", ";
    where += part;
  };
  if (!comm.empty()) append("comm " + comm);
  if (rank) append(fmt::format("rank {}", *rank));
  if (op_index) append(fmt::format("op {}", *op_index));
  if (file_position == 0 && !rank) append("header");
  if (!source.empty()) where += " (" + source + ")";
  return where + ": " + message;
}

Result<ValidationReport> validate_trace(const std::string& path, const ValidateOptions& options) {
  if (path == "-") {
    return invalid_argument(
        "validate reads the trace twice when it finds a mismatch; give a file, "
        "not stdin");
  }
  Validator validator(options);
  return validator.run(path);
}

}  // namespace collide::traces::analysis
