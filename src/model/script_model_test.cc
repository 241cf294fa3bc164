// Models from TorchScript files: units, gradient capture, the same bits as the zoo's copy of
// the architecture, export, and a clear refusal for every file that does not fit. The
// modules are written here with torch::jit::Module::define (TorchScript source), so no
// Python is needed.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <torch/csrc/jit/serialization/import.h>
#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "base/error.h"
#include "model/model.h"
#include "model/recorder_test_util.h"

namespace dynacomm::model {
namespace {

using torch::jit::Module;

int next_class = 0;
torch::Tensor param(at::IntArrayRef sizes) { return torch::randn(sizes).set_requires_grad(true); }

Module new_module() { return Module("__torch__.T" + std::to_string(next_class++)); }

Module conv(int in, int out, int kernel, int padding) {
  Module m = new_module();
  m.register_parameter("weight", param({out, in, kernel, kernel}), false);
  m.register_parameter("bias", param({out}), false);
  m.define("def forward(self, x):\n  return torch.conv2d(x, self.weight, self.bias, [1, 1], [" +
           std::to_string(padding) + ", " + std::to_string(padding) + "], [1, 1], 1)\n");
  return m;
}

Module linear(int in, int out) {
  Module m = new_module();
  m.register_parameter("weight", param({out, in}), false);
  m.register_parameter("bias", param({out}), false);
  m.define("def forward(self, x):\n  return torch.linear(x, self.weight, self.bias)\n");
  return m;
}

Module function(const std::string& body) {
  Module m = new_module();
  m.define("def forward(self, x):\n  return " + body + "\n");
  return m;
}

// The zoo's lenet5 for 1x28x28, as an nn.Sequential-like TorchScript module.
// `scale` multiplies the logits in forward() only: then forward() is not the children in order.
Module lenet5(int classes = 10, const std::string& scale = "") {
  Module root = new_module();
  root.register_module("conv1", conv(1, 6, 5, 2));
  root.register_module("pool1", function("torch.max_pool2d(torch.relu(x), [2, 2])"));
  root.register_module("conv2", conv(6, 16, 5, 0));
  root.register_module("pool2",
                       function("torch.flatten(torch.max_pool2d(torch.relu(x), [2, 2]), 1)"));
  root.register_module("fc1", linear(400, 120));
  root.register_module("relu1", function("torch.relu(x)"));
  root.register_module("fc2", linear(120, 84));
  root.register_module("relu2", function("torch.relu(x)"));
  root.register_module("fc3", linear(84, classes));
  root.define(
      "def forward(self, x):\n"
      "  x = self.pool2.forward(self.conv2.forward(self.pool1.forward(self.conv1.forward(x))))\n"
      "  x = self.fc2.forward(self.relu1.forward(self.fc1.forward(x)))\n"
      "  return self.fc3.forward(self.relu2.forward(x))" +
      scale + "\n");
  return root;
}

class ScriptModel : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/dynacomm-script-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string save(Module m, const std::string& name = "m.pt") {
    const std::string path = dir_ + "/" + name;
    m.save(path);
    return path;
  }
  // make_model's error for the file, or "" when it loads.
  std::string refusal(const std::string& path, int classes = 10) {
    try {
      make_model({path, InputShape{1, 28, 28}, classes, 1});
    } catch (const InvalidInput& e) {
      return e.what();
    }
    return "";
  }
  std::string dir_;
};

void sgd_step(Model& m, const torch::Tensor& x, const torch::Tensor& y) {
  torch::Tensor loss = torch::nn::functional::cross_entropy(m.forward(x), y);
  loss.backward();
  for (int u = 0; u < m.num_units(); ++u)
    for (std::int64_t i = 0; i < m.units()[u].params; ++i) m.params(u)[i] -= 0.05f * m.grads(u)[i];
}

TEST_F(ScriptModel, UnitsAreTheChildrenWithParametersAndBackwardHandsThemOver) {
  auto m = make_model({save(lenet5()), InputShape{1, 28, 28}, 10, 1});
  ASSERT_EQ(m->num_units(), 5);
  const std::vector<std::string> names = {"conv1", "conv2", "fc1", "fc2", "fc3"};
  for (int u = 0; u < 5; ++u) EXPECT_EQ(m->units()[u].name, names[u]);
  EXPECT_EQ(m->num_params(), 61706);  // lenet5 for 28x28, as the zoo's
  Recorder r;
  m->set_observer(&r);
  torch::Tensor loss = m->forward(torch::randn({4, 1, 28, 28})).sum();
  EXPECT_EQ(r.forward, (std::vector<int>{0, 1, 2, 3, 4}));
  loss.backward();
  EXPECT_EQ(r.ready, (std::vector<int>{4, 3, 2, 1, 0}));  // each as soon as it is ready
  float grad_sum = 0;
  for (std::int64_t i = 0; i < m->units()[0].params; ++i) grad_sum += std::abs(m->grads(0)[i]);
  EXPECT_GT(grad_sum, 0);
}

TEST_F(ScriptModel, TrainsToTheSameBitsAsTheZoosCopyOfTheArchitecture) {
  auto zoo = make_model({"lenet5", InputShape{1, 28, 28}, 10, 7});
  auto script = make_model({save(lenet5()), InputShape{1, 28, 28}, 10, 7});
  ASSERT_EQ(zoo->num_params(), script->num_params());
  script->set_flat_params(zoo->flat_params());
  torch::manual_seed(3);
  for (int step = 0; step < 4; ++step) {
    const torch::Tensor x = torch::randn({8, 1, 28, 28});
    const torch::Tensor y = torch::randint(0, 10, {8});
    sgd_step(*zoo, x, y);
    sgd_step(*script, x, y);
  }
  const std::vector<float> a = zoo->flat_params(), b = script->flat_params();
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  EXPECT_NE(a, make_model({"lenet5", InputShape{1, 28, 28}, 10, 7})->flat_params());
}

TEST_F(ScriptModel, ExportIsTheModuleWithTheTrainedParameters) {
  auto m = make_model({save(lenet5()), InputShape{1, 28, 28}, 10, 1});
  m->params(2)[5] = 42.0f;
  std::istringstream in(m->export_pt());
  Module back = torch::jit::load(in);
  std::vector<float> flat;
  for (const auto& p : back.parameters()) {
    const torch::Tensor t = p.contiguous();
    flat.insert(flat.end(), t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  }
  EXPECT_EQ(flat, m->flat_params());
  const torch::Tensor x = torch::randn({2, 1, 28, 28});
  back.eval();
  m->train(false);
  EXPECT_TRUE(torch::equal(back.forward({x}).toTensor(), m->forward(x)));
}

// A module whose children are declared out of forward order, with a helper child the
// forward pass does not use: its `units` list (List[str], as the Python door reads it) names
// the children to run, in order; the model is lenet5's, bit for bit.
Module listed_lenet5(const std::vector<std::string>& order) {
  Module root = new_module();
  Module plain = lenet5();
  for (const char* name :
       {"fc3", "relu2", "fc2", "relu1", "fc1", "pool2", "conv2", "pool1", "conv1"})
    root.register_module(name, plain.attr(name).toModule());
  root.register_module("debug", function("x * 0.0"));
  c10::List<std::string> units;
  for (const auto& name : order) units.push_back(name);
  root.register_attribute("units", c10::ListType::ofStrings(), units);
  root.define(
      "def forward(self, x):\n"
      "  x = self.pool2.forward(self.conv2.forward(self.pool1.forward(self.conv1.forward(x))))\n"
      "  x = self.fc2.forward(self.relu1.forward(self.fc1.forward(x)))\n"
      "  return self.fc3.forward(self.relu2.forward(x))\n");
  return root;
}

TEST_F(ScriptModel, AUnitsListNamesTheChildrenToRunInOrder) {
  const std::vector<std::string> order = {"conv1", "pool1", "conv2", "pool2", "fc1",
                                          "relu1", "fc2",   "relu2", "fc3"};
  auto m = make_model({save(listed_lenet5(order)), InputShape{1, 28, 28}, 10, 1});
  ASSERT_EQ(m->num_units(), 5);
  const std::vector<std::string> names = {"conv1", "conv2", "fc1", "fc2", "fc3"};
  for (int u = 0; u < 5; ++u) EXPECT_EQ(m->units()[u].name, names[u]);
  auto zoo = make_model({"lenet5", InputShape{1, 28, 28}, 10, 7});
  m->set_flat_params(zoo->flat_params());
  torch::manual_seed(3);
  const torch::Tensor x = torch::randn({8, 1, 28, 28});
  const torch::Tensor y = torch::randint(0, 10, {8});
  sgd_step(*zoo, x, y);
  sgd_step(*m, x, y);
  EXPECT_EQ(zoo->flat_params(), m->flat_params());

  std::vector<std::string> swapped = order;
  std::swap(swapped[0], swapped[2]);
  EXPECT_NE(refusal(save(listed_lenet5(swapped), "swapped.pt")).find("cannot take an input"),
            std::string::npos);
  std::vector<std::string> missing = order;
  missing.pop_back();
  EXPECT_NE(refusal(save(listed_lenet5(missing), "missing.pt"))
                .find("parameter fc3.weight is in no unit: list 'fc3' in the module's `units`"),
            std::string::npos);
  std::vector<std::string> unknown = order;
  unknown.push_back("head");
  EXPECT_NE(refusal(save(listed_lenet5(unknown), "unknown.pt"))
                .find("units: 'head' is not a child of the module (children: fc3, relu2"),
            std::string::npos);
  std::vector<std::string> twice = order;
  twice.push_back("fc3");
  EXPECT_NE(refusal(save(listed_lenet5(twice), "twice.pt")).find("units: 'fc3' is listed twice"),
            std::string::npos);
  Module not_names = lenet5();
  not_names.register_attribute("units", c10::IntType::get(), 3);
  EXPECT_NE(
      refusal(save(not_names, "int.pt")).find("its `units` attribute is a int, not a List[str]"),
      std::string::npos);
}

TEST_F(ScriptModel, RefusesWhatCannotBeUnitsAndSaysWhatToChange) {
  const std::string garbage = dir_ + "/garbage.pt";
  std::ofstream(garbage) << "not a zip";
  EXPECT_NE(refusal(garbage).find("not a TorchScript module"), std::string::npos);
  EXPECT_NE(refusal(dir_ + "/missing.pt").find("cannot be read"), std::string::npos);

  Module flat = new_module();
  flat.register_parameter("w", param({10, 784}), false);
  flat.define("def forward(self, x):\n  return torch.mm(torch.flatten(x, 1), self.w.t())\n");
  EXPECT_NE(refusal(save(flat, "flat.pt")).find("parameter 'w' belongs to no child"),
            std::string::npos);

  Module no_params = new_module();
  no_params.register_module("f", function("torch.flatten(x, 1)"));
  no_params.define("def forward(self, x):\n  return self.f.forward(x)\n");
  EXPECT_NE(refusal(save(no_params, "none.pt")).find("no top-level child has parameters"),
            std::string::npos);

  Module residual = lenet5(10, " * 2.0");
  EXPECT_NE(refusal(save(residual, "residual.pt")).find("is not its top-level children applied"),
            std::string::npos);

  EXPECT_NE(refusal(save(lenet5(), "classes.pt"), 7).find("expected 2 x 7"), std::string::npos);
  try {
    make_model({save(lenet5(), "rgb.pt"), InputShape{3, 32, 32}, 10, 1});
    ADD_FAILURE() << "a 1-channel model took 3x32x32 inputs";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("cannot take an input of 3x32x32"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("to have 1 channels, but got 3"), std::string::npos)
        << "the operation's own message";
  }
  Module tied = new_module();
  Module first = linear(784, 784);
  tied.register_module("flatten", function("torch.flatten(x, 1)"));
  tied.register_module("a", first);
  Module second = new_module();  // its weight is a's
  second.register_parameter("weight", first.attr("weight").toTensor(), false);
  second.register_parameter("bias", param({10}), false);
  second.define("def forward(self, x):\n  return torch.linear(x, self.weight[:10], self.bias)\n");
  tied.register_module("b", second);
  tied.define(
      "def forward(self, x):\n  return self.b.forward(self.a.forward(self.flatten.forward(x)))\n");
  EXPECT_NE(refusal(save(tied, "tied.pt")).find("b.weight is a.weight (tied weights)"),
            std::string::npos)
      << refusal(dir_ + "/tied.pt");

  Module frozen = lenet5();
  for (auto p : frozen.parameters()) {
    p.set_requires_grad(false);
    break;
  }
  EXPECT_NE(refusal(save(frozen, "frozen.pt")).find("is frozen"), std::string::npos);
}

}  // namespace
}  // namespace dynacomm::model
