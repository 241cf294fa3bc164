#include "collective/ring_group.h"

#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <torch/torch.h>

#include <algorithm>
#include <optional>
#include <thread>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <vector>

#include "base/error.h"
#include "net/shaper.h"

namespace dynacomm::collective {

namespace {

using Clock = std::chrono::steady_clock;

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

bool is_timeout(const std::string& message) {
  return message.find("imed out") != std::string::npos ||
         message.find("imeout") != std::string::npos;
}

at::Tensor view(float* data, std::int64_t count) {
  return torch::from_blob(data, {count}, torch::kFloat32);
}
at::Tensor view(c10::Half* data, std::int64_t count) {
  return torch::from_blob(data, {count}, torch::kFloat16);
}

// x as the nearest IEEE half (round to nearest even) would give it back.
float through_half(float x) { return static_cast<float>(c10::Half(x)); }

// Where a bucket's elements go when packed by owner: chunk g holds, in order, the bucket's
// elements in blocks dealt to rank g, and every chunk has the same room (`chunk` elements,
// zero padded), so that Gloo's own ring, which cuts a buffer into equal chunks by position
// (rank g finishing chunk g), sums chunk g exactly as dynacomm's steps do. The room is the
// longest owner's length (the others' are at most kBlock shorter) rounded up to a multiple
// of `segments`, the pieces of at most 1 MiB that Gloo is told to cut each chunk into.
struct Layout {
  struct Run {
    std::int64_t from, count;  // in the bucket
    int owner;
  };
  static constexpr std::int64_t kSegmentBytes = 1 << 20;  // Gloo's default maximum
  std::vector<Run> runs;
  std::vector<std::int64_t> base, length;  // per owner, in the packed buffer
  std::int64_t chunk = 0, segments = 2;    // per owner: room, and Gloo's pieces of it

  Layout(std::int64_t offset, std::int64_t count, int ranks) : base(ranks, 0), length(ranks, 0) {
    const std::int64_t end = offset + count;
    for (std::int64_t b = offset / RingGroup::kBlock; b * RingGroup::kBlock < end; ++b) {
      const std::int64_t lo = std::max(offset, b * RingGroup::kBlock);
      const std::int64_t hi = std::min(end, (b + 1) * RingGroup::kBlock);
      const int owner = static_cast<int>(b % ranks);
      runs.push_back({lo - offset, hi - lo, owner});
      length[owner] += hi - lo;
    }
    chunk = *std::max_element(length.begin(), length.end());
    segments = std::max<std::int64_t>(2, (chunk * 4 + kSegmentBytes - 1) / kSegmentBytes);
    chunk = (chunk + segments - 1) / segments * segments;
    for (int g = 1; g < ranks; ++g) base[g] = base[g - 1] + chunk;
  }
  std::int64_t total() const { return chunk * static_cast<std::int64_t>(base.size()); }

  void pack(const float* data, float* packed) const {
    std::vector<std::int64_t> fill = base;
    for (const Run& r : runs) {
      std::copy(data + r.from, data + r.from + r.count, packed + fill[r.owner]);
      fill[r.owner] += r.count;
    }
    for (std::size_t g = 0; g < base.size(); ++g)
      std::fill(packed + fill[g], packed + base[g] + chunk, 0.f);
  }
  void unpack(const float* packed, float* data) const {
    std::vector<std::int64_t> fill = base;
    for (const Run& r : runs) {
      std::copy(packed + fill[r.owner], packed + fill[r.owner] + r.count, data + r.from);
      fill[r.owner] += r.count;
    }
  }
};

// ProcessGroupGloo, with its Gloo context in reach: allreduce_sum runs Gloo's ring on it
// directly, to choose the segment size that keeps Gloo's chunks on the owners' (c10d's
// allreduce takes Gloo's default).
class GlooGroup : public c10d::ProcessGroupGloo {
 public:
  using ProcessGroupGloo::ProcessGroupGloo;
  std::shared_ptr<::gloo::Context> context() const { return contexts_.front(); }
};

}  // namespace

struct RingGroup::Impl {
  RingGroupOptions options;
  c10::intrusive_ptr<c10d::TCPStore> store;
  c10::intrusive_ptr<c10d::PrefixStore> user_store;
  c10::intrusive_ptr<GlooGroup> group;
  int port = 0;
  std::uint32_t sequence = 0;
  std::int64_t bytes_sent = 0;
  std::optional<net::LinkShaper> up, down;
  std::vector<float> packed, incoming;
  std::vector<c10::Half> packed16, incoming16;  // half_wire: one step's chunks
  int width() const { return options.half_wire ? 2 : 4; }

