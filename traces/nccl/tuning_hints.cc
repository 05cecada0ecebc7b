#include "traces/nccl/tuning_hints.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "traces/op_types.h"

namespace collide::traces::nccl {
namespace {

const TuningRecord* find_same(const TuningRecord& t, const std::vector<TuningRecord>& in) {
  for (const TuningRecord& o : in) {
    if (o.kind == t.kind && o.algo == t.algo && o.proto == t.proto) return &o;
  }
  return nullptr;
}

}  // namespace

void merge_tunings(const std::vector<TuningRecord>& from, std::vector<TuningRecord>& into) {
  for (const TuningRecord& t : from) {
    auto* same = const_cast<TuningRecord*>(find_same(t, into));
    if (same == nullptr) {
      into.push_back(t);
      continue;
    }
    same->min_bytes = std::min(same->min_bytes, t.min_bytes);
    same->max_bytes = std::max(same->max_bytes, t.max_bytes);
    same->lines += t.lines;
  }
}

bool extends_tunings(const std::vector<TuningRecord>& from,
                     const std::vector<TuningRecord>& known) {
  for (const TuningRecord& t : from) {
    const TuningRecord* same = find_same(t, known);
    if (same == nullptr || t.min_bytes < same->min_bytes || t.max_bytes > same->max_bytes) {
      return true;
    }
  }
  return false;
}

std::string format_tunings(const std::vector<TuningRecord>& tunings) {
  std::vector<const TuningRecord*> sorted;
  for (const TuningRecord& t : tunings) sorted.push_back(&t);
  std::sort(sorted.begin(), sorted.end(), [](const TuningRecord* a, const TuningRecord* b) {
    return std::tie(a->kind, a->min_bytes, a->max_bytes, a->algo, a->proto) <
           std::tie(b->kind, b->min_bytes, b->max_bytes, b->algo, b->proto);
  });
  std::string out;
  for (const TuningRecord* t : sorted) {
    if (!out.empty()) out += "; ";
    const std::string sizes = t->min_bytes == t->max_bytes
                                  ? fmt::format("{}", t->min_bytes)
                                  : fmt::format("{}-{}", t->min_bytes, t->max_bytes);
    out += fmt::format("{} {}/{} {} B", op_kind_name(t->kind), t->algo, t->proto, sizes);
  }
  return out;
}

}  // namespace collide::traces::nccl
