#include "model/model.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <torch/torch.h>

#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "model/model_names.h"
#include "model/recorder_test_util.h"

namespace dynacomm::model {
namespace {

std::vector<int> iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

TEST(ModelZoo, TheTorchFreeListOfNamesIsTheZoos) { EXPECT_EQ(zoo_model_names(), model_names()); }

TEST(ModelZoo, ImageNetParameterCountsMatchTorchvision) {
  const std::map<std::string, std::int64_t> expected = {
      {"resnet18", 11689512}, {"resnet50", 25557032},   {"vgg11", 132863336},
      {"vgg16", 138357544},   {"mobilenetv2", 3504872}, {"alexnet", 61100840}};
  for (const auto& [name, count] : expected) {
    auto m = make_model({name, InputShape{3, 224, 224}, 1000, 1});
    EXPECT_EQ(m->num_params(), count) << name;
  }
}

// The shared reference profiles (PyTorch, torchvision definitions) fix unit order, names'
// count and sizes for the Fashion-MNIST variants; they sit beside the checkout.
TEST(ModelZoo, UnitsMatchReferenceProfiles) {
  const std::string dir = DYNACOMM_REFERENCE_PROFILES;
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) GTEST_SKIP() << "no reference profiles at " << dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"cnn", "cnn-1x28x28-b32.json"},
      {"resnet18", "resnet18-1x28x28-b32.json"},
      {"mobilenetv2", "mobilenetv2-1x28x28-b32.json"},
      {"resnet50", "resnet50-3x224x224-b4.json"}};
  for (const auto& [name, file] : cases) {
    std::ifstream in(dir + "/" + file);
    ASSERT_TRUE(in) << file;
    nlohmann::json ref = nlohmann::json::parse(in);
    InputShape shape = InputShape::parse(ref["input"].get<std::string>());
    auto m = make_model({name, shape, shape.height < 64 ? 10 : 1000, 1});
    ASSERT_EQ(m->num_units(), static_cast<int>(ref["units"].size())) << name;
    for (int u = 0; u < m->num_units(); ++u) {
      EXPECT_EQ(m->units()[u].params, ref["units"][u]["params"].get<std::int64_t>())
          << name << " unit " << u << " " << m->units()[u].name;
      EXPECT_EQ(m->units()[u].bytes(), ref["units"][u]["bytes"].get<std::int64_t>());
      if (name != "cnn") {  // torchvision names; the reference cnn is an nn.Sequential
        EXPECT_EQ(m->units()[u].name, ref["units"][u]["name"].get<std::string>());
      }
    }
  }
}

TEST(ModelZoo, ForwardShapesAndUnitOrderOnFashionMnist) {
  for (const auto& name : model_names()) {
    auto m = make_model({name, InputShape{1, 28, 28}, 10, 1});
    Recorder rec;
    m->set_observer(&rec);
    m->train(true);
    torch::Tensor logits = m->forward(torch::randn({2, 1, 28, 28}));
    EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{2, 10})) << name;
    EXPECT_EQ(rec.forward, iota(m->num_units())) << name << ": units must run in index order";
    torch::nn::functional::cross_entropy(logits, torch::tensor({1, 2})).backward();
    std::vector<int> ready = rec.ready;
    std::sort(ready.begin(), ready.end());
    EXPECT_EQ(ready, iota(m->num_units())) << name << ": every unit's gradients once";
    EXPECT_EQ(rec.ready.front(), m->num_units() - 1) << name << ": the last unit is ready first";
    m->set_observer(nullptr);
    // Flat-buffer round trip: out and back in leaves every parameter as it was.
    std::vector<float> flat = m->flat_params();
    EXPECT_EQ(static_cast<std::int64_t>(flat.size()), m->num_params());
    std::vector<float> zeros(flat.size(), 0.f);
    m->set_flat_params(zeros);
    EXPECT_EQ(m->flat_params(), zeros);
    m->set_flat_params(flat);
    EXPECT_EQ(m->flat_params(), flat) << name;
  }
}

TEST(ModelZoo, ImageNetShapeForward) {
  auto m = make_model({"resnet18", InputShape{3, 224, 224}, 1000, 1});
  m->train(false);
  torch::NoGradGuard no_grad;
  EXPECT_EQ(m->forward(torch::randn({1, 3, 224, 224})).sizes(),
            (std::vector<std::int64_t>{1, 1000}));
  EXPECT_THROW(m->forward(torch::randn({1, 1, 28, 28})), InvalidInput);
}

