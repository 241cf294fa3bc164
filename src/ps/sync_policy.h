// The store's synchronisation policy: which version of a unit a pull for an iteration may
// read, and when a unit's pushes of an iteration make an update. The store asks it and
// does the rest (locking, summing in rank order, the optimiser step), so a new mode (SSP,
// local SGD, backup workers) is a new policy, not an edit of the store.
//
// BSP, the only one now: a pull for iteration t reads version t exactly (it waits until the
// updates of 0..t-1 are applied, and version t+1 is too late: the request is an error);
// an update needs every worker's push of the unit's version.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace dynacomm::ps {

class SyncPolicy {
 public:
  virtual ~SyncPolicy() = default;
  virtual std::string name() const = 0;
  // A pull for `iteration` waits until the unit's version is at least this.
  virtual std::int64_t version_needed(std::int64_t iteration) const = 0;
  // May a pull for `iteration` read a unit at `version` (>= version_needed)? False: the
  // request came too late, an error.
  virtual bool may_read(std::int64_t version, std::int64_t iteration) const = 0;
  // Is a unit's update due once `received` of the `workers` it waits for (the ranks in
  // the job at its version, ps/store.h) have pushed it?
  virtual bool update_due(int received, int workers) const = 0;
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

}  // namespace dynacomm::ps
