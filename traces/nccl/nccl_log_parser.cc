#include "traces/nccl/nccl_log_parser.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "traces/nccl/prefix_cache.h"
#include "traces/nccl/text_scan.h"

namespace collide::traces::nccl {
namespace {

// Interns (host, pid) pairs of one piece, so records carry a small index instead of a string.
// Open addressing over a power-of-two table; a piece rarely sees more than a few hundred. This runs
// once per NCCL line, so a slot holds what a lookup compares (the host's first and last eight
// bytes, its size and the pid): a hit reads only the table, never the text of the host's first
// line, which is far away in the piece and rarely still in cache.
class ProcessTable {
 public:
  explicit ProcessTable(std::vector<ProcessRef>& refs) : refs_(refs) { slots_.resize(64); }

  // What a lookup needs of a (host, pid), made ahead of the lookup by prepare().
  struct Lookup;

  // `host` must be followed by at least 8 readable bytes (a prefix's host is: the pid, tid and
  // device follow it), so short names are read as one word.
  uint32_t intern(std::string_view host, uint32_t pid) { return intern(prepare(host, pid)); }

  // The first half of intern(), for a caller with other work to do before the second: it asks
  // for the slot's cache line, which the text and the records streaming through the cache have
  // most often pushed out since the process's last line.
  Lookup prepare(std::string_view host, uint32_t pid) const;
  uint32_t intern(const Lookup& lookup) {
    const size_t mask = slots_.size() - 1;
    for (size_t i = lookup.hash & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.index == kEmpty) return insert(i, lookup.key, lookup.host);
      if (slot.key == lookup.key &&
          (lookup.host.size() <= 16 || refs_[slot.index].host == lookup.host)) {
        return slot.index;
      }
    }
  }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;

  // Names of up to 16 bytes (most) are wholly in `head` and `tail`; longer ones also need the text.
  struct Key {
    uint64_t head = 0;  // the first 8 bytes (shorter names: zero-padded)
    uint64_t tail = 0;  // the last 8 bytes (overlapping `head` below 16; 0 below 8)
    uint32_t pid = 0;
    uint32_t size = 0;
    // One test instead of one per field: a lookup compares a key on every line.
    bool operator==(const Key& o) const {
      return ((head ^ o.head) | (tail ^ o.tail) |
              ((static_cast<uint64_t>(pid ^ o.pid) << 32) | (size ^ o.size))) == 0;
    }
  };
  struct Slot {
    Key key;
    uint32_t index = kEmpty;  // into refs_
  };

  static Key key_of(std::string_view host, uint32_t pid) {
    Key key;
    key.pid = pid;
    key.size = static_cast<uint32_t>(std::min<size_t>(host.size(), UINT32_MAX));
    if (host.size() >= 8) {
      key.head = load_u64(host.data());
      key.tail = load_u64(host.data() + host.size() - 8);
    } else {
      key.head = load_u64(host.data()) & ((uint64_t{1} << (8 * host.size())) - 1);
    }
    return key;
  }

  // Host names of one job differ mostly at their end, which `tail` holds.
  static uint64_t hash(const Key& key) {
    uint64_t h = (key.head * 0x9E3779B97F4A7C15ull) ^ (key.tail * 0xC2B2AE3D27D4EB4Full) ^
                 ((static_cast<uint64_t>(key.pid) << 16) | key.size);
    h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 29);
  }

  uint32_t insert(size_t slot, const Key& key, std::string_view host) {
    const auto index = static_cast<uint32_t>(refs_.size());
    refs_.push_back({host, key.pid, -1});
    slots_[slot] = {key, index};
    // At most half full: a lookup rarely probes a third slot, and a few hundred processes (32
    // bytes a slot) leave most of the first-level cache to the text.
    if (refs_.size() * 2 > slots_.size()) grow();
    return index;
  }

  void grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    const size_t mask = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.index == kEmpty) continue;
      size_t i = hash(slot.key) & mask;
      while (slots_[i].index != kEmpty) i = (i + 1) & mask;
      slots_[i] = slot;
    }
  }

  std::vector<ProcessRef>& refs_;
  std::vector<Slot> slots_;

 public:
  struct Lookup {
    std::string_view host;
    Key key;
    uint64_t hash;
  };
};

ProcessTable::Lookup ProcessTable::prepare(std::string_view host, uint32_t pid) const {
  Lookup lookup{host, key_of(host, pid), 0};
  lookup.hash = hash(lookup.key);
#if defined(__SSE2__)
  _mm_prefetch(reinterpret_cast<const char*>(&slots_[lookup.hash & (slots_.size() - 1)]),
               _MM_HINT_T0);
#endif
  return lookup;
}

// Trivial (no initializers), so the per-line array of them costs nothing to set up; only a
// successful parse_prefix_backward fills one, and only those are read.
struct Prefix {
  const char* start;  // where the host name begins
  size_t host_size;
  uint32_t pid;
  int32_t device;

  std::string_view host() const { return {start, host_size}; }
};

// What may be part of a host name, as a table: the backward scan over it runs once per line.
struct HostCharTable {
  bool allowed[256];
  constexpr HostCharTable() : allowed() {
    for (bool& a : allowed) a = true;
    for (char c : {' ', '\t', ':', ']', '>', ')', '\0'}) allowed[static_cast<uint8_t>(c)] = false;
  }
};
inline constexpr HostCharTable kHostChars;

bool is_host_char(char c) {
  return kHostChars.allowed[static_cast<uint8_t>(c)];
}

// Reads `host:pid:tid [dev] ` backwards from `nccl` (the position of "NCCL INFO"), a byte at a
// time: any prefix, also the ones prefix_from_masks leaves to it.
bool parse_prefix_bytewise(const char* line_begin, const char* nccl, Prefix& out) {
  const char* p = nccl;
  while (p > line_begin && p[-1] == ' ') --p;
  if (p == line_begin || p[-1] != ']') return false;
  --p;
  const char* digits_end = p;
  while (p > line_begin && is_digit(p[-1])) --p;
  if (p == digits_end) return false;
  if (p > line_begin && p[-1] == '-') --p;
  Cursor dev{p, digits_end};
  if (!parse_i32(dev, out.device) || p == line_begin || p[-1] != '[') return false;
  --p;
  if (p == line_begin || p[-1] != ' ') return false;
  while (p > line_begin && p[-1] == ' ') --p;
  // tid
  const char* tid_end = p;
  while (p > line_begin && is_digit(p[-1])) --p;
  if (p == tid_end || p == line_begin || p[-1] != ':') return false;
  --p;
  const char* pid_end = p;
  while (p > line_begin && is_digit(p[-1])) --p;
  if (p == pid_end || p == line_begin || p[-1] != ':') return false;
  Cursor pid{p, pid_end};
  uint64_t pid_value = 0;
  if (!parse_u64(pid, pid_value) || pid_value > UINT32_MAX) return false;
  out.pid = static_cast<uint32_t>(pid_value);
  --p;
  const char* host_end = p;
  while (p > line_begin && is_host_char(p[-1])) --p;
  out.host_size = static_cast<size_t>(host_end - p);
  out.start = p;
  return true;
}

