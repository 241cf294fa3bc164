#include "plan/estimate/compute_stretch.h"

#include <algorithm>
#include <cmath>

namespace dynacomm::plan {

void add_busy_times(std::vector<UnitSpan>& spans,
                    const std::vector<std::pair<double, double>>& windows,
                    const std::vector<LinkBusy>& transfers) {
  const std::size_t n = std::min(spans.size(), windows.size());
  for (std::size_t k = 0; k < n; ++k)
    for (const LinkBusy& t : transfers) {
      const double ms =
          std::min(t.end_ms, windows[k].second) - std::max(t.start_ms, windows[k].first);
      if (ms > 0) (t.up ? spans[k].busy_up_ms : spans[k].busy_down_ms) += ms;
    }
}

ComputeStretch fit_compute_stretch(const std::vector<UnitSpan>& spans, double idle_wall_per_cpu) {
  struct Point {
    double wall, cpu, down, up;  // down, up: busy fractions of wall
  };
  std::vector<Point> points;
  for (const UnitSpan& s : spans) {
    if (!std::isfinite(s.wall_ms) || !std::isfinite(s.cpu_ms) || !(s.cpu_ms >= 0.2) ||
        !(s.wall_ms > 0) || !std::isfinite(s.busy_down_ms) || !std::isfinite(s.busy_up_ms))
      continue;
    double down = std::clamp(s.busy_down_ms / s.wall_ms, 0.0, 1.0);
    double up = std::clamp(s.busy_up_ms / s.wall_ms, 0.0, 1.0);
    if (down + up > 1) {  // both at once: shares of the whole
      down /= down + up;
      up = 1 - down;
    }
    points.push_back({s.wall_ms, s.cpu_ms, down, up});
  }
  ComputeStretch r;
  r.spans = points.size();
  double idle_wall = 0, idle_cpu = 0;
  for (const Point& p : points)
    if (p.down + p.up < 0.05) {
      idle_wall += p.wall;
      idle_cpu += p.cpu;
    }
  const double a = std::isfinite(idle_wall_per_cpu) && idle_wall_per_cpu > 0
                       ? idle_wall_per_cpu
                       : (idle_cpu > 0 ? idle_wall / idle_cpu : 1.0);
  r.idle_wall_per_cpu = a;
  // Least squares: wall - a*cpu (the CPU denied beyond the idle share) = xd*d + xu*u, with
  // xd = cpu*busy_down, xu = cpu*busy_up; d, u = a_down - a, a_up - a.
  double sdd = 0, suu = 0, sdu = 0, sdy = 0, suy = 0, cpu_total = 0;
  for (const Point& p : points) {
    const double xd = p.cpu * p.down, xu = p.cpu * p.up, y = p.wall - a * p.cpu;
    sdd += xd * xd;
    suu += xu * xu;
    sdu += xd * xu;
    sdy += xd * y;
    suy += xu * y;
    cpu_total += p.cpu;
  }
  // A direction needs busy work worth 5% of all the work measured, else it is not told.
  double busy_down = 0, busy_up = 0;
  for (const Point& p : points) {
    busy_down += p.cpu * p.down;
    busy_up += p.cpu * p.up;
  }
  r.fitted_down = cpu_total > 0 && busy_down >= 0.05 * cpu_total;
  r.fitted_up = cpu_total > 0 && busy_up >= 0.05 * cpu_total;
  double d = 0, u = 0;
  if (r.fitted_down && r.fitted_up) {
    const double det = sdd * suu - sdu * sdu;
    if (det > 1e-12 * sdd * suu) {
      d = (sdy * suu - suy * sdu) / det;
      u = (suy * sdd - sdy * sdu) / det;
    } else {  // collinear: one share for both
      d = u = (sdy + suy) / (sdd + suu + 2 * sdu);
    }
  } else if (r.fitted_down) {
    d = sdy / sdd;
  } else if (r.fitted_up) {
    u = suy / suu;
  }
  r.down = std::clamp((a + d) / a, 1.0, 10.0);
  r.up = std::clamp((a + u) / a, 1.0, 10.0);
  return r;
}

}  // namespace dynacomm::plan
