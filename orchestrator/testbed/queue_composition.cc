#include "orchestrator/testbed/queue_composition.h"

#include <numeric>

namespace collide::orchestrator::testbed {

QueueComposition::QueueComposition(size_t ingresses, uint64_t history_bytes)
    : ingresses_(ingresses), history_bytes_(history_bytes) {}

void QueueComposition::record(const std::vector<uint64_t>& enqueued_by_ingress) {
  Look look;
  look.by_ingress = enqueued_by_ingress;
  look.by_ingress.resize(ingresses_, 0);
  look.total = std::accumulate(look.by_ingress.begin(), look.by_ingress.end(), uint64_t{0});
  if (!looks_.empty() && looks_.back().total == look.total) return;  // nothing new arrived
  looks_.push_back(std::move(look));
  // Forget a look once the one after it is already history_bytes behind the newest: no backlog
  // the queue can hold reaches back past that one.
  const uint64_t newest = looks_.back().total;
  while (looks_.size() > 2 && newest - looks_[1].total >= history_bytes_) looks_.pop_front();
  while (looks_.size() > kMaxLooks) looks_.pop_front();
}

std::vector<uint64_t> QueueComposition::held_by_ingress(uint64_t backlog) const {
  std::vector<uint64_t> out(ingresses_, 0);
  if (backlog == 0 || looks_.size() < 2) {
    // One look tells nothing of arrivals; with none, nothing is known to be held.
    return out;
  }
  const Look& newest = looks_.back();
  // The latest look at which the newest bytes were already `backlog` behind (or the oldest kept).
  size_t from = 0;
  for (size_t i = looks_.size() - 1; i-- > 0;) {
    if (newest.total - looks_[i].total >= backlog) {
      from = i;
      break;
    }
  }
  const Look& base = looks_[from];
  const double arrived = static_cast<double>(newest.total - base.total);
  for (size_t s = 0; s < ingresses_; ++s) {
    const double share = static_cast<double>(newest.by_ingress[s] - base.by_ingress[s]) / arrived;
    out[s] = static_cast<uint64_t>(share * static_cast<double>(backlog) + 0.5);
  }
  return out;
}

}  // namespace collide::orchestrator::testbed
