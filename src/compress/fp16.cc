// "fp16": IEEE 754 half precision, rounded to nearest even (Horovod's and PyTorch DDP's
// fp16 compression hook). Two bytes a value; values beyond 65504 become infinite (the PS
// refuses those as it refuses any non-finite gradient), below 2^-24 zero.
#include "compress/fp16.h"

#include <cmath>
#include <cstring>

#include "compress/methods.h"

namespace dynacomm::compress {

std::uint16_t float_to_half(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u)  // infinity, or NaN (kept a NaN)
    return sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u);
  if (abs >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and up round to infinity
  if (abs < 0x38800000u) {                        // below 2^-14: a subnormal half, or zero
    float a;
    std::memcpy(&a, &abs, 4);
    // a * 2^24 is exact; nearbyint rounds half to even (the default rounding mode).
    return sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0f));
  }
  const std::uint32_t mantissa = abs & 0x7fffffu;
  std::uint32_t h = (((abs >> 23) - 112u) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // a carry may bump the exponent
  return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  std::uint32_t x;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in a float
    const float v = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    std::memcpy(&x, &v, 4);
    x |= sign;
  } else if (exponent == 31) {
    x = sign | 0x7f800000u | (mantissa << 13);
  } else {
    x = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

namespace {

class Fp16 : public Compressor {
 public:
  std::string name() const override { return "fp16"; }
  std::uint16_t wire_codec() const override { return 1; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return static_cast<std::size_t>(floats) * 2;
  }
  bool linear() const override { return true; }  // up to rounding
  bool unbiased() const override { return false; }
  void encode(Slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    for (std::int64_t i = 0; i < floats; ++i) {
      const std::uint16_t h = float_to_half(in[i]);
      out[2 * i] = static_cast<std::uint8_t>(h);
      out[2 * i + 1] = static_cast<std::uint8_t>(h >> 8);
    }
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size("fp16", size, encoded_bytes(floats, 0), floats);
    scratch.resize(static_cast<std::size_t>(floats));
    for (std::int64_t i = 0; i < floats; ++i)
      scratch[static_cast<std::size_t>(i)] =
          half_to_float(static_cast<std::uint16_t>(in[2 * i] | (in[2 * i + 1] << 8)));
    return scratch.data();
  }
};

}  // namespace

std::unique_ptr<Compressor> make_fp16() { return std::make_unique<Fp16>(); }

}  // namespace dynacomm::compress
