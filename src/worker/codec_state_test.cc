#include "worker/codec_state.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace dynacomm::worker {
namespace {

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "codec_state_test_" + name;
}

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Both states come back, and a join takes the one for its iteration: the state before
// the last iteration when the PS stopped the job a round earlier.
TEST(CodecState, AJoinTakesTheStateOfItsIteration) {
  const std::string path = temp_path("two");
  save_codec_state(path, {"dgc:0.05", {{25, std::string("after\0x", 7)}, {24, "before"}}});
  const SavedCodecState s = load_codec_state(path);
  EXPECT_EQ(s.spec, "dgc:0.05");
  ASSERT_EQ(s.states.size(), 2u);
  EXPECT_EQ(s.states[0].state, std::string("after\0x", 7));
  std::ostringstream said;
  EXPECT_EQ(codec_state_for(path, "dgc:0.05", 24, 1, said), "before");
  EXPECT_NE(said.str().find("worker 1: took up the compression state (residuals) it had before "
                            "iteration 24"),
            std::string::npos)
      << said.str();
  EXPECT_EQ(codec_state_for(path, "dgc:0.05", 25, 1, said), std::string("after\0x", 7));
  std::remove(path.c_str());
}

// Another iteration or another codec: said, and nothing taken.
TEST(CodecState, AnotherIterationOrCodecIsLeftOut) {
  const std::string path = temp_path("other");
  save_codec_state(path, {"topk:0.1", {{25, "a"}, {24, "b"}}});
  std::ostringstream said;
  EXPECT_EQ(codec_state_for(path, "topk:0.1", 23, 0, said), std::nullopt);
  EXPECT_NE(said.str().find("is for --compress topk:0.1 at iteration 25 or 24, not topk:0.1 at "
                            "23: starting without it"),
            std::string::npos)
      << said.str();
  EXPECT_EQ(codec_state_for(path, "topk:0.2", 25, 0, said), std::nullopt);
  EXPECT_EQ(codec_state_for("", "topk:0.1", 25, 0, said), std::nullopt);
  std::remove(path.c_str());
}

// Every cut of a good file, and a count far past its end, is a clear error, never a crash
// or a huge allocation; a join then starts without it.
TEST(CodecState, ADamagedFileIsAnErrorNamingIt) {
  const std::string path = temp_path("damaged");
  save_codec_state(path, {"qsgd:8", {{3, "state"}, {2, "older"}}});
  const std::string whole = read(path);
  for (std::size_t n = 0; n < whole.size(); ++n) {
    write(path, whole.substr(0, n));
    EXPECT_THROW(load_codec_state(path), InvalidInput) << n;
  }
  std::string huge = whole;
  huge[4 + 4 + 4 + 6] = '\xff';  // the count of states
  write(path, huge);
  EXPECT_THROW(load_codec_state(path), InvalidInput);
  write(path, whole + "x");
  EXPECT_THROW(load_codec_state(path), InvalidInput);
  std::ostringstream said;
  EXPECT_EQ(codec_state_for(path, "qsgd:8", 3, 2, said), std::nullopt);
  EXPECT_NE(said.str().find("worker 2: cannot use " + path), std::string::npos) << said.str();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace dynacomm::worker
