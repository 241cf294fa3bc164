#include "cluster/status.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace dynacomm::cluster {

std::vector<nlohmann::json> read_statuses(const std::string& run_dir, int workers) {
  std::vector<nlohmann::json> out;
  for (int r = 0; r < workers; ++r) {
    std::ifstream in(run_dir + "/status-worker" + std::to_string(r) + ".json");
    nlohmann::json j =
        in ? nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false) : nlohmann::json();
    out.push_back(j.is_object() ? j : nlohmann::json());
  }
  return out;
}

namespace {
template <typename T>
T field(const nlohmann::json& j, const char* key, T fallback) {
  if (!j.is_object() || !j.contains(key)) return fallback;
  const nlohmann::json& v = j[key];
  if constexpr (std::is_same_v<T, std::string>) {
    return v.is_string() ? v.get<std::string>() : fallback;
  } else {
    return v.is_number() ? v.get<T>() : fallback;
  }
}
}  // namespace

namespace {
std::string clock_text(double s) {  // "0:42", "1:02:05"
  const long t = static_cast<long>(s + 0.5);
  char b[32];
  if (t >= 3600)
    std::snprintf(b, sizeof b, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else
    std::snprintf(b, sizeof b, "%ld:%02ld", t / 60, t % 60);
  return b;
}

// "epoch 1/2", or a rotation's "warm-up" / "turn 5/12".
std::string stage(std::int64_t it, std::int64_t total, int epoch, int epochs,
                  const StatusStyle& style) {
  char b[64];
  if (style.block <= 0) {
    std::snprintf(b, sizeof b, "epoch %d/%d", epoch, epochs);
  } else if (it <= style.warmup) {
    return "warm-up";
  } else {  // the job ends one iteration past its last turn (cli/bench/strategies.cc)
    const std::int64_t turns = std::max<std::int64_t>(1, (total - style.warmup - 1) / style.block);
    const std::int64_t turn = std::min(turns, (it - 1 - style.warmup) / style.block + 1);
    std::snprintf(b, sizeof b, "turn %lld/%lld", static_cast<long long>(turn),
                  static_cast<long long>(turns));
  }
  return b;
}
}  // namespace

std::string render_status(const std::vector<nlohmann::json>& statuses, double elapsed_s,
                          const StatusStyle& style) {
  std::int64_t it = -1, total = 0;
  int epoch = 0, epochs = 0;
  double rate = 0, up = 0, down = 0;
  std::string losses, phase;
  int reporting = 0;
  for (const nlohmann::json& s : statuses) {
    if (!s.is_object()) continue;
    ++reporting;
    const std::int64_t i = field<std::int64_t>(s, "iteration", 0);
    if (it < 0 || i < it) {
      it = i;
      epoch = field<int>(s, "epoch", 0);
    }
    total = std::max(total, field<std::int64_t>(s, "iterations", 0));
    epochs = std::max(epochs, field<int>(s, "epochs", 0));
    rate += field<double>(s, "images_per_s", 0);
    up += field<double>(s, "bytes_up", 0);
    down += field<double>(s, "bytes_down", 0);
    char l[40];
    std::snprintf(l, sizeof l, "%sw%lld %.3f", losses.empty() ? "" : " ",
                  static_cast<long long>(field<std::int64_t>(s, "rank", reporting - 1)),
                  field<double>(s, "loss", 0));
    losses += l;
    const std::string p = field<std::string>(s, "phase", "");
    if (phase.empty() || p == "warm-up") phase = p;
  }
  const std::string label = style.label.empty() ? "" : style.label + "  ";
  if (reporting == 0) return label + "waiting for the workers to start";
  std::string when;  // the time so far, and what is left at that pace
  if (elapsed_s >= 0) {
    when = "  " + clock_text(elapsed_s);
    if (it > 0 && total > it) when += ", ~" + clock_text(elapsed_s / it * (total - it)) + " left";
  }
  char line[320];
  int n =
      std::snprintf(line, sizeof line,
                    "%sit %lld/%lld  %s%s  loss %s  %.0f img/s  up/down %.1f/%.1f MB "
                    "per worker (%.1f/%.1f total)",
                    label.c_str(), static_cast<long long>(it), static_cast<long long>(total),
                    stage(it, total, epoch, epochs, style).c_str(), when.c_str(), losses.c_str(),
                    rate, up / reporting / 1e6, down / reporting / 1e6, up / 1e6, down / 1e6);
  std::string out(line, static_cast<std::size_t>(std::max(0, std::min<int>(n, sizeof line - 1))));
  const nlohmann::json& first = statuses.empty() ? nlohmann::json() : statuses[0];
  if (first.is_object()) {
    const std::string strategy = field<std::string>(first, "strategy", "");
    std::snprintf(line, sizeof line, "  %s: %lld pull + %lld push segments",
                  phase == "warm-up" || strategy.empty() ? "warm-up" : strategy.c_str(),
                  static_cast<long long>(field<std::int64_t>(first, "pull_segments", 0)),
                  static_cast<long long>(field<std::int64_t>(first, "push_segments", 0)));
    out += line;
    if (first.contains("test_accuracy") && first["test_accuracy"].is_number()) {
      std::snprintf(line, sizeof line, "  test acc %.2f%%",
                    100 * first["test_accuracy"].get<double>());
      out += line;
    }
  }
  if (reporting < static_cast<int>(statuses.size()))
    out += "  (" + std::to_string(static_cast<int>(statuses.size()) - reporting) +
           " worker(s) not reporting yet)";
  return out;
}

}  // namespace dynacomm::cluster
