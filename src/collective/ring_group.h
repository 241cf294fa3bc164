// The workers of --arch allreduce as one group: a c10d TCPStore rendezvous (rank 0 serves
// it) and libtorch's ProcessGroupGloo over TCP, with an all-reduce whose bits do not
// depend on the buckets.
//
// Gloo's ring splits each call's buffer into per-rank chunks by position in that buffer,
// so called on a bucket as it is, the order in which the workers' values of one element
// are added would depend on where the element falls in its bucket; with three or more
// workers two bucket plans would differ in the last bits (float addition is commutative,
// not associative). Here an element's chunk is fixed by its index in the model's flat
// gradient (blocks of kBlock elements, dealt to the ranks in turn): allreduce_sum packs the
// bucket by owner, each owner's chunk padded to the same room, and runs Gloo's ring on that
// (its segment size chosen so that Gloo's chunks are the owners'), so element i is always
// summed as ((x_{g-1} + x_{g-2}) + ...) + x_g for its owner g, whatever the buckets: every
// bucket plan gives the same bits. The cost is Gloo's ring's, 2(P-1) steps of about B/P
// bytes (plan/model/ring.h), plus the packing (a memcpy). Where each step must be paced
// or rounded (emulation, latency, half_wire), dynacomm runs the same ring itself, step by
// step, on Gloo's send/recv: the same order, so the same bits. With half_wire the steps
// carry half as many bytes.
//
// With `emulate` set, each step's transfer is paced in user space like the PS's links
// (net/shaper.h: the uplink's token bucket and the latency before a send, the downlink's
// before a receive completes); under kernel-shaped links only the latency is added.
//
//   auto g = RingGroup::connect({"10.0.0.1", 29500, "10.0.0.2", rank, 4, 60s});
//   g->broadcast(params, n, 0);
//   g->allreduce_sum(grads + off, count, off, "iteration 7 bucket 2");
//
// One thread at a time calls a group, and every rank makes the same calls in the same
// order (the same buckets); a mismatch or a lost peer ends in Error or Timeout naming the
// peer's rank, the step and `what`, never a hang.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dynacomm::collective {

struct RingEmulation {
  double down_bps = 0, up_bps = 0;  // 0: not paced (a kernel-shaped or real link)
  double latency_ms = 0;            // one way, added to every step
};

struct RingGroupOptions {
  std::string store_host = "127.0.0.1";  // where rank 0 serves the rendezvous
  int store_port = 0;                    // rank 0 with 0: an ephemeral port (see port())
  std::string host = "127.0.0.1";        // this worker's address, for its Gloo device
  int rank = 0, size = 1;
  std::chrono::milliseconds timeout{60000};  // every step, and the rendezvous
  RingEmulation emulate;
  std::chrono::milliseconds join_timeout{0};  // the rendezvous, when longer (0: timeout)
  // allreduce_sum's chunks travel as IEEE half (--compress fp16): each step's partial sums
  // are rounded to half on the wire and added in float; the owner rounds its finished
  // chunk the same way before the all-gather, so every rank ends with the same bits (and
  // every bucket plan too: the rounding happens per element at the same steps).
  bool half_wire = false;
  // Runs allreduce_sum as dynacomm's own steps even where one call of Gloo's ring would do
  // (the same bits, slower: ring_bench); emulation, latency and half_wire need the steps.
  bool stepwise = false;
};

class RingGroup {
 public:
  static constexpr std::int64_t kBlock = 256;  // elements per ownership block

  // Joins the group: waits (up to the timeout) for every rank. Throws InvalidInput for bad
  // options, Timeout naming the store and the ranks missing.
  static std::unique_ptr<RingGroup> connect(const RingGroupOptions& options);
  ~RingGroup();

  int rank() const;
  int size() const;
  int port() const;  // the store's port (rank 0 chooses it with store_port 0)

  // Replaces data[0..count) with its sum over the ranks; `offset` is data[0]'s index in
  // the flat gradient (it fixes each element's owner, hence the summation order).
  void allreduce_sum(float* data, std::int64_t count, std::int64_t offset,
                     const std::string& what);
  // Sends data[0..count) to every rank in `peers` (none of them this one) and receives
  // count floats from each into from[k] (gossip: plan/model/gossip.h). Ranks that exchange
  // make the same number of exchange calls in the same order. Paced by the emulation: the
  // uplink carries one copy per peer, the downlink as many.
  void exchange(const float* data, std::int64_t count, const std::vector<int>& peers,
                const std::vector<float*>& from, const std::string& what);
  // Every rank's data[0..count) becomes root's, bit for bit: a sum over the ring to which
  // the other ranks add -0.0 (float32 on the wire even with half_wire; not in bytes_sent).
  void broadcast(float* data, std::int64_t count, int root, const std::string& what);
  // The emulated link from now on (a link trace's row; between calls, never during one).
  void set_emulation(const RingEmulation& emulate);
  // A value every rank publishes and every rank reads back through the store (plans).
  void publish(const std::string& key, const std::string& value);
  std::string read(const std::string& key);

  std::int64_t bytes_sent() const;  // over the ring so far, this rank
  int wire_bytes() const;           // per element of allreduce_sum: 4, or 2 with half_wire

  struct Impl;

 private:
  explicit RingGroup(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dynacomm::collective
