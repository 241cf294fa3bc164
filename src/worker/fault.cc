#include "worker/fault.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>

#include "base/error.h"

namespace dynacomm::worker {

Fault Fault::parse(const std::string& text) {
  const std::size_t a = text.find(':'), b = a == std::string::npos ? a : text.find(':', a + 1);
  const auto bad = [&] {
    return InvalidInput("DYNACOMM_FAULT '" + text +
                        "': expected PHASE:ITERATION:MARKER, PHASE forward, push or pull");
  };
  if (b == std::string::npos || b + 1 >= text.size()) throw bad();
  const std::string phase = text.substr(0, a), it = text.substr(a + 1, b - a - 1);
  Fault f{Phase::kForward, 0, text.substr(b + 1)};
  if (phase == "push")
    f.phase = Phase::kPush;
  else if (phase == "pull")
    f.phase = Phase::kPull;
  else if (phase != "forward")
    throw bad();
  char* end = nullptr;
  f.iteration = std::strtoll(it.c_str(), &end, 10);
  if (it.empty() || *end != '\0' || f.iteration < 0) throw bad();
  return f;
}

std::optional<Fault> Fault::from_env() {
  const char* v = std::getenv("DYNACOMM_FAULT");
  if (v == nullptr || *v == '\0') return std::nullopt;
  return parse(v);
}

void Fault::at(Phase p, std::int64_t it) const {
  if (p != phase || it != iteration) return;
  const int fd = ::open(marker.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return;  // fired before (or the marker cannot be made): run on
  ::close(fd);
  ::kill(::getpid(), SIGKILL);
}

}  // namespace dynacomm::worker
