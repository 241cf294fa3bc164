// The model zoo's names, without libtorch: flags are checked against them before anything
// starts (and by commands that load no compute). model_test checks they are model_names().
#pragma once

#include <string>
#include <vector>

namespace dynacomm::model {

inline const std::vector<std::string>& zoo_model_names() {
  static const std::vector<std::string> names = {"cnn",   "lenet5", "resnet18",    "resnet50",
                                                 "vgg11", "vgg16",  "mobilenetv2", "alexnet"};
  return names;
}

// --model names a TorchScript file instead of a zoo model when it ends in ".pt".
inline bool is_model_file(const std::string& name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, ".pt") == 0;
}

}  // namespace dynacomm::model
