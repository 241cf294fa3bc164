// Profiles: what the planners know about a model and a link.
//
// A ModelProfile lists the model's units (a unit = one module that owns parameters, or a
// small fixed group of them) in forward order, each with the bytes it puts on the wire per
// pull or push and its measured forward and backward time. A LinkProfile describes one edge
// device's link to the parameter server. Both are plain values: copy them freely.
//
//   ModelProfile m = load_model_profile("profiles/resnet18-1x28x28-b32.json");
//   LinkProfile link{100e6, 20e6, 5.0, 5.0, 10.0};   // 100/20 Mbit/s, 5 ms per message, 10 ms away
//   double ms = link.down_ms(m.units[0].bytes);      // time to pull unit 0 on its own
#pragma once

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace dynacomm::plan {

struct UnitProfile {
  std::string name;
  std::int64_t params = 0;  // parameter count (informational; bytes is what travels)
  std::int64_t bytes = 0;   // bytes on the wire per pull or push of this unit
  double forward_ms = 0;    // forward time of this unit alone, ms
  double backward_ms = 0;   // time from the previous unit's gradients to this unit's, ms
  // With compressed pushes (docs/compression.md): the bytes of one push of this unit's
  // encoded gradient (-1: `bytes`, dense) and the PS's time to decode it, ms. Encoding runs
  // on the device's cores between the unit's backward and its push, so its time is part of
  // backward_ms.
  std::int64_t push_bytes = -1;
  double decode_ms = 0;
  // With compressed pulls: the bytes of one pull of this unit's encoded update (-1: `bytes`).
  std::int64_t pull_bytes = -1;

  std::int64_t up_bytes() const { return push_bytes >= 0 ? push_bytes : bytes; }
  std::int64_t down_bytes() const { return pull_bytes >= 0 ? pull_bytes : bytes; }
};

struct ModelProfile {
  std::string model;
  int batch = 0;              // mini-batch size the times were measured with
  std::string input;          // e.g. "1x28x28" (optional)
  std::string machine;        // where it was measured (optional)
  std::string measured_with;  // how it was measured, or "hand-written" (optional)
  std::vector<UnitProfile> units;

  int num_units() const { return static_cast<int>(units.size()); }
  std::int64_t total_bytes() const;  // float32, one way
  std::int64_t total_pull_bytes() const;
  std::int64_t total_push_bytes() const;
  double total_forward_ms() const;
  double total_backward_ms() const;

  // Throws InvalidInput naming the field and unit when the profile has no units, a
  // negative or non-finite number, or an empty name.
  void validate() const;
};

// One iteration's unit times as factors on a profile's, one per unit and pass: how a
// worker's compute varies from iteration to iteration, kept apart from the times so that
// it carries over to fresher estimates (the model of several workers draws from it).
struct ComputeFactors {
  std::vector<double> forward, backward;
};
// The profile with every unit's times multiplied by its factors. Throws InvalidInput when
// the sizes differ from the profile's units or a factor is not positive and finite.
ModelProfile scaled(const ModelProfile& profile, const ComputeFactors& factors);

struct LinkProfile {
  double down_bps = 0;          // downlink bandwidth PS -> device, bit/s
  double up_bps = 0;            // uplink bandwidth device -> PS, bit/s
  double overhead_down_ms = 0;  // fixed cost of one downlink transmission, ms
  double overhead_up_ms = 0;    // fixed cost of one uplink transmission, ms
  double latency_ms = 0;        // one-way latency device <-> PS, ms
  // How many times slower the device computes while the downlink (uplink) carries its data
  // than while its links are idle: moving bytes costs CPU (the network stack, the PS and
  // the other workers sharing the cores), taken from the compute it overlaps. 1: none.
  // Measured by the runtime (fit_compute_stretch); the simulator charges it, the optimisers
  // plan without it (docs/design.md, "Compute under a busy link").
  double compute_stretch_down = 1;
  double compute_stretch_up = 1;
  // The PS's aggregation of a push segment, from its last worker's gradient arriving to its
  // parameters being servable (the sum and the optimiser step): aggregation_ms +
  // aggregation_ms_per_mb x MB (10^6 bytes) of the segment. Measured by the runtime from
  // the acks of the pushes that completed their units (fit_aggregation); the full-duplex
  // model charges it before a unit's next pull (plan/model/duplex.h). 0: none.
  double aggregation_ms = 0;
  double aggregation_ms_per_mb = 0;

  // Time one transmission of `bytes` occupies the link, including its fixed cost, ms.
  double down_ms(std::int64_t bytes) const {
    return overhead_down_ms + static_cast<double>(bytes) * 8e3 / down_bps;
  }
  double up_ms(std::int64_t bytes) const {
    return overhead_up_ms + static_cast<double>(bytes) * 8e3 / up_bps;
  }
  // The PS's aggregation of a push segment of `bytes`, ms.
  double aggregation_of(std::int64_t bytes) const {
    return aggregation_ms + aggregation_ms_per_mb * static_cast<double>(bytes) * 1e-6;
  }
  // The same link with no per-transmission cost: what the `ideal` figure is computed on.
  LinkProfile without_overhead() const {
    LinkProfile l = *this;
    l.overhead_down_ms = l.overhead_up_ms = 0;
    return l;
  }

  // Throws InvalidInput naming the field when a bandwidth is not positive and finite, a
  // time (or aggregation rate) is negative or non-finite, or a compute stretch is outside
  // [1, 10].
  void validate() const;
};

// JSON. Parsing validates; `context` (usually the file name) prefixes every error message.
ModelProfile model_profile_from_json(const nlohmann::json& j, const std::string& context);
nlohmann::json to_json(const ModelProfile& p);
LinkProfile link_profile_from_json(const nlohmann::json& j, const std::string& context);
nlohmann::json to_json(const LinkProfile& l);

// Reads and validates a profile file. Throws InvalidInput naming the file on any problem:
// missing file, malformed JSON, missing or bad field.
ModelProfile load_model_profile(const std::string& path);
void save_model_profile(const ModelProfile& p, const std::string& path);

}  // namespace dynacomm::plan
