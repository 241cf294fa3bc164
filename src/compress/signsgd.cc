// "signsgd": the scaled sign. Each value v_i of an atom becomes sign(v_i) * ||v||_1 / n
// (signSGD, Bernstein et al., ICML 2018, sends the sign alone; the scale, from EF-SignSGD,
// keeps the PS's learning rate meaningful). Biased; without error feedback by default.
// "efsignsgd": the same with error feedback (Karimireddy et al., ICML 2019). Payload: the
// scale (float32), then one bit a value (1: negative).
#include <cmath>

#include "compress/bits.h"
#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class ScaledSign : public Compressor {
 public:
  explicit ScaledSign(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  std::uint16_t wire_codec() const override { return 4; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return 4 + packed_bytes(floats, 1);
  }
  bool linear() const override { return false; }
  bool unbiased() const override { return false; }
  void encode(Slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    double l1 = 0;
    for (std::int64_t i = 0; i < floats; ++i) l1 += std::fabs(in[i]);
    store_float(out, floats > 0 ? static_cast<float>(l1 / static_cast<double>(floats)) : 0.0f);
    BitWriter w(out + 4);
    for (std::int64_t i = 0; i < floats; ++i) w.put(std::signbit(in[i]) ? 1u : 0u, 1);
    w.finish();
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size(name_, size, encoded_bytes(floats, 0), floats);
    const float scale = load_float(in);
    if (!(scale >= 0) || std::isinf(scale))
      throw InvalidInput(name_ + " payload: scale " + std::to_string(scale) + " is not a scale");
    scratch.resize(static_cast<std::size_t>(floats));
    BitReader r(in + 4, size - 4);
    for (std::int64_t i = 0; i < floats; ++i)
      scratch[static_cast<std::size_t>(i)] = r.get(1) ? -scale : scale;
    return scratch.data();
  }

 private:
  std::string name_;
};

}  // namespace

std::unique_ptr<Compressor> make_signsgd(const std::string& name) {
  return std::make_unique<ScaledSign>(name);
}

}  // namespace dynacomm::compress
