#include "worker/local_steps.h"

#include <algorithm>

namespace dynacomm::worker {
namespace {
optim::LocalSgd schedule_of(const std::string& sync) {
  const std::optional<optim::LocalSgd> s = optim::LocalSgd::parse(sync);
  return s ? *s : optim::LocalSgd();
}
}  // namespace

LocalSteps::LocalSteps(const WorkerOptions& o, model::Model& model, std::int64_t total_steps)
    : local_(optim::LocalSgd::parse(o.sync).has_value()),
      schedule_(schedule_of(o.sync)),
      total_(total_steps),
      sgd_(o.sgd),
      model_(model) {
  if (sgd_.total_iterations <= 0) sgd_.total_iterations = std::max<std::int64_t>(1, rounds());
}

void LocalSteps::before_step(std::int64_t step) {
  if (local_) model_.accumulate_gradients(!schedule_.pulls(step));
}

void LocalSteps::after_forward(std::int64_t step) {
  if (!local_ || !schedule_.pulls(step)) return;
  pulled_.resize(static_cast<std::size_t>(model_.num_units()));
  for (int u = 0; u < model_.num_units(); ++u)
    pulled_[static_cast<std::size_t>(u)].assign(model_.params(u),
                                                model_.params(u) + model_.units()[u].params);
}

void LocalSteps::after_step(std::int64_t step) {
  if (!local_ || schedule_.pushes(step, total_)) return;
  const auto lr = static_cast<float>(sgd_.lr_at(schedule_.round_of(step)));
  for (int u = 0; u < model_.num_units(); ++u) {
    float* w = model_.params(u);
    const float* g = model_.grads(u);
    const std::vector<float>& w0 = pulled_[static_cast<std::size_t>(u)];
    for (std::size_t i = 0; i < w0.size(); ++i) w[i] = w0[i] - lr * g[i];
  }
}

void LocalSteps::with_round_weights(const std::function<void()>& f) {
  if (pulled_.empty()) return f();
  std::vector<std::vector<float>> own(pulled_.size());
  for (int u = 0; u < model_.num_units(); ++u) {
    const auto n = static_cast<std::size_t>(model_.units()[u].params);
    own[static_cast<std::size_t>(u)].assign(model_.params(u), model_.params(u) + n);
    std::copy(pulled_[static_cast<std::size_t>(u)].begin(),
              pulled_[static_cast<std::size_t>(u)].end(), model_.params(u));
  }
  auto put_back = [&] {
    for (int u = 0; u < model_.num_units(); ++u)
      std::copy(own[static_cast<std::size_t>(u)].begin(), own[static_cast<std::size_t>(u)].end(),
                model_.params(u));
  };
  try {
    f();
  } catch (...) {
    put_back();
    throw;
  }
  put_back();
}

}  // namespace dynacomm::worker
