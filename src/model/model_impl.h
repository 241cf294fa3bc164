// Private: the libtorch side of Model, and the Builder architectures are written with.
#pragma once

#include <torch/csrc/jit/api/module.h>
#include <torch/torch.h>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"

namespace dynacomm::model {

struct Model::Impl {
  ModelOptions options;
  std::shared_ptr<torch::nn::Module> root = std::make_shared<torch::nn::Module>("Model");
  // A model from a TorchScript file (script_model.cc) instead of the zoo: its top-level
  // children run in order; root and unit_modules stay empty.
  std::optional<torch::jit::Module> script;
  std::vector<torch::nn::AnyModule> unit_modules;
  // A model whose forward runs elsewhere (external_model.h: a Python module): switches its
  // training mode; its parameters outlive this, so finalize's hooks come off in ~Impl.
  std::function<void(bool)> external_train;
  bool external_training = true;
  std::vector<std::pair<torch::Tensor, unsigned>> hooks;  // (parameter, handle): external only
  std::vector<UnitInfo> infos;
  std::vector<std::vector<torch::Tensor>> unit_tensors;  // each unit's parameter tensors
  std::vector<torch::Tensor> flat_params, flat_grads;    // one contiguous buffer per unit
  std::unique_ptr<std::atomic<int>[]> pending;           // gradients still due per unit
  UnitObserver* observer = nullptr;
  bool accumulate = false;  // backward adds into flat_grads instead of overwriting them
  // The architecture's forward pass; it runs unit u through run(u, x).
  std::function<torch::Tensor(Impl&, torch::Tensor)> forward;

  ~Impl();
  torch::Tensor run(int unit, const torch::Tensor& x) {
    if (observer) observer->before_forward(unit);
    return unit_modules[static_cast<std::size_t>(unit)].forward(x);
  }
  // Moves every unit's parameters into one flat buffer and installs gradient capture;
  // the first form takes them from root's children (one per unit, the zoo's).
  void finalize();
  void finalize(const std::vector<std::vector<torch::Tensor>>& unit_parameters);
  void gradient_arrived(int unit, std::int64_t offset, const torch::Tensor& grad);
};

// How an architecture initialises its parameters (torchvision's schemes).
enum class ConvInit { kTorchDefault, kKaimingFanOut };
enum class LinearInit { kTorchDefault, kNormal001 };

// Adds units in forward order. Each method returns the new unit's index.
class Builder {
 public:
  Builder(Model::Impl& impl, ConvInit conv_init, LinearInit linear_init)
      : impl_(impl), conv_init_(conv_init), linear_init_(linear_init) {}
  int conv(const std::string& name, int in, int out, int kernel, int stride = 1, int padding = 0,
           int groups = 1, bool bias = false);
  int bn(const std::string& name, int channels);
  int linear(const std::string& name, int in, int out);

 private:
  int add(const std::string& name, torch::nn::AnyModule module,
          std::shared_ptr<torch::nn::Module> as_module);
  Model::Impl& impl_;
  ConvInit conv_init_;
  LinearInit linear_init_;
};

// Architectures (zoo.cc). Each adds its units to the builder and sets impl.forward.
using ArchitectureFn = void (*)(Model::Impl&, const ModelOptions&);
struct Architecture {
  const char* name;
  ArchitectureFn build;
};
const std::vector<Architecture>& architectures();

// A model from a TorchScript file (options.name ends in ".pt"); script_model.cc.
std::unique_ptr<Model> make_script_model(const ModelOptions& options);

}  // namespace dynacomm::model
