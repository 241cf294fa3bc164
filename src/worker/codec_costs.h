// What a unit's pushes cost with each compression method, measured on this device at the
// warm-up's end on the unit's real gradients (docs/compression.md, "Planning with
// compression"): the bytes (summed over the unit's atoms, as the wire sends them), the
// encoding time here and the decoding time (timed here too: it stands for the PS's, which
// runs the same code on its own cores). What plan/planners/codec_choice.h plans with.
//
//   std::vector<const float*> grads;  // per unit, its gradients (model.grads(u))
//   plan::CodecOptions options = measure_codecs(slicing, grads, {"none", "topk:0.01"}, 3);
//   profile = plan::with_codecs(profile, options, std::vector<int>(units, 1));
#pragma once

#include <string>
#include <vector>

#include "plan/model/slicing.h"
#include "plan/planners/codec_choice.h"

namespace dynacomm::worker {

// Per unit, one option per method (in the order given), each timed as the median of
// `reps` encodings and decodings of every atom of the unit with a scratch compressor of
// its own (the job's residuals are not touched). "none" costs nothing and sends float32.
// InvalidInput for an unknown method or a gradient list that does not match the slicing.
plan::CodecOptions measure_codecs(const plan::Slicing& slicing,
                                  const std::vector<const float*>& grads,
                                  const std::vector<std::string>& methods, int reps = 3,
                                  std::int64_t iteration = 0);

// The options' push bytes at `iteration`, for a method whose encoding's size changes with
// the iteration (dgc's density warm-up); the times stay as measured.
void bytes_at(plan::CodecOptions& options, const plan::Slicing& slicing, std::int64_t iteration);

// A job's codecs as the planner sees them: every unit's options and the one chosen (empty:
// dense pushes, nothing to apply).
struct PushCodecs {
  plan::CodecOptions options;
  std::vector<int> choice;
  bool choose = false;  // --compress auto: the choice is re-made with the plans
  bool empty() const { return options.empty(); }
  plan::ModelProfile apply(const plan::ModelProfile& dense) const {
    return empty() ? dense : plan::with_codecs(dense, options, choice);
  }
};

// "fp16 (2 units), topk:0.01,ef (2 units): 0.045 MB an iteration (dense 3.298 MB),
// encoding 6.1 ms, decoding 2.0 ms".
std::string describe_choice(const PushCodecs& codecs);

}  // namespace dynacomm::worker
