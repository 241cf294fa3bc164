// Fashion-MNIST (28x28 grey images, 10 classes; 60,000 train, 10,000 test), read from the
// IDX files of Debian's dataset-fashion-mnist package (never downloaded).
//
//   Dataset train = load_fashion_mnist("", Split::kTrain);   // "" = the package's folder
//   Batch b = make_batch(train, {0, 1, 2});                 // normalised float images
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dynacomm::data {

enum class Split { kTrain, kTest };

struct Dataset {
  int channels = 1, rows = 0, cols = 0, classes = 10;
  // The images, C x rows x cols each, row-major: bytes (normalised in make_batch), or
  // float32 from a user's .npy file (data/npy_dataset.h), used as given.
  std::vector<std::uint8_t> images;
  std::vector<float> float_images;
  bool fashion_mnist = true;         // bytes: Fashion-MNIST's mean and std; else only / 255
  std::vector<std::uint8_t> labels;  // one per image, < classes
  std::int64_t size() const { return static_cast<std::int64_t>(labels.size()); }
  std::int64_t pixels() const { return static_cast<std::int64_t>(channels) * rows * cols; }
};

// A mini-batch as plain buffers, ready to wrap as tensors: images N x C x rows x cols.
struct Batch {
  std::vector<float> images;
  std::vector<std::int64_t> labels;
  int size() const { return static_cast<int>(labels.size()); }
};

// Where Debian's package puts the files.
std::string default_fashion_mnist_dir();

// Throws InvalidInput when `dir` ("" = the default) lacks a folder or one of the four
// files: a cheap check made before any process of a job starts.
void check_fashion_mnist_dir(const std::string& dir);

// Loads one split from `dir` ("" = default_fashion_mnist_dir()). Accepts the .gz files or
// uncompressed ones of the same name without .gz. Throws InvalidInput naming the file on
// any problem, with a hint to install the package when the folder is missing.
Dataset load_fashion_mnist(const std::string& dir, Split split);

// Per-pixel normalisation with Fashion-MNIST's mean and standard deviation.
constexpr float kFashionMnistMean = 0.2860f, kFashionMnistStd = 0.3530f;
Batch make_batch(const Dataset& d, const std::vector<std::int64_t>& indices);

}  // namespace dynacomm::data
