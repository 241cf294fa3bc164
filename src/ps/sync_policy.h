// The store's synchronisation policy: which version of a unit a pull for an iteration may
// read, which pushes a unit takes, and when a unit's pushes of an iteration make an
// update. The store asks it and does the rest (locking, summing in rank order, the
// optimiser step), so a mode is a policy, not an edit of the store (ps/store.h).
//
// A unit's version counts the updates applied to it. The modes (`--sync`):
//   bsp        A pull for iteration t reads version t exactly (it waits until the updates
//              of 0..t-1 are applied; version t+1 is too late: the request is an error). An
//              update needs every worker's push of the unit's version.
//   ssp:S      Stale-synchronous (Ho et al., NIPS'13), with the updates aggregated per
//              iteration as under BSP: a pull for t is answered once the unit has every
//              worker's update of 0..t-S-1 (version >= t-S), and reads the newest version
//              there is; a push may be for up to S iterations past its unit's version and
//              waits, kept, until its iteration's turn. A worker's own pushes of the last S
//              iterations are not in what it reads unless aggregated (no read-my-writes
//              beyond the aggregate). S = 0 is BSP, bit for bit.
//   backup:B   Backup workers (Chen et al., 2016): an update is due once N-B of the N
//              workers the unit waits for have pushed it (at least one); it is their mean.
//              A push that comes after its iteration's update (a worker that was dropped)
//              is dropped, not refused; a pull reads the newest version, and its reply
//              says the oldest it carries, so the dropped worker goes on from there (its
//              pushes name that version: worker/comm.h's catch_up). Iterations never mix:
//              each update sums pushes of its own iteration only.
//   backup:auto  backup:B with B chosen by the PS each window of iterations from the pushes'
//              arrival times, for the least time per worker's gradient (ps/backup_chooser.h).
//   asp        Asynchronous: every push is an update of its own, applied on arrival,
//              exactly once (one push per rank, unit and iteration, iterations rising); a
//              pull reads the newest version at once. The step's learning rate is divided
//              by the push's staleness tau, the unit's updates from its rank's read to this
//              one, this one included (tau >= 1; Zhang, Gupta, Lian and Liu, "Staleness-
//              aware Async-SGD", IJCAI'16): with N workers pushing in turn tau is about N,
//              so each gradient moves the model about as much as under BSP's mean of N.
//   asp:dc=L   asp with each gradient first corrected for the weights' moves since its
//              rank's read (delay compensation, ps/delay_compensation.h; L = lambda0, 2
//              the paper's; 0: none, as asp).
//   local:H[,warmup=K]  Local SGD (optim/local_sgd.h): the workers take H steps between
//              exchanges and push their steps' gradient sums; the PS counts rounds and runs
//              them as BSP's iterations.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dynacomm::ps {

class SyncPolicy {
 public:
  virtual ~SyncPolicy() = default;
  virtual std::string name() const = 0;  // as --sync spells it: "ssp:2"
  // A pull for `iteration` waits until the unit's version is at least this.
  virtual std::int64_t version_needed(std::int64_t iteration) const = 0;
  // May a pull for `iteration` read a unit at `version` (>= version_needed)? False: the
  // request came too late, an error.
  virtual bool may_read(std::int64_t version, std::int64_t iteration) const = 0;
  // Is a unit's update due once `received` of the `workers` it waits for (the ranks in
  // the job at its version, ps/store.h) have pushed it?
  virtual bool update_due(int received, int workers) const = 0;
  // How many iterations past its unit's version a push may be for (kept until its turn).
  virtual std::int64_t push_ahead() const { return 0; }
  // A push for an iteration its unit has passed: dropped (true) or refused as an error.
  virtual bool drops_late_pushes() const { return false; }
  // Every push its own update, applied on arrival (ASP); the rest aggregate by iteration.
  virtual bool asynchronous() const { return false; }
  // Under ASP: lambda0 of its delay compensation (ps/delay_compensation.h); 0: none.
  virtual double delay_compensation() const { return 0; }
  // Every worker reads exactly its iteration's version, each update has every worker's
  // push (BSP, and local SGD's rounds).
  virtual bool lockstep() const { return false; }
  // The mode's time per iteration for a worker whose own prediction (its plan on its link
  // and device, alone) is `own`, from the predictions of the pushes of the iteration so far
  // (`predicted`, any order; `workers` in the job): under a barrier the slowest's (SSP's
  // too, in the long run), under backup:B the (N-B)-th fastest's or its own if slower,
  // under ASP its own. 0: not known.
  virtual double pace(std::vector<double> predicted, int /*workers*/, double /*own*/) const {
    return predicted.empty() ? 0 : *std::max_element(predicted.begin(), predicted.end());
  }
};

