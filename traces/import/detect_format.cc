#include "traces/import/detect_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "traces/import/formats.h"

namespace collide::traces {
namespace {

namespace fs = std::filesystem;

constexpr size_t kHeadBytes = 64 * 1024;
constexpr size_t kFilesTried = 16;

bool contains(std::string_view text, std::string_view what) {
  return text.find(what) != std::string_view::npos;
}

// A Chakra .et file opens with a varint length and then GlobalMetadata's field 1 (version, a
// string): tag byte 0x0a.
bool looks_like_chakra(std::string_view head) {
  uint64_t length = 0;
  size_t i = 0;
  for (int shift = 0; i < head.size() && i < 5; shift += 7) {
    const auto byte = static_cast<uint8_t>(head[i++]);
    length |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) break;
  }
  return length > 0 && length < (1u << 20) && i < head.size() &&
         static_cast<uint8_t>(head[i]) == 0x0a;
}

std::string_view first_line(std::string_view text) {
  return text.substr(0, std::min(text.find('\n'), text.size()));
}

}  // namespace

std::string format_of_content(std::string_view head, std::string_view file_name) {
  if (head.size() >= 2 && static_cast<uint8_t>(head[0]) == 0x80 &&
      static_cast<uint8_t>(head[1]) >= 2 && static_cast<uint8_t>(head[1]) <= 5) {
    return "flight-recorder";  // a pickle: PyTorch writes Flight Recorder dumps so
  }
  const size_t start = head.find_first_not_of(" \t\r\n");
  if (start != std::string_view::npos && (head[start] == '{' || head[start] == '[')) {
    const std::string_view json = head.substr(start);
    const std::string_view line = first_line(json);
    if (contains(line, "\"header\"") && contains(line, "\"n_ranks\"")) return "inspector";
    if (contains(line, "\"coll_perf\"")) return "inspector";
    if (contains(json, "\"pg_config\"") ||
        (contains(json, "\"entries\"") && contains(json, "\"profiling_name\""))) {
      return "flight-recorder";
    }
    if (contains(json, "\"traceEvents\"")) return "kineto";
    if (contains(json, "\"nccl_version\"") && contains(json, "\"config\"")) return "nccl-tests";
    // Not a JSON format collide knows; launchers' "[1,0]<stdout>:" prefixes also start with '['.
  }
  // nccl-tests output may hold NCCL INFO lines too; its own header says what it is.
  if (contains(head, "# nThread") && contains(head, "busbw")) return "nccl-tests";
  if (contains(head, "NCCL INFO") || contains(head, "NCCL WARN")) return "nccl";
  if (contains(first_line(head), "model_parallel_NPU_group") ||
      contains(first_line(head), "all_gpus:")) {
    return "aicb";
  }
  // Binary: a length byte below 0x20 cannot start a text file; a .et name says so as well.
  const bool et_name = file_name.size() > 3 && file_name.substr(file_name.size() - 3) == ".et";
  if (looks_like_chakra(head) && (et_name || static_cast<uint8_t>(head[0]) < 0x20 ||
                                  static_cast<uint8_t>(head[0]) >= 0x80)) {
    return "chakra";
  }
  return {};
}

Result<std::string> detect_import_format(const std::vector<std::string>& inputs) {
  if (inputs.empty()) return invalid_argument("no input to tell the format of");
  // A directory is judged by its files in name order, the first that looks like something
  // (a Chakra folder may start with its comm-group .json).
  std::vector<std::string> files{inputs.front()};
  std::error_code ec;
  if (fs::is_directory(inputs.front(), ec)) {
    files.clear();
    for (const auto& entry : fs::directory_iterator(inputs.front(), ec)) {
      if (entry.is_regular_file()) files.push_back(entry.path().string());
    }
    if (files.empty()) {
      return invalid_argument(fmt::format("{}: no files to import", inputs.front()));
    }
    std::sort(files.begin(), files.end());
    if (files.size() > kFilesTried) files.resize(kFilesTried);
  }
  std::string name;
  std::string file;
  for (const std::string& candidate : files) {
    file = candidate;
    std::ifstream in(file, std::ios::binary);
    if (!in) return not_found(fmt::format("{}: cannot open", file));
    std::string head(kHeadBytes, '\0');
    in.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(in.gcount()));
    name = format_of_content(head, fs::path(file).filename().string());
    if (!name.empty()) break;
  }
  if (name == "nccl-tests" && find_import_format(name) == nullptr &&
      find_import_format("nccl_tests") != nullptr) {
    name = "nccl_tests";
  }
  if (!name.empty() && find_import_format(name) != nullptr) return name;
  std::string known;
  for (const ImportFormat& f : import_formats()) known += (known.empty() ? "" : ", ") + f.name;
  if (!name.empty()) {
    return invalid_argument(fmt::format(
        "{}: looks like {}, which this build cannot import; give --format (one of {})", file,
        name, known));
  }
  return invalid_argument(fmt::format(
      "{}: cannot tell the trace format from its content; give --format (one of {})", file,
      known));
}

}  // namespace collide::traces
