#include "ps/delay_compensation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "base/error.h"

namespace dynacomm::ps {

DelayCompensation::DelayCompensation(double lambda0, int workers, std::size_t floats)
    : lambda0_(static_cast<float>(lambda0)),
      floats_(floats),
      read_(static_cast<std::size_t>(workers)),
      mean_square_(floats, 0.f) {
  if (!std::isfinite(lambda0) || lambda0 < 0)
    throw InvalidInput("asp: the delay compensation's lambda0 must be >= 0, not " +
                       std::to_string(lambda0));
  if (workers < 1) throw InvalidInput("asp: delay compensation for no workers");
}

void DelayCompensation::read(int rank, const float* params) {
  read_.at(static_cast<std::size_t>(rank)).assign(params, params + floats_);
}

void DelayCompensation::correct(int rank, const float* grads, const float* params, float* out) {
  const std::vector<float>& w_read = read_.at(static_cast<std::size_t>(rank));
  const bool known = w_read.size() == floats_;
  for (std::size_t k = 0; k < floats_; ++k) {
    const float g = grads[k];
    float& ms = mean_square_[k];
    ms = std::min(0.95f * ms + 0.05f * g * g, std::numeric_limits<float>::max());
    if (!known) {
      out[k] = g;
      continue;
    }
    const float lambda = lambda0_ / std::sqrt(ms + 1e-12f);
    const float c = g + lambda * g * g * (params[k] - w_read[k]);
    out[k] = std::isfinite(c) ? c : g;  // a gradient near float's range: left as it came
  }
}

void DelayCompensation::forget(int rank) { read_.at(static_cast<std::size_t>(rank)).clear(); }

void DelayCompensation::forget_all() {
  for (auto& r : read_) r.clear();
}

}  // namespace dynacomm::ps
