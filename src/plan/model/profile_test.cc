#include "plan/model/profile.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

using nlohmann::json;

json good_profile() {
  return json::parse(R"({
    "model": "tiny", "batch": 32, "input": "1x28x28",
    "units": [
      {"name": "conv1", "params": 320, "bytes": 1280, "forward_ms": 1.2, "backward_ms": 2.5},
      {"name": "fc", "bytes": 4000, "forward_ms": 0.5, "backward_ms": 0.25}
    ]})");
}

std::string error_of(const json& j) {
  try {
    model_profile_from_json(j, "p.json");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(ModelProfile, ParsesAndRoundTrips) {
  ModelProfile p = model_profile_from_json(good_profile(), "p.json");
  ASSERT_EQ(p.num_units(), 2);
  EXPECT_EQ(p.model, "tiny");
  EXPECT_EQ(p.batch, 32);
  EXPECT_EQ(p.units[0].params, 320);
  EXPECT_EQ(p.units[1].params, 1000);  // absent: bytes / 4
  EXPECT_EQ(p.total_bytes(), 5280);
  EXPECT_DOUBLE_EQ(p.total_forward_ms(), 1.7);
  ModelProfile q = model_profile_from_json(to_json(p), "again");
  EXPECT_EQ(to_json(q), to_json(p));
}

TEST(ModelProfile, ErrorsNameTheFieldAndUnit) {
  json j = good_profile();
  j["units"][1].erase("forward_ms");
  EXPECT_EQ(error_of(j), "p.json.units[1] (fc).forward_ms: missing field");

  j = good_profile();
  j["units"][0]["bytes"] = -5;
  EXPECT_EQ(error_of(j), "p.json.units[0] (conv1).bytes: negative value -5");

  j = good_profile();
  j["units"][1]["backward_ms"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(error_of(j), "p.json.units[1] (fc).backward_ms: not a finite number");

  j = good_profile();
  j["units"][0]["bytes"] = 12.5;
  EXPECT_NE(error_of(j).find("units[0] (conv1).bytes: expected a whole number"), std::string::npos);

  j = good_profile();
  j["units"][0]["forward_ms"] = "fast";
  EXPECT_NE(error_of(j).find("units[0] (conv1).forward_ms: expected a number"), std::string::npos);

  j = good_profile();
  j["units"] = json::array();
  EXPECT_EQ(error_of(j), "p.json.units: no units");

  j = good_profile();
  j.erase("model");
  EXPECT_EQ(error_of(j), "p.json.model: missing field");

  j = good_profile();
  j["batch"] = 0;
  EXPECT_EQ(error_of(j), "p.json.batch: must be positive");

  j = good_profile();
  j["units"][0]["name"] = "";
  EXPECT_EQ(error_of(j), "p.json.units[0].name: empty");

  EXPECT_EQ(error_of(json::array()), "p.json: expected a JSON object");
}

TEST(ModelProfile, ValidateCatchesProgrammaticProfiles) {
  ModelProfile p;
  p.model = "m";
  p.batch = 1;
  EXPECT_THROW(p.validate(), InvalidInput);
  p.units.push_back({"a", 1, 4, -1.0, 0});
  try {
    p.validate();
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "units[0] (a).forward_ms: negative value -1.000000");
  }
}

TEST(ModelProfile, ScaledMultipliesEachUnitsTimesAndChecksTheFactors) {
  ModelProfile p;
  p.model = "m";
  p.batch = 1;
  p.units = {{"a", 1, 4, 10.0, 20.0}, {"b", 1, 4, 1.0, 2.0}};
  const ModelProfile s = scaled(p, {{1.5, 2.0}, {0.5, 3.0}});
  EXPECT_DOUBLE_EQ(s.units[0].forward_ms, 15.0);
  EXPECT_DOUBLE_EQ(s.units[1].forward_ms, 2.0);
  EXPECT_DOUBLE_EQ(s.units[0].backward_ms, 10.0);
  EXPECT_DOUBLE_EQ(s.units[1].backward_ms, 6.0);
  EXPECT_EQ(s.units[1].bytes, 4);
  EXPECT_THROW(scaled(p, {{1.0}, {1.0, 1.0}}), InvalidInput);
  try {
    scaled(p, {{1.0, 0.0}, {1.0, 1.0}});
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "compute factors: unit 1: must be positive and finite");
  }
}

TEST(ModelProfile, LoadReportsFileProblems) {
  EXPECT_THROW(load_model_profile("/nonexistent/dir/p.json"), InvalidInput);
  std::string path = ::testing::TempDir() + "bad_profile.json";
  { std::ofstream(path) << "{ not json"; }
  try {
    load_model_profile(path);
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(path + ": not valid JSON"), std::string::npos);
  }
  ModelProfile good = model_profile_from_json(good_profile(), "x");
  save_model_profile(good, path);
  EXPECT_EQ(to_json(load_model_profile(path)), to_json(good));
  std::remove(path.c_str());
}

TEST(LinkProfile, ValidatesAndRoundTrips) {
  LinkProfile l{100e6, 20e6, 5, 4, 10};
  EXPECT_NO_THROW(l.validate());
  EXPECT_DOUBLE_EQ(l.down_ms(1'000'000), 5 + 80);
  EXPECT_DOUBLE_EQ(l.up_ms(1'000'000), 4 + 400);
  LinkProfile r = link_profile_from_json(to_json(l), "link");
  EXPECT_EQ(to_json(r), to_json(l));
  l.up_bps = 0;
  EXPECT_THROW(l.validate(), InvalidInput);
  l = LinkProfile{100e6, 20e6, -1, 4, 10};
  EXPECT_THROW(l.validate(), InvalidInput);
  // The compute stretch: round trips, defaults to 1 when absent, 1..10.
  l = LinkProfile{100e6, 20e6, 5, 4, 10};
  l.compute_stretch_up = 1.25;
  EXPECT_DOUBLE_EQ(link_profile_from_json(to_json(l), "link").compute_stretch_up, 1.25);
  nlohmann::json old = to_json(l);
  old.erase("compute_stretch_down");
  old.erase("compute_stretch_up");
  EXPECT_DOUBLE_EQ(link_profile_from_json(old, "link").compute_stretch_up, 1);
  l.compute_stretch_down = 0.5;
  try {
    l.validate();
    ADD_FAILURE() << "a stretch below 1 was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("compute_stretch_down"), std::string::npos) << e.what();
  }
  // The PS's aggregation: per push plus per MB; round trips, 0 when absent, never negative.
  l = LinkProfile{100e6, 20e6, 5, 4, 10};
  l.aggregation_ms = 0.5;
  l.aggregation_ms_per_mb = 3;
  EXPECT_DOUBLE_EQ(l.aggregation_of(2'000'000), 6.5);
  const LinkProfile back = link_profile_from_json(to_json(l), "link");
  EXPECT_DOUBLE_EQ(back.aggregation_ms, 0.5);
  EXPECT_DOUBLE_EQ(back.aggregation_ms_per_mb, 3);
  old = to_json(l);
  old.erase("aggregation_ms");
  old.erase("aggregation_ms_per_mb");
  EXPECT_DOUBLE_EQ(link_profile_from_json(old, "link").aggregation_of(1'000'000), 0);
  l.aggregation_ms_per_mb = -1;
  try {
    l.validate();
    ADD_FAILURE() << "a negative aggregation was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("aggregation_ms_per_mb"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dynacomm::plan
