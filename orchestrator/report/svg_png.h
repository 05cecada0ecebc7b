#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"

// An SVG document rendered to a PNG file at the size it declares (librsvg draws it with cairo).
// A build without librsvg (librsvg2-dev) has no renderer: every call says so.
namespace collide::orchestrator::report {

bool png_rendering_available();

Status write_svg_png(const std::string& svg, const std::filesystem::path& png);

}  // namespace collide::orchestrator::report
