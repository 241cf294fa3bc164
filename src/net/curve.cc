#include "net/curve.h"

#include <sys/stat.h>
#include <zmq.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace dynacomm::net {

namespace {

bool is_z85_key(const std::string& k) {
  if (k.size() != 40) return false;
  for (char c : k)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || std::strchr(".-:+=^!/*?&<>()[]{}@%$#", c)))
      return false;
  std::uint8_t raw[32];
  return zmq_z85_decode(raw, k.c_str()) != nullptr;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("cannot read the key file " + path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

CurveKeyPair make_keypair() {
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0)
    throw Error(std::string("cannot make a CURVE key pair (libzmq without libsodium?): ") +
                zmq_strerror(zmq_errno()));
  return {pub, sec};
}

void write_keypair(const std::string& prefix, const CurveKeyPair& keys) {
  const std::string key = prefix + ".key", pub = prefix + ".pub";
  {
    const mode_t old = ::umask(077);  // the secret is never readable by others, even briefly
    std::ofstream out(key, std::ios::trunc);
    ::umask(old);
    out << "# dynacomm CURVE key pair: keep this file secret\npublic " << keys.public_key
        << "\nsecret " << keys.secret_key << "\n";
    if (!out.flush()) throw Error("cannot write " + key + ": " + std::strerror(errno));
  }
  ::chmod(key.c_str(), 0600);
  std::ofstream out(pub, std::ios::trunc);
  out << keys.public_key << "\n";
  if (!out.flush()) throw Error("cannot write " + pub + ": " + std::strerror(errno));
}

CurveKeyPair read_keypair(const std::string& path) {
  std::istringstream in(read_text(path));
  CurveKeyPair k;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string what, key;
    words >> what >> key;
    if (what == "public") k.public_key = key;
    if (what == "secret") k.secret_key = key;
  }
  if (!is_z85_key(k.public_key) || !is_z85_key(k.secret_key))
    throw InvalidInput(path +
                       ": not a key pair made by `dynacomm keygen` (want lines "
                       "\"public KEY\" and \"secret KEY\", 40-character Z85 keys)");
  char derived[41];
  if (zmq_curve_public(derived, k.secret_key.c_str()) != 0 || k.public_key != derived)
    throw InvalidInput(path + ": its public key is not the secret key's");
  return k;
}

std::string read_public_key(const std::string& path) {
  const std::string text = read_text(path);
  if (text.find("secret ") != std::string::npos) return read_keypair(path).public_key;
  std::istringstream in(text);
  std::string key;
  in >> key;
  if (!is_z85_key(key)) throw InvalidInput(path + ": not a public key (40-character Z85)");
  return key;
}

AllowList AllowList::read(const std::string& path) {
  std::istringstream in(read_text(path));
  AllowList a;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    // '#' starts a comment as a line's or a trailing word's first character; inside the key
    // position it is a Z85 character like any other.
    std::istringstream words(line);
    std::string rank, key, extra;
    if (!(words >> rank) || rank[0] == '#') continue;
    const std::string where = path + ":" + std::to_string(n) + ": ";
    if (!(words >> key) || ((words >> extra) && extra[0] != '#') ||
        rank.find_first_not_of("0123456789") != std::string::npos || rank.size() > 7)
      throw InvalidInput(where + "want \"RANK PUBLIC-KEY\" (a rank 0.., a key or a .pub file)");
    if (!is_z85_key(key)) {
      try {
        key = read_public_key(key);
      } catch (const InvalidInput& e) {
        throw InvalidInput(where + e.what());
      }
    }
    if (a.ranks_.count(key)) throw InvalidInput(where + "this key is admitted twice");
    a.admit(std::stoi(rank), key);
  }
  if (a.size() == 0) throw InvalidInput(path + ": admits no worker");
  return a;
}

void AllowList::admit(int rank, const std::string& public_key) { ranks_[public_key] = rank; }

std::optional<int> AllowList::rank_of(const std::string& public_key) const {
  auto it = ranks_.find(public_key);
  if (it == ranks_.end()) return std::nullopt;
  return it->second;
}

bool is_loopback(const std::string& endpoint) {
  if (endpoint.rfind("inproc://", 0) == 0) return true;
  if (endpoint.rfind("tcp://", 0) != 0) return false;
  const std::string host = endpoint.substr(6, endpoint.rfind(':') - 6);
  return host.rfind("127.", 0) == 0 || host == "localhost" || host == "[::1]";
}

}  // namespace dynacomm::net
