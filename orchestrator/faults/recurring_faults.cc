#include "orchestrator/faults/recurring_faults.h"

#include <cmath>
#include <random>

#include "orchestrator/faults/fault_plan.h"
#include "orchestrator/faults/occurrence_name.h"

namespace collide::orchestrator::faults {
namespace {

// FNV-1a: two recurring faults with the same seed (0 unless set) still draw different gaps.
uint64_t name_hash(const std::string& name) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// An exponential gap of mean `mean_ns`: the inverse of its distribution function at a uniform
// draw in (0, 1], built from the generator's top 53 bits.
double exponential_ns(std::mt19937_64& draws, double mean_ns) {
  const double u = static_cast<double>((draws() >> 11) + 1) * 0x1.0p-53;
  return -mean_ns * std::log(u);
}

// Each occurrence's per-packet draws differ from the others' and from other repetitions' (the
// repetition is added to the seed: fault_plan.h, draw_seed).
constexpr uint64_t kOccurrenceSeedStride = 1000003;

}  // namespace

Occurrences draw_occurrences(const v1::Fault& fault, uint64_t runs_seed, uint32_t repetition,
                             std::chrono::nanoseconds horizon) {
  Occurrences out;
  if (fault.mtbf_ns() == 0) {
    out.faults.push_back(fault);
    out.drawn_until = horizon;
    return out;
  }
  std::mt19937_64 draws(draw_seed(fault.seed(), runs_seed, repetition) ^ name_hash(fault.name()));
  const double end = static_cast<double>(horizon.count());
  double t = static_cast<double>(fault.start_ns());
  while (true) {
    t += exponential_ns(draws, static_cast<double>(fault.mtbf_ns()));
    if (t >= end) break;
    if (out.faults.size() == kMaxOccurrencesPerRun) {
      out.capped = true;
      break;
    }
    v1::Fault& o = out.faults.emplace_back(fault);
    o.set_name(occurrence_name(fault.name(), out.faults.size()));
    o.set_start_ns(static_cast<uint64_t>(t));
    o.set_mtbf_ns(0);
    o.set_seed(fault.seed() + kOccurrenceSeedStride * out.faults.size());
    t = static_cast<double>(o.start_ns() + o.duration_ns());
  }
  out.drawn_until = out.capped ? std::chrono::nanoseconds(static_cast<int64_t>(t)) : horizon;
  return out;
}

}  // namespace collide::orchestrator::faults
