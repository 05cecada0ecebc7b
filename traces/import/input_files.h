#pragma once

#include <string>
#include <vector>

#include "common/result.h"

namespace collide::traces {

// The files an import reads: each input that is a file, and the regular files of each input
// that is a directory (those whose name ends in `suffix`, when given), in name order. No files at
// all is an error that says what was wanted (`what`: "Flight Recorder dumps", ...).
Result<std::vector<std::string>> expand_input_files(const std::vector<std::string>& inputs,
                                                    const std::string& what,
                                                    const std::string& suffix = "");

}  // namespace collide::traces
