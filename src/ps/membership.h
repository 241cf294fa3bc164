// The PS's view of who is in the job: ranks 0..workers-1, each joined by one peer (a
// transport's routing id) and leaving once. Fixed now (every rank must join, and the job
// ends when all have left); the reliability issue's re-joins and the synchronisation
// policies' live worker sets change this view, not the server.
//
//   Membership m(2);
//   m.join(0, peer_a);                 // "" : accepted
//   m.join(0, peer_b);                 // "refused: rank 0 has already joined"
//   m.rank_of(peer_a);                 // 0
//   m.leave(0);  m.leave(0);           // counted once
//   m.all_left();                      // false until rank 1 leaves too
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>

namespace dynacomm::ps {

class Membership {
 public:
  explicit Membership(int workers) : workers_(workers) {}

  // Rank `rank` joining from `peer`: "" when accepted (the same peer again: accepted),
  // else the refusal to send back.
  std::string join(int rank, const std::string& peer);
  // The rank that peer joined as; nullopt for a peer that has not joined.
  std::optional<int> rank_of(const std::string& peer) const;
  // True when `peer` joined as `rank`.
  bool is(int rank, const std::string& peer) const;
  // "rank 3", or "an unknown peer", for messages.
  std::string who(const std::string& peer) const;
  // A joined rank's goodbye (again: no effect).
  void leave(int rank);

  int workers() const { return workers_; }
  bool all_left() const { return static_cast<int>(left_.size()) == workers_; }
  // The ranks not joined yet, "0, 2" (empty: none).
  std::string missing() const;
  const std::map<int, std::string>& peers() const { return peers_; }  // rank -> peer

 private:
  int workers_;
  std::map<int, std::string> peers_;
  std::set<int> left_;
};

}  // namespace dynacomm::ps
