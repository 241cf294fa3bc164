#include "worker/codec_costs.h"

#include <gtest/gtest.h>

#include <random>

#include "base/error.h"
#include "compress/compressor.h"

namespace dynacomm::worker {
namespace {

struct Job {
  plan::ModelProfile profile;
  plan::Slicing slicing;
  std::vector<std::vector<float>> grads;
  std::vector<const float*> pointers;
};

// Two units of 1000 and 250 floats, the first cut into atoms of 300.
Job job() {
  Job j;
  j.profile.model = "m";
  j.profile.batch = 1;
  j.profile.units = {{"a", 1000, 4000, 1, 1}, {"b", 250, 1000, 1, 1}};
  j.slicing = plan::Slicing::make(j.profile, 300);
  std::mt19937 rng(7);
  std::normal_distribution<float> g(0, 1);
  for (const auto& u : j.profile.units) {
    j.grads.emplace_back(static_cast<std::size_t>(u.params));
    for (float& x : j.grads.back()) x = g(rng);
    j.pointers.push_back(j.grads.back().data());
  }
  return j;
}

TEST(CodecCosts, BytesAreTheWiresAtomByAtomAndDenseCostsNothing) {
  const Job j = job();
  const plan::CodecOptions o = measure_codecs(j.slicing, j.pointers, {"none", "fp16", "topk:0.1"});
  ASSERT_EQ(o.size(), 2u);
  ASSERT_EQ(o[0].size(), 3u);
  EXPECT_EQ(o[0][0].method, "none");
  EXPECT_EQ(o[0][0].push_bytes, 4000);
  EXPECT_EQ(o[0][0].encode_ms, 0);
  EXPECT_EQ(o[1][0].push_bytes, 1000);
  EXPECT_EQ(o[0][1].push_bytes, 2000);
  // Top-k keeps 10% of each atom (300, 300, 300, 100 floats): its own count per atom.
  const auto topk = compress::make_compressor("topk:0.1");
  EXPECT_EQ(o[0][2].push_bytes,
            static_cast<std::int64_t>(3 * topk->encoded_bytes(300, 0) + topk->encoded_bytes(100, 0)));
  EXPECT_EQ(o[0][2].method, topk->name());
  for (const auto& unit : o)
    for (const auto& option : unit) {
      EXPECT_GE(option.encode_ms, 0);
      EXPECT_GE(option.decode_ms, 0);
    }
  // What the planner gets: the chosen bytes, the encoding on the backward.
  const plan::ModelProfile p = PushCodecs{o, {2, 1}}.apply(j.profile);
  EXPECT_EQ(p.units[0].up_bytes(), o[0][2].push_bytes);
  EXPECT_EQ(p.units[1].up_bytes(), 500);
  EXPECT_DOUBLE_EQ(p.units[0].backward_ms, 1 + o[0][2].encode_ms);
  EXPECT_EQ(PushCodecs{}.apply(j.profile).units[0].up_bytes(), 4000);
}

TEST(CodecCosts, BadInputIsNamed) {
  const Job j = job();
  EXPECT_THROW(measure_codecs(j.slicing, {j.pointers[0]}, {"fp16"}), InvalidInput);
  EXPECT_THROW(measure_codecs(j.slicing, j.pointers, {"zip"}), InvalidInput);
  EXPECT_THROW(measure_codecs(j.slicing, j.pointers, {}), InvalidInput);
  EXPECT_THROW(measure_codecs(j.slicing, j.pointers, {"fp16"}, 0), InvalidInput);
}

}  // namespace
}  // namespace dynacomm::worker