#if defined(__SSE2__)
// The usual prefix (`gpu-node-008:40455:40466 [1] `, pid and device of at most 8 digits) read from
// bit masks of the 32 bytes before `nccl`: each backward step is a find-last-bit instead of a
// byte loop whose exit mispredicts (four of them per line). Returns false when it cannot tell
// (a shorter line, longer numbers, anything unusual), and parse_prefix_bytewise decides; where
// this returns true, that would give the same prefix. The 32 bytes from the window's start must
// be readable up to `readable_end`.
[[gnu::always_inline]] inline bool prefix_from_masks(const char* line_begin, const char* nccl,
                                                     const char* readable_end, Prefix& out) {
  // The window ends at `nccl`, or starts at the line when that is closer (it then reads a little
  // of the message, which the masks below leave out).
  const char* w = nccl - line_begin >= 32 ? nccl - 32 : line_begin;
  if (readable_end - w < 32) return false;
  const auto masks = [](const char* at, uint32_t& space, uint32_t& digit, uint32_t& stop) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
    const __m128i is_space = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
    const __m128i shifted = _mm_sub_epi8(v, _mm_set1_epi8(static_cast<char>('0' + 128)));
    const __m128i is_digit = _mm_cmplt_epi8(shifted, _mm_set1_epi8(static_cast<char>(-128 + 10)));
    // What ends a host name (HostCharTable).
    __m128i is_stop = _mm_or_si128(is_space, _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
    is_stop = _mm_or_si128(is_stop, _mm_cmpeq_epi8(v, _mm_set1_epi8(':')));
    is_stop = _mm_or_si128(is_stop, _mm_cmpeq_epi8(v, _mm_set1_epi8(']')));
    is_stop = _mm_or_si128(is_stop, _mm_cmpeq_epi8(v, _mm_set1_epi8('>')));
    is_stop = _mm_or_si128(is_stop, _mm_cmpeq_epi8(v, _mm_set1_epi8(')')));
    is_stop = _mm_or_si128(is_stop, _mm_cmpeq_epi8(v, _mm_setzero_si128()));
    space = static_cast<uint32_t>(_mm_movemask_epi8(is_space));
    digit = static_cast<uint32_t>(_mm_movemask_epi8(is_digit));
    stop = static_cast<uint32_t>(_mm_movemask_epi8(is_stop));
  };
  uint32_t space, digit, stop, space_high, digit_high, stop_high;
  masks(w, space, digit, stop);
  masks(w + 16, space_high, digit_high, stop_high);
  space |= space_high << 16;
  digit |= digit_high << 16;
  stop |= stop_high << 16;
  // The highest set bit of `mask` below bit `k` (0 to 32), -1 if none.
  const auto last_below = [](uint32_t mask, int k) {
    const uint64_t m = mask & ((uint64_t{1} << k) - 1);
    return m == 0 ? -1 : 63 - __builtin_clzll(m);
  };
  const int end = static_cast<int>(nccl - w);
  // Spaces, then `]`.
  const int close = last_below(~space, end);
  if (close < 0 || w[close] != ']') return false;
  // The device's digits (a leading minus is allowed), then `[`.
  const int before_dev = last_below(~digit, close);
  const int dev_digits = close - 1 - before_dev;
  if (before_dev < 0 || dev_digits == 0 || dev_digits > 8) return false;
  const bool negative = w[before_dev] == '-';
  const int open = negative ? before_dev - 1 : before_dev;
  if (open < 1 || w[open] != '[' || w[open - 1] != ' ') return false;
  // Spaces, the tid's digits, `:`, the pid's digits, `:`.
  const int tid_last = last_below(~space, open);
  if (tid_last < 0) return false;
  const int tid_colon = last_below(~digit, tid_last + 1);
  if (tid_colon < 0 || tid_colon == tid_last || w[tid_colon] != ':') return false;
  const int pid_colon = last_below(~digit, tid_colon);
  const int pid_digits = tid_colon - 1 - pid_colon;
  if (pid_colon < 0 || pid_digits == 0 || pid_digits > 8 || w[pid_colon] != ':') return false;
  // The host: back to the last byte that cannot be part of one, or to the line's start.
  const int host_stop = last_below(stop, pid_colon);
  const char* host = w + host_stop + 1;
  if (host_stop < 0) {
    host = w;
    while (host > line_begin && is_host_char(host[-1])) --host;  // a name longer than the window
  }
  // Mostly one digit.
  const auto dev = static_cast<int32_t>(
      dev_digits == 1 ? static_cast<uint64_t>(w[close - 1] - '0')
                      : decimal_value8(w + before_dev + 1, static_cast<unsigned>(dev_digits)));
  out.device = negative ? -dev : dev;
  out.pid =
      static_cast<uint32_t>(decimal_value8(w + pid_colon + 1, static_cast<unsigned>(pid_digits)));
  out.start = host;
  out.host_size = static_cast<size_t>(w + pid_colon - host);
  return true;
}
#endif

