#include "data/npy_dataset.h"

#include <sys/stat.h>

#include <cstring>

#include "base/error.h"
#include "data/npy.h"

namespace dynacomm::data {

namespace {

std::string file(const std::string& dir, Split s, const char* what) {
  return dir + "/" + (s == Split::kTrain ? "train_" : "test_") + what + ".npy";
}

// The four headers agree: images N x C x H x W of one type, labels N integers.
void check_headers(const std::string& dir) {
  NpyArray first;
  for (Split s : {Split::kTrain, Split::kTest}) {
    const std::string ip = file(dir, s, "images"), lp = file(dir, s, "labels");
    const NpyArray images = read_npy_header(ip), labels = read_npy_header(lp);
    if (images.shape.size() != 4)
      throw InvalidInput(ip + ": expected images N x C x H x W, got " +
                         std::to_string(images.shape.size()) +
                         " dimension(s) (one channel: a[:, None])");
    if (images.dtype != NpyType::kUint8 && images.dtype != NpyType::kFloat32)
      throw InvalidInput(ip + ": images must be uint8 or float32");
    if (labels.shape.size() != 1 || labels.dtype == NpyType::kFloat32)
      throw InvalidInput(lp + ": expected N integer labels");
    if (labels.shape[0] != images.shape[0])
      throw InvalidInput(lp + ": " + std::to_string(labels.shape[0]) + " labels for " +
                         std::to_string(images.shape[0]) + " images in " + ip);
    if (images.shape[0] == 0) throw InvalidInput(ip + ": no images");
    if (s == Split::kTrain) {
      first = images;
    } else if (images.dtype != first.dtype || images.shape[1] != first.shape[1] ||
               images.shape[2] != first.shape[2] || images.shape[3] != first.shape[3]) {
      throw InvalidInput(ip + ": its images differ in type or C x H x W from " +
                         file(dir, Split::kTrain, "images") + "'s");
    }
  }
}

// The number of classes: the largest training label + 1, every label checked.
int classes_of(const NpyArray& labels, const std::string& path) {
  std::int64_t top = 0;
  for (std::int64_t i = 0; i < labels.count(); ++i) {
    const std::int64_t v = labels.integer(i);
    if (v < 0 || v > 255)
      throw InvalidInput(path + ": label " + std::to_string(v) + " at index " + std::to_string(i) +
                         " is not a class 0..255");
    top = std::max(top, v);
  }
  if (top < 1) throw InvalidInput(path + ": every label is 0: nothing to learn");
  return static_cast<int>(top) + 1;
}

Dataset load_npy(const std::string& dir, Split split) {
  check_headers(dir);
  const std::string ip = file(dir, split, "images"), lp = file(dir, split, "labels");
  const NpyArray images = read_npy(ip), labels = read_npy(lp);
  Dataset d;
  d.fashion_mnist = false;
  d.channels = static_cast<int>(images.shape[1]);
  d.rows = static_cast<int>(images.shape[2]);
  d.cols = static_cast<int>(images.shape[3]);
  const std::string train_labels = file(dir, Split::kTrain, "labels");
  d.classes = classes_of(split == Split::kTrain ? labels : read_npy(train_labels), train_labels);
  d.labels.resize(static_cast<std::size_t>(labels.count()));
  for (std::int64_t i = 0; i < labels.count(); ++i) {
    const std::int64_t v = labels.integer(i);
    if (v < 0 || v >= d.classes)
      throw InvalidInput(lp + ": label " + std::to_string(v) + " at index " + std::to_string(i) +
                         " is not one of the training labels' classes 0.." +
                         std::to_string(d.classes - 1));
    d.labels[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(v);
  }
  if (images.dtype == NpyType::kUint8) {
    d.images = images.bytes;
  } else {
    d.float_images.resize(static_cast<std::size_t>(images.count()));
    std::memcpy(d.float_images.data(), images.bytes.data(), images.bytes.size());
  }
  return d;
}

}  // namespace

bool is_npy_dataset_dir(const std::string& dir) {
  struct stat st;
  return !dir.empty() && ::stat(file(dir, Split::kTrain, "images").c_str(), &st) == 0;
}

std::vector<std::int64_t> npy_image_shape(const std::string& dir) {
  check_headers(dir);
  const NpyArray images = read_npy_header(file(dir, Split::kTrain, "images"));
  return {images.shape[1], images.shape[2], images.shape[3]};
}

void check_dataset_dir(const std::string& dir) {
  if (is_npy_dataset_dir(dir)) return check_headers(dir);
  check_fashion_mnist_dir(dir);
}

Dataset load_dataset(const std::string& dir, Split split) {
  return is_npy_dataset_dir(dir) ? load_npy(dir, split) : load_fashion_mnist(dir, split);
}

}  // namespace dynacomm::data
