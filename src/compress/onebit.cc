// "onebit": 1-bit SGD (Seide et al., Interspeech 2014), always with error feedback. The
// values of an atom split at zero; each becomes the mean of its side (the mean of the
// values >= 0, or of those < 0), so an atom keeps its sum. Payload: the two means
// (float32), then one bit a value (1: negative side).
#include <cmath>

#include "compress/bits.h"
#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class OneBit : public Compressor {
 public:
  std::string name() const override { return "onebit"; }
  std::uint16_t wire_codec() const override { return 5; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return 8 + packed_bytes(floats, 1);
  }
  bool linear() const override { return false; }
  bool unbiased() const override { return false; }
  void encode(Slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    double pos = 0, neg = 0;
    std::int64_t npos = 0;
    for (std::int64_t i = 0; i < floats; ++i) {
      if (in[i] >= 0) {
        pos += in[i];
        ++npos;
      } else {
        neg += in[i];
      }
    }
    const std::int64_t nneg = floats - npos;
    store_float(out, npos ? static_cast<float>(pos / static_cast<double>(npos)) : 0.0f);
    store_float(out + 4, nneg ? static_cast<float>(neg / static_cast<double>(nneg)) : 0.0f);
    BitWriter w(out + 8);
    for (std::int64_t i = 0; i < floats; ++i) w.put(in[i] >= 0 ? 0u : 1u, 1);
    w.finish();
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size("onebit", size, encoded_bytes(floats, 0), floats);
    const float pos = load_float(in), neg = load_float(in + 4);
    if (!std::isfinite(pos) || !std::isfinite(neg))
      throw InvalidInput("onebit payload: its means are not finite");
    scratch.resize(static_cast<std::size_t>(floats));
    BitReader r(in + 8, size - 8);
    for (std::int64_t i = 0; i < floats; ++i)
      scratch[static_cast<std::size_t>(i)] = r.get(1) ? neg : pos;
    return scratch.data();
  }
};

}  // namespace

std::unique_ptr<Compressor> make_onebit() { return std::make_unique<OneBit>(); }

}  // namespace dynacomm::compress
