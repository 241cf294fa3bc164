#include "report/progress.h"

#include <cstdio>

namespace dynacomm::report {

ProgressBar::ProgressBar(std::ostream& out, std::string label, std::int64_t total, bool interactive,
                         std::string unit)
    : out_(out),
      label_(std::move(label)),
      unit_(std::move(unit)),
      total_(total),
      interactive_(interactive),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

std::string ProgressBar::render(std::int64_t done, const std::string& status,
                                double per_step) const {
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int width = 24;
  const int filled = total_ > 0 ? static_cast<int>(width * done / total_) : width;
  std::string bar(static_cast<std::size_t>(filled), '=');
  if (filled < width) bar += '>' + std::string(static_cast<std::size_t>(width - filled - 1), ' ');
  const double rate = secs > 0 ? done * per_step / secs : 0;
  const double eta = done > 0 ? secs * static_cast<double>(total_ - done) / done : 0;
  char buf[160];
  std::snprintf(buf, sizeof buf, " %lld/%lld  %.0f %s/s  %s %d:%02d", static_cast<long long>(done),
                static_cast<long long>(total_), rate, unit_.c_str(), done < total_ ? "ETA" : "took",
                static_cast<int>((done < total_ ? eta : secs) / 60),
                static_cast<int>(done < total_ ? eta : secs) % 60);
  return label_ + " [" + bar + "]" + buf + "  " + status;
}

void ProgressBar::update(std::int64_t done, const std::string& status, double per_step) {
  done_ = done;
  per_step_ = per_step;
  status_ = status;
  if (!interactive_) return;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200) && done < total_) return;
  last_draw_ = now;
  out_ << "\r\033[K" << render(done, status, per_step) << std::flush;
}

void ProgressBar::finish(const std::string& status) {
  std::string line = render(done_, status_ + (status.empty() ? "" : "  " + status), per_step_);
  out_ << (interactive_ ? "\r\033[K" : "") << line << "\n" << std::flush;
}

}  // namespace dynacomm::report
