#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

// Telling a trace's format by its content, for `collide trace import` without --format.
namespace collide::traces {

// The name of the format (as import_formats() names them) that the start of `head` (the first
// bytes of an input file called `file_name`) looks like, or empty when none does.
std::string format_of_content(std::string_view head, std::string_view file_name);

// The format of `inputs`, judged by the first file among them (the first file of a directory,
// by name). An error names the file when nothing matches or it cannot be read.
Result<std::string> detect_import_format(const std::vector<std::string>& inputs);

}  // namespace collide::traces
