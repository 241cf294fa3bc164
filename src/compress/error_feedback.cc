// Error feedback around any method (Seide et al. 2014; Karimireddy et al. 2019; GRACE's
// "memory"): each atom keeps a residual on the worker; what is encoded is the gradient
// plus the residual, and the residual becomes what that encoding left out. Over any number
// of iterations, what was sent plus the residual equals the sum of the gradients (up to
// float rounding). The state (the residuals) goes into checkpoints.
#include <map>

#include "compress/methods.h"

namespace dynacomm::compress {

namespace {

class ErrorFeedback : public Compressor {
 public:
  explicit ErrorFeedback(std::unique_ptr<Compressor> inner) : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name() + ",ef"; }
  std::uint16_t wire_codec() const override { return inner_->wire_codec(); }
  std::size_t encoded_bytes(std::int64_t floats, std::int64_t iteration) const override {
    return inner_->encoded_bytes(floats, iteration);
  }
  bool linear() const override { return inner_->linear(); }
  bool unbiased() const override { return false; }
  void encode(Slot slot, const float* in, std::int64_t floats, std::uint8_t* out) override {
    std::vector<float>& residual = residuals_[slot.atom];
    residual.resize(static_cast<std::size_t>(floats), 0.0f);
    corrected_.resize(static_cast<std::size_t>(floats));
    for (std::int64_t i = 0; i < floats; ++i)
      corrected_[static_cast<std::size_t>(i)] = in[i] + residual[static_cast<std::size_t>(i)];
    inner_->encode(slot, corrected_.data(), floats, out);
    const float* sent =
        inner_->decode(slot, out, encoded_bytes(floats, slot.iteration), floats, scratch_);
    for (std::int64_t i = 0; i < floats; ++i)
      residual[static_cast<std::size_t>(i)] = corrected_[static_cast<std::size_t>(i)] - sent[i];
  }
  const float* decode(Slot slot, const std::uint8_t* in, std::size_t size, std::int64_t floats,
                      std::vector<float>& scratch) const override {
    return inner_->decode(slot, in, size, floats, scratch);
  }
  void append_state(std::string& out) const override {
    for (const auto& [atom, r] : residuals_) put_atom_state(out, atom, {&r});
  }
  void set_state(const std::string& s) override {
    std::map<std::int64_t, std::vector<float>> residuals;
    std::vector<float> r;
    for (std::size_t at = 0; at < s.size();) {
      const std::int64_t atom = take_atom_state(s, at, {&r}, name() + " state");
      residuals[atom] = r;
    }
    residuals_ = std::move(residuals);
  }

 private:
  std::unique_ptr<Compressor> inner_;
  std::map<std::int64_t, std::vector<float>> residuals_;
  std::vector<float> corrected_, scratch_;
};

}  // namespace

std::unique_ptr<Compressor> with_error_feedback(std::unique_ptr<Compressor> inner) {
  return std::make_unique<ErrorFeedback>(std::move(inner));
}

void put_atom_state(std::string& out, std::int64_t atom,
                    std::initializer_list<const std::vector<float>*> vectors) {
  const std::int64_t head[2] = {atom, static_cast<std::int64_t>((*vectors.begin())->size())};
  out.append(reinterpret_cast<const char*>(head), sizeof head);
  for (const std::vector<float>* v : vectors)
    out.append(reinterpret_cast<const char*>(v->data()), v->size() * sizeof(float));
}

std::int64_t take_atom_state(const std::string& in, std::size_t& at,
                             std::initializer_list<std::vector<float>*> vectors,
                             const std::string& what) {
  std::int64_t head[2];
  if (in.size() - at < sizeof head) throw InvalidInput(what + ": truncated");
  std::memcpy(head, in.data() + at, sizeof head);
  at += sizeof head;
  const std::uint64_t bytes = static_cast<std::uint64_t>(head[1]) * sizeof(float) * vectors.size();
  if (head[1] < 0 || static_cast<std::uint64_t>(head[1]) > in.size() || bytes > in.size() - at)
    throw InvalidInput(what + ": atom " + std::to_string(head[0]) + " is truncated");
  for (std::vector<float>* v : vectors) {
    v->resize(static_cast<std::size_t>(head[1]));
    std::memcpy(v->data(), in.data() + at, v->size() * sizeof(float));
    at += v->size() * sizeof(float);
  }
  return head[0];
}

void Compressor::set_state(const std::string& state) {
  if (!state.empty()) throw InvalidInput(name() + " keeps no state, but a state was given");
}

}  // namespace dynacomm::compress
