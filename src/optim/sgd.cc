#include "optim/sgd.h"

#include <cmath>

#include "base/error.h"

namespace dynacomm::optim {

LrSchedule parse_lr_schedule(const std::string& s) {
  if (s == "constant") return LrSchedule::kConstant;
  if (s == "cosine") return LrSchedule::kCosine;
  throw InvalidInput("learning-rate schedule '" + s + "': expected constant or cosine");
}

void SgdOptions::validate() const {
  if (!std::isfinite(lr) || lr <= 0) throw InvalidInput("sgd: lr must be positive");
  if (!std::isfinite(momentum) || momentum < 0 || momentum >= 1)
    throw InvalidInput("sgd: momentum must be in [0, 1)");
  if (!std::isfinite(weight_decay) || weight_decay < 0)
    throw InvalidInput("sgd: weight_decay must be >= 0");
}

double SgdOptions::lr_at(std::int64_t iteration) const {
  if (schedule == LrSchedule::kConstant) return lr;
  double progress =
      std::min(1.0, static_cast<double>(iteration) / static_cast<double>(total_iterations));
  return 0.5 * lr * (1 + std::cos(M_PI * progress));
}

Sgd::Sgd(const SgdOptions& options, const std::vector<std::int64_t>& unit_sizes)
    : options_(options), started_(unit_sizes.size(), false) {
  options_.validate();
  if (options_.schedule == LrSchedule::kCosine && options_.total_iterations <= 0)
    throw InvalidInput("sgd: the cosine schedule needs the total number of iterations");
  for (auto n : unit_sizes) velocity_.emplace_back(static_cast<std::size_t>(n), 0.f);
}

void Sgd::step(int unit, float* params, const float* grads, std::int64_t iteration,
               double lr_scale) {
  auto& v = velocity_.at(static_cast<std::size_t>(unit));
  const float lr = static_cast<float>(options_.lr_at(iteration) * lr_scale);
  const float wd = static_cast<float>(options_.weight_decay);
  const float mu = static_cast<float>(options_.momentum);
  const bool first = !started_[static_cast<std::size_t>(unit)];
  started_[static_cast<std::size_t>(unit)] = true;
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) {
    float d = grads[i] + wd * params[i];
    if (mu != 0.f) {
      v[i] = first ? d : mu * v[i] + d;
      d = options_.nesterov ? d + mu * v[i] : v[i];
    }
    params[i] -= lr * d;
  }
}

const std::vector<float>& Sgd::velocity(int unit) const {
  return velocity_.at(static_cast<std::size_t>(unit));
}

bool Sgd::started(int unit) const { return started_.at(static_cast<std::size_t>(unit)); }

void Sgd::restore(int unit, std::vector<float> velocity, bool started) {
  auto& v = velocity_.at(static_cast<std::size_t>(unit));
  if (velocity.size() != v.size())
    throw InvalidInput("sgd: unit " + std::to_string(unit) + " has " + std::to_string(v.size()) +
                       " parameters, the state to restore " + std::to_string(velocity.size()));
  v = std::move(velocity);
  started_[static_cast<std::size_t>(unit)] = started;
}

}  // namespace dynacomm::optim
