#include "model/model.h"

#include <torch/csrc/jit/serialization/pickle.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>

#include "base/error.h"
#include "model/model_impl.h"
#include "model/model_names.h"

namespace dynacomm::model {

std::string Model::export_pt() const {
  if (impl_->external_train)
    throw Error("model " + name() + ": trained from its own module, which holds the weights");
  if (impl_->script) {
    std::ostringstream out;
    impl_->script->save(out);
    return out.str();
  }
  c10::Dict<std::string, at::Tensor> dict;
  const auto children = impl_->root->children();  // registration order == unit order
  for (std::size_t u = 0; u < children.size(); ++u) {
    const std::string& unit = impl_->infos[u].name;
    for (const auto& p : children[u]->named_parameters(/*recurse=*/true))
      dict.insert(unit + "." + p.key(), p.value().detach().clone());
    for (const auto& b : children[u]->named_buffers(/*recurse=*/true))
      dict.insert(unit + "." + b.key(), b.value().detach().clone());
  }
  const std::vector<char> bytes = torch::pickle_save(c10::IValue(dict));
  return std::string(bytes.begin(), bytes.end());
}

InputShape InputShape::parse(const std::string& text) {
  InputShape s;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%dx%dx%d%c", &s.channels, &s.height, &s.width, &tail) != 3 ||
      s.channels < 1 || s.height < 1 || s.width < 1 || s.channels > 1024 || s.height > 8192 ||
      s.width > 8192)
    throw InvalidInput("input shape '" + text + "': expected CxHxW, e.g. 1x28x28 or 3x224x224");
  return s;
}

std::string InputShape::str() const {
  return std::to_string(channels) + "x" + std::to_string(height) + "x" + std::to_string(width);
}

int Builder::add(const std::string& name, torch::nn::AnyModule module,
                 std::shared_ptr<torch::nn::Module> as_module) {
  // libtorch forbids dots in submodule names; the torchvision-style name lives in UnitInfo.
  impl_.root->register_module("unit" + std::to_string(impl_.unit_modules.size()),
                              std::move(as_module));
  impl_.unit_modules.push_back(std::move(module));
  UnitInfo info{name, 0, {}};
  impl_.infos.push_back(info);
  return static_cast<int>(impl_.unit_modules.size()) - 1;
}

int Builder::conv(const std::string& name, int in, int out, int kernel, int stride, int padding,
                  int groups, bool bias) {
  torch::nn::Conv2d m(torch::nn::Conv2dOptions(in, out, kernel)
                          .stride(stride)
                          .padding(padding)
                          .groups(groups)
                          .bias(bias));
  if (conv_init_ == ConvInit::kKaimingFanOut) {
    torch::NoGradGuard no_grad;
    torch::nn::init::kaiming_normal_(m->weight, 0, torch::kFanOut, torch::kReLU);
    if (bias) torch::nn::init::zeros_(m->bias);
  }
  return add(name, torch::nn::AnyModule(m), m.ptr());
}

int Builder::bn(const std::string& name, int channels) {
  torch::nn::BatchNorm2d m{torch::nn::BatchNorm2dOptions(channels)};
  return add(name, torch::nn::AnyModule(m), m.ptr());
}

int Builder::linear(const std::string& name, int in, int out) {
  torch::nn::Linear m(torch::nn::LinearOptions(in, out));
  if (linear_init_ == LinearInit::kNormal001) {
    torch::NoGradGuard no_grad;
    torch::nn::init::normal_(m->weight, 0, 0.01);
    torch::nn::init::zeros_(m->bias);
  }
  return add(name, torch::nn::AnyModule(m), m.ptr());
}

void Model::Impl::finalize() {
  std::vector<std::vector<torch::Tensor>> unit_parameters;
  for (const auto& child : root->children())  // registration order == unit order
    unit_parameters.push_back(child->parameters(/*recurse=*/true));
  finalize(unit_parameters);
}

void Model::Impl::finalize(const std::vector<std::vector<torch::Tensor>>& unit_parameters) {
  const std::size_t n = unit_parameters.size();
  pending = std::make_unique<std::atomic<int>[]>(n);
  unit_tensors.resize(n);
  for (std::size_t u = 0; u < n; ++u) {
    std::vector<torch::Tensor> params = unit_parameters[u];
    std::int64_t total = 0;
    infos[u].shapes.clear();
    for (const auto& p : params) {
      total += p.numel();
      infos[u].shapes.push_back(p.sizes().vec());
    }
    infos[u].params = total;
    torch::Tensor flat = torch::empty({total}, torch::kFloat32);
    torch::Tensor grad = torch::zeros({total}, torch::kFloat32);
    std::int64_t offset = 0;
    for (auto& p : params) {
      torch::Tensor view = flat.narrow(0, offset, p.numel()).view(p.sizes());
      {
        torch::NoGradGuard no_grad;
        view.copy_(p);
      }
      p.set_data(view);
      const int unit = static_cast<int>(u);
      const unsigned hook = p.register_hook(
          [this, unit, offset](torch::Tensor g) { gradient_arrived(unit, offset, g); });
      if (external_train) hooks.emplace_back(p, hook);
      offset += p.numel();
    }
    unit_tensors[u] = params;
    flat_params.push_back(flat);
    flat_grads.push_back(grad);
  }
}

