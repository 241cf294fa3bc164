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
//              is dropped, not refused; a pull reads the newest version, so the dropped
//              worker goes on from there. Iterations never mix: each update sums pushes of
//              its own iteration only.
//   asp        Asynchronous: every push is an update of its own, applied on arrival,
//              exactly once (one push per rank, unit and iteration, iterations rising); a
//              pull reads the newest version at once. The step's learning rate is divided
//              by the push's staleness tau, the updates the unit took since its rank read
//              it (Zhang, Gupta, Lian and Liu, "Staleness-aware Async-SGD", IJCAI'16:
//              lr / tau for tau >= 1, the full rate for tau = 0).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

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
};

class BspPolicy : public SyncPolicy {
 public:
  std::string name() const override { return "bsp"; }
  std::int64_t version_needed(std::int64_t iteration) const override { return iteration; }
  bool may_read(std::int64_t version, std::int64_t iteration) const override {
    return version == iteration;
  }
  bool update_due(int received, int workers) const override { return received == workers; }
};

inline std::shared_ptr<const SyncPolicy> bsp() { return std::make_shared<BspPolicy>(); }

// "bsp", "ssp:S", "backup:B" or "asp"; InvalidInput naming what is wrong and the choices.
std::shared_ptr<const SyncPolicy> parse_sync_policy(const std::string& spec);

}  // namespace dynacomm::ps
