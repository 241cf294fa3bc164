#include "plan/planners/codec_choice.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "plan/model/simulate.h"
#include "plan/planners/planner.h"
#include "plan/test_util.h"

namespace dynacomm::plan {
namespace {

// Dense, fp16-like (half the bytes, cheap to encode) and top-k-like (1% of the bytes as
// index and value pairs, dearer to encode and decode), the times per MB drawn per case.
CodecOptions random_options(std::mt19937_64& rng, const ModelProfile& p) {
  std::uniform_real_distribution<double> per_mb(0.1, 20);
  const double half_ms = per_mb(rng) / 4, topk_ms = per_mb(rng), decode_ms = per_mb(rng) / 4;
  CodecOptions options;
  for (const UnitProfile& u : p.units) {
    const double mb = static_cast<double>(u.bytes) * 1e-6;
    options.push_back({{"none", u.bytes, 0, 0},
                       {"fp16", u.bytes / 2, half_ms * mb, half_ms * mb},
                       {"topk:0.01", u.bytes / 50, topk_ms * mb, decode_ms * mb}});
  }
  return options;
}

PlanAndPredict planner(const std::string& name, const LinkProfile& link) {
  return plan_and_predict(name, link, PlannerOptions{});
}

TEST(CodecChoice, WithCodecsSetsTheBytesTheDecodingAndAddsTheEncodingToBackward) {
  ModelProfile p;
  p.model = "m";
  p.batch = 1;
  p.units = {{"a", 250, 1000, 1, 2}, {"b", 500, 2000, 3, 4}};
  const CodecOptions options{{{"none", 1000, 0, 0}, {"x", 10, 0.5, 0.25}},
                             {{"none", 2000, 0, 0}, {"x", 20, 1.5, 0.75}}};
  const ModelProfile q = with_codecs(p, options, {1, 0});
  EXPECT_EQ(q.units[0].up_bytes(), 10);
  EXPECT_EQ(q.units[0].bytes, 1000);  // pulls stay dense
  EXPECT_DOUBLE_EQ(q.units[0].backward_ms, 2.5);
  EXPECT_DOUBLE_EQ(q.units[0].decode_ms, 0.25);
  EXPECT_EQ(q.units[1].up_bytes(), 2000);
  EXPECT_DOUBLE_EQ(q.units[1].backward_ms, 4);
  EXPECT_THROW(with_codecs(p, options, {2, 0}), InvalidInput);
  EXPECT_THROW(with_codecs(p, options, {0}), InvalidInput);
  EXPECT_THROW(with_codecs(p, {options[0]}, {0, 0}), InvalidInput);
}

// The search against every combination, phase-separated (dynacomm) and full duplex
// (dynacomm-fd), on random models and links: it finds the best in almost every case and
// is never far from it.
TEST(CodecChoice, SearchAgainstBruteForce) {
  std::mt19937_64 rng(2512);
  for (const char* name : {"dynacomm", "dynacomm-fd"}) {
    const int cases = std::string(name) == "dynacomm" ? 300 : 8;
    int optimal = 0;
    double worst = 1;
    long searched = 0, brute = 0;
    for (int c = 0; c < cases; ++c) {
      const ModelProfile p = testing::random_profile(rng, 1, cases > 20 ? 5 : 3);
      const LinkProfile link = testing::random_link(rng);
      const CodecOptions options = random_options(rng, p);
      const CodecChoice s = choose_codecs(p, options, planner(name, link));
      const CodecChoice b = brute_force_codecs(p, options, planner(name, link));
      ASSERT_GE(s.predicted_ms, b.predicted_ms * (1 - 1e-9)) << name << " case " << c;
      EXPECT_NEAR(s.predicted_ms, predict_ms(with_codecs(p, options, s.choice), link, s.plan),
                  1e-9 * s.predicted_ms);
      optimal += s.predicted_ms <= b.predicted_ms * (1 + 1e-9);
      worst = std::max(worst, s.predicted_ms / b.predicted_ms);
      searched += s.evaluations;
      brute += b.evaluations;
    }
    std::cout << name << ": the search found the best of every combination in " << optimal
              << " of " << cases << " cases, worst " << worst << "x, " << searched
              << " planner calls against " << brute << "\n";
    EXPECT_GE(optimal, cases * 9 / 10) << name;
    EXPECT_LE(worst, 1.05) << name;
  }
}

// 3 units: a 4 MB one at each end and a 400-byte one between. On a 10 Mbit/s uplink the big
// units go compressed (3.2 s dense against 64 ms at 1%), the small one whichever the
// model finds best (its encoding may hide behind a big push); on 10 Gbit/s everything
// stays dense: no encoding is paid back.
TEST(CodecChoice, BigUnitsOnSlowLinksGoCompressedFastLinksStayDense) {
  ModelProfile p;
  p.model = "m";
  p.batch = 32;
  p.units = {{"conv", 1'000'000, 4'000'000, 5, 10},
             {"bias", 100, 400, 0.1, 0.1},
             {"fc", 1'000'000, 4'000'000, 5, 10}};
  CodecOptions options;
  for (const UnitProfile& u : p.units) {
    const double mb = static_cast<double>(u.bytes) * 1e-6;
    options.push_back({{"none", u.bytes, 0, 0},
                       {"fp16", u.bytes / 2, 0.5 * mb, 0.5 * mb},
                       {"topk:0.01", u.bytes / 50, 4 * mb + 1, 1 * mb + 1}});
  }
  const LinkProfile slow{50e6, 10e6, 1, 1, 5};
  CodecChoice c = choose_codecs(p, options, planner("dynacomm", slow));
  EXPECT_EQ(c.choice[0], 2);
  EXPECT_EQ(c.choice[2], 2);
  EXPECT_DOUBLE_EQ(c.predicted_ms,
                   brute_force_codecs(p, options, planner("dynacomm", slow)).predicted_ms);
  const LinkProfile fast{10e9, 10e9, 0.1, 0.1, 0.1};
  c = choose_codecs(p, options, planner("dynacomm", fast));
  EXPECT_EQ(c.choice, (std::vector<int>{0, 0, 0}));
}

// The job's choice keeps the incumbent unless the best beats it by more than the margin,
// and is never worse than the incumbent or any uniform choice, judged by the judge.
TEST(CodecChoice, JobChoiceKeepsTheIncumbentWithinTheMargin) {
  std::mt19937_64 rng(77);
  for (int c = 0; c < 100; ++c) {
    const ModelProfile p = testing::random_profile(rng, 1, 5);
    const LinkProfile link = testing::random_link(rng);
    const CodecOptions options = random_options(rng, p);
    const PlanAndPredict judge = planner("dynacomm", link);
    std::vector<int> in_use(p.units.size());
    for (auto& k : in_use) k = static_cast<int>(rng() % 3);
    const double incumbent_ms = judge(with_codecs(p, options, in_use)).second;
    for (const double margin : {0.0, 0.05, 0.5}) {
      const CodecChoice j = choose_job_codecs(p, options, judge, judge, in_use, margin);
      if (j.choice == in_use) {
        EXPECT_GE(j.predicted_ms, incumbent_ms * (1 - margin) * (1 - 1e-12)) << c;
      } else {
        EXPECT_LT(j.predicted_ms, incumbent_ms * (1 - margin)) << c;
      }
      for (int k = 0; k < 3 && margin == 0; ++k)
        EXPECT_LE(j.predicted_ms,
                  judge(with_codecs(p, options, std::vector<int>(p.units.size(), k))).second *
                      (1 + 1e-12));
    }
  }
}

}  // namespace
}  // namespace dynacomm::plan
