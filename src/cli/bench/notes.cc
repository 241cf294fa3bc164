#include "cli/bench/notes.h"

#include <algorithm>

#include "cli/bench/common.h"

namespace dynacomm::cli::bench {

std::string setting_note(const JobFlags& j, const RunSummary& summary, double run_ideal,
                         double run_ideal_online, const std::vector<double>& online_down,
                         const std::vector<double>& online_up, const std::string& spread_note,
                         const std::string& peer_note) {
  const auto& ml = summary.measured_link;
  auto stretch_note = [&](const nlohmann::json& m) -> std::string {
    if (!m.contains("compute_stretch") || m["compute_stretch"].value("spans", 0) == 0) return "";
    const auto& c = m["compute_stretch"];
    auto range = [](const std::vector<double>& v) {
      if (v.empty()) return std::string("-");
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return fmt("%.2f", *lo) + "-" + fmt("%.2fx", *hi);
    };
    return "; compute while its link carries data (fitted from the warm-up's units, "
           "charged in every prediction): " +
           fmt("%.2fx", c["down"].get<double>()) + " under the downlink, " +
           fmt("%.2fx", c["up"].get<double>()) +
           " under the uplink (refitted online from the last iterations' units, as the "
           "online predictions had it over the measured iterations: " +
           range(online_down) + " and " + range(online_up) + ")";
  };
  // "0.00 ms + 2.78 ms/MB" from an {ms, ms_per_mb, samples} fit (summary.json).
  auto aggregation_line = [](const nlohmann::json& a) {
    return fmt("%.2f ms", a["ms"].get<double>()) + " + " +
           fmt("%.2f ms/MB", a["ms_per_mb"].get<double>());
  };
  auto aggregation_note = [&](const nlohmann::json& m) -> std::string {
    if (!m.contains("aggregation") || m["aggregation"].value("samples", 0) == 0) return "";
    const auto& a = m["aggregation"];
    std::string note =
        "; the PS's aggregation of a push that completes its units (fitted "
        "from the " +
        std::to_string(a["samples"].get<int>()) +
        " updates the PS reported in worker 0's warm-up acks, charged by the "
        "full-duplex model): " +
        aggregation_line(a);
    const nlohmann::json online = summary.final_estimates.value("aggregation", nlohmann::json());
    if (online.is_object() && online.value("samples", 0) > 0)
      note += " (online, at the run's end: " + aggregation_line(online) + " from " +
              std::to_string(online["samples"].get<int>()) + " updates)";
    return note;
  };
  std::string fd_ideal;
  for (const auto& p : summary.plans)
    if (p.full_duplex())
      fd_ideal = "; full-duplex plans: " + fmt("%.1f", p.ideal_ms) +
                 " ms, the steady-state bound of that model (compute, or the model's bytes on "
                 "the slower direction)";
  return "\nideal " + fmt("%.1f", run_ideal) + " ms (online: " + fmt("%.1f", run_ideal_online) +
         " ms)" + fd_ideal +
         ". Predictions and ideals: from the warm-up's measurements "
         "(what the plans were made from) / online: the median over the strategy's measured "
         "iterations of each one's figure from the estimates of the iterations before it "
         "(the window re-planning uses), which follows the machine's drift over the run. "
         "Link seen by worker 0 (fitted from the "
         "warm-up's transfers): down " +
         (ml["down"]["bandwidth_bps"].is_number()
              ? fmt("%.1f Mbit/s", ml["down"]["bandwidth_bps"].get<double>() / 1e6)
              : std::string("(not fitted)")) +
         " + " + fmt("%.2f ms", ml["planned_overhead_down_ms"].get<double>()) + ", up " +
         (ml["up"]["bandwidth_bps"].is_number()
              ? fmt("%.1f Mbit/s", ml["up"]["bandwidth_bps"].get<double>() / 1e6)
              : std::string("(not fitted)")) +
         " + " + fmt("%.2f ms", ml["planned_overhead_up_ms"].get<double>()) + " per transmission" +
         stretch_note(ml) + aggregation_note(ml) + ".\n\n" +
         (spread_note.empty()
              ? std::string()
              : "Full-duplex plans, predicted for " + std::to_string(j.workers) +
                    " workers whose compute differs as worker 0's did over its last 4 "
                    "iterations (each iteration's release waits for the last worker's "
                    "gradient; docs/full-duplex.md), online: " +
                    spread_note + ".\n\n") +
         peer_note;
}

}  // namespace dynacomm::cli::bench
