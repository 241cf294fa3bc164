// "randomk:R": random-k sparsification (Stich et al., NeurIPS 2018), with error feedback by
// default. k = R * n (at least 1) of an atom's n values, chosen uniformly without
// replacement from (seed, atom, iteration): every worker picks the same k, and the PS draws
// them itself, so only the values travel and sums of encodings decode to sums (linear).
// Unscaled (the error feedback keeps what is left out). Payload: the k values (float32) in
// increasing index order.
#include <algorithm>
#include <unordered_map>

#include "compress/draws.h"
#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class RandomK : public Compressor {
 public:
  RandomK(double ratio, std::uint64_t seed) : ratio_(ratio), seed_(seed) {}
  std::string name() const override { return "randomk:" + format_number(ratio_); }
  std::uint16_t wire_codec() const override { return 7; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return floats > 0 ? static_cast<std::size_t>(kept(ratio_, floats)) * 4 : 0;
  }
  bool linear() const override { return true; }
  bool unbiased() const override { return false; }
  void encode(Slot slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    if (floats <= 0) return;
    const std::vector<std::int64_t> chosen = indices(slot, floats);
    for (std::size_t j = 0; j < chosen.size(); ++j) store_float(out + 4 * j, in[chosen[j]]);
  }
  const float* decode(Slot slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size(name(), size, encoded_bytes(floats, 0), floats);
    scratch.assign(static_cast<std::size_t>(floats), 0.0f);
    if (floats <= 0) return scratch.data();
    const std::vector<std::int64_t> chosen = indices(slot, floats);
    for (std::size_t j = 0; j < chosen.size(); ++j)
      scratch[static_cast<std::size_t>(chosen[j])] = load_float(in + 4 * j);
    return scratch.data();
  }

 private:
  // The first k of a Fisher-Yates shuffle of 0..n-1, only the swapped places stored.
  std::vector<std::int64_t> indices(Slot slot, std::int64_t n) const {
    const std::int64_t k = kept(ratio_, n);
    Draws draws(seed_, slot);
    std::unordered_map<std::int64_t, std::int64_t> moved;
    std::vector<std::int64_t> out(static_cast<std::size_t>(k));
    auto at = [&](std::int64_t i) {
      auto it = moved.find(i);
      return it == moved.end() ? i : it->second;
    };
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t r =
          j + static_cast<std::int64_t>(draws.below(static_cast<std::uint64_t>(n - j)));
      const std::int64_t a = at(j), b = at(r);
      out[static_cast<std::size_t>(j)] = b;
      moved[r] = a;
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  double ratio_;
  std::uint64_t seed_;
};

}  // namespace

std::unique_ptr<Compressor> make_randomk(double ratio, std::uint64_t seed) {
  return std::make_unique<RandomK>(ratio, seed);
}

}  // namespace dynacomm::compress
