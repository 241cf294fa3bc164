// What the pushes' codecs cost while training, as the planner should see it
// (docs/compression.md, "Planning with compression"). worker/codec_costs.h measures every
// method once, alone, at the warm-up's end; in training the encoding runs on the
// communication thread beside the backward pass, the other workers and the PS on the same
// cores, and the PS decodes on its own. Each push's encoding is timed atom by atom where it
// is built, and the PS says in its ack how long it took to decode it; from those, a
// unit's encoding with the method it uses is the median of its recent pushes, the methods
// not in use keep their warm-up figure scaled by how far the ones in use moved from theirs
// (the same cores are shared alike), and every decoding is scaled the same way by the
// PS's measurements.
//
//   CodecTimes times(slicing, /*mixed=*/true, codecs.options);  // warm-up's figures
//   times.add(comm.take_push_costs());                           // every iteration
//   times.apply(codecs.options);                                 // before re-planning
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "plan/model/slicing.h"
#include "plan/planners/codec_choice.h"

namespace dynacomm::worker {

// One push as the communication thread built it: each atom's unit, method (the index in
// the job's push codec, compress/push_codec.h), size and encoding time, and the PS's
// decoding of the whole push from its ack.
struct PushCosts {
  std::int64_t iteration = 0;
  struct Atom {
    int unit = 0;
    int method = 0;
    std::int64_t params = 0;
    double encode_ms = 0;
  };
  std::vector<Atom> atoms;
  double decode_ms = -1;  // -1: the ack did not say
};

class CodecTimes {
 public:
  CodecTimes() = default;  // inactive: apply() changes nothing
  // `warmup`: per unit, one option per method, as measured at the warm-up's end; `mixed`:
  // the push codec's method k is option k (--compress auto), else option k + 1 (option 0
  // is dense). `window`: the recent pushes each median is taken over.
  CodecTimes(const plan::Slicing& slicing, bool mixed, plan::CodecOptions warmup,
             std::size_t window = 9);

  bool active() const { return !warmup_.empty(); }
  // Takes pushes in; a push naming a unit or method the job does not have is left out.
  void add(const std::vector<PushCosts>& pushes);
  // Encoding and decoding of every option as measured so far (above); bytes untouched.
  // Options of a different shape than the warm-up's are left as they are.
  void apply(plan::CodecOptions& options) const;
  // How far training's encoding and the PS's decoding are from the warm-up's (1: as
  // measured then, or nothing measured yet), and how many pushes said so.
  double encode_ratio() const;
  double decode_ratio() const;
  std::size_t encode_samples() const { return encode_ratios_.size(); }
  std::size_t decode_samples() const { return decode_ratios_.size(); }

 private:
  int option_of(int method) const { return mixed_ ? method : method + 1; }
  void add_encodings(const PushCosts& p);
  void add_decoding(const PushCosts& p);
  void keep(std::deque<double>& q, double v, std::size_t most) const;

  bool mixed_ = false;
  std::size_t window_ = 9;
  plan::CodecOptions warmup_;
  std::vector<std::int64_t> unit_params_;
  // A unit's encoding in one iteration may come in several pushes (its atoms in several
  // segments): summed until every parameter of the unit is in.
  struct Partial {
    double ms = 0;
    std::int64_t params = 0;
  };
  std::map<std::tuple<std::int64_t, int, int>, Partial> partial_;  // (iteration, unit, option)
  std::map<std::pair<int, int>, std::deque<double>> encode_ms_;    // (unit, option): recent
  std::deque<double> encode_ratios_, decode_ratios_;               // measured / warm-up, recent
};

}  // namespace dynacomm::worker
