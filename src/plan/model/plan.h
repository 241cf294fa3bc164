// Plans: how one iteration's pull and push are split into transmissions.
//
// A Segment is an inclusive range of consecutive units sent in one transmission. A Plan
// holds the pull segments in arrival order (ascending units, exactly covering 0..L-1) and
// the push segments in send order (descending: the first one holds unit L-1, the last one
// unit 0), matching the order in which forward needs parameters and backward produces
// gradients.
//
//   Plan p{"sequential", {{0, 9}}, {{0, 9}}};
//   p.validate(10);                         // ok
//   Plan q{"broken", {{0, 3}, {5, 9}}, {{0, 9}}};
//   q.validate(10);                         // throws: pull[1] starts at unit 5, expected 4
//
// A full-duplex plan (strategy dynacomm-fd, plan/model/duplex.h) runs across iterations: the pull
// requests of iteration t+1 leave when the backward pass of t starts, and the PS answers
// them, in `pull_order`, as each segment's units reach version t+1, while the uplink still
// pushes t's gradients. A phase-separated plan (every other strategy) pulls at the start of
// its own iteration, in ascending order.
//
// A sliced plan (P3, ByteScheduler) indexes atoms instead of units: every unit cut into
// pieces of `atom_params` parameters (plan/model/slicing.h); otherwise it is the same plan. With
// `credit_bytes` > 0 the plan is scheduled by priority, as those systems do: the uplink
// sends, whenever it may, the ready push segment lowest in the model, with at most
// credit_bytes unacknowledged at a time, and the PS answers pulls as soon as they are
// ready (the requests ascending).
#pragma once

#include <iosfwd>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

namespace dynacomm::plan {

struct Segment {
  int first = 0;  // lowest unit index, inclusive
  int last = 0;   // highest unit index, inclusive

  int size() const { return last - first + 1; }
  bool operator==(const Segment& o) const { return first == o.first && last == o.last; }
  bool operator!=(const Segment& o) const { return !(*this == o); }
};

struct Plan {
  Plan() = default;
  Plan(std::string scheduler_name, std::vector<Segment> pull_segments,  // phase-separated
       std::vector<Segment> push_segments)
      : scheduler(std::move(scheduler_name)),
        pull(std::move(pull_segments)),
        push(std::move(push_segments)) {}

  std::string scheduler;          // which planner made it
  std::vector<Segment> pull;      // ascending: pull[0].first == 0, pull.back().last == L-1
  std::vector<Segment> push;      // send order: push[0].last == L-1, push.back().first == 0
  bool full_duplex = false;       // pulls of t+1 overlap t's backward and push (see above)
  std::vector<int> pull_order;    // full duplex: the order the PS serves plan.pull's segments
                                  // in (indices); empty: ascending
  std::int64_t atom_params = 0;   // > 0: segments index atoms of this many parameters
  std::int64_t credit_bytes = 0;  // > 0: priority scheduling with this uplink credit

  // Throws InvalidInput naming the direction, the segment and the unit when the segments
  // do not cover 0..num_units-1 exactly once in the required order, or when pull_order is
  // not a permutation of the pull segments (or is given for a phase-separated plan).
  void validate(int num_units) const;
  // The pull segments' indices in the order they are requested and served.
  std::vector<int> pull_sequence() const;

  bool operator==(const Plan& o) const {
    return pull == o.pull && push == o.push && full_duplex == o.full_duplex &&
           pull_sequence() == o.pull_sequence() && atom_params == o.atom_params &&
           credit_bytes == o.credit_bytes;
  }
};

// Builds a push plan (send order) from cut points given bottom-up, e.g. the segments
// [0..3],[4..9] become push {[4,9],[0,3]}.
std::vector<Segment> reverse_to_send_order(std::vector<Segment> ascending);

// A segmentation of L units as cut flags and back: cut[u] (L - 1 flags) is a cut between
// unit u and u + 1. segments_of_cuts gives the segments ascending; cuts_of_segments takes
// them in any order (a push plan's send order too).
std::vector<Segment> segments_of_cuts(const std::vector<bool>& cut);
std::vector<bool> cuts_of_segments(const std::vector<Segment>& segments, int num_units);

// "0-3 4-10" style, for people.
std::string format_segments(const std::vector<Segment>& segments);

// {"scheduler": "...", "pull": [[0,3],[4,10]], "push": [[9,10],[0,8]]}, plus for a
// full-duplex plan "full_duplex": true and "pull_order": [1,0], for a sliced one
// "atom_params" and "credit_bytes". plan_from_json validates the segments against
// num_units, which for a sliced plan is the number of atoms.
nlohmann::json to_json(const Plan& p);
// Parses and validates against num_units. Throws InvalidInput naming the field.
Plan plan_from_json(const nlohmann::json& j, int num_units, const std::string& context);

}  // namespace dynacomm::plan
