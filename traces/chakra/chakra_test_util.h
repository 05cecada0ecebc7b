#pragma once

// Builders for Chakra nodes and .et files, shared by the Chakra tests.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <system_error>
#include <vector>

#include "chakra/et_def.pb.h"
#include "traces/chakra/et_stream.h"
#include "traces/chakra/node_attrs.h"

namespace collide::traces::chakra::testing {

inline ChakraProtoMsg::Node comp(uint64_t id, uint64_t micros,
                                 std::initializer_list<uint64_t> ctrl = {}, bool cpu = false) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name("kernel");
  n.set_type(ChakraProtoMsg::COMP_NODE);
  n.set_duration_micros(micros);
  for (uint64_t d : ctrl) n.add_ctrl_deps(d);
  if (cpu) {
    auto* a = n.add_attr();
    a->set_name("is_cpu_op");
    a->set_bool_val(true);
  }
  return n;
}

inline ChakraProtoMsg::Node coll(uint64_t id, int64_t type, int64_t size, const std::string& pg,
                                 std::initializer_list<uint64_t> ctrl = {},
                                 std::initializer_list<uint64_t> data = {}) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name("coll" + std::to_string(id));
  n.set_type(ChakraProtoMsg::COMM_COLL_NODE);
  for (uint64_t d : ctrl) n.add_ctrl_deps(d);
  for (uint64_t d : data) n.add_data_deps(d);
  add_int64_attr(n, "comm_type", type);
  add_int64_attr(n, "comm_size", size);
  if (!pg.empty()) add_string_attr(n, "pg_name", pg);
  return n;
}

inline ChakraProtoMsg::Node p2p(uint64_t id, bool send, int32_t src, int32_t dst, int64_t size,
                                std::initializer_list<uint64_t> ctrl = {}) {
  ChakraProtoMsg::Node n;
  n.set_id(id);
  n.set_name(send ? "send" : "recv");
  n.set_type(send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
  for (uint64_t d : ctrl) n.add_ctrl_deps(d);
  add_int64_attr(n, "comm_type", 99);  // meaningless on send/recv, as some producers write it
  add_int32_attr(n, "comm_src", src);
  add_int32_attr(n, "comm_dst", dst);
  add_int32_attr(n, "comm_tag", 7);
  add_int64_attr(n, "comm_size", size);
  return n;
}

inline std::string et_bytes(const std::vector<ChakraProtoMsg::Node>& nodes,
                            const std::string& version = "0.0.4") {
  ChakraProtoMsg::GlobalMetadata meta;
  meta.set_version(version);
  std::string bytes;
  append_delimited(meta, bytes);
  for (const auto& n : nodes) append_delimited(n, bytes);
  return bytes;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

inline std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("collide_chakra_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// A fresh directory that is removed with everything in it when the test ends.
struct TempDir {
  explicit TempDir(const std::string& name) : path(fresh_dir(name)) {}
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::filesystem::path path;
};

// A two-rank job: rank 0 and 1 all-reduce over "0" (both ranks), rank 0 sends to 1, COMP time
// before ops, a CPU op that must not count, and a data dependency reaching through a COMP node.
inline void write_two_rank_job(const std::filesystem::path& dir) {
  for (int r = 0; r < 2; ++r) {
    std::vector<ChakraProtoMsg::Node> nodes;
    nodes.push_back(comp(1, 5, {}, /*cpu=*/true));
    nodes.push_back(comp(2, 40, {1}));
    auto ar = coll(3, ChakraProtoMsg::ALL_REDUCE, 1 << 20, "0", {2});
    ar.set_start_time_micros(100);
    nodes.push_back(ar);
    nodes.push_back(comp(4, 7, {3}));
    nodes.push_back(coll(5, ChakraProtoMsg::ALL_GATHER, 4096, "", {4}));
    if (r == 0) {
      nodes.push_back(p2p(6, true, 0, 1, 512, {5}));
    } else {
      nodes.push_back(p2p(6, false, 0, 1, 512, {5}));
    }
    // Depends on the all-reduce through COMP node 4 (data), and on op 2 by control (order only).
    nodes.push_back(coll(7, ChakraProtoMsg::REDUCE_SCATTER, 8192, "0", {6}, {4}));
    write_file(dir / ("job." + std::to_string(r) + ".et"), et_bytes(nodes));
  }
  write_file(dir / "groups.json", R"({"0": [0, 1]})");
}

}  // namespace collide::traces::chakra::testing
