#include "report/run_folder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace dynacomm::report {
namespace {

TEST(RunFolder, TextCsvQuotesCellsThatNeedIt) {
  const std::string dir = std::filesystem::temp_directory_path().string() + "/dynacomm-runfolder-" +
                          std::to_string(::getpid());
  RunFolder run(dir);
  run.write_csv("m.csv", {"iteration", "plan_change"},
                std::vector<std::vector<std::string>>{
                    {"3", "downlink 100 -> 10, compute x2"}, {"4", "say \"hi\""}, {"5", ""}});
  std::ifstream in(run.file("m.csv"));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(
      text.str(),
      "iteration,plan_change\n3,\"downlink 100 -> 10, compute x2\"\n4,\"say \"\"hi\"\"\"\n5,\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dynacomm::report
