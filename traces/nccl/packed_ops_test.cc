#include "traces/nccl/packed_ops.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "traces/nccl/text_scan.h"

namespace collide::traces::nccl {
namespace {

struct Expected {
  uint32_t member;
  OpWireFields fields;
};

std::string index_kind_of(const OpWireFields& f) {
  char buffer[kMaxIndexKindBytes];
  return {buffer, static_cast<size_t>(put_op_index_kind(f, buffer) - buffer)};
}

std::string rest_of(const OpWireFields& f) {
  char buffer[kMaxRestBytes];
  return {buffer, static_cast<size_t>(put_op_rest(f, buffer) - buffer)};
}

std::vector<Expected> random_ops(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto big = [&rng] { return rng() >> (rng() % 64); };  // every varint length
  std::vector<Expected> ops;
  for (size_t i = 0; i < n; ++i) {
    Expected e;
    e.member = static_cast<uint32_t>(big());
    e.fields.index = big();
    e.fields.kind = static_cast<int32_t>(rng() % 13);
    e.fields.count = big();
    e.fields.datatype = static_cast<int32_t>(rng() % 13);
    e.fields.bytes = big();
    e.fields.root = static_cast<int32_t>(rng() % 3 == 0 ? -1 : static_cast<int64_t>(big()));
    e.fields.reduce_op = static_cast<int32_t>(rng() % 7);
    e.fields.has_enqueue_time = rng() % 2 == 0;
    e.fields.enqueue_time_ns = e.fields.has_enqueue_time ? big() : 0;
    e.fields.op_count = big();
    e.fields.source_line = big();
    e.fields.group = static_cast<uint32_t>(big());
    e.fields.source_file = static_cast<uint32_t>(big());
    ops.push_back(e);
  }
  return ops;
}

void expect_reads_back(const PackedOps& packed, const std::vector<Expected>& ops, size_t first) {
  ASSERT_EQ(packed.size(), ops.size());
  PackedOps::Reader reader(packed, first);
  PackedOpView view;
  for (size_t i = first; i < ops.size(); ++i) {
    reader.next(view);
    const Expected& e = ops[i];
    ASSERT_EQ(view.member, e.member) << "op " << i;
    ASSERT_EQ(std::string(view.index_kind), index_kind_of(e.fields)) << "op " << i;
    ASSERT_EQ(std::string(view.rest), rest_of(e.fields)) << "op " << i;
  }
}

TEST(PackedOps, ReadsBackFromAnyOpAcrossChunks) {
  // Enough ops for several chunks, so records meet chunk ends.
  const std::vector<Expected> ops = random_ops(200000, 7);
  PackedOps packed;
  for (const Expected& e : ops) packed.append(e.member, e.fields);
  for (size_t first : {size_t{0}, size_t{1}, size_t{1023}, size_t{1024}, size_t{1025},
                       size_t{123457}, ops.size() - 1}) {
    SCOPED_TRACE(first);
    expect_reads_back(packed, ops, first);
  }
}

TEST(PackedOps, ClearKeepsNothingButTheMemory) {
  PackedOps packed;
  for (const Expected& e : random_ops(150000, 1)) packed.append(e.member, e.fields);
  packed.clear();
  EXPECT_EQ(packed.size(), 0u);
  const std::vector<Expected> ops = random_ops(90000, 2);
  for (const Expected& e : ops) packed.append(e.member, e.fields);
  expect_reads_back(packed, ops, 0);
  expect_reads_back(packed, ops, 4000);
}

TEST(ScanLine, FindsTheNewlineAndCountsCapitalNs) {
  // Every length and position, so both the 16-byte steps and the tail are checked.
  std::mt19937_64 rng(3);
  const char alphabet[] = {'a', 'N', '\n', ' ', 'C'};
  for (int round = 0; round < 20000; ++round) {
    std::string text(rng() % 70, 'x');
    for (char& c : text) c = alphabet[rng() % (rng() % 4 == 0 ? 5 : 2)];
    const size_t start = text.empty() ? 0 : rng() % text.size();
    const char* b = text.data() + start;
    const char* e = text.data() + text.size();
    const LineScan scan = scan_line(b, e);
    const char* end = b;
    while (end < e && *end != '\n') ++end;
    unsigned capitals = 0;
    const char* first = nullptr;
    for (const char* p = b; p < end; ++p) {
      if (*p == 'N') {
        if (first == nullptr) first = p;
        ++capitals;
      }
    }
    ASSERT_EQ(scan.end, end) << text;
    ASSERT_EQ(scan.first_capital, first) << text;
    // Exact up to three; beyond, at least three.
    if (capitals <= 3) {
      ASSERT_EQ(scan.capitals, capitals) << text;
    } else {
      ASSERT_GE(scan.capitals, 3u) << text;
    }
  }
}

}  // namespace
}  // namespace collide::traces::nccl
