// A model from a TorchScript file: the user's own architecture in the C++ worker.
//
// Units are the module's top-level children in order (an nn.Sequential's entries), or the
// children its `units` attribute names, in that order (a List[str], as the Python door
// reads it: python/dynacomm/worker.py); each child with parameters is one unit, and
// children without (ReLU, pooling, Flatten) run between them. The forward pass is the children
// applied in order, so the worker can hold a unit until its parameters have arrived, exactly as for
// the zoo; at load time that is checked against the module's own forward() on a zero batch.
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/serialization/import.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <set>

#include "base/error.h"
#include "model/model_impl.h"

namespace dynacomm::model {

namespace {

const char* const kHowTo =
    " (units are the module's top-level children, run in order: export an nn.Sequential, "
    "e.g. with examples/torchscript_model.py, or name them in a `units: List[str]` attribute)";

std::string first_line(const std::string& text) {
  const auto end = text.find('\n');
  return end == std::string::npos ? text : text.substr(0, end);
}

// The TorchScript interpreter's error ends with the operation's own ("RuntimeError: Given
// groups=1, weight of size ..."), after a traceback: that line, else the first.
std::string interpreter_error(const std::string& text) {
  const auto at = text.rfind("Error: ");
  if (at == std::string::npos) return first_line(text);
  return first_line(text.substr(at + 7));
}

torch::jit::Module load_module(const std::string& path) {
  if (!std::ifstream(path).good()) throw InvalidInput("model file " + path + ": cannot be read");
  try {
    return torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    throw InvalidInput("model file " + path +
                       ": not a TorchScript module (write one with torch.jit.save(torch.jit."
                       "script(model), path)): " +
                       first_line(e.what()));
  }
}

struct Step {
  torch::jit::Module module;
  int unit = -1;  // -1: a child without parameters
};

// The children the forward pass runs, in order: those the `units` attribute names, or all.
// A child left out must hold no parameters (they would be trained by nobody).
std::vector<torch::jit::NameModule> forward_children(const torch::jit::Module& root,
                                                     const std::string& path) {
  std::vector<torch::jit::NameModule> all;
  for (const auto& child : root.named_children()) all.push_back(child);
  if (!root.hasattr("units")) return all;
  const c10::IValue units = root.attr("units");
  std::string names;
  for (const auto& c : all) names += (names.empty() ? "" : ", ") + c.name;
  if (!units.isList())
    throw InvalidInput("model file " + path + ": its `units` attribute is a " +
                       units.type()->str() + ", not a List[str] of child names (" + names + ")");
  std::vector<torch::jit::NameModule> listed;
  std::set<std::string> seen;
  for (const c10::IValue& u : units.toListRef()) {
    if (!u.isString())
      throw InvalidInput("model file " + path + ": its `units` attribute holds a " +
                         u.type()->str() + ", not a child's name (" + names + ")");
    const std::string name = u.toStringRef();
    const auto it =
        std::find_if(all.begin(), all.end(), [&](const auto& c) { return c.name == name; });
    if (it == all.end())
      throw InvalidInput("model file " + path + ": units: '" + name +
                         "' is not a child of the module (children: " + names + ")");
    if (!seen.insert(name).second)
      throw InvalidInput("model file " + path + ": units: '" + name + "' is listed twice");
    listed.push_back(*it);
  }
  for (const auto& c : all)
    if (!seen.count(c.name))
      for (const auto& p : c.value.named_parameters(/*recurse=*/true))
        throw InvalidInput("model file " + path + ": parameter " + c.name + "." + p.name +
                           " is in no unit: list '" + c.name + "' in the module's `units`");
  return listed;
}

// The children as steps, and each unit's parameter tensors; refuses what cannot be units.
std::vector<Step> split_units(const torch::jit::Module& root, const std::string& path,
                              Model::Impl& impl) {
  for (const auto& p : root.named_parameters(/*recurse=*/false))
    throw InvalidInput("model file " + path + ": parameter '" + p.name +
                       "' belongs to no child module" + kHowTo);
  std::vector<Step> steps;
  std::vector<std::vector<torch::Tensor>> unit_parameters;
  std::map<const void*, std::string> owner;  // each parameter's first name: tied ones repeat
  for (const auto& child : forward_children(root, path)) {
    Step step{child.value, -1};
    std::vector<torch::Tensor> params;
    for (const auto& p : child.value.named_parameters(/*recurse=*/true)) {
      if (p.value.scalar_type() != torch::kFloat32 || !p.value.is_leaf())
        throw InvalidInput("model file " + path + ": parameter " + child.name + "." + p.name +
                           " is " + std::string(c10::toString(p.value.scalar_type())) +
                           ", dynacomm trains float32 parameters (call model.float() first)");
      if (!p.value.requires_grad())
        throw InvalidInput("model file " + path + ": parameter " + child.name + "." + p.name +
                           " is frozen (requires_grad is False); dynacomm trains every "
                           "parameter (make it a buffer, or unfreeze it)");
      const auto [it, fresh] =
          owner.emplace(p.value.unsafeGetTensorImpl(), child.name + "." + p.name);
      if (!fresh)
        throw InvalidInput("model file " + path + ": parameter " + child.name + "." + p.name +
                           " is " + it->second +
                           " (tied weights): each unit owns its parameters in dynacomm, "
                           "untie them (a copy each)");
      params.push_back(p.value);
    }
    if (!params.empty()) {
      step.unit = static_cast<int>(unit_parameters.size());
      unit_parameters.push_back(std::move(params));
      impl.infos.push_back(UnitInfo{child.name, 0, {}});
    }
    steps.push_back(std::move(step));
  }
  if (unit_parameters.empty())
    throw InvalidInput("model file " + path + ": no top-level child has parameters" + kHowTo);
  impl.finalize(unit_parameters);
  return steps;
}

torch::Tensor run_steps(const std::vector<Step>& steps, Model::Impl& m, torch::Tensor x) {
  for (const Step& s : steps) {
    if (s.unit >= 0 && m.observer) m.observer->before_forward(s.unit);
    x = const_cast<torch::jit::Module&>(s.module).forward({x}).toTensor();
  }
  return x;
}

// Runs a zero batch through the children in order (eval mode, no gradients) and checks the
// output against the classes and, where the module has one, its own forward().
void check_forward(torch::jit::Module& root, const std::vector<Step>& steps, Model::Impl& m,
                   const std::string& path) {
  const ModelOptions& o = m.options;
  const bool was_training = root.is_training();
  root.eval();
  torch::NoGradGuard no_grad;
  const torch::Tensor x = torch::zeros({2, o.input.channels, o.input.height, o.input.width});
  torch::Tensor y;
  try {
    y = run_steps(steps, m, x);
  } catch (const std::exception& e) {
    throw InvalidInput("model file " + path + ": its children in order cannot take an input of " +
                       o.input.str() + " (the data's shape): " + interpreter_error(e.what()));
  }
  if (y.dim() != 2 || y.size(0) != 2 || y.size(1) != o.classes)
    throw InvalidInput("model file " + path + ": gives outputs of shape " + c10::str(y.sizes()) +
                       " for 2 inputs, expected 2 x " + std::to_string(o.classes) +
                       " (one logit per class of the data)");
  if (root.find_method("forward")) {
    torch::Tensor direct;
    try {
      direct = root.forward({x}).toTensor();
    } catch (const std::exception& e) {
      throw InvalidInput("model file " + path + ": its forward() fails on an input of " +
                         o.input.str() + ": " + interpreter_error(e.what()));
    }
    if (!direct.sizes().equals(y.sizes()) || !torch::allclose(direct, y, 1e-4, 1e-5))
      throw InvalidInput("model file " + path +
                         ": its forward() is not its top-level children applied in order "
                         "(a flatten or a residual written in forward()?)" +
                         kHowTo);
  }
  root.train(was_training);
}

}  // namespace

std::unique_ptr<Model> make_script_model(const ModelOptions& options) {
  // The interpreter without graph optimisation runs the same ATen kernels, with autograd,
  // as the zoo's modules: the per-parameter gradient hooks fire as backward reaches them,
  // and a scripted copy of a zoo architecture trains to the same bits.
  static std::once_flag once;
  std::call_once(once, [] { torch::jit::setGraphExecutorOptimize(false); });
  auto impl = std::make_unique<Model::Impl>();
  impl->options = options;
  torch::jit::Module root = load_module(options.name);
  const std::vector<Step> steps = split_units(root, options.name, *impl);
  check_forward(root, steps, *impl, options.name);
  root.train(true);
  impl->script = root;
  impl->forward = [steps](Model::Impl& m, torch::Tensor x) { return run_steps(steps, m, x); };
  return std::make_unique<Model>(std::move(impl));
}

}  // namespace dynacomm::model
