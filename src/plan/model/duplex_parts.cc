#include "plan/model/duplex_parts.h"

#include <string>

#include "base/error.h"
#include "plan/model/slicing.h"

namespace dynacomm::plan::detail {

double busy_ms(const ModelProfile& p, const std::vector<Segment>& segments, double overhead_ms,
               double bps, bool up) {
  double ms = 0;
  for (const Segment& s : segments) {
    std::int64_t b = 0;
    for (int u = s.first; u <= s.last; ++u) {
      const UnitProfile& unit = p.units[static_cast<std::size_t>(u)];
      b += up ? unit.up_bytes() : unit.down_bytes();
    }
    ms += overhead_ms + static_cast<double>(b) * 8e3 / bps;
  }
  return ms;
}

SegmentCosts segment_costs(const ModelProfile& profile, const LinkProfile& link, const Plan& p) {
  SegmentCosts c{
      std::vector<std::int64_t>(p.pull.size(), 0), std::vector<std::int64_t>(p.push.size(), 0), {}};
  for (std::size_t k = 0; k < p.pull.size(); ++k)
    for (int u = p.pull[k].first; u <= p.pull[k].last; ++u)
      c.pull_bytes[k] += profile.units[static_cast<std::size_t>(u)].down_bytes();
  for (std::size_t k = 0; k < p.push.size(); ++k) {
    std::int64_t dense = 0;
    double decode = 0;
    for (int u = p.push[k].first; u <= p.push[k].last; ++u) {
      const UnitProfile& unit = profile.units[static_cast<std::size_t>(u)];
      c.push_bytes[k] += unit.up_bytes();
      dense += unit.bytes;
      decode += unit.decode_ms;
    }
    c.push_aggregation_ms.push_back(link.aggregation_of(dense) + decode);
  }
  return c;
}

double mean_stretch(const LinkProfile& link, double down_ms, double up_ms, double period_ms) {
  return 1 + (link.compute_stretch_down - 1) * std::min(1.0, down_ms / period_ms) +
         (link.compute_stretch_up - 1) * std::min(1.0, up_ms / period_ms);
}

bool repeats(const std::vector<State>& s, std::size_t t, std::size_t c) {
  if (t < 3 * c) return false;
  const double scale = std::max(1.0, std::abs(s[t].forward_start));
  const double tol = 1e-9 * scale;
  auto field = [&](std::size_t i, int f) {
    const State& x = s[i];
    return f == 0 ? x.forward_start : f == 1 ? x.backward_end : f == 2 ? x.down_free : x.up_free;
  };
  for (int f = 0; f < 4; ++f) {
    const double d1 = field(t, f) - field(t - c, f), d2 = field(t - c, f) - field(t - 2 * c, f),
                 d3 = field(t - 2 * c, f) - field(t - 3 * c, f);
    const double step = s[t].forward_start - s[t - c].forward_start;
    if (std::abs(d1 - d2) > tol || std::abs(d2 - d3) > tol || std::abs(d1 - step) > tol)
      return false;
  }
  return true;
}

std::pair<std::vector<ModelProfile>, Plan> in_atoms(const std::vector<ModelProfile>& samples,
                                                    const Plan& plan) {
  if (plan.atom_params <= 0) return {samples, plan};
  std::vector<ModelProfile> atoms;
  const Slicing slicing = Slicing::make(samples[0], plan.atom_params);
  for (const ModelProfile& m : samples) atoms.push_back(slicing.atom_profile(m));
  Plan p = plan;
  p.atom_params = 0;
  return {std::move(atoms), std::move(p)};
}

std::vector<int> pull_segment_of_units(const Plan& p, int L) {
  std::vector<int> seg(static_cast<std::size_t>(L));
  for (std::size_t k = 0; k < p.pull.size(); ++k)
    for (int u = p.pull[k].first; u <= p.pull[k].last; ++u)
      seg[static_cast<std::size_t>(u)] = static_cast<int>(k);
  return seg;
}

void check_samples(const std::vector<ModelProfile>& samples, const char* what) {
  if (samples.empty()) throw InvalidInput(std::string(what) + ": at least one sample");
  for (const ModelProfile& m : samples) {
    m.validate();
    bool same = m.units.size() == samples[0].units.size();
    for (std::size_t u = 0; same && u < m.units.size(); ++u)
      same = m.units[u].bytes == samples[0].units[u].bytes &&
             m.units[u].up_bytes() == samples[0].units[u].up_bytes() &&
             m.units[u].down_bytes() == samples[0].units[u].down_bytes();
    if (!same) throw InvalidInput(std::string(what) + ": the samples are not of one model");
  }
}

}  // namespace dynacomm::plan::detail
