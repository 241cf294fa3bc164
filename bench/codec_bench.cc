// What a BSP worker with a run folder adds per iteration to keep its codec's state before
// the iteration (worker/codec_state.h: the job may end a round earlier than the worker),
// beside what encoding the iteration's push costs anyway: resnet18's units (the shipped
// profile), one atom each, for dgc (momentum and accumulation) and topk with error feedback.
//
//   build/bench/codec_bench
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "compress/push_codec.h"
#include "plan/model/profile.h"

namespace {

using namespace dynacomm;

struct Push {
  std::vector<std::vector<float>> grads;
  std::vector<std::string> out;
};

Push resnet18_push(const compress::PushCodec& codec) {
  const plan::ModelProfile p =
      plan::load_model_profile(std::string(DYNACOMM_PROFILES) + "/resnet18-1x28x28-b32.json");
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0, 1);
  Push push;
  for (const auto& u : p.units) {
    std::vector<float> v(static_cast<std::size_t>(u.params));
    for (float& x : v) x = g(rng);
    push.out.emplace_back(codec.encoded_bytes(0, u.params, 0), '\0');
    push.grads.push_back(std::move(v));
  }
  return push;
}

// One iteration's push: every unit encoded.
void BM_Encode(benchmark::State& state, const std::string& spec) {
  compress::PushCodec codec(spec, 1, 0.9);
  Push push = resnet18_push(codec);
  std::int64_t it = 0;
  for (auto _ : state) {
    for (std::size_t u = 0; u < push.grads.size(); ++u)
      codec.encode(0, {static_cast<std::int64_t>(u), it}, push.grads[u].data(),
                   static_cast<std::int64_t>(push.grads[u].size()),
                   reinterpret_cast<std::uint8_t*>(push.out[u].data()));
    ++it;
  }
}

// The snapshot a BSP worker takes before each iteration, once the state is full.
void BM_Snapshot(benchmark::State& state, const std::string& spec) {
  compress::PushCodec codec(spec, 1, 0.9);
  Push push = resnet18_push(codec);
  for (std::size_t u = 0; u < push.grads.size(); ++u)
    codec.encode(0, {static_cast<std::int64_t>(u), 0}, push.grads[u].data(),
                 static_cast<std::int64_t>(push.grads[u].size()),
                 reinterpret_cast<std::uint8_t*>(push.out[u].data()));
  std::string snapshot;
  codec.state_into(snapshot);  // the first one allocates: the worker's steady state is after
  for (auto _ : state) {
    codec.state_into(snapshot);  // into the last one's memory, as the worker does
    benchmark::DoNotOptimize(snapshot.data());
  }
}

BENCHMARK_CAPTURE(BM_Encode, dgc, std::string("dgc:0.01"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Snapshot, dgc, std::string("dgc:0.01"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, topk_ef, std::string("topk:0.01"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Snapshot, topk_ef, std::string("topk:0.01"))->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
