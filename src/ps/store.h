// The parameter server's store: flat per-unit float buffers with a version each, BSP
// aggregation and the server-side optimizer. No libtorch, no networking: the transport
// calls into it, and tests drive it from threads.
//
//   ParameterStore store(StoreOptions{2, sgd, 30s}, initial_units);   // 2 workers
//   store.pull(0, 3, /*iteration=*/0, buffer);          // returns at once: version 0
//   store.push(/*rank=*/0, 0, 3, 0, grads0);            // held until rank 1's arrive
//   store.push(1, 0, 3, 0, grads1);                     // sum in rank order, average, SGD
//   store.pull(0, 3, 1, buffer);                        // version 1 now
//
// Semantics (BSP; the other modes are policies, ps/sync_policy.h): unit u is at version t once
// the updates of iterations 0..t-1 have been applied. A pull of units a..b for iteration t waits
// until each of them is at version t, unit by unit, so a segment is answered as soon as its own
// units are ready, never waiting for the whole model. The gradients of the N workers for (u, t)
// are summed in rank order, never arrival order, so results do not depend on timing (under
// backup workers: which pushes came first does).
//
// Membership: every rank is in the job from version 0 until it leaves. The update of (u, t)
// is due once every rank in the job that joined at or before t has pushed it, and it is
// the mean of the pushes received: a rank that left after pushing (u, t) still counts
// there, one that left before does not, and the ranks that remain go on without it. A rank
// that joins again at version J (its current version, see newest_version) is needed from
// J on; a push of (u, t >= J) its earlier self made is replaced by its new one.
//
// Thread safety: every method may be called from any thread. Each unit has its own lock,
// so pushes and pulls of different units proceed in parallel.
// Errors: InvalidInput for a request that can never be valid (unit range, rank, wrong
// iteration, duplicate push); Timeout naming unit and iteration when a wait runs out.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "optim/sgd.h"
#include "ps/sync_policy.h"

namespace dynacomm::ps {

struct StoreOptions {
  int workers = 1;
  optim::SgdOptions sgd;
  std::chrono::milliseconds wait_timeout{30000};     // for a pull to become answerable
  std::shared_ptr<const SyncPolicy> policy = bsp();  // ps/sync_policy.h

  void validate() const;  // throws InvalidInput naming the option
};

class ParameterStore {
 public:
  ParameterStore(const StoreOptions& options, std::vector<std::vector<float>> initial_units);
  ~ParameterStore();

  int num_units() const { return static_cast<int>(units_.size()); }
  const SyncPolicy& policy() const { return *options_.policy; }
  std::int64_t unit_floats(int unit) const;
  std::int64_t version(int unit) const;

  // Copies units first..last (their floats back to back) into `out` once all are at a
  // version the policy lets a pull for `iteration` read (BSP: `iteration`). reader: the
  // pulling rank, whose read version ASP's staleness counts from; -1: none (a snapshot).
  // Returns the oldest version among those read.
  std::int64_t pull(int first, int last, std::int64_t iteration, float* out, int reader = -1);
  // True when units first..last are all at version >= iteration (a pull would not wait).
  bool ready(int first, int last, std::int64_t iteration) const;
  // Why a pull of first..last for `iteration` can never be answered, "" when it can now or
  // will be: units outside the model, an iteration a unit has already passed, or one more
  // than `horizon` versions ahead of a unit (no worker under the policy gets that far).
  std::string unanswerable(int first, int last, std::int64_t iteration,
                           std::int64_t horizon = 2) const;
  // Non-blocking variant for an event loop: false when not yet at that version.
  bool try_pull(int first, int last, std::int64_t iteration, float* out, int reader = -1);

  // Stores worker `rank`'s gradients of units first..last (floats back to back) for
  // `iteration`; when it completes a unit's set, applies the update (and any later
  // iteration's already complete, under SSP). Returns the units whose version advanced.
  // A push the policy drops (a late backup worker's) changes nothing and is counted.
  std::vector<int> push(int rank, int first, int last, std::int64_t iteration, const float* grads);

  // Rank `rank` leaves the job: updates no longer wait for it. Returns the units whose
  // version advanced (their other pushes were all in).
  std::vector<int> leave(int rank);
  // Applies every update the policy now finds due (backup:auto's B changed). Returns the
  // units whose version advanced.
  std::vector<int> apply_due();
  // Rank `rank` (back) in the job from version `from` on (see the semantics above).
  void join(int rank, std::int64_t from);
  bool present(int rank) const;
  // Under ASP: the iteration after rank's last push of any unit (0: none).
  std::int64_t next_iteration_of(int rank) const;
  // The highest version any unit has reached: where a worker joining now starts.
  std::int64_t newest_version() const;

  // A unit's whole state, for checkpoints (ps/checkpoint.h).
  struct UnitState {
    std::int64_t version = 0;
    std::vector<float> params, velocity;  // velocity: the optimiser's momentum buffer
    bool started = false;                 // the optimiser has stepped it
    // With compressed pulls: the public copy every worker holds (ps/pull_encoder.h); empty
    // otherwise. The store neither fills nor reads it: the server does.
    std::vector<float> public_copy;
  };
  // Every unit's state, each taken under its lock (consistent across units when no push
  // can land meanwhile: the PS's I/O thread calls it between messages).
  std::vector<UnitState> state() const;
  // Puts back what state() returned (a resumed job), before any push or pull;
  // InvalidInput naming the unit on a size mismatch.
  void restore(std::vector<UnitState> units);
  // The lowest version of any unit.
  std::int64_t oldest_version() const;

  // All parameters, units in order (a consistent snapshot per unit).
  std::vector<float> snapshot() const;
  // Units' pushes dropped by the policy so far (one per unit and push).
  std::int64_t dropped() const { return dropped_.load(); }

 private:
  struct Unit;
  void check_range(int first, int last) const;
  // Under u.mu: applies unit i's update when due; true when it advanced (the caller
  // notifies).
  bool apply_if_due(int i, Unit& u);
  // Under u.mu: an asynchronous policy's push, applied at once (sync_policy.h's rule).
  void apply_now(int i, Unit& u, int rank, std::int64_t iteration, const float* grads,
                 const std::string& where);
  StoreOptions options_;
  mutable std::mutex members_mu_;   // taken after a unit's lock, never before
  std::vector<std::int64_t> from_;  // per rank: in the job from this version; -1: left
  std::vector<std::unique_ptr<Unit>> units_;
  std::unique_ptr<optim::Sgd> sgd_;
  std::atomic<std::int64_t> dropped_{0};
};

}  // namespace dynacomm::ps
