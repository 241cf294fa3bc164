// A one-line progress display for long loops: on a terminal it redraws in place (at most
// every 0.2 s); elsewhere (logs, CI) it prints only the final line of each bar.
//
//   ProgressBar bar(std::cerr, "epoch 1/5", 1875, isatty(2));
//   bar.update(done, "loss 0.41  acc 85.2%");   // rate and ETA are added
//   bar.finish("test acc 88.1%");
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace dynacomm::report {

class ProgressBar {
 public:
  ProgressBar(std::ostream& out, std::string label, std::int64_t total, bool interactive,
              std::string unit = "it");
  // `per_step` scales the rate (e.g. batch size, to show images/s).
  void update(std::int64_t done, const std::string& status, double per_step = 1);
  void finish(const std::string& status);

 private:
  std::string render(std::int64_t done, const std::string& status, double per_step) const;
  std::ostream& out_;
  std::string label_, unit_;
  std::int64_t total_;
  bool interactive_;
  std::chrono::steady_clock::time_point start_, last_draw_;
  std::int64_t done_ = 0;
  double per_step_ = 1;
  std::string status_;
};

}  // namespace dynacomm::report
