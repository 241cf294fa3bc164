#include "cli/bench/trace_report.h"

#include <algorithm>
#include <cstdio>

#include "base/stats.h"
#include "cli/bench/common.h"
#include "cli/bench/trace_bench.h"
#include "report/run_folder.h"
#include "report/svg_chart.h"

namespace dynacomm::cli::bench {

namespace {

// The link trace's bandwidths as worker 0 saw them, up to t_end (s).
std::string link_chart(const std::vector<plan::LinkTracePoint>& rows, double t_end) {
  report::LineChart link{"the link trace, worker 0",
                         "time since the job's start (s)",
                         "bandwidth (Mbit/s)",
                         {{"down", {}, {}}, {"up", {}, {}}}};
  link.continuous_x = true;
  link.x_min = 0;
  link.x_max = t_end;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const double from = rows[i].time_s, to = i + 1 < rows.size() ? rows[i + 1].time_s : t_end;
    if (from > t_end) break;
    link.series[0].x.insert(link.series[0].x.end(), {from, std::min(to, t_end)});
    link.series[0].y.insert(link.series[0].y.end(),
                            {rows[i].down_bps / 1e6, rows[i].down_bps / 1e6});
    link.series[1].x.insert(link.series[1].x.end(), {from, std::min(to, t_end)});
    link.series[1].y.insert(link.series[1].y.end(), {rows[i].up_bps / 1e6, rows[i].up_bps / 1e6});
  }
  return report::render(link);
}

}  // namespace

void write_trace_report(const BenchFlags& f, const JobFlags& base,
                        const std::vector<plan::LinkTracePoint>& rows,
                        const std::vector<PolicyRun>& runs, std::int64_t epoch_iterations,
                        const std::string& out) {
  report::RunFolder folder(out);
  const std::vector<std::pair<double, double>> windows = change_windows(rows);
  const PolicyRun* oracle = nullptr;
  for (const auto& r : runs)
    if (r.name == "oracle") oracle = &r;

  nlohmann::json json_rows = nlohmann::json::array();
  std::string md =
      "# dynacomm bench: re-planning on a trace: " + base.model + ", " +
      std::to_string(base.workers) + " workers, batch " + std::to_string(base.batch) + ", links " +
      links_description(base.net) +
      "\n\nTrace: " + (base.link_trace.empty() ? "(none)" : base.link_trace) +
      (base.device_slowdown_trace.empty() ? "" : ", device " + base.device_slowdown_trace) + ". " +
      std::to_string(f.iterations) +
      " iterations after warm-up per policy, one job "
      "each, one after the other; an epoch is " +
      std::to_string(epoch_iterations) +
      " iterations. Statistics leave out the iterations in which worker 0 evaluated "
      "the model (epoch ends).\n\n";
  md +=
      "| policy | run time after warm-up (s) | median ms | min-max ms | plan changes | "
      "before the first change: median ms |";
  for (std::size_t w = 0; w < windows.size(); ++w)
    md += " after the change at " + fmt("%.0f", windows[w].first) +
          " s: iterations to within 10% of the oracle | then median ms (vs oracle) |";
  md += "\n|---|---|---|---|---|---|";
  for (std::size_t w = 0; w < windows.size(); ++w) md += "---|---|";
  md += "\n";
  std::string csv = "policy,iteration,start_s,iteration_ms\n";
  report::LineChart times{base.model + ": iteration time on the trace, worker 0",
                          "time since the job's start (s)",
                          "iteration time (ms)",
                          {}};
  times.continuous_x = true;
  double t_end = 0;
  for (const auto& r : runs) {
    std::vector<double> measured;
    for (std::size_t i = 0; i < r.ms.size(); ++i)
      if (!r.evaluated[i]) measured.push_back(r.ms[i]);
    const Stats st = stats_of(measured);
    double total = 0;
    for (double v : r.ms) total += v;
    nlohmann::json after = nlohmann::json::array();
    md += "| " + r.name + " | " + fmt("%.1f", total / 1e3) + " | " + fmt("%.1f", st.median) +
          " | " + fmt("%.1f", st.min) + "-" + fmt("%.1f", st.max) + " | " +
          std::to_string(r.plan_changes.size()) + " |";
    {
      const std::vector<double> before =
          in_window(r, {0.0, windows.empty() ? 1e300 : windows.front().first});
      md += " " + (before.empty() ? std::string("-") : fmt("%.1f", median(before))) + " |";
    }
    for (const auto& w : windows) after.push_back(after_change(r, oracle, w, md));
    md += "\n";
    json_rows.push_back({{"scheduler", r.name},
                         {"replan", plan::to_string(policy_mode(r.name))},
                         {"model", base.model},
                         {"workers", base.workers},
                         {"batch", base.batch},
                         {"net", base.net},
                         {"link_trace", base.link_trace},
                         {"device_slowdown_trace", base.device_slowdown_trace},
                         {"median_ms", st.median},
                         {"min_ms", st.min},
                         {"max_ms", st.max},
                         {"total_ms", total},
                         {"predicted_ms", nullptr},
                         {"ideal_ms", r.ideal_ms},
                         {"speedup_vs_sequential", nullptr},
                         {"iteration", r.iteration},
                         {"start_s", r.start_s},
                         {"iteration_ms", r.ms},
                         {"evaluated", r.evaluated},
                         {"plan_changes", r.plan_changes},
                         {"after_changes", after}});
    report::Series ser{r.name, {}, {}};
    for (std::size_t i = 0; i < r.ms.size(); ++i) {
      ser.x.push_back(r.start_s[i] + r.ms[i] / 1e3);  // plotted where the iteration ended
      ser.y.push_back(r.ms[i]);
      csv += r.name + "," + std::to_string(r.iteration[i]) + "," + fmt("%.3f", r.start_s[i]) + "," +
             fmt("%.3f", r.ms[i]) + "\n";
      t_end = std::max(t_end, ser.x.back());
    }
    times.series.push_back(std::move(ser));
  }
  md += "\nPlan changes (after the first plan):\n\n";
  for (const auto& r : runs)
    for (const auto& c : r.plan_changes)
      md += "- " + r.name + ", iteration " + std::to_string(c["iteration"].get<std::int64_t>()) +
            ": plan " + std::to_string(c["plan_id"].get<int>()) + ", " +
            c["why"].get<std::string>() +
            fmt(" (predicted %.1f", c["predicted_current_ms"].get<double>()) +
            fmt(" -> %.1f ms)\n", c["predicted_best_ms"].get<double>());
  times.x_min = 0;
  times.x_max = t_end;
  std::vector<std::string> charts = {report::render(times)};
  if (!rows.empty()) charts.push_back(link_chart(rows, t_end));
  folder.write_text("trace.svg", report::stack(charts));
  md += "\n![iteration time over the trace](trace.svg)\n";
  folder.write_json("bench.json", json_rows);
  folder.write_text("bench.csv", csv);
  folder.write_text("bench.md", md);
  std::printf("%s", md.c_str());
  std::printf("results in %s (bench.json, bench.csv, bench.md, trace.svg)\n", out.c_str());
}

}  // namespace dynacomm::cli::bench
