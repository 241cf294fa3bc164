#include "cli/run_summary.h"

#include <gtest/gtest.h>

namespace dynacomm::cli {
namespace {

RunSummary fd_run() {
  RunSummary s;
  s.scheduler = "auto";
  s.plans.push_back({1, "dynacomm-fd", 137.5, 137.5, 120, 120, nlohmann::json::object()});
  s.median_iteration_ms = 144.6;
  s.predicted_ms = 137.5;
  s.predicted_sequential_ms = 260;
  s.measured_sequential_ms = 289.2;
  s.measured_sequential_iterations = 1;
  s.scheduler_ranking = {{"dynacomm-fd", 137.5}, {"p3", 191.6}, {"greedy", 192.1}};
  return s;
}

bool has(const std::vector<std::string>& lines, const std::string& text) {
  for (const auto& l : lines)
    if (l.find(text) != std::string::npos) return true;
  return false;
}

TEST(SpeedReport, ComparesMeasuredWithMeasuredWhereTheWarmupRanSequential) {
  const auto lines = speed_report(fd_run());
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "dynacomm-fd: median iteration 144.6 ms measured, 137.5 ms predicted (+5%)");
  EXPECT_EQ(lines[1],
            "sequential, measured in the warm-up (1 iteration): 289.2 ms; dynacomm-fd measured "
            "2.00x faster (predicted 1.89x faster)");
}

// Outside BSP the speed-up over the warm-up's sequential iteration is the mode's too; the
// mode survives the summary's round trip.
TEST(SpeedReport, SaysThatAModesPaceIsInTheSpeedUp) {
  RunSummary s = fd_run();
  s.sync = "backup:1";
  s.model = "cnn";
  s.replan = "dynamic";
  s.link = s.measured_link = s.plan = s.final_estimates = s.profile = nlohmann::json::object();
  const auto lines = speed_report(s);
  EXPECT_TRUE(has(lines,
                  "2.00x faster (predicted 1.89x faster); under --sync backup:1 the pace "
                  "is the mode's as well as the plan's"));
  EXPECT_EQ(summary_from_json(to_json(s)).sync, "backup:1");
  EXPECT_FALSE(has(speed_report(fd_run()), "--sync"));
}

TEST(SpeedReport, SaysWhenSequentialWasOnlyPredicted) {
  RunSummary s = fd_run();
  s.measured_sequential_iterations = 0;
  s.measured_sequential_ms = 0;
  const auto lines = speed_report(s);
  EXPECT_TRUE(has(lines, "sequential: 260.0 ms predicted, not measured")) << lines[1];
  EXPECT_TRUE(has(lines, "dynacomm-fd is predicted 1.89x faster"));
}

TEST(SpeedReport, SaysSoWhenTheMeasurementIsSlowerThanTheAlternative) {
  RunSummary s = fd_run();
  s.median_iteration_ms = 300;  // slower than sequential measured, and than p3's prediction
  const auto lines = speed_report(s);
  EXPECT_TRUE(has(lines, "dynacomm-fd measured 1.04x slower (predicted 1.89x faster)"));
  EXPECT_TRUE(has(lines,
                  "note: dynacomm-fd measured 300.0 ms, slower than the runner-up p3's "
                  "prediction (191.6 ms)"));
  s.median_iteration_ms = 150;  // within what the runner-up was predicted: no note
  EXPECT_FALSE(has(speed_report(s), "note:"));
}

TEST(SpeedReport, SurvivesTheSummaryRoundTrip) {
  RunSummary s = fd_run();
  s.model = "cnn";
  s.replan = "dynamic";
  s.link = s.measured_link = s.plan = s.final_estimates = s.profile = nlohmann::json::object();
  const RunSummary back = summary_from_json(to_json(s));
  EXPECT_EQ(speed_report(back), speed_report(s));
  ASSERT_EQ(back.scheduler_ranking.size(), 3u);
  EXPECT_EQ(back.scheduler_ranking[1].scheduler, "p3");
  EXPECT_EQ(back.measured_sequential_iterations, 1);
  EXPECT_EQ(back.time_to_accuracy.target, 0);  // none set: null, and back as none
}

TEST(RunSummary, TimeToAccuracySurvivesTheRoundTrip) {
  RunSummary s = fd_run();
  s.link = s.measured_link = s.plan = s.final_estimates = s.profile = nlohmann::json::object();
  s.time_to_accuracy = {0.88, 412, 0.8812, 301.5, 12.25, 409, 123456789, 987654321};
  const RunSummary back = summary_from_json(to_json(s));
  const worker::TimeToAccuracy& t = back.time_to_accuracy;
  EXPECT_TRUE(t.reached());
  EXPECT_EQ(t.iteration, 412);
  EXPECT_DOUBLE_EQ(t.accuracy, 0.8812);
  EXPECT_DOUBLE_EQ(t.wall_s, 301.5);
  EXPECT_DOUBLE_EQ(t.eval_s, 12.25);
  EXPECT_EQ(t.iterations, 409);
  EXPECT_EQ(t.bytes_up, 123456789);
  EXPECT_EQ(t.bytes_down, 987654321);
  EXPECT_EQ(time_to_accuracy_line(t),
            "reached 88.00% test accuracy (88.12%) at iteration 412: 301.5 s of training (12.2 s "
            "of evaluations left out), 409 iterations, 123.5 MB up and 987.7 MB down (worker 0)");
  s.time_to_accuracy = {0.95, -1};  // set, never reached
  EXPECT_FALSE(summary_from_json(to_json(s)).time_to_accuracy.reached());
  EXPECT_DOUBLE_EQ(summary_from_json(to_json(s)).time_to_accuracy.target, 0.95);
}

}  // namespace
}  // namespace dynacomm::cli
