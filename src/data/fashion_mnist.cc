#include "data/fashion_mnist.h"

#include <sys/stat.h>

#include <algorithm>

#include "base/error.h"
#include "data/idx.h"

namespace dynacomm::data {

namespace {
bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
std::string pick(const std::string& dir, const std::string& base) {
  std::string gz = dir + "/" + base + ".gz";
  if (exists(gz)) return gz;
  if (exists(dir + "/" + base)) return dir + "/" + base;
  return gz;  // read_idx names it in the error
}
}  // namespace

std::string default_fashion_mnist_dir() { return DYNACOMM_FASHION_MNIST_DIR; }

void check_fashion_mnist_dir(const std::string& dir_in) {
  const std::string dir = dir_in.empty() ? default_fashion_mnist_dir() : dir_in;
  if (!exists(dir))
    throw InvalidInput(
        dir + ": Fashion-MNIST folder not found" +
        (dir_in.empty() ? " (install Debian's dataset-fashion-mnist, or give --data-dir)" : ""));
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                           "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
    const std::string path = pick(dir, base);
    if (!exists(path))
      throw InvalidInput(path + ": Fashion-MNIST file not found (nor without .gz)");
  }
}

Dataset load_fashion_mnist(const std::string& dir_in, Split split) {
  const std::string dir = dir_in.empty() ? default_fashion_mnist_dir() : dir_in;
  if (!exists(dir))
    throw InvalidInput(
        dir + ": Fashion-MNIST folder not found" +
        (dir_in.empty() ? " (install Debian's dataset-fashion-mnist, or give --data-dir)" : ""));
  const std::string prefix = split == Split::kTrain ? "train" : "t10k";
  const std::string image_path = pick(dir, prefix + "-images-idx3-ubyte");
  const std::string label_path = pick(dir, prefix + "-labels-idx1-ubyte");
  IdxArray images = read_idx(image_path, 0x00000803);
  IdxArray labels = read_idx(label_path, 0x00000801);
  if (images.dims.size() != 3) throw InvalidInput(image_path + ": expected 3 dimensions");
  if (labels.dims.size() != 1) throw InvalidInput(label_path + ": expected 1 dimension");
  if (images.dims[0] != labels.dims[0])
    throw InvalidInput(image_path + ": " + std::to_string(images.dims[0]) + " images but " +
                       label_path + " has " + std::to_string(labels.dims[0]) + " labels");
  Dataset d;
  d.rows = static_cast<int>(images.dims[1]);
  d.cols = static_cast<int>(images.dims[2]);
  for (std::size_t i = 0; i < labels.data.size(); ++i)
    if (labels.data[i] >= d.classes)
      throw InvalidInput(label_path + ": label " + std::to_string(labels.data[i]) + " at index " +
                         std::to_string(i) + " is not a class 0..9");
  d.images = std::move(images.data);
  d.labels = std::move(labels.data);
  return d;
}

Batch make_batch(const Dataset& d, const std::vector<std::int64_t>& indices) {
  const std::size_t pixels = static_cast<std::size_t>(d.pixels());
  Batch b;
  b.images.resize(indices.size() * pixels);
  b.labels.resize(indices.size());
  float lut[256];
  for (int v = 0; v < 256; ++v)
    lut[v] = d.fashion_mnist ? (v / 255.0f - kFashionMnistMean) / kFashionMnistStd : v / 255.0f;
  for (std::size_t i = 0; i < indices.size(); ++i) {
    const std::size_t from = static_cast<std::size_t>(indices[i]) * pixels;
    float* dst = b.images.data() + i * pixels;
    if (!d.float_images.empty()) {
      std::copy(d.float_images.begin() + from, d.float_images.begin() + from + pixels, dst);
    } else {
      const std::uint8_t* src = d.images.data() + from;
      for (std::size_t p = 0; p < pixels; ++p) dst[p] = lut[src[p]];
    }
    b.labels[i] = d.labels[static_cast<std::size_t>(indices[i])];
  }
  return b;
}

}  // namespace dynacomm::data
