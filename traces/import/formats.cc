#include "traces/import/formats.h"

namespace collide::traces {

const std::vector<ImportFormat>& import_formats() {
  // One entry per importer; each lives in its own folder under traces/.
  static const std::vector<ImportFormat> formats = {
  };
  return formats;
}

const ImportFormat* find_import_format(std::string_view name) {
  for (const ImportFormat& format : import_formats()) {
    if (format.name == name) return &format;
  }
  return nullptr;
}

}  // namespace collide::traces
