#include "net/shaper.h"

#include <algorithm>
#include <cmath>

#include "base/error.h"

namespace dynacomm::net {

namespace {
LinkShaper::Clock::duration seconds(double s) {
  return std::chrono::duration_cast<LinkShaper::Clock::duration>(std::chrono::duration<double>(s));
}
}  // namespace

LinkShaper::LinkShaper(double bandwidth_bps, double latency_ms, std::int64_t burst_bytes)
    : bps_(bandwidth_bps),
      latency_(seconds(latency_ms / 1e3)),
      burst_bytes_(static_cast<double>(burst_bytes)) {
  if (!std::isfinite(bandwidth_bps) || bandwidth_bps <= 0)
    throw InvalidInput("link shaper: bandwidth must be positive");
  if (!std::isfinite(latency_ms) || latency_ms < 0)
    throw InvalidInput("link shaper: latency must be >= 0");
  if (burst_bytes < 0) throw InvalidInput("link shaper: burst must be >= 0");
}

void LinkShaper::set_rate(double bandwidth_bps) {
  if (!std::isfinite(bandwidth_bps) || bandwidth_bps <= 0)
    throw InvalidInput("link shaper: bandwidth must be positive");
  bps_ = bandwidth_bps;
}

void LinkShaper::set_latency(double latency_ms) {
  if (!std::isfinite(latency_ms) || latency_ms < 0)
    throw InvalidInput("link shaper: latency must be >= 0");
  latency_ = seconds(latency_ms / 1e3);
}

LinkShaper::Clock::time_point LinkShaper::deliver_at(Clock::time_point now, std::int64_t bytes) {
  // Burst credit: an idle link has saved up to burst_bytes of tokens.
  double credit = 0;
  if (!started_ || now > link_free_) {
    const double idle_s = started_ ? std::chrono::duration<double>(now - link_free_).count() : 1e9;
    credit = std::min(burst_bytes_, idle_s * bps_ / 8);
  }
  const Clock::time_point start = started_ ? std::max(now, link_free_) : now;
  started_ = true;
  const double paced = std::max(0.0, static_cast<double>(bytes) - credit);
  link_free_ = start + seconds(paced * 8 / bps_);
  return link_free_ + latency_;
}

}  // namespace dynacomm::net
