// Fault injection for the reliability tests and measurements (docs/reliability.md): a
// worker kills itself with SIGKILL at a chosen point, once.
//
//   DYNACOMM_FAULT=pull:12:/tmp/job/fired  dynacomm worker ...
//
// PHASE:ITERATION:MARKER. Phases: forward (half way through the forward pass), push (just
// after the iteration's first push left), pull (just after its pull requests left). It
// fires only while MARKER does not exist, and creates it first, so a worker started
// again runs on. Unset (the normal case): nothing happens, at the cost of a comparison.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace dynacomm::worker {

struct Fault {
  enum class Phase { kForward, kPush, kPull };
  Phase phase;
  std::int64_t iteration;
  std::string marker;

  // From DYNACOMM_FAULT; nullopt when unset. InvalidInput naming the variable when malformed.
  static std::optional<Fault> from_env();
  static Fault parse(const std::string& text);
  // SIGKILL of this process at `phase` of `iteration`, the first time only.
  void at(Phase phase, std::int64_t iteration) const;
};

}  // namespace dynacomm::worker