// backup:B's pace: the update waits for the (N-B)-th push; a worker slower than that goes
// at its own (its pushes dropped).
double backup_pace(std::vector<double> predicted, int workers, int backups, double own);

class BspPolicy : public SyncPolicy {
 public:
  std::string name() const override { return "bsp"; }
  std::int64_t version_needed(std::int64_t iteration) const override { return iteration; }
  bool may_read(std::int64_t version, std::int64_t iteration) const override {
    return version == iteration;
  }
  bool update_due(int received, int workers) const override { return received == workers; }
  bool lockstep() const override { return true; }
};

// local:H: BSP over rounds of H steps (the rounds are the PS's iterations).
class LocalSgdPolicy : public BspPolicy {
 public:
  explicit LocalSgdPolicy(std::string spec) : spec_(std::move(spec)) {}
  std::string name() const override { return spec_; }

 private:
  std::string spec_;
};

inline std::shared_ptr<const SyncPolicy> bsp() { return std::make_shared<BspPolicy>(); }

// backup:auto: backup:B whose B the PS sets while the job runs, from the pushes' measured
// arrival times (ps/backup_chooser.h); B = 0 (BSP) until the first choice.
class AdaptiveBackupPolicy : public SyncPolicy {
 public:
  std::string name() const override { return "backup:auto"; }
  std::int64_t version_needed(std::int64_t iteration) const override { return iteration; }
  bool may_read(std::int64_t version, std::int64_t iteration) const override {
    return version >= iteration;
  }
  bool update_due(int received, int workers) const override {
    return received >= std::max(1, workers - b_.load());
  }
  bool drops_late_pushes() const override { return true; }
  double pace(std::vector<double> predicted, int workers, double own) const override {
    return backup_pace(std::move(predicted), workers, b_.load(), own);
  }
  // The one setting that changes while a job runs (atomic: the store reads it from any
  // thread); the store applies what it makes due at its next push (or apply_due()).
  void set_backups(int b) const { b_.store(b); }
  int backups() const { return b_.load(); }

 private:
  mutable std::atomic<int> b_{0};
};

// ASP's momentum at the PS: asynchrony among N workers acts as a momentum of about
// 1 - 1/N of its own (Mitliagkas, Zhang, Hadjis and Re, "Asynchrony begets momentum",
// 2016), so the PS steps with the job's momentum less that, never below 0 (0.9 with 4
// workers: 0.15).
double asp_momentum(double job_momentum, int workers);

// Is `spec` (as --sync spells it) ASP, with or without its options? Inline: workers and
// tools ask it without linking the PS.
inline bool is_asp(const std::string& spec) { return spec == "asp" || spec.rfind("asp:", 0) == 0; }
// Backup workers, backup:B or backup:auto?
inline bool is_backup(const std::string& spec) { return spec.rfind("backup:", 0) == 0; }

// "bsp", "ssp:S", "backup:B", "backup:auto", "asp[:dc=L]" or "local:H[,warmup=K]"; InvalidInput
// naming what is wrong and the choices.
std::shared_ptr<const SyncPolicy> parse_sync_policy(const std::string& spec);

}  // namespace dynacomm::ps
