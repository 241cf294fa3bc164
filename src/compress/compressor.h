// The codec seam: how one unit's gradients (a push) or parameters (a pull) become a
// message's payload and back. The worker encodes each push segment's atoms with it, the
// PS decodes what it receives; a compression method is a new file behind this interface
// and one line in make_compressor. No libtorch, no networking.
//
//   std::unique_ptr<Compressor> c = make_compressor("none");
//   std::string payload(c->encoded_bytes(n), '\0');
//   c->encode(unit, grads, n, reinterpret_cast<std::uint8_t*>(payload.data()));
//   std::vector<float> scratch;
//   const float* g = c->decode(bytes, size, n, scratch);   // InvalidInput when malformed
//
// Only "none" (float32 as is, the wire's Codec::kFloat32) exists now; it decodes without
// copying (the payload is 8-byte aligned, net/wire.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dynacomm::compress {

class Compressor {
 public:
  virtual ~Compressor() = default;
  virtual std::string name() const = 0;
  virtual std::uint16_t wire_codec() const = 0;  // the header's codec field (net::Codec)
  // Bytes of the encoding of `floats` values, known without encoding (for plans).
  virtual std::size_t encoded_bytes(std::int64_t floats) const = 0;
  // Sums of encodings decode to the sum of the values (they may be aggregated encoded).
  virtual bool linear() const = 0;
  // Writes encoded_bytes(floats) bytes at out. `unit`: whose values (for per-unit state
  // such as error-feedback residuals).
  virtual void encode(int unit, const float* in, std::int64_t floats, std::uint8_t* out) = 0;
  // The `floats` values of an untrusted encoding of `size` bytes: a pointer into `in`
  // (nothing copied) or into `scratch`. InvalidInput naming what is wrong; never reads
  // past size.
  virtual const float* decode(const std::uint8_t* in, std::size_t size, std::int64_t floats,
                              std::vector<float>& scratch) const = 0;
  // State a checkpoint keeps (residuals, warm-start matrices); empty when stateless.
  virtual std::string state() const { return {}; }
};

// "none" now; InvalidInput naming the known methods for any other name.
std::unique_ptr<Compressor> make_compressor(const std::string& name);

}  // namespace dynacomm::compress