  int right() const { return (options.rank + 1) % options.size; }
  int left() const { return (options.rank + options.size - 1) % options.size; }

  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what_op, int peer,
            const std::string& what) {
    std::string failure;
    try {
      if (work->wait(options.timeout)) return;
      failure = "not done";
    } catch (const std::exception& e) {
      failure = first_line(e.what());
    }
    const std::string message = what + ": rank " + std::to_string(options.rank) + ": " + what_op +
                                " rank " + std::to_string(peer) + " failed after " +
                                std::to_string(options.timeout.count()) + " ms at most: " + failure;
    if (is_timeout(failure)) throw Timeout(message);
    throw Error(message);
  }

  // Gloo's ring, where each chunk travels towards lower ranks.
  int to() const { return left(); }
  int from() const { return right(); }

  // Whether allreduce_sum runs Gloo's ring as one call: each step paced in user space
  // (emulation, latency) or rounded to half needs dynacomm's own steps.
  bool whole_in_gloo(bool half) const {
    return !options.stepwise && !half && !up && !down && options.emulate.latency_ms <= 0;
  }

  // Gloo's ring all-reduce over `packed`, laid out so that its chunks are the owners'.
  void gloo_allreduce(const Layout& layout, const std::string& what) {
    ::gloo::AllreduceOptions o(group->context());
    o.setOutput(packed.data(), static_cast<std::size_t>(layout.total()));
    o.setReduceFunction(
        static_cast<void (*)(void*, const void*, const void*, std::size_t)>(&::gloo::sum<float>));
    o.setTag(0x40000000u | (sequence++ & 0x3fffffffu));
    o.setMaxSegmentSize(static_cast<std::size_t>(layout.chunk / layout.segments * 4));
    o.setTimeout(options.timeout);
    try {
      ::gloo::allreduce(o);
    } catch (const std::exception& e) {
      const std::string failure = first_line(e.what());
      const std::string message =
          what + ": rank " + std::to_string(options.rank) + ": ring with rank " +
          std::to_string(from()) + " (receiving) and rank " + std::to_string(to()) +
          " (sending) failed after " + std::to_string(options.timeout.count()) +
          " ms at most: " + failure;
      if (is_timeout(failure)) throw Timeout(message);
      throw Error(message);
    }
    bytes_sent += 2 * (options.size - 1) * layout.chunk * 4;
  }

  // The ring's sum of data[0..count), elements owned by their index from `offset` on,
  // every partial sum rounded to half on the wire when `half`.
  void sum(float* data, std::int64_t count, std::int64_t offset, const std::string& label,
           bool half) {
    const int p = options.size, r = options.rank;
    if (p == 1 || count == 0) return;
    const Layout layout(offset, count, p);
    packed.resize(static_cast<std::size_t>(layout.total()));
    layout.pack(data, packed.data());
    if (whole_in_gloo(half)) {
      gloo_allreduce(layout, label);
      layout.unpack(packed.data(), data);
      return;
    }
    incoming.resize(static_cast<std::size_t>(layout.chunk));
    // Reduce-scatter as Gloo's: chunk g starts at rank g-1 and gathers each rank's values
    // going down the ring, ending at rank g.
    for (int k = 0; k + 1 < p; ++k) {
      const int out = (r + 1 + k) % p, in = (r + 2 + k) % p;
      step(layout, out, in, half, label + " (reduce step " + std::to_string(k) + ")");
      float* acc = packed.data() + layout.base[in];
      for (std::int64_t j = 0; j < layout.length[in]; ++j) acc[j] = incoming[j] + acc[j];
    }
    if (half) {  // this rank's finished chunk, as the others will receive it
      float* mine = packed.data() + layout.base[r];
      for (std::int64_t j = 0; j < layout.length[r]; ++j) mine[j] = through_half(mine[j]);
    }
    // All-gather: each rank's finished chunk goes round.
    for (int k = 0; k + 1 < p; ++k) {
      const int out = (r + k) % p, in = (r + 1 + k) % p;
      step(layout, out, in, half, label + " (gather step " + std::to_string(k) + ")");
      std::copy(incoming.begin(), incoming.begin() + layout.length[in],
                packed.begin() + layout.base[in]);
    }
    layout.unpack(packed.data(), data);
  }

