// "dgc:D[:S]": Deep Gradient Compression (Lin et al., ICLR 2018). Per atom the worker keeps
// a momentum u and an accumulation v:
//
//   u <- m u + g         (momentum correction: the momentum is applied on the worker,
//   v <- v + u            before sparsification, so the PS runs plain SGD)
//   send the k largest |v| (top-k's payload), then v_i <- 0 and u_i <- 0 where sent
//   (momentum factor masking: a sent coordinate's stale momentum does not push it again).
//
// The density warms up as the paper's does (75%, 93.75%, 98.4375%, 99.6% sparsity, then
// D), in four stages of S iterations each (the paper's stage is an epoch; S = 0: no
// warm-up), so encoded_bytes depends on the iteration and PS and workers agree on it.
// Local gradient clipping applies in DGC where dense training clips gradients; dynacomm's
// SGD does not clip, so neither does this. m is the job's momentum, and the PS applies
// none of its own to a job compressed with dgc (ps/server.h).
#include <algorithm>
#include <cmath>
#include <map>

#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class Dgc : public Compressor {
 public:
  Dgc(double density, std::int64_t stage, double momentum)
      : density_(density), stage_(stage), momentum_(momentum) {}
  std::string name() const override {
    return "dgc:" + format_number(density_) + ":" + std::to_string(stage_);
  }
  std::uint16_t wire_codec() const override { return 8; }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t iteration) const override {
    return floats > 0 ? static_cast<std::size_t>(kept(density_at(iteration), floats)) * 8 : 0;
  }
  bool linear() const override { return false; }
  bool unbiased() const override { return false; }
  void encode(Slot slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    if (floats <= 0) return;
    State& s = state_[slot.atom];
    const auto n = static_cast<std::size_t>(floats);
    s.u.resize(n, 0.0f);
    s.v.resize(n, 0.0f);
    for (std::size_t i = 0; i < n; ++i) {
      s.u[i] = static_cast<float>(momentum_) * s.u[i] + in[i];
      s.v[i] += s.u[i];
    }
    const std::int64_t k = kept(density_at(slot.iteration), floats);
    select_top_k(s.v.data(), floats, k, order_);
    for (std::int64_t j = 0; j < k; ++j) {
      const std::uint32_t i = order_[static_cast<std::size_t>(j)];
      std::memcpy(out + 4 * j, &i, 4);
      store_float(out + 4 * (k + j), s.v[i]);
      s.v[i] = 0;
      s.u[i] = 0;
    }
  }
  const float* decode(Slot slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    expect_size(name(), size, encoded_bytes(floats, slot.iteration), floats);
    return decode_sparse(name(), in, size, floats, scratch);  // top-k's payload
  }
  // Per atom: u and v (compress/methods.h's atom state).
  void append_state(std::string& out) const override {
    for (const auto& [atom, s] : state_) put_atom_state(out, atom, {&s.u, &s.v});
  }
  void set_state(const std::string& in) override {
    std::map<std::int64_t, State> states;
    State s;
    for (std::size_t at = 0; at < in.size();) {
      const std::int64_t atom = take_atom_state(in, at, {&s.u, &s.v}, name() + " state");
      states[atom] = s;
    }
    state_ = std::move(states);
  }

 private:
  struct State {
    std::vector<float> u, v;
  };
  double density_at(std::int64_t iteration) const {
    if (stage_ <= 0 || iteration < 0) return density_;
    const std::int64_t s = iteration / stage_;
    if (s >= 4) return density_;
    return std::max(density_, std::pow(0.25, static_cast<double>(s + 1)));
  }
  double density_;
  std::int64_t stage_;
  double momentum_;
  std::map<std::int64_t, State> state_;
  std::vector<std::uint32_t> order_;
};

}  // namespace

std::unique_ptr<Compressor> make_dgc(double density, std::int64_t stage, double momentum) {
  return std::make_unique<Dgc>(density, stage, momentum);
}

}  // namespace dynacomm::compress
