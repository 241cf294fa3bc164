#include "train/profiler.h"

#include <sys/utsname.h>
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "base/stats.h"
#include "data/synthetic.h"

namespace dynacomm::train {

namespace {

using Clock = std::chrono::steady_clock;

class Stopwatch : public model::UnitObserver {
 public:
  explicit Stopwatch(int units) : gate_(units), ready_(units) {}
  void before_forward(int unit) override { gate_[unit] = Clock::now(); }
  void gradients_ready(int unit) override {
    std::lock_guard<std::mutex> lock(mu_);
    ready_[unit] = Clock::now();
  }
  std::vector<Clock::time_point> gate_, ready_;
  std::mutex mu_;
};

double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

void ProfileOptions::validate() const {
  if (batch < 1) throw InvalidInput("--batch must be at least 1");
  if (threads < 1) throw InvalidInput("--threads must be at least 1");
  if (iterations < 1) throw InvalidInput("--iterations must be at least 1");
  if (warmup < 0) throw InvalidInput("--warmup must be >= 0");
  if (classes < 0) throw InvalidInput("--classes must be >= 0");
}

std::string machine_description() {
  struct utsname u;
  std::string arch = ::uname(&u) == 0 ? u.machine : "unknown";
  std::string cpu;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  return arch + (cpu.empty() ? "" : ", " + cpu) + ", " +
         std::to_string(std::thread::hardware_concurrency()) + " cores";
}

plan::ModelProfile profile_model(const ProfileOptions& o) {
  o.validate();
  torch::set_num_threads(o.threads);
  const bool small = o.input.height < 64 || o.input.width < 64;
  const int classes = o.classes > 0 ? o.classes : (small ? 10 : 1000);
  auto model = model::make_model({o.model, o.input, classes, o.seed});
  const int n = model->num_units();
  Stopwatch watch(n);
  model->set_observer(&watch);
  model->train(true);
  data::SyntheticSource source(o.input.channels, o.input.height, o.input.width, classes, o.seed);

  std::vector<std::vector<double>> fwd(n), bwd(n);
  for (int it = 0; it < o.warmup + o.iterations; ++it) {
    data::Batch b = source.next(o.batch);
    torch::Tensor x = torch::from_blob(b.images.data(),
                                       {o.batch, o.input.channels, o.input.height, o.input.width});
    torch::Tensor y = torch::from_blob(b.labels.data(), {o.batch}, torch::kInt64);
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    const auto forward_end = Clock::now();
    loss.backward();
    if (it < o.warmup) continue;
    // Time all of units u..L-1 are ready, walking down; backward starts at forward_end.
    std::vector<Clock::time_point> all_ready(n + 1);
    all_ready[n] = forward_end;
    for (int u = n - 1; u >= 0; --u) all_ready[u] = std::max(all_ready[u + 1], watch.ready_[u]);
    for (int u = 0; u < n; ++u) {
      fwd[u].push_back(ms(watch.gate_[u], u + 1 < n ? watch.gate_[u + 1] : forward_end));
      bwd[u].push_back(ms(all_ready[u + 1], all_ready[u]));
    }
  }
  model->set_observer(nullptr);

  plan::ModelProfile p;
  p.model = o.model;
  p.batch = o.batch;
  p.input = o.input.str();
  p.machine = machine_description();
  p.measured_with = "dynacomm profile, libtorch " TORCH_VERSION ", " + std::to_string(o.threads) +
                    " thread(s), median of " + std::to_string(o.iterations) + " iterations after " +
                    std::to_string(o.warmup) + " warm-up";
  for (int u = 0; u < n; ++u) {
    const auto& info = model->units()[u];
    p.units.push_back({info.name, info.params, info.bytes(), median(fwd[u]), median(bwd[u])});
  }
  p.validate();
  return p;
}

}  // namespace dynacomm::train