  // One ring step: chunk `out` of `packed` to the next rank down, chunk `in` from the next
  // up into `incoming`, paced by the emulation.
  void step(const Layout& layout, int out, int in, bool half, const std::string& what) {
    const Clock::time_point start = Clock::now();
    const std::int64_t n_out = layout.length[out], n_in = layout.length[in];
    const int tag = static_cast<int>(sequence++ & 0x3fffffffu);
    c10::intrusive_ptr<c10d::Work> received, sent;
    const int width = half ? 2 : 4;
    if (half) {
      incoming16.resize(static_cast<std::size_t>(n_in));
      packed16.resize(static_cast<std::size_t>(n_out));
      const float* from = packed.data() + layout.base[out];
      for (std::int64_t j = 0; j < n_out; ++j) packed16[j] = c10::Half(from[j]);
    }
    std::vector<at::Tensor> in_tensors{half ? view(incoming16.data(), n_in)
                                            : view(incoming.data(), n_in)};
    if (n_in > 0) received = group->recv(in_tensors, from(), tag);
    std::optional<Clock::time_point> in_by;
    if (down) in_by = down->deliver_at(start, n_in * width);
    if (up) {
      std::this_thread::sleep_until(up->deliver_at(start, n_out * width));
    } else if (options.emulate.latency_ms > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(
          options.emulate.latency_ms));
    }
    std::vector<at::Tensor> out_tensors{half ? view(packed16.data(), n_out)
                                             : view(packed.data() + layout.base[out], n_out)};
    if (n_out > 0) sent = group->send(out_tensors, to(), tag);
    if (sent) wait(sent, "send to", to(), what);
    if (received) wait(received, "receive from", from(), what);
    if (half)
      for (std::int64_t j = 0; j < n_in; ++j) incoming[j] = static_cast<float>(incoming16[j]);
    if (in_by) std::this_thread::sleep_until(*in_by);
    bytes_sent += n_out * width;
  }
};

RingGroup::RingGroup(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RingGroup::~RingGroup() = default;

std::unique_ptr<RingGroup> RingGroup::connect(const RingGroupOptions& o) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size)
    throw InvalidInput("all-reduce group: rank " + std::to_string(o.rank) + " of " +
                       std::to_string(o.size) + " workers");
  if (o.store_port < 0 || o.store_port > 65535 || (o.rank > 0 && o.store_port == 0))
    throw InvalidInput("all-reduce group: store port " + std::to_string(o.store_port));
  auto impl = std::make_unique<Impl>();
  impl->options = o;
  const std::chrono::milliseconds join = std::max(o.timeout, o.join_timeout);
  const std::string where = o.store_host + ":" + std::to_string(o.store_port);
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(o.store_port);
    so.isServer = o.rank == 0;
    so.numWorkers = static_cast<std::size_t>(o.size);
    so.waitWorkers = false;  // the group's rendezvous waits, with the timeout
    so.timeout = join;
    impl->store = c10::make_intrusive<c10d::TCPStore>(o.store_host, so);
    impl->port = impl->store->getPort();
    impl->user_store = c10::make_intrusive<c10d::PrefixStore>("dynacomm", impl->store);
    auto gloo = c10d::ProcessGroupGloo::Options::create(join);
    gloo->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(o.host));
    auto ring_store = c10::make_intrusive<c10d::PrefixStore>("gloo", impl->store);
    impl->group = c10::make_intrusive<GlooGroup>(ring_store, o.rank, o.size, gloo);
  } catch (const std::exception& e) {
    const std::string message = "all-reduce group: rank " + std::to_string(o.rank) + " of " +
                                std::to_string(o.size) + " could not join at " + where +
                                " (this worker at " + o.host + ") within " +
                                std::to_string(join.count()) + " ms: " + first_line(e.what());
    if (is_timeout(e.what())) throw Timeout(message);
    throw Error(message);
  }
  if (o.emulate.up_bps > 0) impl->up.emplace(o.emulate.up_bps, o.emulate.latency_ms);
  if (o.emulate.down_bps > 0) impl->down.emplace(o.emulate.down_bps, 0.0);
  return std::unique_ptr<RingGroup>(new RingGroup(std::move(impl)));
}

int RingGroup::rank() const { return impl_->options.rank; }
int RingGroup::size() const { return impl_->options.size; }
int RingGroup::port() const { return impl_->port; }
std::int64_t RingGroup::bytes_sent() const { return impl_->bytes_sent; }
int RingGroup::wire_bytes() const { return impl_->width(); }

