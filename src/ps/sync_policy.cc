#include "ps/sync_policy.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "base/error.h"
#include "optim/local_sgd.h"

namespace dynacomm::ps {
namespace {

class SspPolicy : public SyncPolicy {
 public:
  explicit SspPolicy(std::int64_t s) : s_(s) {}
  std::string name() const override { return "ssp:" + std::to_string(s_); }
  std::int64_t version_needed(std::int64_t iteration) const override {
    return std::max<std::int64_t>(0, iteration - s_);
  }
  bool may_read(std::int64_t version, std::int64_t iteration) const override {
    // Past the iteration itself an update would need this worker's own push of it.
    return version >= iteration - s_ && version <= iteration;
  }
  bool update_due(int received, int workers) const override { return received == workers; }
  std::int64_t push_ahead() const override { return s_; }

 private:
  std::int64_t s_;
};

class BackupPolicy : public SyncPolicy {
 public:
  explicit BackupPolicy(int b) : b_(b) {}
  std::string name() const override { return "backup:" + std::to_string(b_); }
  std::int64_t version_needed(std::int64_t iteration) const override { return iteration; }
  bool may_read(std::int64_t version, std::int64_t iteration) const override {
    return version >= iteration;  // a dropped worker reads the newest and goes on
  }
  bool update_due(int received, int workers) const override {
    return received >= std::max(1, workers - b_);
  }
  bool drops_late_pushes() const override { return true; }
  double pace(std::vector<double> predicted, int workers, double own) const override {
    return backup_pace(std::move(predicted), workers, b_, own);
  }

 private:
  int b_;
};

class AspPolicy : public SyncPolicy {
 public:
  explicit AspPolicy(double lambda0 = 0) : lambda0_(lambda0) {}
  std::string name() const override {
    if (lambda0_ == 0) return "asp";
    std::ostringstream s;
    s.precision(15);
    s << "asp:dc=" << lambda0_;
    return s.str();
  }
  double delay_compensation() const override { return lambda0_; }
  std::int64_t version_needed(std::int64_t) const override { return 0; }
  bool may_read(std::int64_t, std::int64_t) const override { return true; }
  bool update_due(int received, int) const override { return received >= 1; }
  bool asynchronous() const override { return true; }
  double pace(std::vector<double>, int, double own) const override { return own; }

 private:
  double lambda0_;
};

// The whole of `text` as a count in [0, max]; InvalidInput naming the spec otherwise.
std::int64_t parse_count(const std::string& text, const std::string& spec, std::int64_t max) {
  char* stop = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &stop, 10);
  if (text.empty() || stop == text.c_str() || *stop != 0 || errno != 0 || v < 0 || v > max)
    throw InvalidInput("--sync " + spec + ": '" + text + "' is not a whole number in 0.." +
                       std::to_string(max));
  return v;
}

}  // namespace

double backup_pace(std::vector<double> predicted, int workers, int backups, double own) {
  if (predicted.empty()) return own;
  std::sort(predicted.begin(), predicted.end());
  const auto k = static_cast<std::size_t>(std::max(1, workers - backups));
  const double update = predicted[std::min(k, predicted.size()) - 1];
  return std::max(update, own);
}

double asp_momentum(double job_momentum, int workers) {
  return std::max(0.0, job_momentum - (1.0 - 1.0 / std::max(1, workers)));
}

std::shared_ptr<const SyncPolicy> parse_sync_policy(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  const std::string head = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (head == "bsp" && colon == std::string::npos) return bsp();
  if (head == "asp" && colon == std::string::npos) return std::make_shared<AspPolicy>();
  if (head == "asp" && arg.rfind("dc=", 0) == 0) {
    char* stop = nullptr;
    errno = 0;
    const double lambda0 = std::strtod(arg.c_str() + 3, &stop);
    if (arg.size() == 3 || *stop != 0 || errno != 0 || !std::isfinite(lambda0) || lambda0 < 0 ||
        lambda0 > 1e6)
      throw InvalidInput("--sync " + spec +
                         ": dc= takes lambda0, a number in 0..1e6 (2: the paper's; 0: none)");
    return std::make_shared<AspPolicy>(lambda0);
  }
  if (head == "ssp" && colon != std::string::npos) {
    return std::make_shared<SspPolicy>(parse_count(arg, spec, 1000));
  }
  if (spec == "backup:auto") return std::make_shared<AdaptiveBackupPolicy>();
  if (head == "backup" && colon != std::string::npos) {
    return std::make_shared<BackupPolicy>(static_cast<int>(parse_count(arg, spec, 1000)));
  }
  if (optim::LocalSgd::parse(spec)) return std::make_shared<LocalSgdPolicy>(spec);
  throw InvalidInput(
      "--sync '" + spec +
      "': expected bsp, ssp:S, backup:B, backup:auto, asp[:dc=L] or local:H[,warmup=K]");
}

}  // namespace dynacomm::ps
