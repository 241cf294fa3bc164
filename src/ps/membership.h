// The PS's view of who is in the job: ranks 0..workers-1, each held by one peer (a
// transport's routing id) at a time. A rank joins, is heard from (any message: a
// heartbeat, a push), and either says goodbye once (it finished) or is dropped (silent past
// the peer timeout, or replaced by a new connection of the same rank); a dropped rank may
// join again. The job is over once some rank has finished and every other has finished or
// was dropped.
//
//   Membership m(2);
//   m.join(0, peer_a, now);            // "" : accepted
//   m.join(0, peer_b, now);            // "refused: rank 0 has already joined" (drop it first)
//   m.rank_of(peer_a);                 // 0
//   m.silent(now + 31s, 30s);          // {0, ...}: the ranks not heard from for 30 s
//   m.drop(0);  m.join(0, peer_b, t);  // rank 0 again, from peer_b
//   m.leave(0);  m.leave(0);           // counted once
//   m.finished();                      // false until rank 1 says goodbye too
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace dynacomm::ps {

class Membership {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Membership(int workers) : workers_(workers) {}

  // Rank `rank` joining from `peer` at `now`: "" when accepted (the same peer again:
  // accepted), else the refusal to send back.
  std::string join(int rank, const std::string& peer, Clock::time_point now = Clock::now());
  // The rank that peer joined as; nullopt for a peer that has not joined.
  std::optional<int> rank_of(const std::string& peer) const;
  // The peer holding `rank`; nullopt when none does.
  std::optional<std::string> peer_of(int rank) const;
  // True when `peer` joined as `rank`.
  bool is(int rank, const std::string& peer) const;
  // "rank 3", or "an unknown peer", for messages.
  std::string who(const std::string& peer) const;
  // A message from joined rank `rank` at `now`.
  void seen(int rank, Clock::time_point now);
  // The joined ranks, not finished, that nothing has been heard from since now - timeout.
  std::vector<int> silent(Clock::time_point now, std::chrono::milliseconds timeout) const;
  // A joined rank's goodbye (again: no effect).
  void leave(int rank);
  // Rank `rank` is no longer held by its peer (it may join again).
  void drop(int rank, Clock::time_point now = Clock::now());

  int workers() const { return workers_; }
  // Some rank said goodbye, and every other rank did too or was dropped at least `grace`
  // before `now` (one that never joined, or was dropped since, keeps the job open: a
  // worker started again near the job's end can still rejoin it and finish).
  bool finished(Clock::time_point now, std::chrono::milliseconds grace) const;
  bool finished() const { return finished(Clock::time_point::max(), {}); }
  bool has_left(int rank) const { return left_.count(rank) > 0; }
  // The ranks not held now, "0, 2" (empty: none).
  std::string missing() const;
  const std::map<int, std::string>& peers() const { return peers_; }  // rank -> peer

 private:
  int workers_;
  std::map<int, std::string> peers_;
  std::map<int, Clock::time_point> seen_;
  std::set<int> left_;
  std::map<int, Clock::time_point> dropped_;  // dropped, not held since: when
};

}  // namespace dynacomm::ps
