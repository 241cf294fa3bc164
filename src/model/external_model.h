// A model whose forward pass runs outside libtorch's C++ modules: a PyTorch module driven
// from Python (python/dynacomm, src/python/). It is a Model like the zoo's: each unit's
// parameters are moved into one flat buffer (the caller's tensors become views into it, so
// the caller's module reads what the PS sends), gradients are captured per unit, and the
// caller's forward calls `gate(u)` as unit u is about to run (a forward pre-hook), which
// waits at the observer's gate.
//
// Private to the model and its bindings: includes libtorch.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model.h"

namespace dynacomm::model {

struct ExternalModelParts {
  ModelOptions options;  // name, input shape and classes as the caller states them
  std::vector<std::string> unit_names;
  std::vector<std::vector<torch::Tensor>> unit_parameters;  // in forward order
  // The logits of a batch; calls gate(u) before unit u runs, for every unit in order.
  std::function<torch::Tensor(const torch::Tensor&, const std::function<void(int)>& gate)> forward;
  std::function<void(bool)> set_training;
};

// Throws InvalidInput for no units, a unit without parameters, a parameter in two units,
// or one that is not a float32 leaf that requires gradients. The parameters keep their
// values; their gradient hooks come off when the Model goes.
std::unique_ptr<Model> make_external_model(ExternalModelParts parts);

}  // namespace dynacomm::model
