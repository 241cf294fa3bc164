#include "net/shared_shaper.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <new>

#include "base/error.h"
#include "net/shaper.h"

namespace dynacomm::net {

namespace {
constexpr std::uint64_t kMagic = 0x64796e61636c6f75;  // "dynaclou"
}  // namespace

struct SharedCloudLink::Shared {
  std::uint64_t magic;
  pthread_mutex_t mu;
  LinkShaper in, out;  // trivially copyable state: the same binary maps it in every process
};

namespace {

std::string os_error(const std::string& path, const char* what) {
  return "cloud link " + path + ": " + what + ": " + std::strerror(errno);
}

SharedCloudLink::Shared* map_file(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags, 0600);
  if (fd < 0) throw Error(os_error(path, "cannot open"));
  if ((flags & O_CREAT) &&
      ::ftruncate(fd, static_cast<off_t>(sizeof(SharedCloudLink::Shared))) != 0) {
    ::close(fd);
    throw Error(os_error(path, "cannot size"));
  }
  off_t size = ::lseek(fd, 0, SEEK_END);
  if (size != static_cast<off_t>(sizeof(SharedCloudLink::Shared))) {
    ::close(fd);
    throw Error("cloud link " + path + ": not a cloud link file (" + std::to_string(size) +
                " bytes)");
  }
  void* p =
      ::mmap(nullptr, sizeof(SharedCloudLink::Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw Error(os_error(path, "cannot map"));
  return static_cast<SharedCloudLink::Shared*>(p);
}

class Lock {
 public:
  explicit Lock(pthread_mutex_t* mu) : mu_(mu) {
    if (pthread_mutex_lock(mu_) == EOWNERDEAD) pthread_mutex_consistent(mu_);  // a dead worker's
  }
  ~Lock() { pthread_mutex_unlock(mu_); }

 private:
  pthread_mutex_t* mu_;
};

}  // namespace

std::unique_ptr<SharedCloudLink> SharedCloudLink::create(const std::string& path, double in_bps,
                                                         double out_bps) {
  if (!(in_bps > 0) || !(out_bps > 0) || !std::isfinite(in_bps) || !std::isfinite(out_bps))
    throw InvalidInput("cloud link: rates must be positive");
  ::unlink(path.c_str());
  Shared* s = map_file(path, O_RDWR | O_CREAT | O_EXCL);
  pthread_mutexattr_t a;
  pthread_mutexattr_init(&a);
  pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
  pthread_mutex_init(&s->mu, &a);
  pthread_mutexattr_destroy(&a);
  new (&s->in) LinkShaper(in_bps, 0, 0);
  new (&s->out) LinkShaper(out_bps, 0, 0);
  s->magic = kMagic;
  return std::unique_ptr<SharedCloudLink>(new SharedCloudLink(s, path));
}

std::unique_ptr<SharedCloudLink> SharedCloudLink::open(const std::string& path) {
  Shared* s = map_file(path, O_RDWR);
  if (s->magic != kMagic) {
    ::munmap(s, sizeof(Shared));
    throw Error("cloud link " + path + ": not a cloud link file (no magic)");
  }
  return std::unique_ptr<SharedCloudLink>(new SharedCloudLink(s, path));
}

SharedCloudLink::SharedCloudLink(Shared* shared, std::string path)
    : shared_(shared), path_(std::move(path)) {}

SharedCloudLink::~SharedCloudLink() { ::munmap(shared_, sizeof(Shared)); }

SharedCloudLink::Clock::time_point SharedCloudLink::deliver(bool in, Clock::time_point now,
                                                            std::int64_t bytes) {
  Lock lock(&shared_->mu);
  return (in ? shared_->in : shared_->out).deliver_at(now, bytes);
}

SharedCloudLink::Clock::time_point SharedCloudLink::into_ps(Clock::time_point now,
                                                            std::int64_t bytes) {
  return deliver(true, now, bytes);
}
SharedCloudLink::Clock::time_point SharedCloudLink::out_of_ps(Clock::time_point now,
                                                              std::int64_t bytes) {
  return deliver(false, now, bytes);
}
double SharedCloudLink::in_bps() const { return shared_->in.bandwidth_bps(); }
double SharedCloudLink::out_bps() const { return shared_->out.bandwidth_bps(); }

}  // namespace dynacomm::net
