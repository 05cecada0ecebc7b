#include "replayer/collectives/instant_execution.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>

namespace collide::replayer::collectives {
namespace {

// A transfer as both ends see it: (sender, receiver, comm, tag).
using TransferKey = std::tuple<uint32_t, uint32_t, std::string, FlowTag>;

std::string describe(const ExpandedOp& op, const Step& s) {
  return fmt::format("rank {} op {} ({}) step {}: {} {} bytes {} rank {} ({}seq {} ch {} step {} "
                     "slice {}{})",
                     op.rank, op.op_index, op.comm, s.id,
                     s.kind == StepKind::kSend ? "send" : "recv", s.bytes,
                     s.kind == StepKind::kSend ? "to" : "from", s.peer,
                     s.tag.point_to_point ? "p2p " : "", s.tag.op_seq, s.tag.channel, s.tag.step,
                     s.tag.slice,
                     s.tag.relay_to != 0     ? fmt::format(" relayed to {}", s.tag.relay_to - 1)
                     : s.tag.relay_from != 0 ? fmt::format(" relayed from host index {}",
                                                           s.tag.relay_from - 1)
                                             : "");
}

TransferKey key_of(const ExpandedOp& op, const Step& s) {
  return s.kind == StepKind::kSend ? TransferKey{op.rank, s.peer, op.comm, s.tag}
                                   : TransferKey{s.peer, op.rank, op.comm, s.tag};
}

}  // namespace

Result<ExecutionSummary> execute_instantly(const std::vector<ExpandedOp>& ops) {
  // Steps are numbered globally: base[i] + step id.
  std::vector<size_t> base(ops.size() + 1, 0);
  for (size_t i = 0; i < ops.size(); ++i) base[i + 1] = base[i] + ops[i].steps.size();
  const size_t total = base.back();
  auto where = [&](size_t g) {
    const size_t i = static_cast<size_t>(std::upper_bound(base.begin(), base.end(), g) -
                                         base.begin()) - 1;
    return std::pair<size_t, uint32_t>{i, static_cast<uint32_t>(g - base[i])};
  };
  auto describe_global = [&](size_t g) {
    auto [i, s] = where(g);
    return describe(ops[i], ops[i].steps[s]);
  };

  // Match every send with exactly one receive of the same size.
  std::map<TransferKey, size_t> sends, recvs;
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const Step& s : ops[i].steps) {
      for (uint32_t d : s.deps) {
        if (d >= s.id) {
          return invalid_argument("dependency on a later step (a cycle is possible): " +
                                  describe(ops[i], s));
        }
      }
      auto& side = s.kind == StepKind::kSend ? sends : recvs;
      if (!side.emplace(key_of(ops[i], s), base[i] + s.id).second) {
        return invalid_argument("two steps share one transfer: " + describe(ops[i], s));
      }
    }
  }
  // waiters[g]: steps that wait on step g (its dependents and, for a send, its receive).
  std::vector<std::vector<size_t>> waiters(total);
  std::vector<uint32_t> unmet(total, 0);
  std::vector<size_t> send_of(total, SIZE_MAX);
  for (const auto& [key, g] : sends) {
    auto it = recvs.find(key);
    if (it == recvs.end()) {
      return invalid_argument("send without a matching receive: " + describe_global(g));
    }
    auto [si, ss] = where(g);
    auto [ri, rs] = where(it->second);
    const Step& recv = ops[ri].steps[rs];
    if (!recv.size_from_sender && recv.bytes != ops[si].steps[ss].bytes) {
      return invalid_argument(fmt::format("size mismatch: {} vs {}", describe_global(g),
                                          describe_global(it->second)));
    }
    send_of[it->second] = g;
    waiters[g].push_back(it->second);
    ++unmet[it->second];
  }
  for (const auto& [key, g] : recvs) {
    if (!sends.count(key)) {
      return invalid_argument("receive without a matching send: " + describe_global(g));
    }
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    for (const Step& s : ops[i].steps) {
      for (uint32_t d : s.deps) waiters[base[i] + d].push_back(base[i] + s.id);
      unmet[base[i] + s.id] += static_cast<uint32_t>(s.deps.size());
    }
  }

  // Run: a step completes once everything it waits for has; a transfer is instant, so a receive
  // completes in the same round as its send. A step's round is the longest chain leading to it.
  ExecutionSummary summary;
  std::vector<uint64_t> round(total, 0);
  std::vector<size_t> ready;
  for (size_t g = 0; g < total; ++g) {
    if (unmet[g] == 0) ready.push_back(g);
  }
  size_t completed = 0;
  while (!ready.empty()) {
    const size_t g = ready.back();
    ready.pop_back();
    ++completed;
    auto [i, s] = where(g);
    const Step& step = ops[i].steps[s];
    if (step.kind == StepKind::kSend) {
      round[g] += 1;
      summary.bytes_delivered += step.bytes;
      if (!step.local) summary.network_bytes += step.bytes;
    }
    summary.rounds = std::max(summary.rounds, round[g]);
    for (size_t w : waiters[g]) {
      round[w] = std::max(round[w], round[g]);
      if (--unmet[w] == 0) ready.push_back(w);
    }
  }
  summary.steps = total;
  if (completed != total) {
    for (size_t g = 0; g < total; ++g) {
      if (unmet[g] > 0) return internal_error("deadlock at " + describe_global(g));
    }
  }
  return summary;
}

}  // namespace collide::replayer::collectives
