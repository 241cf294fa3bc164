// Planning time of every strategy for models of 50..1000 units (ResNet-152 has ~150
// parameter-owning units). The target: dynacomm plans 150 units in under 1 ms. And
// dynacomm-fd's search on the shipped mobilenetv2 and resnet18 profiles, for one worker and
// for 4 workers whose compute differs (its shortlist predicted with the model of several
// workers), as a job plans after its warm-up.
//
//   build/bench/plan_bench --benchmark_filter=dynacomm
//   build/bench/plan_bench --benchmark_filter=DynacommFd
#include <benchmark/benchmark.h>

#include <random>
#include <string>

#include "plan/model/profile.h"
#include "plan/planners/dynacomm.h"
#include "plan/planners/planner.h"

namespace {

using namespace dynacomm::plan;

// A ResNet-like profile: sizes spread over 4 orders of magnitude, compute 0.1..20 ms.
ModelProfile synthetic_profile(int units) {
  std::mt19937_64 rng(units);
  std::uniform_real_distribution<double> log_bytes(9, 16);  // ~8 KB .. 9 MB
  std::uniform_real_distribution<double> ms(0.1, 20);
  ModelProfile p;
  p.model = "synthetic-" + std::to_string(units);
  p.batch = 32;
  for (int u = 0; u < units; ++u) {
    std::int64_t bytes = static_cast<std::int64_t>(std::exp(log_bytes(rng)));
    p.units.push_back({"u" + std::to_string(u), bytes / 4, bytes, ms(rng), 2 * ms(rng)});
  }
  return p;
}

// 100 Mbit/s down, 20 Mbit/s up, 2 ms per transmission, 10 ms away: overhead small enough
// that the optimum has many segments, i.e. the DP's pruning helps little.
const LinkProfile kLink{100e6, 20e6, 2, 2, 10};

void BM_Planner(benchmark::State& state, const std::string& name) {
  ModelProfile p = synthetic_profile(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(make_plan(name, p, kLink, PlannerOptions{}));
  state.counters["units"] = static_cast<double>(state.range(0));
}

void BM_DynacommNoOverhead(benchmark::State& state) {
  // Worst case for the pull DP: with no per-transmission cost nothing is pruned.
  ModelProfile p = synthetic_profile(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(optimal_pull(p, kLink.without_overhead()));
}

// A job's planning after its warm-up: 100 Mbit/s both ways, 10 ms away, compute 1.15x
// slower under a busy link; with 4 workers a spread of two iterations whose units vary by
// up to 25% either way.
void BM_DynacommFd(benchmark::State& state, const std::string& model, int workers) {
  const ModelProfile p =
      load_model_profile(std::string(DYNACOMM_PROFILES) + "/" + model + "-1x28x28-b32.json");
  LinkProfile link{100e6, 100e6, 0.5, 0.5, 10};
  link.compute_stretch_down = link.compute_stretch_up = 1.15;
  PlannerOptions o;
  o.workers = workers;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> factor(0.8, 1.25);
  for (int k = 0; k < 2 && workers > 1; ++k) {
    ComputeFactors f;
    for (std::size_t u = 0; u < p.units.size(); ++u) {
      f.forward.push_back(factor(rng));
      f.backward.push_back(factor(rng));
    }
    o.compute_spread.push_back(std::move(f));
  }
  for (auto _ : state) benchmark::DoNotOptimize(make_plan("dynacomm-fd", p, link, o));
}

void Sizes(benchmark::internal::Benchmark* b) {
  for (int n : {50, 150, 300, 1000}) b->Arg(n);
  b->Unit(benchmark::kMicrosecond);
}

}  // namespace

BENCHMARK_CAPTURE(BM_Planner, dynacomm, std::string("dynacomm"))->Apply(Sizes);
BENCHMARK(BM_DynacommNoOverhead)->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Planner, greedy, std::string("greedy"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Planner, mgwfbp, std::string("mgwfbp"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_Planner, bucket, std::string("bucket"))->Apply(Sizes);
BENCHMARK_CAPTURE(BM_DynacommFd, mobilenetv2_1_worker, std::string("mobilenetv2"), 1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DynacommFd, mobilenetv2_4_workers, std::string("mobilenetv2"), 4)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DynacommFd, resnet18_1_worker, std::string("resnet18"), 1)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DynacommFd, resnet18_4_workers, std::string("resnet18"), 4)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
