#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace collide::orchestrator::testbed {

// Runs `lines` (each `ip`'s words without the program, "route replace ...") as one
// `ip -n NETNS -batch -`: one process for all of a namespace's addresses, links or routes, where
// each run of `ip` costs tens of milliseconds on a loaded machine. The lines land in order; the
// first that fails stops the rest, and the error quotes what ip said.
Status ip_batch(const std::string& netns, const std::vector<std::string>& lines);

}  // namespace collide::orchestrator::testbed
