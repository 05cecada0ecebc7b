#include "orchestrator/report/svg_png.h"

namespace collide::orchestrator::report {

// Built without librsvg: the curves stay in report.html.
bool png_rendering_available() { return false; }

Status write_svg_png(const std::string&, const std::filesystem::path& png) {
  return unavailable("cannot write " + png.string() + ": collide was built without librsvg (install librsvg2-dev "
                     "and configure again)");
}

}  // namespace collide::orchestrator::report
