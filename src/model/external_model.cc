#include "model/external_model.h"

#include <set>

#include "base/error.h"
#include "model/model_impl.h"

namespace dynacomm::model {

namespace {

void check_parts(const ExternalModelParts& parts) {
  const std::string the = "model " + parts.options.name + ": ";
  if (parts.unit_parameters.empty())
    throw InvalidInput(the + "no unit with parameters (units are the module's children)");
  if (parts.unit_names.size() != parts.unit_parameters.size())
    throw InvalidInput(the + std::to_string(parts.unit_names.size()) + " unit names for " +
                       std::to_string(parts.unit_parameters.size()) + " units");
  if (!parts.forward || !parts.set_training) throw InvalidInput(the + "no forward pass");
  std::set<const void*> seen;
  for (std::size_t u = 0; u < parts.unit_parameters.size(); ++u) {
    const std::string unit = the + "unit " + parts.unit_names[u] + ": ";
    if (parts.unit_parameters[u].empty()) throw InvalidInput(unit + "has no parameters");
    for (const torch::Tensor& p : parts.unit_parameters[u]) {
      if (!p.defined() || p.scalar_type() != torch::kFloat32 || !p.is_leaf() || !p.requires_grad())
        throw InvalidInput(unit + "a parameter is not a float32 leaf that requires gradients");
      if (!seen.insert(p.unsafeGetTensorImpl()).second)
        throw InvalidInput(unit +
                           "shares a parameter with another unit (tied weights): "
                           "give each unit its own");
    }
  }
}

}  // namespace

std::unique_ptr<Model> make_external_model(ExternalModelParts parts) {
  check_parts(parts);
  auto impl = std::make_unique<Model::Impl>();
  impl->options = parts.options;
  for (const std::string& name : parts.unit_names) impl->infos.push_back({name, 0, {}});
  impl->external_train = std::move(parts.set_training);
  impl->forward = [forward = std::move(parts.forward)](Model::Impl& m, torch::Tensor x) {
    return forward(x, [&m](int u) {
      if (m.observer) m.observer->before_forward(u);
    });
  };
  impl->finalize(parts.unit_parameters);
  return std::make_unique<Model>(std::move(impl));
}

}  // namespace dynacomm::model
