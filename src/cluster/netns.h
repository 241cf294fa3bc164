// Kernel-shaped edge links: a small topology of Linux network namespaces, one for the PS
// ("cloud") and one per worker ("edge"), each worker joined to the PS namespace by its own
// veth pair, with a tbf qdisc on each end shaping that worker's downlink (PS side) and
// uplink (worker side). tbf paces bandwidth only: netem is not available on these
// machines, so the one-way latency is still added in the transport (net/shaper.h with no
// rate limit), and the docs say so.
//
//   NetnsTopology net(2, {{100e6, 100e6}, {100e6, 20e6}});   // needs root; throws Error
//   net.ps_namespace();          // "dc1f2e3-ps": run the PS there (enter_namespace)
//   net.worker_namespace(1);     // "dc1f2e3-w1"
//   net.ps_address(1);           // "10.213.1.1": worker 1 reaches the PS here
//   net.set_rates(1, 50e6, 10e6); // tc qdisc change, live
//   // destructor: namespaces, links and qdiscs are gone, also after an exception
//
// Names carry a per-run prefix made of the launcher's pid ("dc" + hex), so two runs never
// collide; at construction, leftovers of earlier runs whose launcher no longer exists are
// detected and removed. Addresses: worker r's pair is 10.213.r.1 (PS) / 10.213.r.2
// (worker), each pair alone in its namespaces, so runs can reuse them. The PS namespace
// forwards between the pairs, so workers reach each other (10.213.r.2) too, crossing both
// of their edge links, as through a switch at the cloud.
//
// A cloud link (`cloud`, --ps-link): the PS then runs in a namespace of its own behind one
// more veth pair from the switch (10.213.255.1 / 10.213.255.2, the PS's address for every
// worker), shaped by tbf on each end: what all workers send to the PS shares `in_bps`, what
// it sends them `out_bps` (0: that direction unshaped). Traffic between workers stays off it.
#pragma once

#include <string>
#include <vector>

namespace dynacomm::cluster {

struct EdgeLinkRates {
  double down_bps = 0, up_bps = 0;
};

// The PS's own link, shared by every worker (0: unlimited).
struct CloudLinkRates {
  double in_bps = 0, out_bps = 0;
  bool limited() const { return in_bps > 0 || out_bps > 0; }
};

class NetnsTopology {
 public:
  NetnsTopology(int workers, const std::vector<EdgeLinkRates>& rates,
                const CloudLinkRates& cloud = {});
  ~NetnsTopology();
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;

  const std::string& prefix() const { return prefix_; }
  std::string ps_namespace() const { return prefix_ + "-ps"; }  // the switch
  // Where the PS runs, and its address for worker `rank`: behind the cloud link when there
  // is one, else the switch itself.
  std::string server_namespace() const { return cloud_ ? prefix_ + "-cloud" : ps_namespace(); }
  std::string server_address(int rank) const {
    return cloud_ ? std::string(kCloudAddress) : ps_address(rank);
  }
  static constexpr const char* kCloudAddress = "10.213.255.2";
  std::string worker_namespace(int rank) const { return prefix_ + "-w" + std::to_string(rank); }
  // The worker's end of its veth pair, inside its namespace.
  std::string worker_interface(int rank) const { return prefix_ + "w" + std::to_string(rank); }
  static std::string ps_address(int rank) { return "10.213." + std::to_string(rank) + ".1"; }
  static std::string worker_address(int rank) { return "10.213." + std::to_string(rank) + ".2"; }

  // Changes worker `rank`'s tbf rates in place (tc qdisc change).
  void set_rates(int rank, double down_bps, double up_bps);
  // Removes everything now (also done by the destructor); never throws.
  void destroy() noexcept;

  // Why --net netns cannot run here ("" when it can): not root, no `ip`/`tc`.
  static std::string unavailable_reason();
  // Removes namespaces left by runs whose launcher is gone; returns how many.
  static int clean_leftovers();
  // The TCP congestion control the namespaces' connections use: the host's default, which
  // a new namespace inherits ("cubic", "bbr", ...; "" when it cannot be read). It shapes
  // how flows share a tbf link, so the bench names it (docs/architectures.md).
  static std::string congestion_control();

 private:
  void add_cloud(const CloudLinkRates& cloud);

  std::string prefix_;
  int workers_;
  bool cloud_ = false;
  std::vector<std::string> created_;  // namespaces, for destroy()
};

// Moves the calling thread (use it in a freshly forked child) into a named namespace.
// Throws Error naming the namespace on failure.
void enter_namespace(const std::string& name);

// tbf parameters for a rate, as `tc` arguments: rate, burst, latency.
std::vector<std::string> tbf_args(double bps);

}  // namespace dynacomm::cluster
