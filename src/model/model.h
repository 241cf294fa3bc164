// The CNN zoo: every model is an ordered list of units, so the runtime can hold a unit's
// forward until its parameters have arrived and send a unit's gradients as soon as
// backward has produced them.
//
// This header does not include libtorch (compile time matters); code that runs forward or
// backward includes <torch/torch.h> itself.
//
//   auto m = make_model({"resnet18", InputShape{1, 28, 28}, 10, /*seed=*/1});
//   m->set_observer(&gate);            // gate.before_forward(u) blocks until u is pulled
//   std::memcpy(m->params(u), wire, m->units()[u].bytes());
//   at::Tensor logits = m->forward(images);
//   loss.backward();                   // gate.gradients_ready(u) as each unit completes
//   push(m->grads(u), m->units()[u].bytes());
//
// Units: one parameter-owning module each (convolution, batch-norm, linear), named as in
// the torchvision definitions, in the order the forward pass first uses them (for
// residual models that is execution order: a block's shortcut comes after its main path).
// Each unit's parameters live in one flat, contiguous float32 buffer owned by the model
// (the module's tensors are views into it), and so do its gradients.
//
// Batch-norm running statistics are buffers, not parameters: they stay local to each
// device and are never sent (see docs/DESIGN.md, "Batch-norm statistics").
//
// Thread safety: a Model is used by one training thread at a time. params(u) may be
// written by another thread only while the training thread is not inside forward() on a
// unit >= u (the gate guarantees this). grads(u) is stable from gradients_ready(u) until
// the next forward().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace dynacomm::model {

struct InputShape {
  int channels = 1, height = 28, width = 28;
  // "1x28x28" -> {1, 28, 28}; throws InvalidInput otherwise.
  static InputShape parse(const std::string& text);
  std::string str() const;
  bool operator==(const InputShape& o) const {
    return channels == o.channels && height == o.height && width == o.width;
  }
};

struct UnitInfo {
  std::string name;         // torchvision-style, e.g. "layer1.0.conv1"
  std::int64_t params = 0;  // number of float32 parameters
  // Each parameter tensor's sizes, in the order of the unit's flat parameters.
  std::vector<std::vector<std::int64_t>> shapes;
  std::int64_t bytes() const { return params * 4; }
};

// The seam between compute and communication.
class UnitObserver {
 public:
  virtual ~UnitObserver() = default;
  // Called on the training thread right before unit `unit` first runs in a forward pass,
  // in increasing unit order. May block, e.g. until the unit's parameters have arrived.
  virtual void before_forward(int unit) = 0;
  // Called on the thread running backward once every gradient of `unit` is in
  // grads(unit). Should return quickly (hand the work to another thread).
  virtual void gradients_ready(int unit) = 0;
};

struct ModelOptions {
  std::string name = "cnn";
  InputShape input;
  int classes = 10;
  std::uint64_t seed = 1;  // initial parameters; the same seed gives bit-identical ones
};

class Model {
 public:
  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const std::string& name() const;
  const ModelOptions& options() const;
  const std::vector<UnitInfo>& units() const;
  int num_units() const;
  std::int64_t num_params() const;

  float* params(int unit);
  const float* params(int unit) const;
  const float* grads(int unit) const;

  // nullptr removes it. Not owned; must outlive its use.
  void set_observer(UnitObserver* observer);
  void train(bool on = true);
  bool is_training() const;

  // Runs the forward pass on a batch (N x C x H x W float32), calling the observer's
  // before_forward for each unit. In training mode it also prepares gradient capture:
  // grads() are overwritten by the next backward of the returned logits' loss, or added
  // to with accumulate_gradients(true) (local SGD's sum over a round's steps).
  at::Tensor forward(const at::Tensor& input);
  void accumulate_gradients(bool on);

  // All parameters, units in order, as one vector; and back. Sizes are checked.
  std::vector<float> flat_params() const;
  void set_flat_params(const std::vector<float>& flat);
  // The contents of model.pt in a run folder. A zoo model: every unit's parameters and
  // buffers (batch-norm statistics) by torchvision-style name ("layer1.0.conv1.weight",
  // "bn1.running_mean"), pickled as torch.save pickles a state_dict: PyTorch's torch.load
  // reads it, and the same architecture in PyTorch takes it with load_state_dict. A model
  // from a TorchScript file: the module itself with its current parameters (torch.jit.save's
  // archive; torch.load and torch.jit.load read it).
  std::string export_pt() const;

  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);

 private:
  std::unique_ptr<Impl> impl_;
};

// Seeds libtorch's generator (dropout's masks) from (seed, rank, iteration) alone, at the
// start of each training iteration: a worker that starts again at iteration t (a rejoin, a
// resumed job) draws the masks it would have drawn, and workers draw different ones.
void seed_dropout(std::uint64_t seed, int rank, std::int64_t iteration);

// Throws InvalidInput for an unknown name (listing the known ones) or an input shape the
// architecture cannot take. A name ending in ".pt" is a TorchScript file (torch.jit.save):
// its top-level children, run in order, are the forward pass, and each child with
// parameters is a unit; its initial parameters are the file's (options.seed is not used
// for them). A file that does not fit (not TorchScript, no child with parameters, a
// parameter outside the children, a forward() that is not its children in order, an input
// or class count it cannot take) is refused with InvalidInput saying what to change.
std::unique_ptr<Model> make_model(const ModelOptions& options);
std::vector<std::string> model_names();

}  // namespace dynacomm::model
