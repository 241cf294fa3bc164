// "none": float32 values as they are, little-endian (the machines dynacomm runs on are).
#include <cstring>

#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class NoCompression : public Compressor {
 public:
  std::string name() const override { return "none"; }
  std::uint16_t wire_codec() const override { return 0; }  // net::Codec::kFloat32
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return static_cast<std::size_t>(floats) * sizeof(float);
  }
  bool linear() const override { return true; }
  bool unbiased() const override { return true; }
  void encode(Slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    std::memcpy(out, in, encoded_bytes(floats, 0));
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    if (floats < 0 || size != static_cast<std::size_t>(floats) * sizeof(float))
      throw InvalidInput("float32 payload of " + std::to_string(size) + " bytes for " +
                         std::to_string(floats) + " values");
    if (floats == 0) return scratch.data();  // nothing to read (in may be null)
    if (reinterpret_cast<std::uintptr_t>(in) % alignof(float) == 0)
      return reinterpret_cast<const float*>(in);
    scratch.resize(static_cast<std::size_t>(floats));
    std::memcpy(scratch.data(), in, size);
    return scratch.data();
  }
};

}  // namespace

std::unique_ptr<Compressor> make_none() { return std::make_unique<NoCompression>(); }

}  // namespace dynacomm::compress
