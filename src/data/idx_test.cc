#include "data/idx.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "base/error.h"
#include "data/fashion_mnist.h"

namespace dynacomm::data {
namespace {

std::string bytes_be(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

std::string idx_images(int n, int rows, int cols, std::uint32_t magic = 0x803) {
  std::string s = bytes_be(magic) + bytes_be(n) + bytes_be(rows) + bytes_be(cols);
  for (int i = 0; i < n * rows * cols; ++i) s.push_back(static_cast<char>(i % 251));
  return s;
}
std::string idx_labels(int n, int max_label = 9) {
  std::string s = bytes_be(0x801) + bytes_be(n);
  for (int i = 0; i < n; ++i) s.push_back(static_cast<char>(i % (max_label + 1)));
  return s;
}

class IdxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "idx_test_" + std::to_string(::getpid());
    ::mkdir(dir_.c_str(), 0700);
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string write_gz(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, content.data(), static_cast<unsigned>(content.size()));
    gzclose(f);
    return path;
  }
  std::string write_raw(const std::string& name, const std::string& content) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  std::string error_of(const std::string& path, std::uint32_t magic) {
    try {
      read_idx(path, magic);
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

TEST_F(IdxTest, ReadsGzipAndPlain) {
  IdxArray a = read_idx(write_gz("a.gz", idx_images(3, 4, 5)), 0x803);
  EXPECT_EQ(a.dims, (std::vector<std::int64_t>{3, 4, 5}));
  ASSERT_EQ(a.data.size(), 60u);
  EXPECT_EQ(a.data[59], 59);
  IdxArray b = read_idx(write_raw("b", idx_labels(7)), 0x801);
  EXPECT_EQ(b.dims, (std::vector<std::int64_t>{7}));
}

TEST_F(IdxTest, RejectsCorruptFiles) {
  std::string p = write_gz("magic.gz", idx_images(3, 4, 5, 0x804));
  EXPECT_EQ(error_of(p, 0x803), p + ": wrong magic number 0x00000804, expected 0x00000803");

  std::string full = idx_images(3, 4, 5);
  p = write_gz("trunc.gz", full.substr(0, full.size() - 1));
  EXPECT_EQ(error_of(p, 0x803), p + ": truncated: header promises 60 bytes of data");

  p = write_gz("header.gz", full.substr(0, 6));
  EXPECT_EQ(error_of(p, 0x803), p + ": truncated IDX header");

  p = write_gz("trailing.gz", full + "x");
  EXPECT_NE(error_of(p, 0x803).find("trailing bytes"), std::string::npos);

  p = write_raw("empty", "");
  EXPECT_NE(error_of(p, 0x803).find("truncated IDX header"), std::string::npos);

  // A gzip stream whose body is garbage: valid header, broken deflate data.
  std::string gz = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + std::string(64, '\xff');
  p = write_raw("bad.gz", gz);
  EXPECT_NE(error_of(p, 0x803).find("corrupt gzip data"), std::string::npos) << error_of(p, 0x803);

  EXPECT_EQ(error_of(dir_ + "/missing.gz", 0x803), dir_ + "/missing.gz: cannot open IDX file");
}

TEST_F(IdxTest, DatasetChecksCountsAndLabels) {
  write_gz("train-images-idx3-ubyte.gz", idx_images(5, 28, 28));
  write_gz("train-labels-idx1-ubyte.gz", idx_labels(4));
  try {
    load_fashion_mnist(dir_, Split::kTrain);
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("5 images but"), std::string::npos) << e.what();
  }
  write_gz("train-images-idx3-ubyte.gz", idx_images(12, 28, 28));
  write_gz("train-labels-idx1-ubyte.gz", idx_labels(12, 12));
  try {
    load_fashion_mnist(dir_, Split::kTrain);
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("label 10 at index 10"), std::string::npos) << e.what();
  }
  write_gz("train-labels-idx1-ubyte.gz", idx_labels(12));
  Dataset d = load_fashion_mnist(dir_, Split::kTrain);
  EXPECT_EQ(d.size(), 12);
  Batch b = make_batch(d, {4, 0});
  ASSERT_EQ(b.size(), 2);
  EXPECT_EQ(b.labels[0], 4);
  EXPECT_FLOAT_EQ(b.images[784], (0 / 255.0f - kFashionMnistMean) / kFashionMnistStd);
  EXPECT_THROW(load_fashion_mnist(dir_ + "/nope", Split::kTrain), InvalidInput);
}

TEST(FashionMnist, DebianPackageLoads) {
  struct stat st;
  if (::stat(default_fashion_mnist_dir().c_str(), &st) != 0)
    GTEST_SKIP() << "dataset-fashion-mnist is not installed (scripts/install-deps.sh installs it)";
  Dataset train = load_fashion_mnist("", Split::kTrain);
  Dataset test = load_fashion_mnist("", Split::kTest);
  EXPECT_EQ(train.size(), 60000);
  EXPECT_EQ(test.size(), 10000);
  EXPECT_EQ(train.rows, 28);
  EXPECT_EQ(train.cols, 28);
  std::vector<int> count(10);
  for (auto l : test.labels) ++count[l];
  for (int c : count) EXPECT_EQ(c, 1000);  // the test split is balanced
}

}  // namespace
}  // namespace dynacomm::data
