#include "worker/codec_times.h"

#include <algorithm>
#include <cmath>

#include "base/stats.h"

namespace dynacomm::worker {

namespace {

// Below this a warm-up figure is timer noise, not a scale to measure against.
constexpr double kSmallestMs = 0.02;

double median_of(const std::deque<double>& q) { return median({q.begin(), q.end()}); }

bool plausible(double ms) { return std::isfinite(ms) && ms >= 0 && ms < 60'000; }

}  // namespace

CodecTimes::CodecTimes(const plan::Slicing& slicing, bool mixed, plan::CodecOptions warmup,
                       std::size_t window)
    : mixed_(mixed), window_(std::max<std::size_t>(window, 1)), warmup_(std::move(warmup)) {
  unit_params_.assign(warmup_.size(), 0);
  for (const plan::Atom& a : slicing.atoms)
    if (a.unit >= 0 && static_cast<std::size_t>(a.unit) < unit_params_.size())
      unit_params_[static_cast<std::size_t>(a.unit)] += a.params;
}

void CodecTimes::keep(std::deque<double>& q, double v, std::size_t most) const {
  q.push_back(v);
  while (q.size() > most) q.pop_front();
}

void CodecTimes::add(const std::vector<PushCosts>& pushes) {
  if (!active()) return;
  for (const PushCosts& p : pushes) {
    const bool known = std::all_of(p.atoms.begin(), p.atoms.end(), [&](const PushCosts::Atom& a) {
      const int o = option_of(a.method);
      return a.unit >= 0 && static_cast<std::size_t>(a.unit) < warmup_.size() && o >= 0 &&
             static_cast<std::size_t>(o) < warmup_[static_cast<std::size_t>(a.unit)].size() &&
             a.params > 0 && plausible(a.encode_ms);
    });
    if (!known || p.atoms.empty()) continue;
    add_encodings(p);
    add_decoding(p);
  }
}

void CodecTimes::add_encodings(const PushCosts& p) {
  for (const PushCosts::Atom& a : p.atoms) {
    const int o = option_of(a.method);
    const plan::CodecOption& base =
        warmup_[static_cast<std::size_t>(a.unit)][static_cast<std::size_t>(o)];
    if (base.method == "none") continue;  // dense costs no encoding in the model
    Partial& part = partial_[{p.iteration, a.unit, o}];
    part.ms += a.encode_ms;
    part.params += a.params;
    if (part.params < unit_params_[static_cast<std::size_t>(a.unit)]) continue;
    keep(encode_ms_[{a.unit, o}], part.ms, window_);
    if (base.encode_ms >= kSmallestMs) keep(encode_ratios_, part.ms / base.encode_ms, 4 * window_);
    partial_.erase({p.iteration, a.unit, o});
  }
  // A unit whose other atoms never came (a push lost to a rejoin) is not waited for.
  while (!partial_.empty() && std::get<0>(partial_.begin()->first) < p.iteration - 4)
    partial_.erase(partial_.begin());
}

void CodecTimes::add_decoding(const PushCosts& p) {
  if (!plausible(p.decode_ms)) return;  // -1: not said
  double expected = 0;
  for (const PushCosts::Atom& a : p.atoms) {
    const auto u = static_cast<std::size_t>(a.unit);
    expected += warmup_[u][static_cast<std::size_t>(option_of(a.method))].decode_ms *
                static_cast<double>(a.params) / static_cast<double>(unit_params_[u]);
  }
  if (expected >= kSmallestMs) keep(decode_ratios_, p.decode_ms / expected, 4 * window_);
}

double CodecTimes::encode_ratio() const {
  return encode_ratios_.empty() ? 1.0 : median_of(encode_ratios_);
}

double CodecTimes::decode_ratio() const {
  return decode_ratios_.empty() ? 1.0 : median_of(decode_ratios_);
}

void CodecTimes::apply(plan::CodecOptions& options) const {
  if (!active() || options.size() != warmup_.size()) return;
  const double encode = encode_ratio(), decode = decode_ratio();
  for (std::size_t u = 0; u < options.size(); ++u) {
    if (options[u].size() != warmup_[u].size()) continue;
    for (std::size_t o = 0; o < options[u].size(); ++o) {
      const plan::CodecOption& base = warmup_[u][o];
      if (base.method == "none") continue;
      plan::CodecOption& now = options[u][o];
      const auto mine = encode_ms_.find({static_cast<int>(u), static_cast<int>(o)});
      now.encode_ms = mine != encode_ms_.end() && mine->second.size() >= 3
                          ? median_of(mine->second)
                          : base.encode_ms * encode;
      now.decode_ms = base.decode_ms * decode;
    }
  }
}

}  // namespace dynacomm::worker
