#pragma once

#include <string>

namespace collide::orchestrator::report {

// Text made safe inside HTML elements and double-quoted attributes.
std::string html_escape(const std::string& s);

}  // namespace collide::orchestrator::report
