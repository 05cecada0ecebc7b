#pragma once

#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"
#include "orchestrator/report/sweep_point_label.h"

namespace YAML {
class Node;
}

// A scenario may sweep a few of its fields: such a field is written `{sweep: [v1, v2, ...]}` in
// place of its value, each value written as the field's own value would be (with units). The grid
// is the product of the swept lists; each point is a whole scenario, checked as one, and runs as
// one (its baseline and variants, every repetition).
namespace collide::orchestrator {

struct SweepPoint {
  v1::Scenario scenario;
  std::vector<v1::SweepSetting> settings;  // one per swept field; empty when nothing is swept
};

using report::point_label;  // how a point is named (report/sweep_point_label.h)

struct SweptField {
  std::string field;
  int line = 0;                     // where `sweep:` is written
  std::vector<std::string> values;  // as written, in order
};

struct ScenarioGrid {
  std::vector<SweptField> fields;  // in the order they are written
  // The product of the lists, the last field varying fastest; a scenario that sweeps nothing is
  // its one point.
  std::vector<SweepPoint> points;
  bool swept() const { return !fields.empty(); }
};

// The fields that may be swept; `[*]` stands for any index.
const std::vector<std::string>& sweepable_fields();

// Reads a scenario file and expands its grid. Errors name the file, the line and the field: a
// sweep of a field that cannot be swept, a sweep not written as a list of single values, a value
// given twice, a grid of more than limits::kMaxSweepPoints points, and any value the field would
// refuse on its own (with the point it makes).
Result<ScenarioGrid> load_scenario_grid(const std::string& path);

// The same for a document already read from `path` (which may be a name, for a document made in
// memory; a synthesized model is then looked up from the working directory). The document is
// edited: each point puts its values in the sweeps' places, and the last point's stay there.
Result<ScenarioGrid> expand_scenario_grid(const YAML::Node& document, const std::string& path);

}  // namespace collide::orchestrator
