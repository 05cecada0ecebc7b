#include "traces/nccl/op_wire.h"

#include <bit>
#include <charconv>

namespace collide::traces::nccl {
namespace {

// Wire types of the protobuf encoding.
constexpr uint8_t kVarint = 0;
constexpr uint8_t kLengthDelimited = 2;

constexpr uint8_t tag(uint32_t field, uint8_t wire_type) {
  return static_cast<uint8_t>((field << 3) | wire_type);
}

size_t varint_size(uint64_t v) {
  return (static_cast<size_t>(std::bit_width(v | 1)) + 6) / 7;
}

char* put_varint(char* out, uint64_t v) {
  while (v >= 0x80) {
    *out++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *out++ = static_cast<char>(v);
  return out;
}

// int32 and enum fields are sign-extended to 64 bits on the wire (a negative takes ten bytes).
uint64_t widen(int32_t v) {
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

}  // namespace

char* write_delimited_op(const OpWireFields& op, char* out) {
  char digits[20];
  const size_t digit_count = static_cast<size_t>(
      std::to_chars(digits, digits + sizeof(digits), op.source_line).ptr - digits);
  const size_t source_size = op.source_prefix.size() + digit_count;

  // The body goes after a one-byte length, which most ops need; a longer body is moved up once
  // its size is known (cheaper than sizing every field twice). Proto3: a field at its zero value
  // is not written (enqueue_time_ns has presence instead).
  char* const start = out;
  out = start + 1;
  auto put = [&out](uint32_t field, uint64_t v) {
    if (v == 0) return;
    *out++ = static_cast<char>(tag(field, kVarint));
    out = put_varint(out, v);
  };
  put(1, op.rank);
  put(2, op.index);
  put(3, widen(op.kind));
  if (!op.comm.empty()) {
    *out++ = static_cast<char>(tag(4, kLengthDelimited));
    out = put_varint(out, op.comm.size());
    std::memcpy(out, op.comm.data(), op.comm.size());
    out += op.comm.size();
  }
  put(5, op.count);
  put(6, widen(op.datatype));
  put(7, op.bytes);
  put(8, widen(op.root));
  put(9, widen(op.reduce_op));
  if (op.has_enqueue_time) {
    *out++ = static_cast<char>(tag(10, kVarint));
    out = put_varint(out, op.enqueue_time_ns);
  }
  put(13, op.op_count);
  if (source_size != 0) {
    *out++ = static_cast<char>(tag(14, kLengthDelimited));
    out = put_varint(out, source_size);
    std::memcpy(out, op.source_prefix.data(), op.source_prefix.size());
    out += op.source_prefix.size();
    std::memcpy(out, digits, digit_count);
    out += digit_count;
  }
  put(15, op.group);
  const size_t size = static_cast<size_t>(out - (start + 1));
  if (size < 0x80) {
    *start = static_cast<char>(size);
    return out;
  }
  const size_t prefix = varint_size(size);
  std::memmove(start + prefix, start + 1, size);
  put_varint(start, size);
  return start + prefix + size;
}

}  // namespace collide::traces::nccl
