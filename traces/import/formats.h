#pragma once

#include <string_view>
#include <vector>

#include "traces/import/importer.h"

namespace collide::traces {

// Every format `collide trace import` reads, in the order --help lists them.
const std::vector<ImportFormat>& import_formats();

// The format called `name`, or nullptr.
const ImportFormat* find_import_format(std::string_view name);

}  // namespace collide::traces
