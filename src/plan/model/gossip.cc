#include "plan/model/gossip.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace dynacomm::plan {

Topology parse_topology(const std::string& name) {
  if (name == "ring") return Topology::kRing;
  if (name == "torus") return Topology::kTorus;
  throw InvalidInput("gossip: unknown topology '" + name + "' (known: ring, torus)");
}

std::string topology_name(Topology t) { return t == Topology::kRing ? "ring" : "torus"; }

std::pair<int, int> torus_shape(int size) {
  int rows = 1;
  for (int r = 1; r * r <= size; ++r)
    if (size % r == 0) rows = r;
  return {rows, size / std::max(rows, 1)};
}

std::vector<int> gossip_neighbours(Topology t, int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw InvalidInput("gossip: rank " + std::to_string(rank) + " of " + std::to_string(size) +
                       " workers");
  std::vector<int> out;
  if (t == Topology::kRing) {
    out = {(rank + 1) % size, (rank + size - 1) % size};
  } else {
    const auto [rows, cols] = torus_shape(size);
    const int r = rank / cols, c = rank % cols;
    out = {r * cols + (c + 1) % cols, r * cols + (c + cols - 1) % cols, ((r + 1) % rows) * cols + c,
           ((r + rows - 1) % rows) * cols + c};
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  out.erase(std::remove(out.begin(), out.end(), rank), out.end());
  return out;
}

std::vector<std::pair<int, double>> mixing_weights(Topology t, int rank, int size) {
  const std::vector<int> mine = gossip_neighbours(t, rank, size);
  const int d = static_cast<int>(mine.size());
  std::vector<std::pair<int, double>> out;
  double others = 0;
  for (int j : mine) {
    const int dj = static_cast<int>(gossip_neighbours(t, j, size).size());
    const double w = 1.0 / (1 + std::max(d, dj));
    out.emplace_back(j, w);
    others += w;
  }
  out.emplace_back(rank, 1.0 - others);
  std::sort(out.begin(), out.end());
  return out;
}

double gossip_exchange_ms(const LinkProfile& link, int degree, std::int64_t bytes) {
  if (degree <= 0 || bytes <= 0) return 0;
  const double bps = std::min(link.down_bps, link.up_bps);
  const double fixed =
      degree * (std::max(link.overhead_down_ms, link.overhead_up_ms) + link.latency_ms);
  return fixed + static_cast<double>(degree) * static_cast<double>(bytes) * 8e3 / bps;
}

double simulate_gossip(const ModelProfile& profile, const LinkProfile& link, Topology t, int size,
                       double measured_exchange_ms) {
  double compute = 0;
  std::int64_t bytes = 0;
  for (const UnitProfile& u : profile.units) {
    compute += u.forward_ms + u.backward_ms;
    bytes += u.bytes;
  }
  const int degree = static_cast<int>(gossip_neighbours(t, 0, size).size());
  if (degree > 0 && measured_exchange_ms > 0) return std::max(compute, measured_exchange_ms);
  return std::max(compute, gossip_exchange_ms(link, degree, bytes));
}

}  // namespace dynacomm::plan
