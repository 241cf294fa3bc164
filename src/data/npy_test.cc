// .npy files and a user's .npy data folder (data/npy.h, data/npy_dataset.h): files written
// here, read back; every malformed or inconsistent one refused with the file's name.
#include "data/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "base/error.h"
#include "data/npy_dataset.h"

namespace dynacomm::data {
namespace {

std::string temp_dir(const std::string& name) {
  const std::string d = ::testing::TempDir() + "npy-" + name;
  std::system(("rm -rf '" + d + "' && mkdir -p '" + d + "'").c_str());
  return d;
}

NpyArray bytes_array(std::vector<std::int64_t> shape, NpyType t = NpyType::kUint8) {
  NpyArray a;
  a.dtype = t;
  a.shape = std::move(shape);
  const int width = t == NpyType::kUint8 ? 1 : t == NpyType::kInt64 ? 8 : 4;
  a.bytes.resize(static_cast<std::size_t>(a.count() * width));
  for (std::size_t i = 0; i < a.bytes.size(); ++i) a.bytes[i] = static_cast<std::uint8_t>(i * 7);
  return a;
}

NpyArray labels(const std::vector<std::int64_t>& values) {
  NpyArray a = bytes_array({static_cast<std::int64_t>(values.size())}, NpyType::kInt64);
  std::memcpy(a.bytes.data(), values.data(), values.size() * 8);
  return a;
}

void expect_refused(const std::string& path, const std::string& words) {
  try {
    read_npy(path);
    ADD_FAILURE() << path << " was read";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(Npy, RoundTripsShapesTypesAndBytes) {
  const std::string d = temp_dir("roundtrip");
  const NpyArray images = bytes_array({3, 2, 4, 5});
  write_npy(d + "/a.npy", images);
  const NpyArray back = read_npy(d + "/a.npy");
  EXPECT_EQ(back.dtype, NpyType::kUint8);
  EXPECT_EQ(back.shape, images.shape);
  EXPECT_EQ(back.bytes, images.bytes);
  write_npy(d + "/l.npy", labels({4, 0, 9}));
  const NpyArray l = read_npy(d + "/l.npy");
  EXPECT_EQ(l.shape, std::vector<std::int64_t>{3});
  EXPECT_EQ(l.integer(0), 4);
  EXPECT_EQ(l.integer(2), 9);
  EXPECT_EQ(read_npy_header(d + "/a.npy").shape, images.shape);
}

TEST(Npy, RefusesWhatItCannotReadNamingTheFile) {
  const std::string d = temp_dir("bad");
  write_npy(d + "/ok.npy", bytes_array({10, 1, 2, 2}));
  std::ifstream in(d + "/ok.npy", std::ios::binary);
  const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(d + "/" + name, std::ios::binary) << bytes;
    return d + "/" + name;
  };
  expect_refused(write("short.npy", whole.substr(0, whole.size() - 3)), "truncated");
  expect_refused(write("long.npy", whole + "xyz"), "trailing bytes");
  expect_refused(write("magic.npy", "PK" + whole.substr(2)), "bad magic");
  std::string fortran = whole;
  fortran.replace(fortran.find("False"), 5, "True ");
  expect_refused(write("fortran.npy", fortran), "Fortran order");
  std::string f8 = whole;
  f8.replace(f8.find("|u1"), 3, "<f8");
  expect_refused(write("f8.npy", f8), "'<f8' is not supported");
  expect_refused(write("header.npy", whole.substr(0, 12)), "header");
  expect_refused(d + "/missing.npy", "cannot open");
}

// A folder of four arrays: the model's input shape and classes come from it; uint8 images
// are scaled to 0..1, float32 ones used as given.
TEST(NpyDataset, LoadsAFolderAndChecksItAgainstItself) {
  const std::string d = temp_dir("folder");
  write_npy(d + "/train_images.npy", bytes_array({4, 3, 5, 6}));
  write_npy(d + "/train_labels.npy", labels({0, 3, 1, 3}));
  write_npy(d + "/test_images.npy", bytes_array({2, 3, 5, 6}));
  write_npy(d + "/test_labels.npy", labels({2, 1}));
  ASSERT_TRUE(is_npy_dataset_dir(d));
  EXPECT_NO_THROW(check_dataset_dir(d));
  const Dataset train = load_dataset(d, Split::kTrain), test = load_dataset(d, Split::kTest);
  EXPECT_EQ(train.channels, 3);
  EXPECT_EQ(train.rows, 5);
  EXPECT_EQ(train.cols, 6);
  EXPECT_EQ(train.classes, 4);
  EXPECT_EQ(test.classes, 4) << "the training labels' classes";
  EXPECT_EQ(test.size(), 2);
  const Batch b = make_batch(train, {1});
  ASSERT_EQ(b.images.size(), 90u);
  EXPECT_FLOAT_EQ(b.images[1], static_cast<std::uint8_t>((90 + 1) * 7) / 255.0f);
  EXPECT_EQ(b.labels[0], 3);

  write_npy(d + "/test_labels.npy", labels({2, 4}));
  EXPECT_THROW(load_dataset(d, Split::kTest), InvalidInput) << "label 4 of 4 classes";
  write_npy(d + "/test_images.npy", bytes_array({2, 1, 5, 6}));
  try {
    check_dataset_dir(d);
    ADD_FAILURE() << "a test set of another shape was taken";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("test_images.npy"), std::string::npos) << e.what();
  }
  write_npy(d + "/test_images.npy", bytes_array({2, 3, 5, 6}, NpyType::kFloat32));
  EXPECT_THROW(check_dataset_dir(d), InvalidInput) << "float32 test, uint8 train";
  write_npy(d + "/train_images.npy", bytes_array({4, 3, 5, 6}, NpyType::kFloat32));
  write_npy(d + "/test_labels.npy", labels({2, 1}));
  const Dataset floats = load_dataset(d, Split::kTrain);
  EXPECT_EQ(floats.float_images.size(), 4u * 90);
  EXPECT_EQ(make_batch(floats, {2}).images[0], floats.float_images[180]) << "used as given";
  write_npy(d + "/train_images.npy", bytes_array({4, 5, 6}));
  EXPECT_THROW(check_dataset_dir(d), InvalidInput) << "3 dimensions";
  EXPECT_FALSE(is_npy_dataset_dir(d + "/none"));
}

}  // namespace
}  // namespace dynacomm::data
