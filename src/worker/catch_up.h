// Backup workers' catch-up (ps/sync_policy.h, backup:B): a dropped worker's pull for
// iteration t reads the newest versions, and each reply says the oldest version it carries.
// The round's pushes then name the oldest version the round read, never less than t: on
// time for that update, or late for a newer one (dropped by the PS), never ahead of a unit
// (refused). Its next iteration is the one after.
//
// The label is a function of what the round has read so far, recomputed until the first
// push goes out, not a value raised once: the replies come in any order, and a label taken
// from the early ones (all at t + 1) and kept when a later one read t named t + 1 for a unit
// still at t, which the PS refused ("push of unit 10 for iteration 152: the unit is at
// version 151"; a moving-straggler run, its rank 0 catching up after an evaluation).
#pragma once

#include <algorithm>
#include <cstdint>

namespace dynacomm::worker {

// `oldest_version`: the oldest version among the round's replies so far (-1: none yet).
inline std::int64_t push_label(std::int64_t iteration, std::int64_t oldest_version, bool catch_up) {
  return catch_up ? std::max(iteration, oldest_version) : iteration;
}

}  // namespace dynacomm::worker
