// Fixed-width fields packed back to back, least significant bit first, for the codecs'
// payloads (QSGD's levels, TernGrad's trits, signs).
//
//   BitWriter w(out);  w.put(5, 3);  w.put(1, 1);          // 3 bits, then 1
//   BitReader r(out, size);  r.get(3);                      // 5
//   packed_bytes(n, bits);                                  // bytes of n fields
#pragma once

#include <cstddef>
#include <cstdint>

namespace dynacomm::compress {

inline std::size_t packed_bytes(std::int64_t fields, int bits) {
  return static_cast<std::size_t>((fields * bits + 7) / 8);
}

class BitWriter {
 public:
  explicit BitWriter(std::uint8_t* out) : out_(out) {}
  void put(std::uint32_t value, int bits) {  // bits <= 24
    acc_ |= static_cast<std::uint64_t>(value) << used_;
    used_ += bits;
    while (used_ >= 8) {
      *out_++ = static_cast<std::uint8_t>(acc_);
      acc_ >>= 8;
      used_ -= 8;
    }
  }
  void finish() {  // the last partial byte, zero-padded
    if (used_ > 0) *out_++ = static_cast<std::uint8_t>(acc_);
    acc_ = 0;
    used_ = 0;
  }

 private:
  std::uint8_t* out_;
  std::uint64_t acc_ = 0;
  int used_ = 0;
};

// Reads what a BitWriter wrote; the caller has checked that `size` holds every field.
class BitReader {
 public:
  BitReader(const std::uint8_t* in, std::size_t size) : in_(in), end_(in + size) {}
  std::uint32_t get(int bits) {
    while (used_ < bits) {
      acc_ |= static_cast<std::uint64_t>(in_ < end_ ? *in_++ : 0) << used_;
      used_ += 8;
    }
    const auto v = static_cast<std::uint32_t>(acc_ & ((1ull << bits) - 1));
    acc_ >>= bits;
    used_ -= bits;
    return v;
  }

 private:
  const std::uint8_t* in_;
  const std::uint8_t* end_;
  std::uint64_t acc_ = 0;
  int used_ = 0;
};

}  // namespace dynacomm::compress
