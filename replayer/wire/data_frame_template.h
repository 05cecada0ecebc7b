#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "common/bytes.h"
#include "common/result.h"
#include "replayer/wire/crc32.h"
#include "replayer/wire/roce_frame.h"

// The RDMA WRITE frames one sender sends on one QP, from a template. Such frames differ only in
// the opcode, pad count, AckReq, PSN, lengths, ECN bits and the RETH: the template holds every
// other header byte ready to copy, the IPv4 checksum of the fixed fields, and the ICRC register
// of its fixed header bytes. A frame then costs one header copy, a few stores, an incremental
// checksum and, for the ICRC, one table lookup per varying header byte plus the payload's CRC
// (which the caller knows): no header byte is read back and no field is encoded one by one.
//
// Most frames of a transfer are MIDDLEs (and LASTs) of the QP's MTU: for those the template
// holds the whole header, lengths and checksum included, and the ICRC's value for AckReq and
// PSN zero with the payload's CRC appended. Such a frame is one header copy, one store of the
// AckReq/PSN word and, for the ICRC, that value XOR four lookups (the word's bytes, each through
// a table that already appends the payload) XOR the payload's CRC.
//
// The bytes are those write_roce_frame writes for the same headers (Endpoints as given, BTH with
// the default P_Key and no solicited/migration/FECN/BECN bits, RETH with R_Key 0). A template is
// read-only once built: threads may share it.
namespace collide::replayer::wire {

// The fields that vary from one data frame of a QP to the next.
struct DataFrameFields {
  Opcode opcode = Opcode::kWriteOnly;  // WRITE FIRST, MIDDLE, LAST or ONLY
  bool ack_request = false;
  uint32_t psn = 0;          // the low 24 bits are sent
  uint8_t tos = 0;           // DSCP << 2 | ECN (not covered by the ICRC)
  uint32_t payload_len = 0;  // without pad
  uint64_t reth_address = 0;  // FIRST and ONLY: RETH virtual address and DMA length
  uint32_t reth_length = 0;
};

class DataFrameTemplate {
 public:
  // `endpoints.tos` is the usual TOS (frames may give another). Frames with a payload of
  // `typical_payload_len` bytes (the QP's MTU; 0 for none) and the usual TOS take the
  // prebuilt path of write_typical; other frames go through finish.
  DataFrameTemplate(const Endpoints& endpoints, uint32_t dest_qp, uint32_t typical_payload_len);

  // Where the payload of a frame with this opcode starts.
  static constexpr size_t payload_offset(Opcode opcode) {
    return opcode == Opcode::kWriteFirst || opcode == Opcode::kWriteOnly ? kHeadersWithReth
                                                                         : kHeadersWithoutReth;
  }

  // Writes the headers, pad and ICRC of a data frame into `out`, whose payload the caller has
  // already put at payload_offset(fields.opcode); `payload_crc` is its crc32 (zlib's
  // convention, without pad). Returns the frame length. Opcodes other than the four WRITEs,
  // and frames that do not fit `out` or an IPv4 packet, are kInvalidArgument.
  Result<size_t> finish(std::span<uint8_t> out, const DataFrameFields& fields,
                        uint32_t payload_crc) const;

  // Whether write_typical can write a frame with this opcode, payload length and TOS into a
  // buffer of `capacity` bytes: MIDDLE or LAST with the typical payload and the usual TOS.
  bool is_typical(Opcode opcode, uint32_t payload_len, uint8_t tos, size_t capacity) const {
    return (opcode == Opcode::kWriteMiddle || opcode == Opcode::kWriteLast) &&
           payload_len == typical_payload_len_ && tos == usual_tos_ &&
           capacity >= typical_frame_len_;
  }
  uint32_t typical_payload_len() const { return typical_payload_len_; }
  uint8_t usual_tos() const { return usual_tos_; }

  // finish for a frame is_typical accepts, into a buffer of at least that capacity; returns the
  // frame length. Same bytes as finish.
  size_t write_typical(uint8_t* out, Opcode opcode, bool ack_request, uint32_t psn,
                       uint32_t payload_crc) const {
    const Prebuilt& pre = prebuilt_[opcode == Opcode::kWriteLast ? 1 : 0];
    std::memcpy(out, pre.header.data(), kHeadersWithoutReth);
    const uint32_t word = (ack_request ? 0x80000000u : 0) | (psn & kMaxPsn);
    bytes::store_be32(out + kBthOffset + 8, word);
    const uint32_t icrc = pre.icrc ^ payload_crc ^ word_terms_[0][word >> 24] ^
                          word_terms_[1][(word >> 16) & 0xff] ^
                          word_terms_[2][(word >> 8) & 0xff] ^ word_terms_[3][word & 0xff];
    bytes::store_le32(out + typical_frame_len_ - kIcrcSize, icrc);
    return typical_frame_len_;
  }

  // crc32 of `len` zero bytes (a zero payload's CRC for finish).
  uint32_t zeros_crc(size_t len) const {
    return typical_shift_ && len == typical_shift_->length() ? typical_shift_->zeros_crc()
                                                              : crc32_of_zeros(len);
  }

 private:
  // Each varying header byte's contribution to the ICRC register at the end of the BTH, by
  // value: the same for every template, built once.
  struct HeaderTerms {
    Crc32ByteTerms ip_length_hi, ip_length_lo, udp_length_hi, udp_length_lo, opcode, pad_byte,
        ack_request, psn_hi, psn_mid, psn_lo;
  };
  static const HeaderTerms& header_terms();

  static constexpr size_t kBthOffset = kEthHeaderSize + kIpv4HeaderSize + kUdpHeaderSize;
  static constexpr size_t kHeadersWithoutReth = kBthOffset + kBthSize;
  static constexpr size_t kHeadersWithReth = kHeadersWithoutReth + kRethSize;

  // A typical MIDDLE or LAST frame's header with AckReq and PSN zero, and its ICRC for those
  // and a payload whose CRC is zero.
  struct Prebuilt {
    std::array<uint8_t, kHeadersWithoutReth> header{};
    uint32_t icrc = 0;
  };

  // Ethernet through BTH (and a zero RETH): the fixed bytes, with the varying ones zero.
  std::array<uint8_t, kHeadersWithReth> header_{};
  // The IPv4 header's one's-complement sum without total length and TOS.
  uint32_t ipv4_fixed_sum_ = 0;
  // The ICRC's CRC register after the masked pseudo-header through the BTH (eight 0xff bytes
  // for the LRH, IPv4 and UDP with their variant fields as ones, BTH with FECN/BECN masked),
  // with the varying bytes (lengths, opcode, pad count, AckReq, PSN) zero.
  uint32_t bth_register_ = 0;
  const HeaderTerms* terms_;
  uint8_t usual_tos_ = 0;
  // Typical frames; a length no frame can have (no typical frames) when there are none.
  uint32_t typical_payload_len_ = UINT32_MAX;
  size_t typical_frame_len_ = SIZE_MAX;
  std::optional<Crc32Shift> typical_shift_;  // appends a typical payload to a CRC
  std::array<Prebuilt, 2> prebuilt_{};        // MIDDLE, LAST
  // What each byte of the AckReq/PSN word adds to a typical frame's ICRC, payload appended.
  std::array<Crc32ByteTerms, 4> word_terms_{};
};

}  // namespace collide::replayer::wire
