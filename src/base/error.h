// The project's error hierarchy. Every module throws these at its boundaries, so a caller
// can tell bad input (a user's flag, a file, a message off the wire) from a failure of the
// system itself, and print one clear message naming what was wrong and where.
//
//   try { auto p = plan::load_profile("p.json"); }
//   catch (const dynacomm::InvalidInput& e) { std::cerr << e.what(); }  // "p.json: units[3].bytes:
//   ..."
#pragma once

#include <stdexcept>
#include <string>

namespace dynacomm {

// Base of everything dynacomm throws on purpose.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// Input from outside the process was rejected: a flag, a file, a profile, a message.
// The message names the field (and unit, rank, peer where one applies).
class InvalidInput : public Error {
 public:
  explicit InvalidInput(const std::string& what) : Error(what) {}
};

// A blocking wait ran out of time; the message says what was awaited and for how long.
class Timeout : public Error {
 public:
  explicit Timeout(const std::string& what) : Error(what) {}
};

// The peer at the other end reported an error (a kError message): what it said, relayed.
class RemoteError : public Error {
 public:
  explicit RemoteError(const std::string& what) : Error(what) {}
};

}  // namespace dynacomm
