// DynaComm's exact optimiser (DESIGN.md §2): the pull and the push are optimised apart, each
// by dynamic programming over segmentations, which is exact because
//  - the push finishes at (forward end) + LF[0], where LF does not depend on the pull plan,
//    so the best push is the same for every pull plan and the iteration time is monotone
//    in the forward end time; and
//  - the end of forward of unit k is max(end of previous segment's forward, arrival) plus
//    compute, monotone in the earlier end, and a segment's arrival depends only on its last
//    unit and how many segments precede it.
// The joint brute force in plan tests checks this argument on thousands of random cases.
// Among optimal plans (times within 1e-10 relative count as equal, so rounding does not
// choose) it returns the fewest segments, then splits a segment wherever the split is free
// (does not delay the end) and lets idle work start earlier (pull: the forward pass waiting
// for the segment; push: the uplink waiting for its gradients). Plan tests check that no
// such split is left.
#pragma once

#include <vector>

#include "plan/planners/planner.h"

namespace dynacomm::plan {

struct DirectionPlan {
  std::vector<Segment> segments;  // pull: ascending; push: send order (top first)
  double end_ms = 0;              // pull: end of the forward pass; push: last push done, with the
                                  // forward pass taken to end at 0 (add the real forward end)
};

// O(L^3) time in the worst case (the DP, pruned by overhead), O(L^2) memory.
DirectionPlan optimal_pull(const ModelProfile& profile, const LinkProfile& link);
// O(L^2) time per sweep of the tie-break (a few sweeps), the DP O(L^2); O(L) memory.
DirectionPlan optimal_push(const ModelProfile& profile, const LinkProfile& link);

}  // namespace dynacomm::plan
