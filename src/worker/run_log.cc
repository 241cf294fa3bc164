#include "worker/run_log.h"

#include <algorithm>
#include <cstdio>

namespace dynacomm::worker {

double since_boot_ms(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(t.time_since_epoch()).count();
}

RunLog::RunLog(const WorkerOptions& o, std::int64_t total, std::int64_t trace_from,
               std::int64_t trace_count, std::ostream& progress)
    : o_(o),
      total_(total),
      trace_from_(trace_from),
      trace_count_(trace_count),
      progress_(progress),
      status_name_("status-worker" + std::to_string(o.rank) + ".json") {
  const int pid = o.rank;
  trace_.name_process(pid, "worker " + std::to_string(o.rank));
  trace_.name_track(pid, report::ChromeTrace::kCompute, "compute");
  trace_.name_track(pid, report::ChromeTrace::kDownlink, "downlink (pull)");
  trace_.name_track(pid, report::ChromeTrace::kUplink, "uplink (push)");
  if (!o.out_dir.empty()) status_dir_ = std::make_unique<report::RunFolder>(o.out_dir);
}

void RunLog::transfer(const Comm::LinkEvent& e) {
  if (!traced(e.iteration)) return;
  trace_.add_event(o_.rank, e.up ? report::ChromeTrace::kUplink : report::ChromeTrace::kDownlink,
                   (e.up ? "push " : "pull ") + std::to_string(e.segment) + " (it " +
                       std::to_string(e.iteration) + ")",
                   e.up ? "push" : "pull", since_boot_ms(e.start), since_boot_ms(e.end),
                   {{"bytes", e.bytes},
                    {"iteration", e.iteration},
                    {"link_busy_ms", e.service_ms},
                    {"held_at_ps_ms", e.held_ms}});
}

void RunLog::units(std::int64_t it, int plan_id, const std::vector<std::string>& names,
                   const UnitTimes& t) {
  if (!traced(it)) return;
  const nlohmann::json args = {{"iteration", it}, {"plan_id", plan_id}};
  for (std::size_t u = 0; u < names.size(); ++u) {
    trace_.add_event(o_.rank, report::ChromeTrace::kCompute, "fwd " + names[u], "forward",
                     since_boot_ms(t.forward_span[u].first),
                     since_boot_ms(t.forward_span[u].second), args);
    trace_.add_event(o_.rank, report::ChromeTrace::kCompute, "bwd " + names[u], "backward",
                     since_boot_ms(t.backward_span[u].first),
                     since_boot_ms(t.backward_span[u].second), args);
  }
}

void RunLog::plan_changed(std::int64_t it, int plan_id, const std::string& why, double current_ms,
                          double best_ms) {
  trace_.add_instant(o_.rank, report::ChromeTrace::kCompute, "plan " + std::to_string(plan_id),
                     "replan", since_boot_ms(Clock::now()),
                     {{"iteration", it},
                      {"plan_id", plan_id},
                      {"why", why},
                      {"predicted_current_ms", current_ms},
                      {"predicted_best_ms", best_ms}});
}

void RunLog::write_trace(std::optional<double> ps_clock_offset_ms) {
  trace_.set_clock_offset(o_.rank, ps_clock_offset_ms);
  if (!o_.out_dir.empty())
    report::RunFolder(o_.out_dir)
        .write_json("trace-worker" + std::to_string(o_.rank) + ".json", trace_.json());
}

int RunLog::epochs_run(std::int64_t steps_per_epoch) const {
  if (steps_per_epoch <= 0) return o_.epochs;
  // --iterations may end the job before its epochs do (a bench's always does).
  return static_cast<int>(
      std::min<std::int64_t>(o_.epochs, (total_ + steps_per_epoch - 1) / steps_per_epoch));
}

void RunLog::epoch_begins(int epoch, std::int64_t steps, std::int64_t steps_per_epoch) {
  if (o_.rank == 0)
    bar_ = std::make_unique<report::ProgressBar>(
        progress_,
        "epoch " + std::to_string(epoch) + "/" + std::to_string(epochs_run(steps_per_epoch)), steps,
        o_.interactive, "img");
}

void RunLog::iteration_done(const WorkerResult& result, std::int64_t step, const char* phase) {
  const IterationRecord& r = result.iterations.back();
  total_up_ += r.bytes_up;
  total_down_ += r.bytes_down;
  recent_.emplace_back(Clock::now(), r.iteration + 1);
  if (recent_.size() > 20) recent_.pop_front();
  status(result, phase, false);
  if (bar_) {
    char text[96];
    std::snprintf(text, sizeof text, "loss %.4f  %zu/%zu segments", r.loss, r.pull_segments,
                  r.push_segments);
    bar_->update(step + 1, text, o_.batch * o_.workers);
  }
}

void RunLog::status(const WorkerResult& result, const char* phase, bool force) {
  if (!status_dir_ || result.iterations.empty()) return;
  const auto now = Clock::now();
  if (!force && now - last_status_ < std::chrono::milliseconds(500)) return;
  last_status_ = now;
  const IterationRecord& r = result.iterations.back();
  double images_per_s = 0;
  if (recent_.size() >= 2)
    images_per_s = static_cast<double>(recent_.back().second - recent_.front().second) * o_.batch /
                   std::max(1e-9, ms_between(recent_.front().first, recent_.back().first) / 1e3);
  // The plan in one word: its strategy (warm-up: the two it alternates).
  const std::size_t id = static_cast<std::size_t>(r.plan_id);
  const std::string strategy =
      id >= 1 && id <= result.plans.size() ? result.plans[id - 1].scheduler : "warm-up";
  nlohmann::json acc = result.last_test_accuracy < 0 ? nlohmann::json(nullptr)
                                                     : nlohmann::json(result.last_test_accuracy);
  status_dir_->write_json(status_name_, {{"rank", o_.rank},
                                         {"phase", phase},
                                         {"iteration", r.iteration + 1},
                                         {"iterations", total_},
                                         {"epoch", r.epoch},
                                         {"epochs", epochs_run(result.steps_per_epoch)},
                                         {"loss", r.loss},
                                         {"images_per_s", images_per_s},
                                         {"bytes_up", total_up_},
                                         {"bytes_down", total_down_},
                                         {"plan_id", r.plan_id},
                                         {"strategy", strategy},
                                         {"pull_segments", r.pull_segments},
                                         {"push_segments", r.push_segments},
                                         {"test_accuracy", acc}});
}

void RunLog::bar_finish(const std::string& text) {
  if (bar_) bar_->finish(text);
}

}  // namespace dynacomm::worker
