// "qsgd:S": QSGD (Alistarh et al., NeurIPS 2017), S levels (default 64). Each value v_i of an
// atom becomes sign(v_i) * ||v||_2 * q_i / S, with q_i = floor(|v_i| / ||v||_2 * S) or one
// more, drawn so that its expectation is |v_i| / ||v||_2 * S: unbiased, each value off by at
// most ||v||_2 / S. Payload: the norm (float32), then per value its sign and q_i in
// 1 + ceil(log2(S + 1)) bits (8 at S = 64).
#include <cmath>

#include "compress/bits.h"
#include "compress/draws.h"
#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class Qsgd : public Compressor {
 public:
  Qsgd(int levels, std::uint64_t seed) : levels_(levels), seed_(seed) {
    while ((1 << (bits_ - 1)) <= levels_) ++bits_;  // sign + ceil(log2(levels + 1))
  }
  std::string name() const override { return "qsgd:" + std::to_string(levels_); }
  std::uint16_t wire_codec() const override { return 2; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return 4 + packed_bytes(floats, bits_);
  }
  bool linear() const override { return false; }
  bool unbiased() const override { return true; }
  void encode(Slot slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    double sum = 0;
    for (std::int64_t i = 0; i < floats; ++i) sum += static_cast<double>(in[i]) * in[i];
    const auto norm = static_cast<float>(std::sqrt(sum));
    store_float(out, norm);
    BitWriter w(out + 4);
    Draws draws(seed_, slot);
    for (std::int64_t i = 0; i < floats; ++i) {
      std::uint32_t q = 0;
      if (norm > 0) {
        const float r = std::fabs(in[i]) / norm * static_cast<float>(levels_);
        const float whole = std::floor(r);
        q = static_cast<std::uint32_t>(whole) + (draws.uniform() < r - whole ? 1u : 0u);
        if (q > static_cast<std::uint32_t>(levels_)) q = static_cast<std::uint32_t>(levels_);
      }
      w.put((q << 1) | (std::signbit(in[i]) ? 1u : 0u), bits_);
    }
    w.finish();
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size(name(), size, encoded_bytes(floats, 0), floats);
    const float norm = load_float(in);
    if (!(norm >= 0) || std::isinf(norm))
      throw InvalidInput(name() + " payload: norm " + std::to_string(norm) + " is not a norm");
    scratch.resize(static_cast<std::size_t>(floats));
    BitReader r(in + 4, size - 4);
    const float step = norm / static_cast<float>(levels_);
    for (std::int64_t i = 0; i < floats; ++i) {
      const std::uint32_t field = r.get(bits_), q = field >> 1;
      if (q > static_cast<std::uint32_t>(levels_))
        throw InvalidInput(name() + " payload: value " + std::to_string(i) + " has level " +
                           std::to_string(q) + " of " + std::to_string(levels_));
      const float v = step * static_cast<float>(q);
      scratch[static_cast<std::size_t>(i)] = (field & 1u) ? -v : v;
    }
    return scratch.data();
  }

 private:
  int levels_;
  std::uint64_t seed_;
  int bits_ = 1;
};

}  // namespace

std::unique_ptr<Compressor> make_qsgd(int levels, std::uint64_t seed) {
  return std::make_unique<Qsgd>(levels, seed);
}

}  // namespace dynacomm::compress
