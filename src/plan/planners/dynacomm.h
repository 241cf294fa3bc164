// DynaComm's exact optimiser (DESIGN.md §2): the pull and the push are optimised apart, each
// by dynamic programming over segmentations, which is exact because
//  - the push finishes at (forward end) + LF[0], where LF does not depend on the pull plan,
//    so the best push is the same for every pull plan and the iteration time is monotone
//    in the forward end time; and
//  - the end of forward of unit k is max(end of previous segment's forward, arrival) plus
//    compute, monotone in the earlier end, and a segment's arrival depends only on its last
//    unit and how many segments precede it.
// The joint brute force in plan tests checks this argument on thousands of random cases.
// Among optimal plans it returns one that transmits as early as the optimum allows: every
// segment is split where the split is free (does not delay the end); with no per-transmission
// cost that is the layer-wise plan. Plan tests check that no single split is left free.
#pragma once

#include <vector>

#include "plan/planner.h"

namespace dynacomm::plan {

struct DirectionPlan {
  std::vector<Segment> segments;  // pull: ascending; push: send order (top first)
  double end_ms = 0;              // pull: end of the forward pass; push: last push done, with the
                                  // forward pass taken to end at 0 (add the real forward end)
};

// O(L^3) time in the worst case (the DP pruned by overhead; the tie-break), O(L^2) memory.
DirectionPlan optimal_pull(const ModelProfile& profile, const LinkProfile& link);
// O(L^3) time in the worst case (the DP is O(L^2); the tie-break), O(L) memory.
DirectionPlan optimal_push(const ModelProfile& profile, const LinkProfile& link);

}  // namespace dynacomm::plan
