#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <regex>

namespace dynacomm::report {
namespace {

TEST(SvgChart, NiceTicksAreRoundAndCoverTheRange) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(nice_ticks(0, 9300, 5), (std::vector<double>{0, 2000, 4000, 6000, 8000}));
  const auto t = nice_ticks(0, 0.37, 4);
  EXPECT_DOUBLE_EQ(t.front(), 0);
  EXPECT_NEAR(t[1], 0.1, 1e-12);
}

TEST(SvgChart, BarChartHasLabelsWhiskersAndEscapedText) {
  BarChart c{"a <b> & c", "iteration time (ms)", {{"sequential", 100, 90, 120, ""},
                                                  {"dynacomm", 70, 65, 80, "1.43x"}}};
  const std::string svg = render(c);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("a &lt;b&gt; &amp; c"), std::string::npos);
  EXPECT_NE(svg.find("iteration time (ms)"), std::string::npos);
  EXPECT_NE(svg.find(">dynacomm<"), std::string::npos);
  EXPECT_NE(svg.find(">1.43x<"), std::string::npos);
  EXPECT_NE(svg.find("min 65, max 80"), std::string::npos);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
}

TEST(SvgChart, LineAndGanttChartsNameTheirSeriesAndLanes) {
  LineChart l{"speed-up", "bandwidth (Mbit/s)", "x sequential", {{"dynacomm", {10, 100}, {1.2, 1.4}}},
              true};
  const std::string a = render(l);
  EXPECT_NE(a.find(">dynacomm<"), std::string::npos);
  EXPECT_NE(a.find("polyline"), std::string::npos);
  GanttChart g{"one iteration", {{"dynacomm", {{0, 5, 1, "pull"}, {5, 9, 0, "forward"}}}}};
  const std::string b = render(g);
  for (const char* s : {">compute<", ">down<", ">up<", ">dynacomm<", "pull 0-5 ms"})
    EXPECT_NE(b.find(s), std::string::npos) << s;
}

TEST(SvgChart, AFullDuplexGanttRowShowsItsNeighboursAndItsPeriod) {
  GanttRow fd{"dynacomm-fd",
              {{-30, -10, 1, "pull", false},
               {0, 40, 0, "forward"},
               {-50, -5, 0, "backward", true},
               {60, 90, 2, "push"}},
              70};
  const std::string b = render(GanttChart{"steady state", {fd}});
  EXPECT_NE(b.find("neighbouring iteration's backward -50--5 ms"), std::string::npos);
  EXPECT_NE(b.find("fill-opacity=\"0.3\""), std::string::npos);
  EXPECT_NE(b.find("next iteration: period 70 ms"), std::string::npos);
  EXPECT_TRUE(std::regex_search(b, std::regex(">-[0-9]+<"))) << "the axis starts before 0";
  GanttRow plain{"dynacomm", {{0, 5, 1, "pull"}, {5, 9, 0, "forward"}}};
  const std::string a = render(GanttChart{"one iteration", {plain}});
  EXPECT_EQ(a.find("fill-opacity"), std::string::npos);
  EXPECT_EQ(a.find("period"), std::string::npos);
}

TEST(SvgChart, TimeSeriesOnAFixedRangeStackUnderEachOther) {
  LineChart top{"iterations", "time (s)", "ms", {{"dynacomm", {0, 7, 13}, {100, 900, 120}}}};
  top.continuous_x = true;
  top.x_min = 0;
  top.x_max = 60;
  const std::string a = render(top);
  EXPECT_EQ(a.find("<circle"), std::string::npos) << "no markers on a time axis";
  EXPECT_NE(a.find(">60<"), std::string::npos) << "ticks cover the fixed range";
  EXPECT_EQ(a.find(">13<"), std::string::npos) << "no tick per data point";
  const std::string both = stack({a, a});
  EXPECT_NE(both.find("height=\"840\""), std::string::npos);
  EXPECT_NE(both.find("<g transform=\"translate(0,420)\">"), std::string::npos);
  EXPECT_NE(both.find("<g transform=\"translate(0,0)\">"), std::string::npos);
  EXPECT_EQ(both.find("height=\"100%\""), std::string::npos) << "backgrounds sized per chart";
  EXPECT_EQ(both.find("<svg", 1), std::string::npos) << "one <svg> element";
}

}  // namespace
}  // namespace dynacomm::report
