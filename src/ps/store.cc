#include "ps/store.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "base/error.h"
#include "ps/delay_compensation.h"

namespace dynacomm::ps {

// One iteration's pushes of a unit, kept until its update (SSP keeps several).
struct Round {
  std::vector<std::vector<float>> grads;  // per rank
  std::vector<bool> received;             // per rank
  int count = 0;
};

struct ParameterStore::Unit {
  mutable std::mutex mu;
  std::condition_variable advanced;
  std::int64_t version = 0;
  std::vector<float> params;
  std::map<std::int64_t, Round> rounds;  // by iteration, from the unit's version on
  std::vector<std::int64_t> read_at;     // per rank: the version it last pulled (-1: none)
  std::vector<std::int64_t> last_push;   // per rank: its last push's iteration (ASP; -1)
  std::unique_ptr<DelayCompensation> compensation;  // ASP's, unless its lambda0 is 0
  std::vector<float> corrected;                     // its gradient, corrected
};

void StoreOptions::validate() const {
  if (workers < 1) throw InvalidInput("ps: workers must be at least 1");
  if (wait_timeout.count() <= 0) throw InvalidInput("ps: wait timeout must be positive");
  if (!policy) throw InvalidInput("ps: no synchronisation policy");
  sgd.validate();
}

ParameterStore::ParameterStore(const StoreOptions& options,
                               std::vector<std::vector<float>> initial_units)
    : options_(options) {
  options_.validate();
  if (initial_units.empty()) throw InvalidInput("ps: a model with no units");
  std::vector<std::int64_t> sizes;
  for (auto& values : initial_units) {
    auto u = std::make_unique<Unit>();
    sizes.push_back(static_cast<std::int64_t>(values.size()));
    u->params = std::move(values);
    u->read_at.assign(static_cast<std::size_t>(options_.workers), -1);
    u->last_push.assign(static_cast<std::size_t>(options_.workers), -1);
    if (options_.policy->asynchronous() && options_.policy->delay_compensation() > 0)
      u->compensation = std::make_unique<DelayCompensation>(options_.policy->delay_compensation(),
                                                            options_.workers, u->params.size());
    units_.push_back(std::move(u));
  }
  from_.assign(static_cast<std::size_t>(options_.workers), 0);
  sgd_ = std::make_unique<optim::Sgd>(options_.sgd, sizes);
}

ParameterStore::~ParameterStore() = default;

std::int64_t ParameterStore::unit_floats(int unit) const {
  check_range(unit, unit);
  return static_cast<std::int64_t>(units_[static_cast<std::size_t>(unit)]->params.size());
}

std::int64_t ParameterStore::version(int unit) const {
  check_range(unit, unit);
  const Unit& u = *units_[static_cast<std::size_t>(unit)];
  std::lock_guard<std::mutex> lock(u.mu);
  return u.version;
}

void ParameterStore::check_range(int first, int last) const {
  if (first < 0 || last < first || last >= num_units())
    throw InvalidInput("ps: unit range " + std::to_string(first) + ".." + std::to_string(last) +
                       " is not within 0.." + std::to_string(num_units() - 1));
}

std::int64_t ParameterStore::pull(int first, int last, std::int64_t iteration, float* out,
                                  int reader) {
  check_range(first, last);
  if (reader >= options_.workers)
    throw InvalidInput("ps: pull by rank " + std::to_string(reader) + ", expected 0.." +
                       std::to_string(options_.workers - 1));
  const auto deadline = std::chrono::steady_clock::now() + options_.wait_timeout;
  std::int64_t oldest = std::numeric_limits<std::int64_t>::max();
  for (int i = first; i <= last; ++i) {
    Unit& u = *units_[static_cast<std::size_t>(i)];
    std::unique_lock<std::mutex> lock(u.mu);
    const std::int64_t needed = options_.policy->version_needed(iteration);
    if (!u.advanced.wait_until(lock, deadline, [&] { return u.version >= needed; }))
      throw Timeout("ps: pull of unit " + std::to_string(i) + " for iteration " +
                    std::to_string(iteration) + " timed out after " +
                    std::to_string(options_.wait_timeout.count()) + " ms (unit is at version " +
                    std::to_string(u.version) + ": a worker's push is missing)");
    if (!options_.policy->may_read(u.version, iteration))
      throw InvalidInput("ps: pull of unit " + std::to_string(i) + " for iteration " +
                         std::to_string(iteration) + ", but it is already at version " +
                         std::to_string(u.version));
    std::memcpy(out, u.params.data(), u.params.size() * sizeof(float));
    out += u.params.size();
    if (reader >= 0) u.read_at[static_cast<std::size_t>(reader)] = u.version;
    if (reader >= 0 && u.compensation) u.compensation->read(reader, u.params.data());
    oldest = std::min(oldest, u.version);
  }
  return oldest;
}

bool ParameterStore::ready(int first, int last, std::int64_t iteration) const {
  check_range(first, last);
  for (int i = first; i <= last; ++i)
    if (version(i) < options_.policy->version_needed(iteration)) return false;
  return true;
}

std::string ParameterStore::unanswerable(int first, int last, std::int64_t iteration,
                                         std::int64_t horizon) const {
  if (first < 0 || last < first || last >= num_units())
    return "unit range " + std::to_string(first) + ".." + std::to_string(last) +
           " is not within 0.." + std::to_string(num_units() - 1);
  if (iteration < 0) return "iteration " + std::to_string(iteration) + " is negative";
  const std::int64_t needed = options_.policy->version_needed(iteration);
  for (int i = first; i <= last; ++i) {
    const std::int64_t v = version(i);
    if (v >= needed && !options_.policy->may_read(v, iteration))
      return "pull of unit " + std::to_string(i) + " for iteration " + std::to_string(iteration) +
             ", which it has passed (at version " + std::to_string(v) + ")";
    if (needed > v + horizon)
      return "pull of unit " + std::to_string(i) + " for iteration " + std::to_string(iteration) +
             ", more than " + std::to_string(horizon) + " ahead of its version " +
             std::to_string(v);
  }
  return "";
}

bool ParameterStore::try_pull(int first, int last, std::int64_t iteration, float* out, int reader) {
  if (!ready(first, last, iteration)) return false;
  pull(first, last, iteration, out, reader);
  return true;
}

std::vector<int> ParameterStore::push(int rank, int first, int last, std::int64_t iteration,
                                      const float* grads) {
  check_range(first, last);
  if (rank < 0 || rank >= options_.workers)
    throw InvalidInput("ps: push from rank " + std::to_string(rank) + ", expected 0.." +
                       std::to_string(options_.workers - 1));
  std::int64_t from;
  {
    std::lock_guard<std::mutex> lock(members_mu_);
    from = from_[static_cast<std::size_t>(rank)];
  }
  if (from < 0)
    throw InvalidInput("ps: push from rank " + std::to_string(rank) + ", which has left the job");
  if (iteration < from)
    throw InvalidInput("ps: push from rank " + std::to_string(rank) + " for iteration " +
                       std::to_string(iteration) + ", before it joined (at " +
                       std::to_string(from) + ")");
  std::vector<int> advanced;
  for (int i = first; i <= last; ++i) {
    Unit& u = *units_[static_cast<std::size_t>(i)];
    const std::size_t n = u.params.size();
    const float* mine = grads;
    grads += n;
    std::unique_lock<std::mutex> lock(u.mu);
    const std::string where = "ps: push of unit " + std::to_string(i) + " from rank " +
                              std::to_string(rank) + " for iteration " + std::to_string(iteration);
    if (options_.policy->asynchronous()) {
      apply_now(i, u, rank, iteration, mine, where);
    } else {
      if (iteration < u.version && options_.policy->drops_late_pushes()) {
        ++dropped_;
        continue;
      }
      if (iteration < u.version || iteration > u.version + options_.policy->push_ahead())
        throw InvalidInput(where + ": the unit is at version " + std::to_string(u.version));
      Round& round = u.rounds[iteration];
      if (round.received.empty()) {
        round.grads.assign(static_cast<std::size_t>(options_.workers), {});
        round.received.assign(static_cast<std::size_t>(options_.workers), false);
      }
      if (round.received[static_cast<std::size_t>(rank)]) throw InvalidInput(where + ": duplicate");
      round.grads[static_cast<std::size_t>(rank)].assign(mine, mine + n);
      round.received[static_cast<std::size_t>(rank)] = true;
      ++round.count;
      bool any = false;
      while (apply_if_due(i, u)) any = true;
      if (!any) continue;
    }
    lock.unlock();
    u.advanced.notify_all();
    advanced.push_back(i);
  }
  return advanced;
}

void ParameterStore::apply_now(int i, Unit& u, int rank, std::int64_t iteration, const float* grads,
                               const std::string& where) {
  std::int64_t& last = u.last_push[static_cast<std::size_t>(rank)];
  if (iteration <= last)
    throw InvalidInput(where + ": not after its last push (iteration " + std::to_string(last) +
                       "): each push is applied once");
  last = iteration;
  const std::int64_t read = u.read_at[static_cast<std::size_t>(rank)];
  // The updates from its read to this one, this one included (>= 1).
  const std::int64_t staleness = (read < 0 ? 0 : u.version - read) + 1;
  if (u.compensation) {
    u.corrected.resize(u.params.size());
    u.compensation->correct(rank, grads, u.params.data(), u.corrected.data());
    grads = u.corrected.data();
  }
  sgd_->step(i, u.params.data(), grads, iteration, 1.0 / static_cast<double>(staleness));
  ++u.version;
}

bool ParameterStore::apply_if_due(int i, Unit& u) {
  auto it = u.rounds.find(u.version);
  if (it == u.rounds.end() || it->second.count == 0) return false;
  Round& round = it->second;
  int required = 0, required_in = 0;
  {
    std::lock_guard<std::mutex> lock(members_mu_);
    for (std::size_t r = 0; r < from_.size(); ++r)
      if (from_[r] >= 0 && from_[r] <= u.version) {
        ++required;
        required_in += round.received[r] ? 1 : 0;
      }
  }
  if (!options_.policy->update_due(required_in, required)) return false;
  // The update's pushes summed in rank order, averaged, applied.
  const std::size_t n = u.params.size();
  std::vector<float>* sum = nullptr;
  for (int r = 0; r < options_.workers; ++r) {
    if (!round.received[static_cast<std::size_t>(r)]) continue;
    std::vector<float>& g = round.grads[static_cast<std::size_t>(r)];
    if (sum == nullptr) {
      sum = &g;
      continue;
    }
    for (std::size_t k = 0; k < n; ++k) (*sum)[k] += g[k];
  }
  if (round.count > 1) {
    const float count = static_cast<float>(round.count);
    for (std::size_t k = 0; k < n; ++k) (*sum)[k] /= count;
  }
  sgd_->step(i, u.params.data(), sum->data(), u.version);
  ++u.version;
  u.rounds.erase(it);
  return true;
}

std::vector<int> ParameterStore::leave(int rank) {
  if (rank < 0 || rank >= options_.workers)
    throw InvalidInput("ps: rank " + std::to_string(rank) + " is not in 0.." +
                       std::to_string(options_.workers - 1));
  {
    std::lock_guard<std::mutex> lock(members_mu_);
    from_[static_cast<std::size_t>(rank)] = -1;
  }
  return apply_due();
}

std::vector<int> ParameterStore::apply_due() {
  std::vector<int> advanced;
  for (int i = 0; i < num_units(); ++i) {
    Unit& u = *units_[static_cast<std::size_t>(i)];
    std::unique_lock<std::mutex> lock(u.mu);
    bool any = false;
    while (apply_if_due(i, u)) any = true;
    if (!any) continue;
    lock.unlock();
    u.advanced.notify_all();
    advanced.push_back(i);
  }
  return advanced;
}

void ParameterStore::join(int rank, std::int64_t from) {
  if (rank < 0 || rank >= options_.workers || from < 0)
    throw InvalidInput("ps: rank " + std::to_string(rank) + " cannot join at version " +
                       std::to_string(from));
  const auto r = static_cast<std::size_t>(rank);
  for (auto& unit : units_) {  // its earlier self's pushes from `from` on are replaced
    std::lock_guard<std::mutex> lock(unit->mu);
    for (auto& [iteration, round] : unit->rounds)
      if (iteration >= from && round.received[r]) {
        round.received[r] = false;
        --round.count;
      }
    unit->read_at[r] = -1;
    unit->last_push[r] = -1;
    if (unit->compensation) unit->compensation->forget(rank);
  }
  std::lock_guard<std::mutex> lock(members_mu_);
  from_[static_cast<std::size_t>(rank)] = from;
}

bool ParameterStore::present(int rank) const {
  std::lock_guard<std::mutex> lock(members_mu_);
  return rank >= 0 && rank < options_.workers && from_[static_cast<std::size_t>(rank)] >= 0;
}

std::int64_t ParameterStore::next_iteration_of(int rank) const {
  if (rank < 0 || rank >= options_.workers) return 0;
  std::int64_t next = 0;
  for (const auto& u : units_) {
    std::lock_guard<std::mutex> lock(u->mu);
    next = std::max(next, u->last_push[static_cast<std::size_t>(rank)] + 1);
  }
  return next;
}

std::int64_t ParameterStore::newest_version() const {
  std::int64_t v = 0;
  for (int i = 0; i < num_units(); ++i) v = std::max(v, version(i));
  return v;
}

std::vector<ParameterStore::UnitState> ParameterStore::state() const {
  std::vector<UnitState> out;
  for (int i = 0; i < num_units(); ++i) {
    const Unit& u = *units_[static_cast<std::size_t>(i)];
    std::lock_guard<std::mutex> lock(u.mu);
    out.push_back({u.version, u.params, sgd_->velocity(i), sgd_->started(i), {}});
  }
  return out;
}

void ParameterStore::restore(std::vector<UnitState> units) {
  if (static_cast<int>(units.size()) != num_units())
    throw InvalidInput("ps: a state of " + std::to_string(units.size()) + " units for a model of " +
                       std::to_string(num_units()));
  for (int i = 0; i < num_units(); ++i) {
    Unit& u = *units_[static_cast<std::size_t>(i)];
    UnitState& s = units[static_cast<std::size_t>(i)];
    std::lock_guard<std::mutex> lock(u.mu);
    if (s.params.size() != u.params.size() || s.version < 0)
      throw InvalidInput("ps: unit " + std::to_string(i) + " of the state holds " +
                         std::to_string(s.params.size()) + " parameters, the model " +
                         std::to_string(u.params.size()));
    sgd_->restore(i, std::move(s.velocity), s.started);
    u.params = std::move(s.params);
    u.version = s.version;
    u.rounds.clear();
    std::fill(u.read_at.begin(), u.read_at.end(), -1);
    std::fill(u.last_push.begin(), u.last_push.end(), -1);
    if (u.compensation) u.compensation->forget_all();
  }
}

std::int64_t ParameterStore::oldest_version() const {
  std::int64_t v = version(0);
  for (int i = 1; i < num_units(); ++i) v = std::min(v, version(i));
  return v;
}

std::vector<float> ParameterStore::snapshot() const {
  std::vector<float> out;
  for (const auto& u : units_) {
    std::lock_guard<std::mutex> lock(u->mu);
    out.insert(out.end(), u->params.begin(), u->params.end());
  }
  return out;
}

}  // namespace dynacomm::ps
