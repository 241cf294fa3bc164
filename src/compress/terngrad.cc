// "terngrad": TernGrad (Wen et al., NeurIPS 2017), without its gradient clipping. Each value
// v_i of an atom becomes s * sign(v_i) with probability |v_i| / s, else 0, where
// s = max_i |v_i|: unbiased, each value off by at most s. Payload: s (float32), then two
// bits a value (0: zero, 1: +s, 2: -s; 3 is refused).
#include <cmath>

#include "compress/bits.h"
#include "compress/draws.h"
#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class TernGrad : public Compressor {
 public:
  explicit TernGrad(std::uint64_t seed) : seed_(seed) {}
  std::string name() const override { return "terngrad"; }
  std::uint16_t wire_codec() const override { return 3; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return 4 + packed_bytes(floats, 2);
  }
  bool linear() const override { return false; }
  bool unbiased() const override { return true; }
  void encode(Slot slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    float s = 0;
    for (std::int64_t i = 0; i < floats; ++i) s = std::max(s, std::fabs(in[i]));
    store_float(out, s);
    BitWriter w(out + 4);
    Draws draws(seed_, slot);
    for (std::int64_t i = 0; i < floats; ++i) {
      const bool kept = s > 0 && draws.uniform() < std::fabs(in[i]) / s;
      w.put(kept ? (std::signbit(in[i]) ? 2u : 1u) : 0u, 2);
    }
    w.finish();
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size("terngrad", size, encoded_bytes(floats, 0), floats);
    const float s = load_float(in);
    if (!(s >= 0) || std::isinf(s))
      throw InvalidInput("terngrad payload: scale " + std::to_string(s) + " is not a scale");
    scratch.resize(static_cast<std::size_t>(floats));
    BitReader r(in + 4, size - 4);
    for (std::int64_t i = 0; i < floats; ++i) {
      const std::uint32_t t = r.get(2);
      if (t == 3)
        throw InvalidInput("terngrad payload: value " + std::to_string(i) + " is not -1, 0 or 1");
      scratch[static_cast<std::size_t>(i)] = t == 0 ? 0.0f : t == 1 ? s : -s;
    }
    return scratch.data();
  }

 private:
  std::uint64_t seed_;
};

}  // namespace

std::unique_ptr<Compressor> make_terngrad(std::uint64_t seed) {
  return std::make_unique<TernGrad>(seed);
}

}  // namespace dynacomm::compress
