// A TCP port nobody on this machine listens on now, for a rendezvous whose address every
// process must know before the first one starts (--arch allreduce's store). Another
// process could take it before it is bound: the binding then fails with a clear error.
#pragma once

#include <string>

namespace dynacomm::net {

// Binds an ephemeral port on `host` (an IPv4 address), closes it and returns it. Throws
// Error naming the host when that fails.
int free_tcp_port(const std::string& host = "127.0.0.1");

}  // namespace dynacomm::net
