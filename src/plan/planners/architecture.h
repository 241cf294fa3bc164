// --arch auto: each architecture's iteration predicted from the profile, the workers' edge
// link and the PS's shared cloud link, and the fastest chosen.
//
//   ps         the PS's plan (the named scheduler's, or the faster of dynacomm and
//              dynacomm-fd for "auto") on the edge link, every direction capped at its
//              fair share of the cloud link: N workers pull and push at about the same
//              time under BSP, so each gets cloud / N (plan/model/simulate.h, duplex.h);
//   allreduce  the planned buckets under the ring's cost on the edge link (ring.h), each
//              unit's push bytes (fp16's half) both ways; ring traffic goes worker to
//              worker and does not cross the cloud link;
//   gossip     the exchange with the topology's neighbours behind the compute (gossip.h).
//
// The PS's aggregation is left out (unknown before the job; the runtime measures it).
//
//   auto c = choose_architecture(profile, edge, {200e6, 200e6}, 8, {"ps", "allreduce", "gossip"});
//   c.chosen  // "allreduce"
#pragma once

#include <string>
#include <vector>

#include "plan/model/gossip.h"
#include "plan/model/profile.h"

namespace dynacomm::plan {

struct CloudLink {
  double in_bps = 0, out_bps = 0;  // into and out of the PS; 0: unlimited
};

struct ArchitecturePrediction {
  std::string arch;  // "ps", "allreduce" or "gossip"
  double ms = 0;     // predicted iteration
  std::string how;   // "dynacomm-fd on 25.0/25.0 Mbit/s", "4 buckets", "ring of 8"
  double measured_ms = 0;  // its trial's median iteration (cli/arch_choice.h); 0: not tried
};

struct ArchitectureChoice {
  std::vector<ArchitecturePrediction> predictions;  // in `candidates`' order
  std::string chosen;  // the fastest (the first of equals): measured where tried, else predicted
  std::string text()
      const;  // "allreduce, predicted ps 4400 ms (...), allreduce 1900 ms (...), ..."
};

// The edge link as one of N workers sees the PS through the shared cloud link.
LinkProfile ps_link_share(const LinkProfile& edge, const CloudLink& cloud, int workers);

// Predicts every candidate ("ps", "allreduce", "gossip") and chooses. `ps_scheduler`: a
// planner's name, or "auto". Throws InvalidInput for an unknown candidate or none.
ArchitectureChoice choose_architecture(const ModelProfile& profile, const LinkProfile& edge,
                                       const CloudLink& cloud, int workers,
                                       const std::vector<std::string>& candidates,
                                       const std::string& ps_scheduler = "auto",
                                       Topology topology = Topology::kRing);

}  // namespace dynacomm::plan
