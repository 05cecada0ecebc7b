#pragma once

#include <string>
#include <vector>

#include "traces/import/importer.h"

// `collide trace import --format aicb`: one AICB/SimAI workload text file (aicb_workload.h),
// expanded into per-rank ops (aicb_expand.h).
namespace collide::traces::aicb {

Result<ImportReport> import_aicb(const std::vector<std::string>& inputs, const std::string& output,
                                 const ImportOptions& options);

}  // namespace collide::traces::aicb
