// ZeroMQ CURVE for the job's connections: key pairs, the PS's allow-list, and the check
// of where the PS listens.
//
//   dynacomm keygen --out ps        # ps.key (secret, mode 0600) and ps.pub
//   CurveKeyPair k = read_keypair("ps.key");
//   AllowList a = read_allow_list("allow.txt");   // lines "RANK PUBLIC-KEY"
//   a.rank_of(client_public_key);                  // the rank that key was admitted for
//
// Keys are Z85 text (40 characters), as zmq_curve_keypair makes them. A .key file holds
// "public KEY" and "secret KEY" lines; a .pub file the public key alone.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace dynacomm::net {

struct CurveKeyPair {
  std::string public_key, secret_key;  // Z85
};

CurveKeyPair make_keypair();
// Writes PREFIX.key (mode 0600) and PREFIX.pub; Error naming a file that cannot be made.
void write_keypair(const std::string& prefix, const CurveKeyPair& keys);
// InvalidInput naming the file and what is wrong.
CurveKeyPair read_keypair(const std::string& path);
// A public key from a .pub file, or the public half of a .key file.
std::string read_public_key(const std::string& path);

// Which worker public keys the PS admits, each for one rank.
class AllowList {
 public:
  // Lines "RANK PUBLIC-KEY" (or "RANK FILE.pub"); a word starting with '#' outside the key
  // starts a comment. InvalidInput naming the line.
  static AllowList read(const std::string& path);
  void admit(int rank, const std::string& public_key);
  std::optional<int> rank_of(const std::string& public_key) const;
  std::size_t size() const { return ranks_.size(); }

 private:
  std::map<std::string, int> ranks_;
};

// The PS's side: its key pair and who it admits.
struct CurveServer {
  CurveKeyPair keys;
  AllowList allowed;
};

// A worker's side: its key pair and the PS's public key it pins.
struct CurveClient {
  CurveKeyPair keys;
  std::string server_public_key;
};

// True when a tcp:// endpoint binds or names only this machine (127.x.x.x, localhost,
// [::1]); inproc:// too.
bool is_loopback(const std::string& endpoint);

}  // namespace dynacomm::net
