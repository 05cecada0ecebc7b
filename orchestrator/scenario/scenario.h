#pragma once

#include <string>

#include "collide/scenario.pb.h"
#include "common/result.h"

namespace YAML {
class Node;
}

namespace collide::orchestrator {

// Reads a scenario YAML file, fills in defaults and checks it as a whole: a virtual testbed or a
// list of agents, one workload source, faults that name existing links with sane parameters,
// variants that name existing faults. Errors name the file, the line and the field; a scenario
// that fails starts nothing.
Result<v1::Scenario> load_scenario(const std::string& path);
// The same for a document already read from `path` (a sweep's point, its values edited in).
Result<v1::Scenario> load_scenario_document(const YAML::Node& document, const std::string& path);

// The same checks on a scenario already in memory (`source` names it in messages).
Status validate_scenario(const v1::Scenario& scenario, const std::string& source);

}  // namespace collide::orchestrator