// Reads `host:pid:tid [dev] ` backwards from `nccl` (the position of "NCCL INFO"). The text up to
// `readable_end` may be read.
bool parse_prefix_backward(const char* line_begin, const char* nccl, const char* readable_end,
                           Prefix& out) {
#if defined(__SSE2__)
  if (prefix_from_masks(line_begin, nccl, readable_end, out)) return true;
#else
  (void)readable_end;
#endif
  return parse_prefix_bytewise(line_begin, nccl, out);
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool fixed_digits(const char* p, int n, unsigned& out) {
  unsigned v = 0;
  for (int i = 0; i < n; ++i) {
    if (!is_digit(p[i])) return false;
    v = v * 10 + static_cast<unsigned>(p[i] - '0');
  }
  out = v;
  return true;
}

// Finds a timestamp in launcher text before the NCCL prefix.
bool find_timestamp(const char* begin, const char* end, uint64_t& ns) {
  for (const char* p = begin; p + 19 <= end; ++p) {
    if (!is_digit(*p)) continue;
    size_t consumed = 0;
    if (parse_timestamp({p, static_cast<size_t>(end - p)}, ns, consumed)) return true;
    while (p + 1 < end && is_digit(p[1])) ++p;
  }
  return false;
}

// The collective of an NCCL op name, or unspecified. By length first, then fixed-size compares
// (which compile to a load and a compare): this runs for every line of a big log.
v1::OpKind op_kind_of(const char* name, size_t size) {
  auto is = [name](const char* text, size_t n) { return std::memcmp(name, text, n) == 0; };
  switch (size) {
    case 4:
      if (is("Send", 4)) return v1::OP_KIND_SEND;
      if (is("Recv", 4)) return v1::OP_KIND_RECV;
      break;
    case 6:
      if (is("Reduce", 6)) return v1::OP_KIND_REDUCE;
      if (is("Gather", 6)) return v1::OP_KIND_GATHER;
      break;
    case 7:
      if (is("Scatter", 7)) return v1::OP_KIND_SCATTER;
      break;
    case 8:
      if (is("AlltoAll", 8)) return v1::OP_KIND_ALL_TO_ALL;
      break;
    case 9:
      if (is("AllReduce", 9)) return v1::OP_KIND_ALL_REDUCE;
      if (is("AllGather", 9)) return v1::OP_KIND_ALL_GATHER;
      if (is("Broadcast", 9)) return v1::OP_KIND_BROADCAST;
      break;
    case 13:
      if (is("ReduceScatter", 13)) return v1::OP_KIND_REDUCE_SCATTER;
      break;
    default:
      break;
  }
  return v1::OP_KIND_UNSPECIFIED;
}

// Larger than any job NCCL has run; bounds what a damaged line can make the importer allocate.
constexpr int32_t kMaxRanks = 1 << 18;

enum class CollResult { kOk, kNotColl, kTuning, kTruncated, kBad };

// Fields a collective line may carry that are not NCCL's own (RCCL prints `acc <p>` after
// recvbuff): an identifier key and one value, skipped. At most this many in a row.
constexpr int kMaxUnknownFields = 4;

bool is_key_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

// Skips one `<identifier> <value>` field that is none of NCCL's; false (nothing consumed) if the
// text there is not such a field followed by more text.
bool skip_unknown_field(Cursor& c) {
  Cursor t = c;
  const char* key = t.p;
  while (!t.done() && is_key_char(*t.p)) ++t.p;
  const std::string_view name(key, static_cast<size_t>(t.p - key));
  if (name.empty() || t.done() || *t.p != ' ') return false;
  // A field of NCCL's own out of place is not skipped: the line is wrong.
  for (std::string_view own : {"opCount", "sendbuff", "recvbuff", "count", "datatype", "op",
                               "root", "comm"}) {
    if (name == own) return false;
  }
  skip_spaces(t);
  if (next_token(t).empty()) return false;
  skip_spaces(t);
  if (t.done()) return false;
  c = t;
  return true;
}

// One `<key> <value>` field of a collective line: consumes the key and the spaces after it. A line
// that ends before or inside a key, or right after it, was cut short (and may continue on the next
// line). The usual case, the key then one space, is tested first in one go; fields of other names
// before the key are skipped (see skip_unknown_field).
template <size_t N>
CollResult field(Cursor& c, const char (&key_text)[N], const char** why) {
  constexpr size_t kSize = N - 1;
  skip_spaces(c);
  if (c.left() > kSize && std::memcmp(c.p, key_text, kSize) == 0 && c.p[kSize] == ' ') {
    c.p += kSize + 1;
    skip_spaces(c);
    return c.done() ? CollResult::kTruncated : CollResult::kOk;
  }
  const std::string_view key(key_text, kSize);
  for (int skipped = 0; skipped < kMaxUnknownFields && skip_unknown_field(c); ++skipped) {
  }
  if (c.left() < key.size() && key.substr(0, c.left()) == c.rest()) return CollResult::kTruncated;
  if (!consume(c, key)) {
    *why = "expected a field name";
    return CollResult::kBad;
  }
  if (c.done()) return CollResult::kTruncated;
  if (*c.p != ' ') {
    *why = "expected a field name";
    return CollResult::kBad;
  }
  skip_spaces(c);
  if (c.done()) return CollResult::kTruncated;
  return CollResult::kOk;
}

// Consumes `text` if [q, e) starts with it; a constant `text` compiles to a few compares (of 4
// to 16 bytes, as two overlapping words: the compiler calls memcmp for some of those sizes).
template <size_t N>
bool literal(const char*& q, const char* e, const char (&text)[N]) {
  constexpr size_t kSize = N - 1;
  if (static_cast<size_t>(e - q) < kSize) return false;
  if constexpr (kSize >= 8 && kSize <= 16) {
    uint64_t head, tail, text_head, text_tail;
    std::memcpy(&head, q, 8);
    std::memcpy(&tail, q + kSize - 8, 8);
    std::memcpy(&text_head, text, 8);
    std::memcpy(&text_tail, text + kSize - 8, 8);
    if (((head ^ text_head) | (tail ^ text_tail)) != 0) return false;
  } else if constexpr (kSize >= 4 && kSize < 8) {
    uint32_t head, tail, text_head, text_tail;
    std::memcpy(&head, q, 4);
    std::memcpy(&tail, q + kSize - 4, 4);
    std::memcpy(&text_head, text, 4);
    std::memcpy(&text_tail, text + kSize - 4, 4);
    if (((head ^ text_head) | (tail ^ text_tail)) != 0) return false;
  } else if (std::memcmp(q, text, kSize) != 0) {
    return false;
  }
  q += kSize;
  return true;
}

// The end of the token at `q`: the next space or tab, or `e`. Pointers are most of a COLL line
// and are skipped, not read; 16 bytes at a time where the text allows.
const char* token_end(const char* q, const char* e) {
#if defined(__SSE2__)
  while (e - q >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    const auto blanks = static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(
        _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')))));
    if (blanks != 0) return q + __builtin_ctz(blanks);
    q += 16;
  }
#endif
  while (q < e && *q != ' ' && *q != '\t') ++q;
  return q;
}

// At most `max_digits` decimal digits, at least one, a byte at a time.
bool digits_bytewise(const char*& q, const char* e, int max_digits, uint64_t& out) {
  uint64_t v = 0;
  int n = 0;
  while (q < e && is_digit(*q)) {
    if (++n > max_digits) return false;
    v = v * 10 + static_cast<uint64_t>(*q - '0');
    ++q;
  }
  out = v;
  return n > 0;
}

// digits_bytewise for a field that is mostly one digit (datatype, op, root): that case without
// a loop.
[[gnu::always_inline]] inline bool small_number(const char*& q, const char* e, int max_digits,
                                                uint64_t& out) {
  if (q < e && is_digit(*q) && (q + 1 == e || !is_digit(q[1]))) {
    out = static_cast<uint64_t>(*q - '0');
    ++q;
    return true;
  }
  return digits_bytewise(q, e, max_digits, out);
}

// digits_bytewise for a field of varying length (count): its length from one 16-byte compare
// where the text up to `readable_end` (past `e`, never used) allows. Inlined, as hex_digits below,
// so that each field has its own, predictable, branches.
[[gnu::always_inline]] inline bool digits(const char*& q, const char* e, const char* readable_end,
                                          int max_digits, uint64_t& out) {
#if defined(__SSE2__)
  if (readable_end - q >= 16) {
    const auto n = static_cast<int>(
        std::min<size_t>(leading_run(decimal_mask16(q)), static_cast<size_t>(e - q)));
    if (n < 16) {  // else maybe more than 16: the loop below
      if (n == 0 || n > max_digits) return false;
      const auto u = static_cast<unsigned>(n);
      out = u <= 8 ? decimal_value8(q, u)
                   : decimal_value8(q, u - 8) * 100000000 + decimal_value8(q + u - 8, 8);
      q += n;
      return true;
    }
  }
#else
  (void)readable_end;
#endif
  return digits_bytewise(q, e, max_digits, out);
}

// One to sixteen hex digits; see digits().
[[gnu::always_inline]] inline bool hex_digits(const char*& q, const char* e,
                                              const char* readable_end, uint64_t& out) {
#if defined(__SSE2__)
  if (readable_end - q >= 16) {
    const auto n = static_cast<unsigned>(
        std::min<size_t>(leading_run(hex_mask16(q)), static_cast<size_t>(e - q)));
    if (n < 16) {  // else maybe more than 16: the loop below
      if (n == 0) return false;
      out = n <= 8 ? hex_value8(q, n) : (hex_value8(q, n - 8) << 32) | hex_value8(q + n - 8, 8);
      q += n;
      return true;
    }
  }
#else
  (void)readable_end;
#endif
  uint64_t v = 0;
  int n = 0;
  for (int h; q < e && (h = hex_value(*q)) >= 0; ++q) {
    if (++n > 16) return false;
    v = (v << 4) | static_cast<uint64_t>(h);
  }
  out = v;
  return n > 0;
}

// The fields of a collective line as NCCL prints them, one space apart, in one pass: most lines
// of a big log. Anything else (other spacing, a cut line, a bad value) returns false, and
// parse_coll's field-by-field reading, which gives the same record where both succeed, decides
// and says what is wrong. [q, e) is the text after the op name's colon; up to `readable_end` it
// may be read past `e`.
bool parse_coll_fields_fast(const char* q, const char* e, const char* readable_end,
                            CollRecord& rec) {
  auto pointer_token = [&q, e](bool& null) {
    const char* s = q;
    q = token_end(q, e);
    const std::string_view token(s, static_cast<size_t>(q - s));
    null =
        token.size() <= 5 && (token == "(nil)" || token == "nil" || token == "0" || token == "0x0");
    return !token.empty();
  };
  const char* const r = readable_end;
  uint64_t v = 0;
  bool null = false;
  if (!literal(q, e, " opCount ") || !hex_digits(q, e, r, rec.op_count)) return false;
  if (!literal(q, e, " sendbuff ") || !pointer_token(null)) return false;
  rec.send_buffer_null = null;
  if (!literal(q, e, " recvbuff ") || !pointer_token(null)) return false;
  if (!literal(q, e, " count ") || !digits(q, e, r, 19, rec.count)) return false;
  if (!literal(q, e, " datatype ") || !small_number(q, e, 2, v) || v > 11) return false;
  rec.datatype = static_cast<v1::DataType>(v + 1);
  if (!literal(q, e, " op ") || !small_number(q, e, 9, v)) return false;
  rec.red_op = static_cast<int32_t>(v);
  if (!literal(q, e, " root ")) return false;
  const bool negative = literal(q, e, "-");
  if (!small_number(q, e, 9, v)) return false;
  rec.root = negative ? -static_cast<int32_t>(v) : static_cast<int32_t>(v);
  if (!literal(q, e, " comm 0x") || !hex_digits(q, e, r, rec.comm) || rec.comm == 0) return false;
  if (q < e && *q != ' ' && *q != '\t') return false;
  while (q < e && (*q == ' ' || *q == '\t')) ++q;
  rec.nranks = -1;
  if (literal(q, e, "[nranks=")) {
    if (!digits(q, e, r, 9, v) || v == 0 || !literal(q, e, "]")) return false;
    rec.nranks = static_cast<int32_t>(v);
  }
  return true;
}

CollResult parse_coll_fields(Cursor c, CollRecord& rec, const char** why);

// NCCL_DEBUG_SUBSYS=TUNING's choice of algorithm for a collective, `<Op>: <n> Bytes -> Algo <a>
// proto <p> ...`, shares a collective line's start but is none. [c.p, c.end) follows the colon.
bool is_tuning_line(Cursor c) {
  skip_spaces(c);
  if (c.done() || !is_digit(*c.p)) return false;
  while (!c.done() && is_digit(*c.p)) ++c.p;
  return consume(c, " Bytes ");
}

// NCCL's names of its algorithms and protocols, by the numbers TUNING lines printed before 2.24
// (NCCL_ALGO_* and NCCL_PROTO_* in nccl_tuner.h; the same numbers since 2.5).
constexpr std::array<std::string_view, 7> kAlgoNames = {
    "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
constexpr std::array<std::string_view, 3> kProtoNames = {"LL", "LL128", "SIMPLE"};

// An algorithm or protocol as printed: a name, or a number of `names` (one beyond them, from a
// newer NCCL, is kept as printed). Empty if neither.
template <size_t N>
std::string_view tuning_name(std::string_view token, const std::array<std::string_view, N>& names) {
  if (token.empty() || token.size() > 24) return {};
  if (is_digit(token[0])) {
    Cursor t{token.data(), token.data() + token.size()};
    uint64_t i = 0;
    if (!parse_u64(t, i) || !t.done()) return {};
    return i < N ? names[i] : token;
  }
  for (char ch : token) {
    if (!is_key_char(ch) && !is_digit(ch)) return {};
  }
  return token;
}

// The rest of a TUNING line after the op name's colon: `<n> Bytes -> Algo <a> proto <p> ...`.
bool parse_tuning(Cursor c, std::string_view& algo, std::string_view& proto, uint64_t& bytes) {
  skip_spaces(c);
  if (!parse_u64(c, bytes) || next_token(c) != "Bytes" || next_token(c) != "->" ||
      next_token(c) != "Algo") {
    return false;
  }
  algo = tuning_name(next_token(c), kAlgoNames);
  if (algo.empty() || next_token(c) != "proto") return false;
  proto = tuning_name(next_token(c), kProtoNames);
  return !proto.empty();
}

// `<Op>: opCount <hex> sendbuff <p> recvbuff <p> count <n> datatype <d> op <o> root <r> comm <p>
// [nranks=<n>] stream <p>`. Anything after the comm (and nranks) is ignored: nccl-tests rows are
// sometimes glued there.
CollResult parse_coll(Cursor c, const char* readable_end, CollRecord& rec, const char** why) {
  // The op name: letters, then a colon within 16 bytes (one compare of 16 bytes where readable;
  // a memchr call costs more here).
  const char* const name_limit = c.p + std::min<size_t>(c.left(), 16);
  const char* colon = name_limit;
#if defined(__SSE2__)
  if (readable_end - c.p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(c.p));
    const auto colons =
        static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(':'))));
    if (colons != 0) colon = std::min(name_limit, c.p + __builtin_ctz(colons));
  } else
