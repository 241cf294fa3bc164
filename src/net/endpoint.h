// ZeroMQ endpoints as users type them, checked before a socket sees them (libzmq accepts
// some nonsense, e.g. binds tcp://127.0.0.1:99999 to another port without a word).
//
//   check_endpoint("tcp://127.0.0.1:7070", "--listen");   // fine
//   check_endpoint("tcp://127.0.0.1:99999", "--listen");  // throws InvalidInput
#pragma once

#include <string>

namespace dynacomm::net {

// Accepts tcp://HOST:PORT (PORT 0..65535, or * / 0 for a free one when binding),
// ipc://PATH and inproc://NAME. Throws InvalidInput naming `what` and the endpoint.
void check_endpoint(const std::string& endpoint, const std::string& what);

}  // namespace dynacomm::net
