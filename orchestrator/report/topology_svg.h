#pragma once

#include <string>
#include <vector>

#include "orchestrator/report/run_result.h"

// A virtual fabric drawn from its links as one run counted them: the hosts' NICs at the bottom,
// grouped under their leaves, the leaves above them, then the spines and (3-tier) the super-spines
// on top. Each link is drawn as
// dark and as wide as the bytes it carried (both ways) against the busiest link, so where the
// traffic went, and which spine link a hash collision loaded twice, shows at a glance; a link that
// carried nothing is dashed. Hovering a link or a switch names it with its bytes. One
// self-contained SVG element (every style an attribute).
namespace collide::orchestrator::report {

// Empty without links.
std::string topology_svg(const std::vector<FabricLink>& links, const std::string& id);

}  // namespace collide::orchestrator::report
