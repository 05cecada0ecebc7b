#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string_view>

// Writes the v1::Op fields an NCCL import fills straight into protobuf wire format, without
// building a message: filling and serializing millions of messages was most of the import's write
// time. The bytes are those protobuf writes for the same Op (fields in number order, proto3 zero
// values left out, `enqueue_time_ns` whenever present); op_wire_test checks that against the
// protobuf library itself.
namespace collide::traces::nccl {

struct OpWireFields {
  uint32_t rank = 0;
  uint64_t index = 0;
  int32_t kind = 0;
  std::string_view comm;
  uint64_t count = 0;
  int32_t datatype = 0;
  uint64_t bytes = 0;
  int32_t root = 0;
  int32_t reduce_op = 0;
  bool has_enqueue_time = false;
  uint64_t enqueue_time_ns = 0;
  uint64_t op_count = 0;
  uint32_t group = 0;
  uint64_t source_line = 0;
  uint32_t source_file = 0;
};

// The most bytes one op's length prefix and body take, given its communicator's id length.
constexpr size_t max_op_wire_size(size_t comm_size) {
  // 14 varint fields of at most two tag bytes and ten value bytes, a string with a tag and a
  // length of at most five bytes, and the op's own length prefix.
  return 14 * 12 + 6 + comm_size + 5;
}

// Writes `op`, preceded by its length as a varint (the trace file's delimited framing), at `out`,
// which has room for max_op_wire_size(); returns the end of what it wrote.
char* write_delimited_op(const OpWireFields& op, char* out);

// The same bytes in three steps, for an importer that encodes what it knows early (everything
// but the rank and the communicator) once per op while it reads, and the rest when it writes:
// fields 2-3 (index, kind), the fields after the communicator (5-13, 15, 20-21), then the whole
// op from those, its rank and its communicator's id.
constexpr size_t kMaxIndexKindBytes = 2 * 11;
constexpr size_t kMaxRestBytes = 7 * 11 + 3 * 12;
char* put_op_index_kind(const OpWireFields& op, char* out);
char* put_op_rest(const OpWireFields& op, char* out);
char* write_delimited_op_from_parts(uint32_t rank, std::string_view comm,
                                    std::string_view index_kind, std::string_view rest, char* out);

// A communicator's field of an op (4: its tag, length and id) in wire form, encoded once for all
// the ops of the communicator.
struct CommField {
  char bytes[16] = {};
  uint8_t size = 0;
};
// False when the id is too long for a CommField (over 14 bytes); `out` is then left empty.
bool make_comm_field(std::string_view comm, CommField& out);

// Writes an op as write_delimited_op does, in one pass straight at the output, for an importer
// that writes millions of them: the communicator's field comes encoded, and the fields the ranks
// of one collective share (5-9: count, datatype, bytes, root, reduce_op) are copied from the last
// op's bytes when their values are the same.
class OpWriter {
 public:
  // The bytes write() may touch at `out`, more than it keeps: it copies blocks of fixed sizes.
  static constexpr size_t kRoom = 224;

  // Writes `op` with the given rank and communicator (op.rank and op.comm are not read) at
  // `out`, which has kRoom bytes; returns the end of what it wrote.
  char* write(uint32_t rank, const CommField& comm, const OpWireFields& op, char* out);

 private:
  // Fields 5-9 of the last op, and their bytes.
  uint64_t count_ = 0;
  uint64_t bytes_ = 0;
  int32_t datatype_ = 0;
  int32_t root_ = 0;
  int32_t reduce_op_ = 0;
  char shape_[64] = {};
  uint8_t shape_size_ = 0;  // 0: nothing encoded yet (the fields' zero values also give none)
};

// A growable byte buffer that, unlike std::string, does not zero what it is about to overwrite.
class WireBuffer {
 public:
  // Room for `n` more bytes at end().
  char* reserve(size_t n) {
    if (size_ + n > capacity_) grow(size_ + n);
    return data_.get() + size_;
  }
  void set_end(char* end) { size_ = static_cast<size_t>(end - data_.get()); }
  void clear() { size_ = 0; }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  void grow(size_t needed) {
    size_t capacity = capacity_ == 0 ? 1 << 16 : capacity_;
    while (capacity < needed) capacity *= 2;
    auto data = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
    data_ = std::move(data);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace collide::traces::nccl
