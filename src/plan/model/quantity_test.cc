#include "plan/model/quantity.h"

#include <gtest/gtest.h>

#include "base/error.h"

namespace dynacomm::plan {
namespace {

TEST(Quantity, Bandwidth) {
  EXPECT_DOUBLE_EQ(parse_bandwidth_bps("100mbit"), 100e6);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bps("1gbit"), 1e9);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bps("512kbit"), 512e3);
  EXPECT_DOUBLE_EQ(parse_bandwidth_bps("2.5Mbit"), 2.5e6);
  for (const char* bad : {"100", "100mb", "100MB", "mbit", "", "-5mbit", "0mbit", " 5mbit",
                          "5 mbit", "infmbit", "nanmbit", "1e400mbit"}) {
    EXPECT_THROW(parse_bandwidth_bps(bad), InvalidInput) << bad;
  }
  try {
    parse_bandwidth_bps("100mb");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(),
                 "bandwidth '100mb': unknown unit 'mb', expected one of kbit, mbit, gbit (bit/s)");
  }
}

TEST(Quantity, Duration) {
  EXPECT_DOUBLE_EQ(parse_duration_ms("10ms"), 10);
  EXPECT_DOUBLE_EQ(parse_duration_ms("250us"), 0.25);
  EXPECT_DOUBLE_EQ(parse_duration_ms("1.5s"), 1500);
  EXPECT_DOUBLE_EQ(parse_duration_ms("0ms"), 0);
  EXPECT_DOUBLE_EQ(parse_duration_ms("2min"), 120000);
  EXPECT_DOUBLE_EQ(parse_duration_ms("0.5h"), 1800000);
  for (const char* bad : {"10", "10m", "10mins", "ms", "-1ms", "10 ms", ""}) {
    EXPECT_THROW(parse_duration_ms(bad), InvalidInput) << bad;
  }
}

TEST(Quantity, Format) {
  EXPECT_EQ(format_bandwidth(100e6), "100 Mbit/s");
  EXPECT_EQ(format_bandwidth(1e9), "1 Gbit/s");
  EXPECT_EQ(format_ms(123.44), "123.4 ms");
  EXPECT_EQ(format_ms(12345), "12.35 s");
}

}  // namespace
}  // namespace dynacomm::plan
