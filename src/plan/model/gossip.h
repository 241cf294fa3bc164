// Gossip (--arch gossip): D-PSGD (Lian et al., "Can Decentralized Algorithms Outperform
// Centralized Algorithms?", NeurIPS'17). Every worker keeps its own model x_i; each
// iteration it sends x_i to its neighbours, computes its gradient g_i at x_i meanwhile, and
// sets x_i <- sum_j W_ij x_j - lr * g_i. W is symmetric and doubly stochastic, so the mixing
// keeps the workers' average where it was; the workers' models contract towards it at a
// rate set by W's second eigenvalue.
//
// Topologies: a ring (neighbours rank +- 1) or a torus (the ranks on a rows x cols grid,
// rows the largest divisor of P at most sqrt(P), four neighbours with wrap-around; a
// 1 x P torus is the ring). Weights are Metropolis-Hastings', W_ij = 1 / (1 + max(d_i, d_j))
// for neighbours and the rest on W_ii, symmetric for any graph; on these regular graphs
// every weight is 1 / (d + 1).
//
// Cost of one iteration: the exchange needs no gradient, so it overlaps forward and
// backward entirely; the worker's uplink carries its model once per neighbour, its
// downlink as much:
//
//   T = max(forward + backward, fixed + d * B * 8 / min(down, up))
//
// with fixed = d * (overhead + latency) (the d sends go one after another).
//
//   auto w = mixing_weights(Topology::kRing, 3, 8);  // {{2, 1/3}, {3, 1/3}, {4, 1/3}}
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "plan/model/profile.h"

namespace dynacomm::plan {

enum class Topology { kRing, kTorus };

// "ring" or "torus"; throws InvalidInput naming the known ones.
Topology parse_topology(const std::string& name);
std::string topology_name(Topology t);

// rows x cols of the torus for `size` ranks (rows <= cols).
std::pair<int, int> torus_shape(int size);

// The ranks `rank` exchanges with: ascending, without itself or repeats. Throws
// InvalidInput for a rank outside 0..size-1.
std::vector<int> gossip_neighbours(Topology t, int rank, int size);

// Row `rank` of W: (rank, weight) for itself and its neighbours, ascending by rank; the
// weights sum to 1.
std::vector<std::pair<int, double>> mixing_weights(Topology t, int rank, int size);

// T above for a model of `bytes`, `profile`'s compute, on `link`; with `measured_exchange_ms`
// > 0 (the worker's, timed in its warm-up) that in place of the link's fixed + d * B * 8 /
// rate, which leaves out what the link carries besides the model (frame headers, TCP's
// own pace).
double gossip_exchange_ms(const LinkProfile& link, int degree, std::int64_t bytes);
double simulate_gossip(const ModelProfile& profile, const LinkProfile& link, Topology t, int size,
                       double measured_exchange_ms = 0);

}  // namespace dynacomm::plan
