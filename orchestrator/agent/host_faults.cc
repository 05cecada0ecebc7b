#include "orchestrator/agent/host_faults.h"

#include <fmt/format.h>

#include "orchestrator/faults/armed_faults.h"

namespace collide::orchestrator::agent {
namespace {

namespace scenario_faults = collide::orchestrator::faults;

// Every scenario fault kind, armed by orchestrator/faults: rules loaded and attached now, their
// windows counting from start() (the go), undone when this object goes.
class ArmedScenarioFaults final : public ArmedFaults {
 public:
  std::vector<v1::Fault> faults;  // the armed faults point into these
  std::unique_ptr<scenario_faults::ArmedFaults> armed;

  size_t size() const override { return faults.size(); }
  std::vector<FaultCounts> counts() const override {
    std::vector<FaultCounts> out;
    for (const report::FaultWindow& w : armed->ground_truth()) {
      out.push_back({w.name, w.kind, w.packets_matched, w.packets_acted});
    }
    return out;
  }
  Status start() override { return armed->start(); }
};

}  // namespace

Result<std::unique_ptr<ArmedFaults>> arm_host_faults(const std::vector<v1::Fault>& faults,
                                                     const testbed::TestbedPlan& plan,
                                                     uint32_t repetition) {
  auto out = std::make_unique<ArmedScenarioFaults>();
  out->faults = faults;
  std::vector<const v1::Fault*> pointers;
  for (const v1::Fault& f : out->faults) pointers.push_back(&f);
  scenario_faults::ArmOptions options;
  options.repetition = repetition;
  options.start_now = false;
  auto armed = scenario_faults::arm_faults(pointers, plan, options);
  if (!armed.ok()) return armed.status();
  out->armed = std::move(armed).value();
  return std::unique_ptr<ArmedFaults>(std::move(out));
}

}  // namespace collide::orchestrator::agent