#endif
  {
    colon = c.p;
    while (colon < name_limit && *colon != ':') ++colon;
  }
  if (colon == name_limit) return CollResult::kNotColl;
  rec.kind = op_kind_of(c.p, static_cast<size_t>(colon - c.p));
  if (rec.kind == v1::OP_KIND_UNSPECIFIED) return CollResult::kNotColl;
  if (parse_coll_fields_fast(colon + 1, c.end, readable_end, rec)) return CollResult::kOk;
  c.p = colon + 1;
  return parse_coll_fields(c, rec, why);
}

// The fields of a collective line one by one, for the lines parse_coll_fields_fast leaves: kept
// out of parse_coll, whose usual path then needs fewer registers and less stack.
[[gnu::noinline]] CollResult parse_coll_fields(Cursor c, CollRecord& rec, const char** why) {
  CollResult r;
  if (is_tuning_line(c)) return CollResult::kTuning;
  if ((r = field(c, "opCount", why)) != CollResult::kOk) return r;
  if (!parse_hex(c, rec.op_count)) return *why = "bad opCount", CollResult::kBad;
  // Buffer addresses mean nothing off their machine; only (nil) tells the Send conventions apart.
  bool null = false;
  if ((r = field(c, "sendbuff", why)) != CollResult::kOk) return r;
  if (!skip_pointer(c, null)) return *why = "bad sendbuff", CollResult::kBad;
  rec.send_buffer_null = null;
  if ((r = field(c, "recvbuff", why)) != CollResult::kOk) return r;
  if (!skip_pointer(c, null)) return *why = "bad recvbuff", CollResult::kBad;
  if ((r = field(c, "count", why)) != CollResult::kOk) return r;
  if (!parse_u64(c, rec.count)) return *why = "bad count", CollResult::kBad;
  int32_t datatype = 0;
  if ((r = field(c, "datatype", why)) != CollResult::kOk) return r;
  if (!parse_i32(c, datatype)) return *why = "bad datatype", CollResult::kBad;
  if (datatype < 0 || datatype > 11) return *why = "unknown datatype id", CollResult::kBad;
  rec.datatype = static_cast<v1::DataType>(datatype + 1);
  if ((r = field(c, "op", why)) != CollResult::kOk) return r;
  if (!parse_i32(c, rec.red_op) || rec.red_op < 0) return *why = "bad op", CollResult::kBad;
  if ((r = field(c, "root", why)) != CollResult::kOk) return r;
  if (!parse_i32(c, rec.root)) return *why = "bad root", CollResult::kBad;
  if ((r = field(c, "comm", why)) != CollResult::kOk) return r;
  if (!parse_pointer(c, rec.comm)) return *why = "bad comm", CollResult::kBad;
  if (!c.done() && *c.p != ' ' && *c.p != '\t') return *why = "bad comm", CollResult::kBad;
  if (rec.comm == 0) return *why = "null comm", CollResult::kBad;
  skip_spaces(c);
  rec.nranks = -1;
  if (consume(c, "[nranks=")) {
    if (!parse_i32(c, rec.nranks) || !consume(c, "]") || rec.nranks <= 0) {
      return *why = "bad nranks", CollResult::kBad;
    }
  }
  return CollResult::kOk;
}

