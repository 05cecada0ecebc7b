#include "replayer/wire/payload_pattern.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <vector>

#include "replayer/wire/crc32.h"

namespace collide::replayer::wire {
namespace {

constexpr uint64_t kPositionStride = 0x9e3779b97f4a7c15ull;
// A length's tables pay for themselves after about this many packets: building them takes 64
// CRCs of the length.
constexpr uint32_t kUsesBeforeTables = 64;
// Distinct lengths remembered per thread before the memory is given back and counting restarts.
constexpr size_t kMaxLengths = 256;

uint64_t word_at(size_t index, uint64_t seed) { return seed ^ ((index + 1) * kPositionStride); }

// Little-endian whatever the host, so both ends agree.
void store_word(uint8_t* p, uint64_t w, size_t n) {
  for (size_t b = 0; b < n; ++b) p[b] = static_cast<uint8_t>(w >> (8 * b));
}

struct LengthTables {
  uint32_t uses = 0;
  uint32_t seedless_crc = 0;
  // by_byte[j][b]: what seed byte j having value b adds to the CRC.
  std::unique_ptr<std::array<std::array<uint32_t, 256>, 8>> by_byte;
};

void build_tables(LengthTables& t, size_t len) {
  std::vector<uint8_t> buffer(len);
  fill_payload_pattern(buffer, 0);
  t.seedless_crc = crc32_of(buffer);
  std::array<uint32_t, 64> column{};
  for (size_t bit = 0; bit < 64; ++bit) {
    fill_payload_pattern(buffer, uint64_t{1} << bit);
    column[bit] = crc32_of(buffer) ^ t.seedless_crc;
  }
  t.by_byte = std::make_unique<std::array<std::array<uint32_t, 256>, 8>>();
  for (size_t j = 0; j < 8; ++j) {
    auto& table = (*t.by_byte)[j];
    table[0] = 0;
    for (unsigned b = 1; b < 256; ++b) {
      table[b] = table[b & (b - 1)] ^ column[8 * j + static_cast<size_t>(std::countr_zero(b))];
    }
  }
}

}  // namespace

void fill_payload_pattern(std::span<uint8_t> payload, uint64_t seed) {
  size_t i = 0;
  size_t index = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= payload.size(); i += 8, ++index) {
      const uint64_t w = word_at(index, seed);
      std::memcpy(payload.data() + i, &w, 8);
    }
  }
  for (; i < payload.size(); i += 8, ++index) {
    store_word(payload.data() + i, word_at(index, seed), std::min<size_t>(8, payload.size() - i));
  }
}

bool payload_matches_pattern(std::span<const uint8_t> payload, uint64_t seed) {
  size_t i = 0;
  size_t index = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= payload.size(); i += 8, ++index) {
      uint64_t w;
      std::memcpy(&w, payload.data() + i, 8);
      if (w != word_at(index, seed)) return false;
    }
  }
  std::array<uint8_t, 8> expected;
  for (; i < payload.size(); i += 8, ++index) {
    const size_t n = std::min<size_t>(8, payload.size() - i);
    store_word(expected.data(), word_at(index, seed), n);
    if (std::memcmp(payload.data() + i, expected.data(), n) != 0) return false;
  }
  return true;
}

uint32_t payload_pattern_crc(std::span<const uint8_t> filled, uint64_t seed) {
  thread_local std::unordered_map<size_t, LengthTables> by_length;
  thread_local LengthTables* last = nullptr;
  thread_local size_t last_len = 0;

  LengthTables* t = last;
  if (t == nullptr || last_len != filled.size()) {
    if (by_length.size() >= kMaxLengths) by_length.clear();
    t = &by_length[filled.size()];
    last = t;
    last_len = filled.size();
  }
  if (!t->by_byte) {
    if (++t->uses < kUsesBeforeTables) return crc32_of(filled);
    build_tables(*t, filled.size());
  }
  uint32_t crc = t->seedless_crc;
  for (size_t j = 0; j < 8; ++j) crc ^= (*t->by_byte)[j][(seed >> (8 * j)) & 0xff];
  return crc;
}

}  // namespace collide::replayer::wire
