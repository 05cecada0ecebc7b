#pragma once

#include <string>

// Priority flow control on a lossless fabric's switch ports, in a report: per port over a
// variant's repetitions, the pause frames that held its queue and for how long, the pauses it
// sent upstream, and the watchdog's interventions (when the hold began, how long until the
// watchdog acted, how long until pauses were honoured again). How far pauses spread is the
// number of ports they held. Only ports that paused or were paused are listed.
namespace collide::orchestrator::report {

struct Report;

std::string port_pfc_text(const Report& report);
std::string port_pfc_html(const Report& report, std::string (*escape)(const std::string&));

}  // namespace collide::orchestrator::report