// Init lines of every version; see nccl_log_parser.h. Returns false when the message is not an
// init line; sets `why` when it looks like one but does not parse.
bool parse_init(Cursor c, InitRecord& rec, const char** why) {
  skip_spaces(c);
  if (c.left() > 4 && c.p[0] == 'n' && c.p[1] == 'c' && c.p[2] == 'c' && c.p[3] == 'l') {
    const std::string_view api = next_token(c);
    rec.split = api == "ncclCommSplit";
  }
  if (!consume_word(c, "comm")) return false;
  skip_spaces(c);
  if (!parse_pointer(c, rec.comm)) return false;
  if (!consume_word(c, "rank")) return false;
  skip_spaces(c);
  if (!parse_i32(c, rec.rank)) return *why = "bad rank", true;
  bool complete = false;
  bool started = false;
  bool info = false;
  bool other = false;
  while (true) {
    const std::string_view key = next_token(c);
    if (key.empty()) break;
    if (key == "-") {
      const std::string_view what = next_token(c);
      const std::string_view stage = next_token(c);
      if (what == "Init" && stage == "COMPLETE") {
        complete = true;
      } else if (what == "Init" && stage == "START") {
        started = true;
      } else {
        other = true;
      }
      break;
    }
    skip_spaces(c);
    if (key == "nranks" || key == "nRanks") {
      if (!parse_i32(c, rec.nranks) || rec.nranks <= 0) return *why = "bad nranks", true;
      if (key == "nRanks") info = true;
    } else if (key == "cudaDev") {
      if (!parse_i32(c, rec.cuda_dev)) return *why = "bad cudaDev", true;
    } else if (key == "commId") {
      rec.comm_id = std::string(next_token(c));
    } else if (key == "parent") {
      if (!parse_pointer(c, rec.parent)) return *why = "bad parent", true;
      rec.split = true;
    } else if (key == "color") {
      if (!parse_i64(c, rec.color)) return *why = "bad color", true;
    } else if (key == "key") {
      if (!parse_i64(c, rec.key)) return *why = "bad key", true;
    } else {
      next_token(c);  // nvmlDev, busId, nNodes, localRanks, localRank, MNNVL, ...: not needed
    }
  }
  if (other) return false;  // Destroy COMPLETE, Abort COMPLETE, ...
  if (!complete && !started && !info) return false;
  if (rec.nranks <= 0) return *why = "init line without nranks", true;
  if (rec.nranks > kMaxRanks) return *why = "nranks beyond any real job", true;
  if (rec.rank < 0 || rec.rank >= rec.nranks) return *why = "rank out of range", true;
  rec.stage = complete ? InitStage::kComplete : InitStage::kInfo;
  return true;
}

// `Channel 00/02 :    0   1   2   3` (the transport lines `Channel 00/0 : 0[0] -> 1[1] ...` are
// not rings and are ignored).
bool parse_channel_ring(Cursor c, GraphRecord& rec) {
  uint64_t channel = 0;
  if (!parse_u64(c, channel) || channel > UINT32_MAX) return false;
  rec.channel = static_cast<uint32_t>(channel);
  // `/02` (the channel count) is missing in old versions: `Channel 00 :    0   1`.
  std::string_view token = next_token(c);
  if (!token.empty() && token[0] == '/') token = next_token(c);
  if (token != ":") return false;
  while (true) {
    const std::string_view token = next_token(c);
    if (token.empty()) break;
    if (token.find("...") != std::string_view::npos) {
      rec.truncated = true;
      break;  // a number glued to the dots may itself be cut short
    }
    Cursor t{token.data(), token.data() + token.size()};
    int32_t rank = 0;
    if (!parse_i32(t, rank) || !t.done() || rank < 0) return false;
    rec.values.push_back(rank);
  }
  return !rec.values.empty();
}

// `Ring 00 : 3 -> 0 -> 1`
bool parse_ring_neighbours(Cursor c, GraphRecord& rec) {
  uint64_t channel = 0;
  skip_spaces(c);
  if (!parse_u64(c, channel) || channel > UINT32_MAX) return false;
  rec.channel = static_cast<uint32_t>(channel);
  if (next_token(c) != ":") return false;
  for (int i = 0; i < 3; ++i) {
    if (i > 0 && next_token(c) != "->") return false;
    skip_spaces(c);
    int32_t v = 0;
    if (!parse_i32(c, v)) return false;
    rec.values.push_back(v);
  }
  return true;
}

// `Trees [0] 1/-1/-1->0->-1 [1] -1/-1/-1->0->1`: one record per channel.
bool parse_trees(Cursor c, uint64_t seq, uint64_t line, uint32_t process, int32_t dev,
                 std::vector<GraphRecord>& out) {
  bool any = false;
  while (true) {
    skip_spaces(c);
    if (c.done()) break;
    if (!consume(c, "[")) return any;
    uint64_t channel = 0;
    if (!parse_u64(c, channel) || channel > UINT32_MAX || !consume(c, "]")) return false;
    skip_spaces(c);
    std::array<int32_t, 3> down{};
    int32_t me = 0;
    int32_t up = 0;
    for (int i = 0; i < 3; ++i) {
      if (i > 0 && !consume(c, "/")) return false;
      if (!parse_i32(c, down[static_cast<size_t>(i)])) return false;
    }
    if (!consume(c, "->") || !parse_i32(c, me) || !consume(c, "->") || !parse_i32(c, up)) {
      return false;
    }
    GraphRecord rec;
    rec.seq = seq;
    rec.line = line;
    rec.process = process;
    rec.prefix_dev = dev;
    rec.kind = GraphKind::kTree;
    rec.channel = static_cast<uint32_t>(channel);
    rec.values = {me, up, down[0], down[1], down[2]};
    out.push_back(std::move(rec));
    any = true;
  }
  return any;
}

// `NET/IB : Using [0]mlx5_0:1/RoCE [1]mlx5_1:1/RoCE [RO]; OOB eth0:10.0.0.1<0>`
bool parse_nics(Cursor c, bool socket, GraphRecord& rec) {
  if (next_token(c) != ":" || next_token(c) != "Using") return false;
  while (true) {
    std::string_view token = next_token(c);
    if (token.empty()) break;
    const size_t semicolon = token.find(';');
    const bool last = semicolon != std::string_view::npos;
    if (last) token = token.substr(0, semicolon);
    if (token.size() > 3 && token[0] == '[' && is_digit(token[1])) {
      const size_t close = token.find(']');
      if (close != std::string_view::npos && close + 1 < token.size()) {
        std::string_view name = token.substr(close + 1);
        name = name.substr(0, name.find(socket ? ':' : '/'));
        if (!name.empty()) rec.nics.emplace_back(name);
      }
    }
    if (last) break;
  }
  return !rec.nics.empty();
}

// Whether the text before a line's prefix holds another `host:pid:tid [dev]`: two processes wrote
// into one line, and the first one's message is lost. (Launcher text and times hold none.)
bool holds_prefix(const char* b, const char* e) {
  auto digits = [e](const char*& q) {
    const char* s = q;
    while (q < e && is_digit(*q)) ++q;
    return q > s;
  };
  for (const char* p = b; p < e; ++p) {
    if (*p != ':') continue;
    const char* q = p + 1;
    if (digits(q) && q < e && *q == ':' && digits(++q) && e - q >= 2 && q[0] == ' ' &&
        q[1] == '[' && digits(q += 2) && q < e && *q == ']') {
      return true;
    }
  }
  return false;
}

