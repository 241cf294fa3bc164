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

}  // namespace dynacomm::model