void RingGroup::allreduce_sum(float* data, std::int64_t count, std::int64_t offset,
                              const std::string& what) {
  impl_->sum(data, count, offset, "all-reduce " + what, impl_->options.half_wire);
}

// A sum over the ring in which only the root's values are not -0.0, the identity of float
// addition (x + -0.0 is x for every x, +0.0 and -0.0 included): every rank ends with the
// root's bits, and each link carries 2(P-1)/P of the data, where a one-to-all broadcast
// puts P-1 copies on the root's uplink (about two minutes for resnet18 to 7 peers at
// 20 Mbit/s).
// Its bytes are not counted in bytes_sent (the training's traffic).
void RingGroup::broadcast(float* data, std::int64_t count, int root, const std::string& what) {
  Impl& m = *impl_;
  if (root < 0 || root >= m.options.size)
    throw InvalidInput("broadcast " + what + ": no rank " + std::to_string(root) + " of " +
                       std::to_string(m.options.size));
  if (m.options.size == 1 || count == 0) return;
  if (m.options.rank != root) std::fill(data, data + count, -0.0f);
  const std::int64_t counted = m.bytes_sent;
  m.sum(data, count, 0, "broadcast from rank " + std::to_string(root) + ", " + what, false);
  m.bytes_sent = counted;
}

void RingGroup::exchange(const float* data, std::int64_t count, const std::vector<int>& peers,
                         const std::vector<float*>& from, const std::string& what) {
  Impl& m = *impl_;
  if (from.size() != peers.size())
    throw InvalidInput("gossip " + what + ": " + std::to_string(peers.size()) + " peers but " +
                       std::to_string(from.size()) + " buffers");
  for (int p : peers)
    if (p < 0 || p >= m.options.size || p == m.options.rank)
      throw InvalidInput("gossip " + what + ": rank " + std::to_string(m.options.rank) +
                         " cannot exchange with rank " + std::to_string(p));
  if (peers.empty() || count == 0) return;
  const Clock::time_point start = Clock::now();
  const int tag = static_cast<int>(m.sequence++ & 0x3fffffffu);
  const std::int64_t bytes = count * 4 * static_cast<std::int64_t>(peers.size());
  std::vector<c10::intrusive_ptr<c10d::Work>> received, sent;
  for (std::size_t k = 0; k < peers.size(); ++k) {
    std::vector<at::Tensor> in{view(from[k], count)};
    received.push_back(m.group->recv(in, peers[k], tag));
  }
  std::optional<Clock::time_point> in_by;
  if (m.down) in_by = m.down->deliver_at(start, bytes);
  if (m.up) {
    std::this_thread::sleep_until(m.up->deliver_at(start, bytes));
  } else if (m.options.emulate.latency_ms > 0) {
    std::this_thread::sleep_for(
        std::chrono::duration<double, std::milli>(m.options.emulate.latency_ms));
  }
  for (int p : peers) {
    std::vector<at::Tensor> out{view(const_cast<float*>(data), count)};
    sent.push_back(m.group->send(out, p, tag));
  }
  const std::string label = "gossip " + what;
  for (std::size_t k = 0; k < peers.size(); ++k) m.wait(sent[k], "send to", peers[k], label);
  for (std::size_t k = 0; k < peers.size(); ++k)
    m.wait(received[k], "receive from", peers[k], label);
  if (in_by) std::this_thread::sleep_until(*in_by);
  m.bytes_sent += bytes;
}

void RingGroup::set_emulation(const RingEmulation& e) {
  Impl& m = *impl_;
  m.options.emulate = e;
  m.up.reset();
  m.down.reset();
  if (e.up_bps > 0) m.up.emplace(e.up_bps, e.latency_ms);
  if (e.down_bps > 0) m.down.emplace(e.down_bps, 0.0);
}

void RingGroup::publish(const std::string& key, const std::string& value) {
  impl_->user_store->set(key, std::vector<std::uint8_t>(value.begin(), value.end()));
}

std::string RingGroup::read(const std::string& key) {
  try {
    std::vector<std::uint8_t> v = impl_->user_store->get(key);
    return std::string(v.begin(), v.end());
  } catch (const std::exception& e) {
    throw Timeout("all-reduce group: rank " + std::to_string(impl_->options.rank) + ": '" + key +
                  "' not published within " + std::to_string(impl_->options.timeout.count()) +
                  " ms: " + first_line(e.what()));
  }
}

}  // namespace dynacomm::collective