// Whether [p, e) starts with a collective's name and its colon (`AllReduce:`), and is not a
// TUNING line (a number of bytes after the colon), which even a parser that skips collectives reads.
bool names_collective(const char* p, const char* e) {
  const char* colon = p;
  const char* const name_limit = p + std::min<size_t>(static_cast<size_t>(e - p), 16);
  while (colon < name_limit && *colon != ':') ++colon;
  if (colon == name_limit ||
      op_kind_of(p, static_cast<size_t>(colon - p)) == v1::OP_KIND_UNSPECIFIED) {
    return false;
  }
  const char* q = colon + 1;
  while (q < e && *q == ' ') ++q;
  return q == e || !is_digit(*q);
}

// What a line of a kind the parser does not read is counted as: the message's first word
// (`Bootstrap`, `cudaDriverVersion`, `NET/Plugin`), a leading number as `N` with the word after it
// (`N coll`), at most 32 bytes of it.
std::string unread_kind_of(Cursor c) {
  skip_spaces(c);
  std::string_view first = next_token(c);
  std::string kind = "NCCL INFO ";
  if (!first.empty() && is_digit(first[0])) {
    kind += "N ";
    first = next_token(c);
  }
  kind += first.substr(0, 32);
  return kind;
}

class PieceParser {
 public:
  PieceParser(ParsedLog& out, bool skip_collectives = false)
      : out_(out), processes_(out.processes), skip_collectives_(skip_collectives) {}

  // Parses the physical line [b, e) (no newline); `next` is the following line (nullptr at the
  // text's end), which runs at most to `text_end`, for joining a collective that was cut. Returns
  // true if the next line was consumed; it then ended at next_end(). `only_info`, when given, is
  // where the caller found "NCCL INFO", whose Ns are the line's only capital Ns: the line is then
  // not searched for messages. A parser that skips collectives returns at once on those.
  bool parse_line(const char* b, const char* e, const char* next, const char* text_end,
                  uint64_t line, const char* only_info = nullptr) {
    while (e > b && (e[-1] == '\r' || e[-1] == ' ')) --e;
    if (only_info != nullptr && only_info + 9 <= e && !skip_collectives_ &&
        parse_plain_collective(b, e, only_info, text_end, line)) {
      return false;
    }
    // Every "NCCL INFO" / "NCCL WARN" starts a message; the prefix before it ends the one before.
    std::array<const char*, 8> hits;
    size_t n = 0;
    const char* version = nullptr;
    if (only_info != nullptr && only_info + 9 <= e) {
      hits[n++] = only_info;  // no other N, so no other "NCCL "
      if (skip_collectives_) {
        const char* msg = only_info + 9;
        while (msg < e && (*msg == ' ' || *msg == '\t')) ++msg;
        if (names_collective(msg, e)) return false;
      }
    } else {
      only_info = nullptr;
    }
    for (const char* p = only_info != nullptr ? nullptr : find_nccl(b, e); p != nullptr;
         p = find_nccl(p + 5, e)) {
      const size_t rest = static_cast<size_t>(e - p);
      if (rest >= 9 && (std::memcmp(p + 5, "INFO", 4) == 0 || std::memcmp(p + 5, "WARN", 4) == 0)) {
        if (n < hits.size()) hits[n++] = p;
      } else if (rest > 13 && std::memcmp(p + 5, "version ", 8) == 0 && version == nullptr) {
        version = p + 13;
      }
    }
    if (n == 0) {
      if (version != nullptr) {
        ++out_.nccl_lines;
        add_version(version, e, line);
      } else if (b < e) {
        const bool kernel_trace = e - b >= 2 && b[0] == '#' && b[1] == '#';
        size_t& known = kernel_trace ? kernel_trace_kind_ : plain_kind_;
        if (known < out_.unread.size()) {
          ++out_.unread[known].lines;
        } else {
          known = unread(kernel_trace ? "`##` lines (RCCL kernel trace)"
                                      : "lines without an NCCL message",
                         b, e, line);
        }
      }
      return false;
    }
    ++out_.nccl_lines;
    std::array<Prefix, 8> prefixes;
    std::array<bool, 8> has_prefix;
    for (size_t i = 0; i < n; ++i) {
      has_prefix[i] =
          parse_prefix_backward(i == 0 ? b : hits[i - 1] + 9, hits[i], text_end, prefixes[i]);
    }
    bool consumed_next = false;
    for (size_t i = 0; i < n; ++i) {
      const char* msg = hits[i] + 9;
      const char* msg_end = e;
      if (i + 1 < n) msg_end = has_prefix[i + 1] ? prefixes[i + 1].start : hits[i + 1];
      if (std::memcmp(hits[i] + 5, "WARN", 4) == 0) {
        unread("NCCL WARN", b, e, line);
        continue;
      }
      if (!has_prefix[i]) {
        problem(line, "NCCL INFO line without a `host:pid:tid [dev]` prefix");
        continue;
      }
      if (i == 0 && prefixes[0].start > b && holds_prefix(b, prefixes[0].start)) {
        problem(line, "two writers on one line: a `host:pid:tid [dev]` prefix without its "
                      "message before this one's");
      }
      uint64_t time_ns = 0;
      const bool has_time =
          i == 0 && prefixes[0].start > b && find_timestamp(b, prefixes[0].start, time_ns);
      const bool last = i + 1 == n;
      if (parse_message(msg, msg_end, prefixes[i], has_time, time_ns, line, last ? next : nullptr,
                        text_end)) {
        consumed_next = true;
      }
    }
    return consumed_next;
  }

  // Whether the line [b, e) ends in a cut collective that the line at `next` completes.
  static bool joins_next(const char* b, const char* e, const char* next, const char* text_end) {
    ParsedLog scratch;
    PieceParser parser(scratch);
    return parser.parse_line(b, e, next, text_end, 1);
  }

  // Where the line that the last parse_line joined to its own ended.
  const char* next_end() const { return next_end_; }

 private:
  // Most lines of a big log: one collective, printed the usual way, its "NCCL INFO" at `nccl`.
  // Records it and returns true, with fewer steps than parse_line and parse_message take for any
  // line; returns false, having recorded nothing, to leave the line to them.
  bool parse_plain_collective(const char* b, const char* e, const char* nccl, const char* text_end,
                              uint64_t line) {
#if defined(__SSE2__)
    PrefixCache::Key key;
    const bool cacheable = prefixes_.key_of(b, nccl, key);
    uint32_t known_process = 0;
    const bool known = cacheable && prefixes_.find(key, known_process);
    Prefix prefix{};
    if (!known && !prefix_from_masks(b, nccl, text_end, prefix)) return false;
    // Lines of two writers are left to parse_line, which says so (and are never kept below).
    if (!known && prefix.start > b && holds_prefix(b, prefix.start)) return false;
    const char* msg = nccl + 9;
    while (e > msg && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) --e;
    // One space, then a collective's initial (not `[Rank r]`, which parse_message reads).
    if (e - msg < 2 || msg[0] != ' ') return false;
    const char first = msg[1];
    if (first != 'A' && first != 'R' && first != 'B' && first != 'S' && first != 'G') return false;
    ProcessTable::Lookup process;
    if (!known) process = processes_.prepare(prefix.host(), prefix.pid);
    CollRecord& rec = out_.colls.emplace_back();
    const char* why = nullptr;
    if (parse_coll(Cursor{msg + 1, e}, text_end, rec, &why) != CollResult::kOk) {
      out_.colls.pop_back();
      return false;
    }
    ++out_.nccl_lines;
    if (known) {  // a prefix kept below: no time in it
      stamp_coll(rec, known_process, false, 0, line);
      return true;
    }
    uint64_t time_ns = 0;
    const bool has_time = prefix.start > b && find_timestamp(b, prefix.start, time_ns);
    const uint32_t index = processes_.intern(process);
    note_device(index, prefix.device);
    // A prefix with a time in it is never seen again.
    if (cacheable && !has_time) prefixes_.keep(key, index);
    stamp_coll(rec, index, has_time, time_ns, line);
    return true;
#else
    (void)b, (void)e, (void)nccl, (void)text_end, (void)line;
    return false;
#endif
  }

