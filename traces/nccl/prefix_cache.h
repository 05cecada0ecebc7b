#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace collide::traces::nccl {

// The process of a line prefix seen before (`[1,7]<stdout>:host:pid:tid [dev] `, everything
// before "NCCL INFO"), by the prefix's bytes. A process prints the same prefix on every line that
// has no time in it, so most lines of a big log find theirs here with one hash and one compare,
// instead of reading the host, pid and device and looking the process up by them.
//
// Prefixes of 16 to 48 bytes (most) are kept; others are never found. A prefix whose place others
// took is read the long way, which is always right.
class PrefixCache {
 public:
  static constexpr size_t kMinSize = 16;
  static constexpr size_t kMaxSize = 48;

#if defined(__SSE2__)
  PrefixCache() : slots_(kSlots) {}

  // A prefix's bytes as three overlapping 16-byte words that cover it, and its set of slots.
  struct Key {
    __m128i head{}, middle{}, tail{};
    uint32_t size = 0;
    uint32_t set = 0;
  };

  // Whether [begin, end) can be kept; if so, `key` is set and its slots are asked for ahead of
  // find() (the text streaming through the cache has most often pushed it out).
  bool key_of(const char* begin, const char* end, Key& key) const {
    const auto size = static_cast<size_t>(end - begin);
    if (size < kMinSize || size > kMaxSize) return false;
    key.head = _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin));
    key.middle = _mm_loadu_si128(reinterpret_cast<const __m128i*>(begin + (size - 16) / 2));
    key.tail = _mm_loadu_si128(reinterpret_cast<const __m128i*>(end - 16));
    key.size = static_cast<uint32_t>(size);
    // The host, pid and tid differ from process to process, and they end the prefix.
    uint64_t tail_low, tail_high, head_low;
    std::memcpy(&tail_low, end - 16, 8);
    std::memcpy(&tail_high, end - 8, 8);
    std::memcpy(&head_low, begin, 8);
    uint64_t h = tail_low * 0x9E3779B97F4A7C15ull ^ tail_high * 0xC2B2AE3D27D4EB4Full ^
                 head_low * 0x165667B19E3779F9ull ^ size;
    h ^= h >> 29;
    key.set = static_cast<uint32_t>((h * 0xBF58476D1CE4E5B9ull) >> (64 - kSetBits));
    _mm_prefetch(reinterpret_cast<const char*>(&slots_[2 * key.set]), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(&slots_[2 * key.set + 1]), _MM_HINT_T0);
    return true;
  }

  // The process kept for the key's prefix, if any.
  bool find(const Key& key, uint32_t& process) const {
    const Slot* set = &slots_[2 * key.set];
    if (matches(set[0], key)) {
      process = set[0].process;
      return true;
    }
    if (matches(set[1], key)) {
      process = set[1].process;
      return true;
    }
    return false;
  }

  // Keeps the prefix in an empty slot of its set, else in place of one its bytes pick.
  void keep(const Key& key, uint32_t process) {
    Slot* set = &slots_[2 * key.set];
    const size_t way = set[0].size == 0   ? 0
                       : set[1].size == 0 ? 1
                                          : static_cast<uint32_t>(_mm_cvtsi128_si32(key.tail)) & 1;
    set[way] = {key.head, key.middle, key.tail, key.size, process};
  }

 private:
  // Sets of two slots: four slots a process for a few hundred processes (a big merged log), with
  // few sets asked to hold three.
  static constexpr unsigned kSetBits = 9;
  static constexpr size_t kSlots = size_t{2} << kSetBits;
  struct alignas(64) Slot {
    __m128i head{}, middle{}, tail{};
    uint32_t size = 0;  // 0: empty (no key is that short)
    uint32_t process = 0;
  };
  static bool matches(const Slot& s, const Key& key) {
    const __m128i same = _mm_and_si128(
        _mm_and_si128(_mm_cmpeq_epi8(s.head, key.head), _mm_cmpeq_epi8(s.middle, key.middle)),
        _mm_cmpeq_epi8(s.tail, key.tail));
    return s.size == key.size && _mm_movemask_epi8(same) == 0xFFFF;
  }
  std::vector<Slot> slots_;
#else
  struct Key {};
  bool key_of(const char*, const char*, Key&) const { return false; }
  bool find(const Key&, uint32_t&) const { return false; }
  void keep(const Key&, uint32_t) {}
#endif
};

}  // namespace collide::traces::nccl
