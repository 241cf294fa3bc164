// "topk:R": top-k sparsification (Aji & Heafield 2017; Stich et al., NeurIPS 2018 for the
// error feedback it runs with by default). Of an atom's n values the k = R * n (at least 1)
// of largest magnitude are sent, ties to the lower index; the rest are zero. Payload: the
// k indices (uint32, strictly increasing), then their k values (float32).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compress/methods.h"

namespace dynacomm::compress {

std::int64_t kept(double ratio, std::int64_t n) {
  const auto k = static_cast<std::int64_t>(std::llround(ratio * static_cast<double>(n)));
  return std::min(n, std::max<std::int64_t>(1, k));
}

namespace {

class TopK : public Compressor {
 public:
  explicit TopK(double ratio) : ratio_(ratio) {}
  std::string name() const override { return "topk:" + format_number(ratio_); }
  std::uint16_t wire_codec() const override { return 6; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t) const override {
    return floats > 0 ? static_cast<std::size_t>(kept(ratio_, floats)) * 8 : 0;
  }
  bool linear() const override { return false; }
  bool unbiased() const override { return false; }
  void encode(Slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    if (floats <= 0) return;
    const std::int64_t k = kept(ratio_, floats);
    select_top_k(in, floats, k, order_);
    for (std::int64_t j = 0; j < k; ++j) {
      const std::uint32_t i = order_[static_cast<std::size_t>(j)];
      std::memcpy(out + 4 * j, &i, 4);
      store_float(out + 4 * (k + j), in[i]);
    }
  }
  const float* decode(Slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size(name(), size, encoded_bytes(floats, 0), floats);
    return decode_sparse(name(), in, size, floats, scratch);
  }

 private:
  double ratio_;
  std::vector<std::uint32_t> order_;
};

}  // namespace

void select_top_k(const float* v, std::int64_t n, std::int64_t k,
                  std::vector<std::uint32_t>& order) {
  order.resize(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0u);
  auto larger = [v](std::uint32_t a, std::uint32_t b) {
    const float x = std::fabs(v[a]), y = std::fabs(v[b]);
    return x > y || (x == y && a < b);  // NaN sorts as it may: the PS refuses it anyway
  };
  std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), larger);
  std::sort(order.begin(), order.begin() + k);
}

const float* decode_sparse(const std::string& method, const std::uint8_t* in, std::size_t size,
                           std::int64_t floats, std::vector<float>& scratch) {
  scratch.assign(static_cast<std::size_t>(floats), 0.0f);
  const auto k = static_cast<std::int64_t>(size / 8);
  std::int64_t previous = -1;
  for (std::int64_t j = 0; j < k; ++j) {
    std::uint32_t i;
    std::memcpy(&i, in + 4 * j, 4);
    if (static_cast<std::int64_t>(i) <= previous || static_cast<std::int64_t>(i) >= floats)
      throw InvalidInput(method + " payload: index " + std::to_string(i) + " at " +
                         std::to_string(j) + " is not increasing within 0.." +
                         std::to_string(floats - 1));
    previous = i;
    scratch[i] = load_float(in + 4 * (k + j));
  }
  return scratch.data();
}

std::unique_ptr<Compressor> make_topk(double ratio) { return std::make_unique<TopK>(ratio); }

}  // namespace dynacomm::compress