  void problem(uint64_t line, std::string what) {
    out_.problems.push_back({seq_++, line, std::move(what)});
  }

  // A process's device, for logs whose ranks must be inferred (ordered by host and device).
  void note_device(uint32_t process, int32_t device) {
    int32_t& known = out_.processes[process].device;
    if (known < 0) known = device;
  }

  void add_version(const char* p, const char* e, uint64_t line) {
    Cursor c{p, e};
    const std::string_view token = next_token(c);
    if (token.empty()) {
      problem(line, "NCCL version line without a version");
      return;
    }
    out_.versions.push_back({seq_++, line, std::string(token)});
  }

  // Returns true if it consumed the next line.
  bool parse_message(const char* p, const char* e, const Prefix& prefix, bool has_time,
                     uint64_t time_ns, uint64_t line, const char* next, const char* text_end) {
    while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) --e;
    Cursor c{p, e};
    skip_spaces(c);
    if (consume(c, "[Rank ")) {  // 2.29+
      int32_t ignored = 0;
      if (!parse_i32(c, ignored) || !consume(c, "]")) {
        problem(line, "bad `[Rank r]` prefix");
        return false;
      }
      skip_spaces(c);
    }
    if (c.done()) return false;
    const uint32_t process = processes_.intern(prefix.host(), prefix.pid);
    note_device(process, prefix.device);
    const char first = *c.p;
    const char* why = nullptr;
    if (first == 'A' || first == 'R' || first == 'B' || first == 'S' || first == 'G') {
      if (skip_collectives_ && names_collective(c.p, c.end)) return false;
      // Parsed in place at the end of the list, and taken back if it is not a collective: a
      // record built aside and then copied there is read back right after its fields were
      // written, a store-to-load stall on every line.
      CollRecord& rec = out_.colls.emplace_back();
      const CollResult r = parse_coll(c, text_end, rec, &why);
      if (r == CollResult::kOk) {
        stamp_coll(rec, process, has_time, time_ns, line);
        return false;
      }
      out_.colls.pop_back();
      if (r == CollResult::kTruncated) {
        // A line cut in two: join it with the next one when that holds no NCCL message (an
        // empty line continues nothing).
        const char* next_end = nullptr;
        if (next != nullptr) {
          const void* nl = std::memchr(next, '\n', static_cast<size_t>(text_end - next));
          next_end = nl == nullptr ? text_end : static_cast<const char*>(nl);
        }
        if (next != nullptr && next != next_end && find_nccl(next, next_end) == nullptr) {
          next_end_ = next_end;
          joined_.assign(c.p, c.left());
          joined_.push_back(' ');
          const char* ne = next_end;
          while (ne > next && (ne[-1] == '\r' || ne[-1] == ' ')) --ne;
          joined_.append(next, static_cast<size_t>(ne - next));
          Cursor j{joined_.data(), joined_.data() + joined_.size()};
          CollRecord& rec2 = out_.colls.emplace_back();
          if (parse_coll(j, j.end, rec2, &why) == CollResult::kOk) {
            stamp_coll(rec2, process, has_time, time_ns, line);
            return true;
          }
          out_.colls.pop_back();
        }
        problem(line, "collective line cut short");
        return false;
      }
      if (r == CollResult::kBad) {
        problem(line, std::string("collective line: ") + why);
        return false;
      }
      if (r == CollResult::kTuning) {
        add_tuning(c, line);
        return false;
      }
    }
    if (first == 'c' || first == 'n') {
      InitRecord rec;
      if (parse_init(c, rec, &why)) {
        if (why != nullptr) {
          problem(line, std::string("init line: ") + why);
          return false;
        }
        rec.seq = seq_++;
        rec.line = line;
        rec.process = process;
        rec.prefix_dev = prefix.device;
        if (rec.cuda_dev < 0) rec.cuda_dev = prefix.device;
        out_.inits.push_back(std::move(rec));
        return false;
      }
      if (why != nullptr) {
        problem(line, std::string("init line: ") + why);
        return false;
      }
    }
    GraphRecord rec;
    rec.line = line;
    rec.process = process;
    rec.prefix_dev = prefix.device;
    const Cursor message = c;
    bool read = true;
    if (consume(c, "Channel ")) {
      rec.kind = GraphKind::kRingOrder;
      // Transport lines (`0[0] -> 1[1]`) share the keyword; only pure number lists are rings.
      if (find(c.p, c.end, "[") == nullptr && find(c.p, c.end, "->") == nullptr &&
          find(c.p, c.end, "via") == nullptr) {
        if (parse_channel_ring(c, rec)) {
          rec.seq = seq_++;
          out_.graphs.push_back(std::move(rec));
        } else {
          problem(line, "bad ring order line");
        }
      } else {
        read = false;
      }
    } else if (consume(c, "Ring ")) {
      rec.kind = GraphKind::kRingNeighbours;
      if (parse_ring_neighbours(c, rec)) {
        rec.seq = seq_++;
        out_.graphs.push_back(std::move(rec));
      } else {
        problem(line, "bad ring line");
      }
    } else if (consume(c, "Trees ")) {
      if (!parse_trees(c, seq_++, line, process, prefix.device, out_.graphs)) {
        problem(line, "bad trees line");
      }
    } else if (consume(c, "NET/IB ") || consume(c, "NET/Socket ")) {
      const bool socket = c.p[-2] == 't';
      rec.kind = GraphKind::kNics;
      if (parse_nics(c, socket, rec)) {
        rec.seq = seq_++;
        out_.graphs.push_back(std::move(rec));
      } else {
        read = false;
      }
    } else if (consume(c, "NCCL version ")) {
      add_version(c.p, c.end, line);
    } else {
      read = false;
    }
    if (!read) unread(unread_kind_of(message), message.p, message.end, line);
    return false;
  }

  // Counts a line of a kind not read under `kind`, or under "other kinds" once there are
  // kMaxUnreadKinds; [b, e) is the line or message, whose start is kept as an example. Returns
  // the kind's index in out_.unread.
  size_t unread(std::string_view kind, const char* b, const char* e, uint64_t line) {
    constexpr std::string_view kOther = "other kinds";
    std::vector<UnreadKind>& kinds = out_.unread;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < kinds.size(); ++i) {
        if (kinds[i].kind == kind) {
          ++kinds[i].lines;
          return i;
        }
      }
      if (kinds.size() + 1 < kMaxUnreadKinds || kind == kOther) break;
      kind = kOther;
    }
    constexpr size_t kExampleBytes = 100;
    kinds.push_back({std::string(kind), 1, line,
                     std::string(b, std::min<size_t>(static_cast<size_t>(e - b), kExampleBytes))});
    return kinds.size() - 1;
  }

  // A TUNING line; `c` is at its op name.
  void add_tuning(Cursor c, uint64_t line) {
    const char* colon = c.p;
    while (colon < c.end && *colon != ':') ++colon;
    const v1::OpKind kind = op_kind_of(c.p, static_cast<size_t>(colon - c.p));
    std::string_view algo, proto;
    uint64_t bytes = 0;
    if (colon == c.end || !parse_tuning(Cursor{colon + 1, c.end}, algo, proto, bytes)) {
      // Another version's wording: the choice is a hint, so the line is counted, not a problem.
      unread("NCCL INFO TUNING lines of another shape", c.p, c.end, line);
      return;
    }
    TuningRecord* rec = nullptr;
    for (TuningRecord& t : out_.tunings) {
      if (t.kind == kind && t.algo == algo && t.proto == proto) rec = &t;
    }
    if (rec == nullptr) {
      rec = &out_.tunings.emplace_back();
      rec->kind = kind;
      rec->algo = algo;
      rec->proto = proto;
    }
    rec->min_bytes = std::min(rec->min_bytes, bytes);
    rec->max_bytes = std::max(rec->max_bytes, bytes);
    ++rec->lines;
  }

  // Fills in what the line's prefix says of a collective parsed into out_.colls.
  void stamp_coll(CollRecord& rec, uint32_t process, bool has_time, uint64_t time_ns,
                  uint64_t line) {
    rec.seq = seq_++;
    rec.line = line;
    rec.process = process;
    rec.has_time = has_time;
    rec.time_ns = time_ns;
  }

  ParsedLog& out_;
  ProcessTable processes_;
  PrefixCache prefixes_;  // the process of prefixes seen before, by their bytes
  const bool skip_collectives_;
  const char* next_end_ = nullptr;
  // Where out_.unread counts lines without an NCCL message and `##` lines, once it does.
  size_t plain_kind_ = SIZE_MAX;
  size_t kernel_trace_kind_ = SIZE_MAX;
  uint64_t seq_ = 0;
  std::string joined_;
};

}  // namespace

