#include "orchestrator/faults/storm_options.h"

#include <fmt/format.h>

namespace collide::orchestrator::faults {

Result<injectors::PfcStormOptions> storm_options(const v1::Fault& f, std::string* bad_field) {
  const auto bad = [bad_field](const char* field, std::string what) {
    if (bad_field != nullptr) *bad_field = field;
    return invalid_argument(std::move(what));
  };
  if (f.duration_ns() == 0) return bad("duration_ns", "a PFC storm needs a duration: it always ends");
  injectors::PfcStormOptions o;
  if (f.pfc_priorities_size() > 0) {
    o.priorities = 0;
    for (uint32_t p : f.pfc_priorities()) {
      if (p > 7) return bad("pfc_priorities", fmt::format("priority {} is not 0-7", p));
      o.priorities = static_cast<uint8_t>(o.priorities | (1u << p));
    }
  }
  if (f.pfc_quanta() > 0xffff) {
    return bad("pfc_quanta", fmt::format("{} is above 65535 (a quantum is 16 bits)", f.pfc_quanta()));
  }
  if (f.pfc_quanta() != 0) o.quanta = static_cast<uint16_t>(f.pfc_quanta());
  if (f.pfc_frames_per_second() != 0) o.frames_per_second = f.pfc_frames_per_second();
  o.duration = std::chrono::nanoseconds(f.duration_ns());
  // What is left for the injector to refuse is the rate.
  if (Status valid = injectors::validate(o); !valid.ok()) return bad("pfc_frames_per_second", valid.message());
  return o;
}

}  // namespace collide::orchestrator::faults