Model::Impl::~Impl() {
  for (auto& [p, hook] : hooks) p.remove_hook(hook);
}

void Model::Impl::gradient_arrived(int unit, std::int64_t offset, const torch::Tensor& grad) {
  torch::Tensor into = flat_grads[static_cast<std::size_t>(unit)].narrow(0, offset, grad.numel());
  if (accumulate)
    into.add_(grad.reshape(-1));
  else
    into.copy_(grad.reshape(-1));
  if (pending[static_cast<std::size_t>(unit)].fetch_sub(1) == 1 && observer)
    observer->gradients_ready(unit);
}

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

const std::string& Model::name() const { return impl_->options.name; }
const ModelOptions& Model::options() const { return impl_->options; }
const std::vector<UnitInfo>& Model::units() const { return impl_->infos; }
int Model::num_units() const { return static_cast<int>(impl_->infos.size()); }
std::int64_t Model::num_params() const {
  std::int64_t s = 0;
  for (const auto& u : impl_->infos) s += u.params;
  return s;
}
float* Model::params(int unit) {
  return impl_->flat_params.at(static_cast<std::size_t>(unit)).data_ptr<float>();
}
const float* Model::params(int unit) const {
  return impl_->flat_params.at(static_cast<std::size_t>(unit)).data_ptr<float>();
}
const float* Model::grads(int unit) const {
  return impl_->flat_grads.at(static_cast<std::size_t>(unit)).data_ptr<float>();
}
void Model::set_observer(UnitObserver* observer) { impl_->observer = observer; }
void Model::accumulate_gradients(bool on) { impl_->accumulate = on; }
void Model::train(bool on) {
  if (impl_->external_train) {
    impl_->external_train(on);
    impl_->external_training = on;
  } else if (impl_->script) {
    impl_->script->train(on);
  } else {
    impl_->root->train(on);
  }
}
bool Model::is_training() const {
  if (impl_->external_train) return impl_->external_training;
  return impl_->script ? impl_->script->is_training() : impl_->root->is_training();
}

at::Tensor Model::forward(const at::Tensor& input) {
  const auto& o = impl_->options;
  if (input.dim() != 4 || input.size(1) != o.input.channels || input.size(2) != o.input.height ||
      input.size(3) != o.input.width)
    throw InvalidInput("model " + o.name + ": input of shape " + c10::str(input.sizes()) +
                       ", expected N x " + o.input.str());
  if (is_training()) {
    for (std::size_t u = 0; u < impl_->unit_tensors.size(); ++u) {
      impl_->pending[u].store(static_cast<int>(impl_->unit_tensors[u].size()));
      // Undefined grads make autograd store the new gradient instead of accumulating.
      for (auto& p : impl_->unit_tensors[u]) p.mutable_grad() = torch::Tensor();
    }
  }
  return impl_->forward(*impl_, input);
}

std::vector<float> Model::flat_params() const {
  std::vector<float> out;
  out.reserve(static_cast<std::size_t>(num_params()));
  for (int u = 0; u < num_units(); ++u)
    out.insert(out.end(), params(u), params(u) + units()[u].params);
  return out;
}

void Model::set_flat_params(const std::vector<float>& flat) {
  if (static_cast<std::int64_t>(flat.size()) != num_params())
    throw InvalidInput("model " + name() + ": " + std::to_string(flat.size()) +
                       " parameters given, expected " + std::to_string(num_params()));
  std::size_t off = 0;
  for (int u = 0; u < num_units(); ++u) {
    std::memcpy(params(u), flat.data() + off, static_cast<std::size_t>(units()[u].bytes()));
    off += static_cast<std::size_t>(units()[u].params);
  }
}

std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& a : architectures()) names.emplace_back(a.name);
  return names;
}

namespace {
// libtorch's default generator is the process's: a model's initial weights are drawn from
// it under this lock, and a worker seeding dropout (another thread of a test process)
// waits for them.
std::mutex& generator_mutex() {
  static std::mutex m;
  return m;
}
}  // namespace

void seed_dropout(std::uint64_t seed, int rank, std::int64_t iteration) {
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(rank) * 1000003ull +
                    static_cast<std::uint64_t>(iteration) * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;  // splitmix64's finaliser
  x *= 0x94D049BB133111EBull;
  std::lock_guard<std::mutex> lock(generator_mutex());
  torch::manual_seed(x ^ (x >> 29));
}

std::unique_ptr<Model> make_model(const ModelOptions& options) {
  if (options.classes < 1) throw InvalidInput("model: classes must be positive");
  if (is_model_file(options.name)) return make_script_model(options);
  for (const auto& a : architectures()) {
    if (options.name != a.name) continue;
    auto impl = std::make_unique<Model::Impl>();
    impl->options = options;
    // libtorch's default generator is the process's: models are made one at a time, so
    // several workers in one process (tests) each get the weights of their seed.
    std::lock_guard<std::mutex> lock(generator_mutex());
    torch::manual_seed(options.seed);
    a.build(*impl, options);
    impl->finalize();
    return std::make_unique<Model>(std::move(impl));
  }
  std::string known;
  for (const auto& n : model_names()) known += (known.empty() ? "" : ", ") + n;
  throw InvalidInput("unknown model '" + options.name + "' (known: " + known + ")");
}

}  // namespace dynacomm::model