bool parse_timestamp(std::string_view text, uint64_t& ns, size_t& consumed) {
  const char* p = text.data();
  const char* e = p + text.size();
  const char* start = p;
  if (p < e && *p == '[') ++p;
  if (e - p < 19) return false;
  unsigned year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!fixed_digits(p, 4, year) || p[4] != '-' || !fixed_digits(p + 5, 2, month) || p[7] != '-' ||
      !fixed_digits(p + 8, 2, day) || (p[10] != ' ' && p[10] != 'T') ||
      !fixed_digits(p + 11, 2, hour) || p[13] != ':' || !fixed_digits(p + 14, 2, minute) ||
      p[16] != ':' || !fixed_digits(p + 17, 2, second)) {
    return false;
  }
  if (year < 1970 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60) {
    return false;
  }
  p += 19;
  uint64_t fraction_ns = 0;
  if (p < e && (*p == '.' || *p == ',')) {
    ++p;
    uint64_t scale = 100000000;
    int digits = 0;
    while (p < e && is_digit(*p)) {
      if (digits++ < 9) {
        fraction_ns += static_cast<uint64_t>(*p - '0') * scale;
        scale /= 10;
      }
      ++p;
    }
    if (digits == 0) return false;
  }
  if (p < e && *p == 'Z') ++p;
  if (*start == '[' && p < e && *p == ']') ++p;
  const int64_t days = days_from_civil(year, month, day);
  const int64_t seconds = days * 86400 + hour * 3600 + minute * 60 + second;
  ns = static_cast<uint64_t>(seconds) * 1000000000ull + fraction_ns;
  consumed = static_cast<size_t>(p - start);
  return true;
}

namespace {

// Without the collectives, lines need not be counted nor even found one by one: the text is
// searched from one NCCL message to the next, and only the lines of messages that are not
// collectives are parsed. Records get no line numbers (line 0).
void parse_setup_lines(const char* text_end, const char* begin, const char* end, ParsedLog& out) {
  PieceParser parser(out, true);
  const char* p = begin;
  while (p < end) {
    const char* n = find_nccl(p, end);
    if (n == nullptr) break;
    if (static_cast<size_t>(end - n) > 10 && std::memcmp(n, "NCCL INFO ", 10) == 0) {
      const char* msg = n + 10;
      while (msg < end && (*msg == ' ' || *msg == '\t')) ++msg;
      if (names_collective(msg, end)) {
        p = msg;
        continue;
      }
    }
    // The whole line around the message, as parse_log_piece would give it.
    const char* b = n;
    while (b > begin && b[-1] != '\n') --b;
    const void* nl = std::memchr(n, '\n', static_cast<size_t>(text_end - n));
    const char* e = nl == nullptr ? text_end : static_cast<const char*>(nl);
    const char* next = e < text_end ? e + 1 : nullptr;
    if (parser.parse_line(b, e, next, text_end, 0)) {
      const char* next_end = parser.next_end();
      p = next_end < text_end ? next_end + 1 : text_end;
      continue;
    }
    p = e < text_end ? e + 1 : text_end;
  }
}

}  // namespace

void parse_log_piece(const char* text_begin, const char* text_end, const char* begin,
                     const char* end, ParsedLog& out, bool skip_collectives) {
  if (skip_collectives) {
    parse_setup_lines(text_end, begin, end, out);
    return;
  }
  PieceParser parser(out);
  // Most lines of a big log are collectives of 150-250 bytes.
  out.colls.reserve(out.colls.size() + static_cast<size_t>(end - begin) / 160);
  // Lines may run past the piece (a collective cut at the piece's end continues in the next one),
  // so line ends are searched up to the end of the whole text.
  const char* p = begin;
  uint64_t line = 0;
  // The previous piece joins our first line to its last one when that was cut short.
  if (begin > text_begin && begin < end) {
    const char* prev_end = begin - 1;  // its newline
    const char* prev = prev_end;
    while (prev > text_begin && prev[-1] != '\n') --prev;
    if (PieceParser::joins_next(prev, prev_end, begin, text_end)) {
      const void* nl = std::memchr(begin, '\n', static_cast<size_t>(text_end - begin));
      const char* first_end = nl == nullptr ? text_end : static_cast<const char*>(nl);
      ++line;
      p = first_end < text_end ? first_end + 1 : text_end;
    }
  }
  LineFinder lines(text_end);
  while (p < end) {
    // One pass finds the line's end and its capital Ns: a line whose only Ns are those of one
    // "NCCL INFO" (most lines of a big log) holds one message, there.
    const LineScan scan = lines.next(p);
    const char* e = scan.end;
    ++line;
    const char* next = e < text_end ? e + 1 : nullptr;
    const char* only_info = scan.capitals == 2 &&
                                    static_cast<size_t>(e - scan.first_capital) >= 9 &&
                                    std::memcmp(scan.first_capital, "NCCL INFO", 9) == 0
                                ? scan.first_capital
                                : nullptr;
    if (parser.parse_line(p, e, next, text_end, line, only_info)) {
      // A continuation in the next piece is counted (and skipped) by that piece.
      if (next < end) ++line;
      const char* next_end = parser.next_end();
      p = next_end < text_end ? next_end + 1 : text_end;
      continue;
    }
    p = e < text_end ? e + 1 : text_end;
  }
  out.lines = line;
}

ParsedLog parse_log_text(std::string_view text) {
  ParsedLog out;
  const char* b = text.data();
  parse_log_piece(b, b + text.size(), b, b + text.size(), out);
  return out;
}

}  // namespace collide::traces::nccl
