#include "plan/planners/codec_choice.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/error.h"

namespace dynacomm::plan {

PlanAndPredict plan_and_predict(const std::string& scheduler, const LinkProfile& link,
                                const PlannerOptions& planner) {
  return [scheduler, link, planner](const ModelProfile& p) {
    Plan plan = make_plan(scheduler, p, link, planner);
    const double ms = predict_plan_ms(p, link, plan, planner);
    return std::pair{std::move(plan), ms};
  };
}

ModelProfile with_codecs(const ModelProfile& dense, const CodecOptions& options,
                         const std::vector<int>& choice) {
  if (options.size() != dense.units.size() || choice.size() != dense.units.size())
    throw InvalidInput("codec choice: " + std::to_string(options.size()) + " units' options and " +
                       std::to_string(choice.size()) + " choices for a profile of " +
                       std::to_string(dense.units.size()) + " units");
  ModelProfile p = dense;
  for (std::size_t u = 0; u < p.units.size(); ++u) {
    const int k = choice[u];
    if (k < 0 || k >= static_cast<int>(options[u].size()))
      throw InvalidInput("codec choice: unit " + std::to_string(u) + " (" + p.units[u].name +
                         ") has no option " + std::to_string(k));
    const CodecOption& o = options[u][static_cast<std::size_t>(k)];
    if (o.push_bytes < 0 || !(o.encode_ms >= 0) || !(o.decode_ms >= 0) ||
        !std::isfinite(o.encode_ms) || !std::isfinite(o.decode_ms))
      throw InvalidInput("codec choice: unit " + std::to_string(u) + " (" + p.units[u].name +
                         "), option " + o.method + ": negative or non-finite cost");
    UnitProfile& unit = p.units[u];
    // Dense stays dense: the profile of an all-dense choice is the dense profile.
    unit.push_bytes = o.method == "none" ? -1 : o.push_bytes;
    unit.backward_ms += o.encode_ms;
    unit.decode_ms = o.decode_ms;
  }
  return p;
}

namespace {

struct Evaluator {
  const ModelProfile& dense;
  const CodecOptions& options;
  const PlanAndPredict& plan;
  CodecChoice best;

  // The prediction of `choice`; kept as the best when it is shorter (by more than rounding).
  double operator()(const std::vector<int>& choice) {
    auto [p, ms] = plan(with_codecs(dense, options, choice));
    ++best.evaluations;
    if (best.choice.empty() || ms < best.predicted_ms * (1 - 1e-12)) {
      best.choice = choice;
      best.plan = std::move(p);
      best.predicted_ms = ms;
    }
    return ms;
  }
};

void check_options(const ModelProfile& dense, const CodecOptions& options) {
  if (options.size() != dense.units.size())
    throw InvalidInput("codec choice: options for " + std::to_string(options.size()) +
                       " units, the profile has " + std::to_string(dense.units.size()));
  for (std::size_t u = 0; u < options.size(); ++u)
    if (options[u].empty())
      throw InvalidInput("codec choice: unit " + std::to_string(u) + " has no option");
}

}  // namespace

CodecChoice choose_codecs(const ModelProfile& dense, const CodecOptions& options,
                          const PlanAndPredict& plan, int max_sweeps) {
  check_options(dense, options);
  Evaluator eval{dense, options, plan, {}};
  std::size_t most = 0;
  for (const auto& o : options) most = std::max(most, o.size());
  for (std::size_t k = 0; k < most; ++k) {
    std::vector<int> uniform;
    for (const auto& o : options) uniform.push_back(static_cast<int>(std::min(k, o.size() - 1)));
    eval(uniform);
  }
  std::vector<int> here = eval.best.choice;
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    bool moved = false;
    for (std::size_t u = options.size(); u-- > 0;)
      for (int k = 0; k < static_cast<int>(options[u].size()); ++k) {
        if (k == here[u]) continue;
        std::vector<int> next = here;
        next[u] = k;
        const double before = eval.best.predicted_ms;
        eval(next);
        if (eval.best.predicted_ms < before) {
          here = next;
          moved = true;
        }
      }
    if (!moved) break;
  }
  return eval.best;
}

CodecChoice choose_job_codecs(const ModelProfile& dense, const CodecOptions& options,
                              const PlanAndPredict& search, const PlanAndPredict& judge,
                              const std::vector<int>& in_use, double margin, bool uniform) {
  check_options(dense, options);
  const std::vector<int> incumbent = in_use.empty() ? std::vector<int>(options.size(), 0) : in_use;
  std::vector<std::vector<int>> candidates{incumbent};
  std::size_t most = 0;
  for (const auto& o : options) most = std::max(most, o.size());
  for (std::size_t k = 0; k < (uniform ? most : 1); ++k) {
    std::vector<int> same;
    for (const auto& o : options) same.push_back(static_cast<int>(std::min(k, o.size() - 1)));
    candidates.push_back(std::move(same));
  }
  candidates.push_back(choose_codecs(dense, options, search).choice);
  Evaluator eval{dense, options, judge, {}};
  double incumbent_ms = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (std::find(candidates.begin(), candidates.begin() + static_cast<long>(i), candidates[i]) !=
        candidates.begin() + static_cast<long>(i))
      continue;  // judged already
    const double ms = eval(candidates[i]);
    if (i == 0) incumbent_ms = ms;
  }
  if (!(eval.best.predicted_ms < incumbent_ms * (1 - margin)) && eval.best.choice != incumbent) {
    auto [plan, ms] = judge(with_codecs(dense, options, incumbent));
    const int evaluations = eval.best.evaluations + 1;
    eval.best = {incumbent, std::move(plan), ms, evaluations};
  }
  return eval.best;
}

CodecChoice brute_force_codecs(const ModelProfile& dense, const CodecOptions& options,
                               const PlanAndPredict& plan, long limit) {
  check_options(dense, options);
  long combinations = 1;
  for (const auto& o : options) {
    combinations *= static_cast<long>(o.size());
    if (combinations > limit)
      throw InvalidInput("codec choice: more than " + std::to_string(limit) +
                         " combinations to try");
  }
  Evaluator eval{dense, options, plan, {}};
  std::vector<int> choice(options.size(), 0);
  for (long c = 0; c < combinations; ++c) {
    long rest = c;
    for (std::size_t u = 0; u < options.size(); ++u) {
      const auto n = static_cast<long>(options[u].size());
      choice[u] = static_cast<int>(rest % n);
      rest /= n;
    }
    eval(choice);
  }
  return eval.best;
}

}  // namespace dynacomm::plan
