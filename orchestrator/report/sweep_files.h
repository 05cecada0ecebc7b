#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collide/results.pb.h"
#include "collide/scenario.pb.h"
#include "common/result.h"

// Where a sweep's answers go, beside the points' own folders: sweep.json always, report.html
// unless the scenario's outputs say `html: false`, and each curve as <chart id>.png.
namespace collide::orchestrator::report {

struct SweepFiles {
  std::filesystem::path json;
  std::filesystem::path html;              // empty when not written
  std::vector<std::filesystem::path> pngs;
  std::string png_note;                    // why no PNG was written (a build without librsvg)
};

// The PNGs' names go into `sweep.curve_files` before sweep.json is written.
Result<SweepFiles> write_sweep_files(const std::filesystem::path& dir, const v1::Outputs& outputs,
                                     v1::SweepResults sweep);

}  // namespace collide::orchestrator::report
