// dynacomm's ring all-reduce (collective/ring_group.h) against c10d's own Gloo all-reduce
// (ProcessGroupGloo::allreduce, what PyTorch DDP calls per bucket), side by side on
// loopback, the ranks as threads: one bucket of resnet18's gradient (11.2 M floats) and
// one of mobilenetv2's (2.2 M). Loopback is unshaped, so this measures the collectives'
// own work on the cores (for our ring, packing by owner among it), which a slow link hides.
// dynacomm's ring runs both ways: one call of Gloo's ring on the packed buffer, and its
// own steps on Gloo's send/recv.
//
//   build/bench/ring_bench
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "collective/ring_group.h"
#include "net/free_port.h"

namespace {

using namespace dynacomm;
using AllReduce = std::function<void(std::vector<float>&)>;
constexpr std::chrono::milliseconds kTimeout(60000);

// Makes one all-reduce per rank (make(r) runs on `ranks` threads at once: they join a group).
std::vector<AllReduce> join(int ranks, const std::function<AllReduce(int)>& make) {
  std::vector<AllReduce> out(ranks);
  std::vector<std::exception_ptr> errors(ranks);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        out[r] = make(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

// Each timed iteration: every rank all-reduces its `floats`; rank 0 on the main thread,
// the others following it through a go/done handshake.
void time_allreduce(benchmark::State& state, std::vector<AllReduce> ranks, std::int64_t floats) {
  const int n = static_cast<int>(ranks.size());
  std::vector<std::vector<float>> data(n, std::vector<float>(floats));
  std::atomic<int> go{0}, done{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> peers;
  for (int r = 1; r < n; ++r)
    peers.emplace_back([&, r] {
      for (int seen = 0;; ++seen) {
        while (go.load() == seen && !stop.load()) std::this_thread::yield();
        if (stop.load()) return;
        ranks[r](data[r]);
        done.fetch_add(1);
      }
    });
  for (auto _ : state) {
    state.PauseTiming();  // the same values every time: no overflow to inf
    for (auto& d : data) std::fill(d.begin(), d.end(), 0.25f);
    done.store(0);
    state.ResumeTiming();
    go.fetch_add(1);
    ranks[0](data[0]);
    while (done.load() < n - 1) std::this_thread::yield();
  }
  stop.store(true);
  for (auto& t : peers) t.join();
  state.SetBytesProcessed(state.iterations() * floats * 4);
}

// dynacomm's all-reduce: Gloo's ring in one call (stepwise false, what kernel-shaped and
// real links run), or dynacomm's own steps (what emulation, latency and fp16 run).
void dynacomm_ring(benchmark::State& state, bool stepwise) {
  const int ranks = static_cast<int>(state.range(0));
  const int port = net::free_tcp_port();
  auto all = join(ranks, [&](int r) -> AllReduce {
    collective::RingGroupOptions o;
    o.store_port = port;
    o.rank = r;
    o.size = ranks;
    o.timeout = kTimeout;
    o.stepwise = stepwise;
    std::shared_ptr<collective::RingGroup> g = collective::RingGroup::connect(o);
    return [g](std::vector<float>& d) {
      g->allreduce_sum(d.data(), static_cast<std::int64_t>(d.size()), 0, "bench");
    };
  });
  time_allreduce(state, std::move(all), state.range(1));
}

void BM_DynacommRing(benchmark::State& state) { dynacomm_ring(state, false); }
void BM_DynacommRingStepwise(benchmark::State& state) { dynacomm_ring(state, true); }

void BM_GlooAllreduce(benchmark::State& state) {
  const int ranks = static_cast<int>(state.range(0));
  const int port = net::free_tcp_port();
  auto all = join(ranks, [&](int r) -> AllReduce {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(port);
    so.isServer = r == 0;
    so.numWorkers = static_cast<std::size_t>(ranks);
    so.timeout = kTimeout;
    auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", so);
    auto options = c10d::ProcessGroupGloo::Options::create(kTimeout);
    options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    auto group = c10::make_intrusive<c10d::ProcessGroupGloo>(store, r, ranks, options);
    return [store, group](std::vector<float>& d) {
      std::vector<at::Tensor> t{
          torch::from_blob(d.data(), {static_cast<std::int64_t>(d.size())}, torch::kFloat32)};
      group->allreduce(t)->wait(kTimeout);
    };
  });
  time_allreduce(state, std::move(all), state.range(1));
}

// 4 ranks; resnet18's gradient, then mobilenetv2's.
#define RING_ARGS                     \
  ArgNames({"ranks", "floats"})       \
      ->Args({4, 11'170'000})         \
      ->Args({4, 2'237'000})          \
      ->Args({8, 11'170'000})         \
      ->Unit(benchmark::kMillisecond) \
      ->UseRealTime()                 \
      ->MinTime(2.0)
BENCHMARK(BM_DynacommRing)->RING_ARGS;
BENCHMARK(BM_DynacommRingStepwise)->RING_ARGS;
BENCHMARK(BM_GlooAllreduce)->RING_ARGS;

}  // namespace

BENCHMARK_MAIN();
