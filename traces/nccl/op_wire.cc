#include "traces/nccl/op_wire.h"

#include <bit>
#include <type_traits>

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

// memcpy for the few to few tens of bytes an op's parts take, without a library call: two
// overlapping copies of a fixed size, which the compiler turns into loads and stores.
[[gnu::always_inline]] inline char* copy_short(char* out, const char* from, size_t n) {
  auto two = [&](auto width) {
    constexpr size_t w = decltype(width)::value;
    char head[w], tail[w];
    std::memcpy(head, from, w);
    std::memcpy(tail, from + n - w, w);
    std::memcpy(out, head, w);
    std::memcpy(out + n - w, tail, w);
  };
  if (n >= 32 && n <= 64) {
    two(std::integral_constant<size_t, 32>());
  } else if (n >= 16 && n < 32) {
    two(std::integral_constant<size_t, 16>());
  } else if (n >= 8 && n < 16) {
    two(std::integral_constant<size_t, 8>());
  } else if (n >= 4 && n < 8) {
    two(std::integral_constant<size_t, 4>());
  } else if (n < 4) {
    for (size_t i = 0; i < n; ++i) out[i] = from[i];
  } else {
    std::memcpy(out, from, n);
  }
  return out + n;
}

// A varint field; proto3 leaves a field at its zero value out. Fields from 16 on take a
// two-byte tag.
char* put_field(char* out, uint32_t field, uint64_t v) {
  if (v == 0) return out;
  out = put_varint(out, (field << 3) | kVarint);
  return put_varint(out, v);
}

// int32 and enum fields are sign-extended to 64 bits on the wire (a negative takes ten bytes).
uint64_t widen(int32_t v) {
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

// Fields 5-9 (count, datatype, bytes, root, reduce_op): the same for the ranks of one collective.
char* put_op_shape(const OpWireFields& op, char* out) {
  out = put_field(out, 5, op.count);
  out = put_field(out, 6, widen(op.datatype));
  out = put_field(out, 7, op.bytes);
  out = put_field(out, 8, widen(op.root));
  return put_field(out, 9, widen(op.reduce_op));
}

// The fields after those (10, 13, 15, 20-21).
char* put_op_tail(const OpWireFields& op, char* out) {
  if (op.has_enqueue_time) {  // presence, not proto3's zero rule
    *out++ = static_cast<char>(tag(10, kVarint));
    out = put_varint(out, op.enqueue_time_ns);
  }
  out = put_field(out, 13, op.op_count);
  out = put_field(out, 15, op.group);
  out = put_field(out, 20, op.source_line);
  return put_field(out, 21, op.source_file);
}

}  // namespace

char* put_op_index_kind(const OpWireFields& op, char* out) {
  out = put_field(out, 2, op.index);
  return put_field(out, 3, widen(op.kind));
}

char* put_op_rest(const OpWireFields& op, char* out) {
  return put_op_tail(op, put_op_shape(op, out));
}

char* write_delimited_op_from_parts(uint32_t rank, std::string_view comm,
                                    std::string_view index_kind, std::string_view rest, char* out) {
  // The parts' sizes are known, so the length goes first and nothing is moved.
  const size_t rank_size = rank == 0 ? 0 : 1 + varint_size(rank);
  const size_t comm_size = comm.empty() ? 0 : 1 + varint_size(comm.size()) + comm.size();
  out = put_varint(out, rank_size + index_kind.size() + comm_size + rest.size());
  out = put_field(out, 1, rank);
  out = copy_short(out, index_kind.data(), index_kind.size());
  if (!comm.empty()) {
    *out++ = static_cast<char>(tag(4, kLengthDelimited));
    out = put_varint(out, comm.size());
    out = copy_short(out, comm.data(), comm.size());
  }
  return copy_short(out, rest.data(), rest.size());
}

bool make_comm_field(std::string_view comm, CommField& out) {
  out = CommField();
  if (comm.empty()) return true;  // proto3 leaves an empty string out
  if (comm.size() > sizeof(out.bytes) - 2) return false;
  out.bytes[0] = static_cast<char>(tag(4, kLengthDelimited));
  out.bytes[1] = static_cast<char>(comm.size());
  std::memcpy(out.bytes + 2, comm.data(), comm.size());
  out.size = static_cast<uint8_t>(comm.size() + 2);
  return true;
}

char* OpWriter::write(uint32_t rank, const CommField& comm, const OpWireFields& op, char* out) {
  // The body first, one byte in: its length, unknown until the end, takes one byte below 128.
  char* const body = out + 1;
  char* p = put_field(body, 1, rank);
  p = put_field(p, 2, op.index);
  p = put_field(p, 3, widen(op.kind));
  std::memcpy(p, comm.bytes, sizeof(comm.bytes));  // all 16, of which `size` count
  p += comm.size;
  const bool same_shape = op.count == count_ && op.bytes == bytes_ && op.datatype == datatype_ &&
                          op.root == root_ && op.reduce_op == reduce_op_ && shape_size_ != 0;
  if (!same_shape) {
    shape_size_ = static_cast<uint8_t>(put_op_shape(op, shape_) - shape_);
    count_ = op.count;
    bytes_ = op.bytes;
    datatype_ = op.datatype;
    root_ = op.root;
    reduce_op_ = op.reduce_op;
  }
  std::memcpy(p, shape_, sizeof(shape_));
  p += shape_size_;
  p = put_op_tail(op, p);
  const auto size = static_cast<size_t>(p - body);
  if (size < 0x80) {
    *out = static_cast<char>(size);
    return p;
  }
  // A body of 128 bytes or more (large values, a time) takes a second length byte (it stays
  // under 2^14 bytes): moved one byte on.
  std::memmove(out + 2, body, size);
  put_varint(out, size);
  return p + 1;
}

char* write_delimited_op(const OpWireFields& op, char* out) {
  // The parts encoded first, then the one writer of the whole op.
  char index_kind[kMaxIndexKindBytes];
  char rest[kMaxRestBytes];
  const char* index_kind_end = put_op_index_kind(op, index_kind);
  const char* rest_end = put_op_rest(op, rest);
  return write_delimited_op_from_parts(
      op.rank, op.comm,
      std::string_view(index_kind, static_cast<size_t>(index_kind_end - index_kind)),
      std::string_view(rest, static_cast<size_t>(rest_end - rest)), out);
}

}  // namespace collide::traces::nccl