TEST(ModelZoo, FlatBuffersAreTheModulesParameters) {
  auto m = make_model({"lenet5", InputShape{1, 28, 28}, 10, 3});
  m->train(false);
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::randn({2, 1, 28, 28});
  torch::Tensor before = m->forward(x).clone();
  std::vector<float> flat = m->flat_params();
  EXPECT_EQ(static_cast<std::int64_t>(flat.size()), m->num_params());
  // Writing a unit's flat buffer changes what forward computes: the module uses it.
  const int last = m->num_units() - 1;
  for (std::int64_t i = 0; i < m->units()[last].params; ++i) m->params(last)[i] = 0;
  EXPECT_TRUE(torch::allclose(m->forward(x), torch::zeros({2, 10})));
  m->set_flat_params(flat);
  EXPECT_TRUE(torch::equal(m->forward(x), before));
  EXPECT_THROW(m->set_flat_params(std::vector<float>(3)), InvalidInput);
}

TEST(ModelZoo, SameSeedSameParameters) {
  auto a = make_model({"resnet18", InputShape{1, 28, 28}, 10, 7});
  auto b = make_model({"resnet18", InputShape{1, 28, 28}, 10, 7});
  auto c = make_model({"resnet18", InputShape{1, 28, 28}, 10, 8});
  EXPECT_EQ(a->flat_params(), b->flat_params());
  EXPECT_NE(a->flat_params(), c->flat_params());
}

// The captured gradients are the true gradients: central differences on lenet5 (no
// dropout, no batch-norm, so forward is a pure function of the parameters).
TEST(ModelZoo, CapturedGradientsMatchFiniteDifferences) {
  auto m = make_model({"lenet5", InputShape{1, 28, 28}, 10, 5});
  m->train(true);
  torch::Tensor x = torch::randn({4, 1, 28, 28}, torch::TensorOptions().dtype(torch::kFloat32));
  torch::Tensor y = torch::tensor({0, 3, 5, 9});
  auto loss = [&]() {
    torch::NoGradGuard no_grad;
    return torch::nn::functional::cross_entropy(m->forward(x), y).item<double>();
  };
  torch::nn::functional::cross_entropy(m->forward(x), y).backward();
  std::vector<std::vector<float>> grads;
  for (int u = 0; u < m->num_units(); ++u)
    grads.emplace_back(m->grads(u), m->grads(u) + m->units()[u].params);
  for (int u = 0; u < m->num_units(); ++u) {
    for (std::int64_t i : {std::int64_t{0}, m->units()[u].params / 2, m->units()[u].params - 1}) {
      float& p = m->params(u)[i];
      const float saved = p, eps = 1e-2f;
      p = saved + eps;
      double up = loss();
      p = saved - eps;
      double down = loss();
      p = saved;
      double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(grads[u][i], numeric, 2e-3 + 0.05 * std::abs(numeric))
          << m->units()[u].name << "[" << i << "]";
    }
  }
}

// With accumulation on, backward adds each gradient into grads(): two batches' sum, the
// same as each batch's gradient taken alone and added.
TEST(ModelZoo, AccumulatedGradientsAreTheBatchesSum) {
  auto m = make_model({"lenet5", InputShape{1, 28, 28}, 10, 5});
  m->train(true);
  const torch::Tensor x1 = torch::randn({4, 1, 28, 28}), x2 = torch::randn({4, 1, 28, 28});
  const torch::Tensor y = torch::tensor({0, 3, 5, 9});
  auto grads_of = [&](const torch::Tensor& x) {
    torch::nn::functional::cross_entropy(m->forward(x), y).backward();
    std::vector<float> g;
    for (int u = 0; u < m->num_units(); ++u)
      g.insert(g.end(), m->grads(u), m->grads(u) + m->units()[u].params);
    return g;
  };
  const std::vector<float> g1 = grads_of(x1), g2 = grads_of(x2);
  grads_of(x1);
  m->accumulate_gradients(true);
  const std::vector<float> sum = grads_of(x2);
  m->accumulate_gradients(false);
  ASSERT_EQ(sum.size(), g1.size());
  for (std::size_t i = 0; i < sum.size(); ++i) ASSERT_NEAR(sum[i], g1[i] + g2[i], 1e-6) << i;
  EXPECT_EQ(grads_of(x2), g2);  // off again: overwritten
}

TEST(ModelZoo, RejectsUnknownModelsAndShapes) {
  EXPECT_THROW(make_model({"resnet1000", InputShape{}, 10, 1}), InvalidInput);
  EXPECT_THROW(make_model({"vgg11", InputShape{1, 8, 8}, 10, 1}), InvalidInput);
  EXPECT_THROW(InputShape::parse("28x28"), InvalidInput);
  EXPECT_THROW(InputShape::parse("1x28x28x"), InvalidInput);
  EXPECT_EQ(InputShape::parse("3x224x224"), (InputShape{3, 224, 224}));
}

}  // namespace
}  // namespace dynacomm::model
