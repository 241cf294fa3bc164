#include "net/endpoint.h"

#include <cctype>

#include "base/error.h"

namespace dynacomm::net {

namespace {
bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }
}  // namespace

void check_endpoint(const std::string& endpoint, const std::string& what) {
  const std::string expected =
      ": expected tcp://HOST:PORT with PORT 0..65535 (0: a free one), ipc://PATH or "
      "inproc://NAME";
  auto bad = [&](const std::string& why) {
    return InvalidInput(what + " '" + endpoint + "': " + why + expected);
  };
  if (starts_with(endpoint, "ipc://") || starts_with(endpoint, "inproc://")) {
    if (endpoint.size() <= endpoint.find("://") + 3) throw bad("no name");
    return;
  }
  if (!starts_with(endpoint, "tcp://")) throw bad("unknown transport");
  const std::string rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0) throw bad("no host and port");
  const std::string port = rest.substr(colon + 1);
  if (port == "*") return;
  if (port.empty() || port.size() > 5) throw bad("port '" + port + "' is not a port number");
  for (char c : port)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      throw bad("port '" + port + "' is not a port number");
  if (std::stoi(port) > 65535) throw bad("port " + port + " is above 65535");
}

}  // namespace dynacomm::net
