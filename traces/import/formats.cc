#include "traces/import/formats.h"

#include "traces/aicb/aicb_import.h"
#include "traces/chakra/chakra_import.h"
#include "traces/nccl/nccl_import.h"

namespace collide::traces {

const std::vector<ImportFormat>& import_formats() {
  // One entry per importer; each lives in its own folder under traces/.
  static const std::vector<ImportFormat> formats = {
      {"nccl", "NCCL/RCCL debug logs (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,COLL[,GRAPH,NET])",
       &nccl::import_nccl_logs},
      {"chakra", "Chakra execution traces: <prefix>.<rank>.et files or a directory of them, "
                 "plus an optional comm-group .json",
       &chakra::import_chakra},
      {"aicb", "AICB/SimAI workload text (one file), expanded per rank (Megatron layout)",
       &aicb::import_aicb},
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
