#include "optim/local_sgd.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "base/error.h"

namespace dynacomm::optim {
namespace {

std::int64_t whole(const std::string& text, const std::string& spec, std::int64_t lo,
                   std::int64_t hi) {
  char* stop = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &stop, 10);
  if (text.empty() || stop == text.c_str() || *stop != 0 || errno != 0 || v < lo || v > hi)
    throw InvalidInput("--sync " + spec + ": '" + text + "' is not a whole number in " +
                       std::to_string(lo) + ".." + std::to_string(hi));
  return v;
}

}  // namespace

std::optional<LocalSgd> LocalSgd::parse(const std::string& spec) {
  if (spec.rfind("local:", 0) != 0) return std::nullopt;
  const std::string rest = spec.substr(6);
  const std::size_t comma = rest.find(',');
  const int h = static_cast<int>(whole(rest.substr(0, comma), spec, 1, 1000));
  std::int64_t k = 0;
  if (comma != std::string::npos) {
    const std::string option = rest.substr(comma + 1);
    if (option.rfind("warmup=", 0) != 0)
      throw InvalidInput("--sync " + spec + ": expected local:H or local:H,warmup=K");
    k = whole(option.substr(7), spec, 0, 100000000);
  }
  return LocalSgd(h, k);
}

LocalSgd::LocalSgd(int steps, std::int64_t bsp_steps)
    : steps_(std::max(1, steps)), bsp_steps_(std::max<std::int64_t>(0, bsp_steps)) {}

std::int64_t LocalSgd::round_of(std::int64_t step) const {
  if (step < bsp_steps_) return step;
  return bsp_steps_ + (step - bsp_steps_) / steps_;
}

std::int64_t LocalSgd::rounds(std::int64_t total_steps) const {
  if (total_steps <= bsp_steps_) return total_steps;
  return bsp_steps_ + (total_steps - bsp_steps_ + steps_ - 1) / steps_;
}

std::int64_t LocalSgd::first_step(std::int64_t round) const {
  if (round < bsp_steps_) return round;
  return bsp_steps_ + (round - bsp_steps_) * steps_;
}

bool LocalSgd::pushes(std::int64_t step, std::int64_t total_steps) const {
  return step + 1 >= total_steps || round_of(step + 1) != round_of(step);
}

}  // namespace dynacomm::optim
