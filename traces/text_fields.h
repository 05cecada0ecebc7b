#pragma once

#include <cctype>
#include <string_view>
#include <vector>

// Splitting the text formats collide reads (AICB workloads, nccl-tests output) into fields.
namespace collide::traces {

// The runs of non-space characters of `line`, as views into it.
inline std::vector<std::string_view> split_whitespace(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    size_t j = i;
    while (j < line.size() && !std::isspace(static_cast<unsigned char>(line[j]))) ++j;
    if (j > i) fields.push_back(line.substr(i, j - i));
    i = j;
  }
  return fields;
}

}  // namespace collide::traces
