#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "chakra/et_def.pb.h"
#include "common/result.h"

namespace google::protobuf::io {
class ZeroCopyInputStream;
class FileInputStream;
}  // namespace google::protobuf::io

// Reading and writing the records of a Chakra .et file: a GlobalMetadata, then Nodes, each
// preceded by its length as a varint32. Damage is reported with the file, the record number
// (0 is the metadata) and its byte offset, never by crashing.
namespace collide::traces::chakra {

// No real node comes near this; a larger length means the bytes are not an .et file.
inline constexpr uint32_t kMaxRecordBytes = 64u << 20;

class EtDecoder {
 public:
  // Decodes `name`'s bytes from `input` (not owned). `name` is used in messages.
  EtDecoder(google::protobuf::io::ZeroCopyInputStream* input, std::string name);
  // Opens a file and reads from it.
  static Result<std::unique_ptr<EtDecoder>> open(const std::string& path);
  ~EtDecoder();
  EtDecoder(const EtDecoder&) = delete;
  EtDecoder& operator=(const EtDecoder&) = delete;

  // Reads record 0. A file that does not start with a GlobalMetadata (a text file, garbage, an
  // empty file) is an error saying so.
  Status read_metadata(ChakraProtoMsg::GlobalMetadata& metadata);
  // Reads the next node: true if there was one, false at a clean end of the file. A truncated or
  // undecodable record is an error naming the file, the record and the offset.
  Result<bool> next(ChakraProtoMsg::Node& node);

  uint64_t records_read() const { return records_; }
  uint64_t bytes_read() const { return offset_; }
  const std::string& name() const { return name_; }

 private:
  // Reads one length-prefixed record into `bytes`: true if there was one, false at a clean end.
  Result<bool> read_record(std::string& bytes);
  std::string where() const;

  std::unique_ptr<google::protobuf::io::FileInputStream> file_;
  int fd_ = -1;
  google::protobuf::io::ZeroCopyInputStream* input_;
  std::string name_;
  uint64_t records_ = 0;
  uint64_t offset_ = 0;
  uint64_t record_offset_ = 0;
  bool metadata_read_ = false;
};

// Appends `message` to `out` with its varint32 length prefix, as .et files hold it.
void append_delimited(const google::protobuf::MessageLite& message, std::string& out);

}  // namespace collide::traces::chakra
