// Choosing, per unit, how its pushes travel: dense or one of the job's compression methods
// (docs/compression.md, "Planning with compression").
//
// Each unit has options, measured by the runtime in the warm-up: the bytes of one push of
// the unit with that method, its encoding time on the device and its decoding time at the
// PS. with_codecs() gives the profile a choice makes (encoding is part of the unit's
// backward: it runs on the device's cores between the backward and the push); choose_codecs()
// searches for the choice whose plan predicts the shortest iteration, so a small unit or a
// fast link stays dense because the model says so, not because of a rule.
//
//   CodecOptions options(profile.num_units(), {{"none", bytes, 0, 0}, {"topk", 400, 1.2, 0.3}});
//   CodecChoice c = choose_codecs(profile, options, [&](const ModelProfile& p) {
//     Plan plan = make_plan("dynacomm", p, link, {});
//     return std::pair{plan, predict_ms(p, link, plan)};
//   });
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "plan/model/plan.h"
#include "plan/model/profile.h"
#include "plan/planners/planner.h"

namespace dynacomm::plan {

struct CodecOption {
  std::string method;          // the compressor's spec; "none": dense
  std::int64_t push_bytes = 0;  // one push of the whole unit
  double encode_ms = 0;        // on the device, after the unit's backward
  double decode_ms = 0;        // at the PS, before the aggregation
};
// Per unit, its options; every unit has at least one. Option 0 is usually dense.
using CodecOptions = std::vector<std::vector<CodecOption>>;

// `dense` with unit u's pushes sent with options[u][choice[u]]. Throws InvalidInput when
// the sizes differ from the profile's units or a choice is out of range.
ModelProfile with_codecs(const ModelProfile& dense, const CodecOptions& options,
                         const std::vector<int>& choice);

struct CodecChoice {
  std::vector<int> choice;  // per unit, an index into its options
  Plan plan;                // the planner's plan for the chosen profile
  double predicted_ms = 0;  // and its prediction
  int evaluations = 0;      // planner calls it took
};

// Plans a profile and predicts the plan's iteration.
using PlanAndPredict = std::function<std::pair<Plan, double>(const ModelProfile&)>;
// `scheduler`'s plan for `link` and its prediction (make_plan, predict_plan_ms).
PlanAndPredict plan_and_predict(const std::string& scheduler, const LinkProfile& link,
                                const PlannerOptions& planner);

// Every uniform choice (option k on every unit that has it), then, from the best of those,
// one unit at a time to each of its options while that shortens the prediction (first
// improvement, top unit first, until a sweep changes nothing or `max_sweeps`).
CodecChoice choose_codecs(const ModelProfile& dense, const CodecOptions& options,
                          const PlanAndPredict& plan, int max_sweeps = 8);

// A job's choice, as --compress auto makes it: choose_codecs with `search` (a fast
// planner: the phase-separated optimum), then that result, all-dense (option 0), every
// uniform choice (unless `uniform` is false: a re-planning search beside training keeps
// to the fewest judged plans) and `in_use` (when not empty) judged with `judge` (the
// scheduler the job runs), each distinct choice once. The best, unless it beats the incumbent
// (`in_use`, else all-dense) by no more than `margin` (a fraction of the incumbent's prediction):
// then the incumbent, so noise in the estimates does not flip the choice.
CodecChoice choose_job_codecs(const ModelProfile& dense, const CodecOptions& options,
                              const PlanAndPredict& search, const PlanAndPredict& judge,
                              const std::vector<int>& in_use, double margin, bool uniform = true);

// Every combination (the product of the option counts; InvalidInput above `limit`): what
// choose_codecs is checked against.
CodecChoice brute_force_codecs(const ModelProfile& dense, const CodecOptions& options,
                               const PlanAndPredict& plan, long limit = 1 << 16);

}  // namespace dynacomm::plan
