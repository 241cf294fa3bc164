// The architectures, as in torchvision 0.14 (parameter counts match exactly at 3x224x224
// with 1000 classes). Inputs smaller than 64 pixels get the small-image stem the shared
// reference profiles use: a 3x3 stride-1 first convolution over the input's channels
// and, for ResNets, no max-pool after it; VGG also drops its last max-pool so that
// 28x28 inputs keep a 1x1 feature map.
#include <torch/torch.h>

#include "base/error.h"
#include "model/model_impl.h"

namespace dynacomm::model {

namespace {

namespace F = torch::nn::functional;
using torch::Tensor;

bool small_input(const ModelOptions& o) { return o.input.height < 64 || o.input.width < 64; }

// Side length after conv/pool arithmetic; throws when the input is too small.
int out_size(int in, int kernel, int stride, int pad, const ModelOptions& o) {
  const int span = in + 2 * pad - kernel;
  const int out = span < 0 ? 0 : span / stride + 1;
  if (out < 1) throw InvalidInput("model " + o.name + ": input " + o.input.str() + " is too small");
  return out;
}

// --- cnn: 2 conv + 2 fc, the small Fashion-MNIST net -------------------------------------
void build_cnn(Model::Impl& m, const ModelOptions& o) {
  Builder b(m, ConvInit::kTorchDefault, LinearInit::kTorchDefault);
  int c1 = b.conv("conv1", o.input.channels, 32, 3, 1, 1, 1, true);
  int c2 = b.conv("conv2", 32, 64, 3, 1, 1, 1, true);
  int h = out_size(out_size(o.input.height, 2, 2, 0, o), 2, 2, 0, o);
  int w = out_size(out_size(o.input.width, 2, 2, 0, o), 2, 2, 0, o);
  int f1 = b.linear("fc1", 64 * h * w, 256);
  int f2 = b.linear("fc2", 256, o.classes);
  m.forward = [=](Model::Impl& m, Tensor x) {
    x = F::max_pool2d(torch::relu(m.run(c1, x)), F::MaxPool2dFuncOptions(2));
    x = F::max_pool2d(torch::relu(m.run(c2, x)), F::MaxPool2dFuncOptions(2));
    x = F::dropout(x.flatten(1), F::DropoutFuncOptions().p(0.25).training(m.root->is_training()));
    x = torch::relu(m.run(f1, x));
    x = F::dropout(x, F::DropoutFuncOptions().p(0.5).training(m.root->is_training()));
    return m.run(f2, x);
  };
}

// --- lenet5 (LeCun et al. 1998, with ReLU and max-pool) -----------------------------------
void build_lenet5(Model::Impl& m, const ModelOptions& o) {
  Builder b(m, ConvInit::kTorchDefault, LinearInit::kTorchDefault);
  int c1 = b.conv("conv1", o.input.channels, 6, 5, 1, 2, 1, true);
  int c2 = b.conv("conv2", 6, 16, 5, 1, 0, 1, true);
  auto side = [&](int s) { return out_size(out_size(s / 2, 5, 1, 0, o), 2, 2, 0, o); };
  int f1 = b.linear("fc1", 16 * side(o.input.height) * side(o.input.width), 120);
  int f2 = b.linear("fc2", 120, 84);
  int f3 = b.linear("fc3", 84, o.classes);
  m.forward = [=](Model::Impl& m, Tensor x) {
    x = F::max_pool2d(torch::relu(m.run(c1, x)), F::MaxPool2dFuncOptions(2));
    x = F::max_pool2d(torch::relu(m.run(c2, x)), F::MaxPool2dFuncOptions(2));
    x = torch::relu(m.run(f1, x.flatten(1)));
    x = torch::relu(m.run(f2, x));
    return m.run(f3, x);
  };
}

// --- ResNet (He et al. 2016), torchvision v1.5: stride on the 3x3 convolution -------------
struct Block {
  int conv1, bn1, conv2, bn2, conv3 = -1, bn3 = -1, down_conv = -1, down_bn = -1;
};

void build_resnet(Model::Impl& m, const ModelOptions& o, bool bottleneck,
                  const std::vector<int>& layers) {
  Builder b(m, ConvInit::kKaimingFanOut, LinearInit::kTorchDefault);
  const bool small = small_input(o);
  int conv1 = small ? b.conv("conv1", o.input.channels, 64, 3, 1, 1)
                    : b.conv("conv1", o.input.channels, 64, 7, 2, 3);
  int bn1 = b.bn("bn1", 64);
  const int expansion = bottleneck ? 4 : 1;
  int in = 64;
  std::vector<Block> blocks;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const int width = 64 << l;
    for (int i = 0; i < layers[l]; ++i) {
      const int stride = (l > 0 && i == 0) ? 2 : 1;
      const std::string p = "layer" + std::to_string(l + 1) + "." + std::to_string(i) + ".";
      Block k{};
      if (bottleneck) {
        k.conv1 = b.conv(p + "conv1", in, width, 1);
        k.bn1 = b.bn(p + "bn1", width);
        k.conv2 = b.conv(p + "conv2", width, width, 3, stride, 1);
        k.bn2 = b.bn(p + "bn2", width);
        k.conv3 = b.conv(p + "conv3", width, width * expansion, 1);
        k.bn3 = b.bn(p + "bn3", width * expansion);
      } else {
        k.conv1 = b.conv(p + "conv1", in, width, 3, stride, 1);
        k.bn1 = b.bn(p + "bn1", width);
        k.conv2 = b.conv(p + "conv2", width, width, 3, 1, 1);
        k.bn2 = b.bn(p + "bn2", width);
      }
      if (stride != 1 || in != width * expansion) {
        k.down_conv = b.conv(p + "downsample.0", in, width * expansion, 1, stride);
        k.down_bn = b.bn(p + "downsample.1", width * expansion);
      }
      in = width * expansion;
      blocks.push_back(k);
    }
  }
  int fc = b.linear("fc", 512 * expansion, o.classes);
  m.forward = [=](Model::Impl& m, Tensor x) {
    x = torch::relu(m.run(bn1, m.run(conv1, x)));
    if (!small) x = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
    for (const Block& k : blocks) {
      Tensor out = torch::relu(m.run(k.bn1, m.run(k.conv1, x)));
      out = m.run(k.bn2, m.run(k.conv2, out));
      if (k.conv3 >= 0) out = m.run(k.bn3, m.run(k.conv3, torch::relu(out)));
      Tensor identity = k.down_conv >= 0 ? m.run(k.down_bn, m.run(k.down_conv, x)) : x;
      x = torch::relu(out + identity);
    }
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
    return m.run(fc, x);
  };
}

void build_resnet18(Model::Impl& m, const ModelOptions& o) {
  build_resnet(m, o, false, {2, 2, 2, 2});
}
void build_resnet50(Model::Impl& m, const ModelOptions& o) {
  build_resnet(m, o, true, {3, 4, 6, 3});
}

// --- VGG (Simonyan & Zisserman 2015), configurations A (11) and D (16), no batch-norm -----
void build_vgg(Model::Impl& m, const ModelOptions& o, const std::vector<int>& config) {
  Builder b(m, ConvInit::kKaimingFanOut, LinearInit::kNormal001);
  const bool small = small_input(o);
  std::vector<int> plan;  // unit index, or -1 for a max-pool
  int in = o.input.channels, pools = 0, total_pools = 0, idx = 0;
  for (int c : config) total_pools += c < 0;
  for (int c : config) {
    if (c < 0) {
      ++pools;
      if (!(small && pools == total_pools)) plan.push_back(-1);
      ++idx;
      continue;
    }
    plan.push_back(b.conv("features." + std::to_string(idx), in, c, 3, 1, 1, 1, true));
    in = c;
    idx += 2;  // conv, relu
  }
  int fc1 = b.linear("classifier.0", 512 * 7 * 7, 4096);
  int fc2 = b.linear("classifier.3", 4096, 4096);
  int fc3 = b.linear("classifier.6", 4096, o.classes);
  int side = o.input.height;  // checks the input is large enough for every pool
  for (int p : plan)
    if (p < 0) side = out_size(side, 2, 2, 0, o);
  (void)side;
  m.forward = [=](Model::Impl& m, Tensor x) {
    for (int p : plan)
      x = p < 0 ? F::max_pool2d(x, F::MaxPool2dFuncOptions(2)) : torch::relu(m.run(p, x));
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(7)).flatten(1);
    const bool t = m.root->is_training();
    x = F::dropout(torch::relu(m.run(fc1, x)), F::DropoutFuncOptions().p(0.5).training(t));
    x = F::dropout(torch::relu(m.run(fc2, x)), F::DropoutFuncOptions().p(0.5).training(t));
    return m.run(fc3, x);
  };
}

void build_vgg11(Model::Impl& m, const ModelOptions& o) {
  build_vgg(m, o, {64, -1, 128, -1, 256, 256, -1, 512, 512, -1, 512, 512, -1});
}
void build_vgg16(Model::Impl& m, const ModelOptions& o) {
  build_vgg(m, o,
            {64, 64, -1, 128, 128, -1, 256, 256, 256, -1, 512, 512, 512, -1, 512, 512, 512, -1});
}

// --- AlexNet (Krizhevsky et al. 2012), torchvision's single-tower variant -----------------
void build_alexnet(Model::Impl& m, const ModelOptions& o) {
  Builder b(m, ConvInit::kTorchDefault, LinearInit::kTorchDefault);
  const bool small = small_input(o);
  int c1 = small ? b.conv("features.0", o.input.channels, 64, 3, 1, 1, 1, true)
                 : b.conv("features.0", o.input.channels, 64, 11, 4, 2, 1, true);
  int c2 = b.conv("features.3", 64, 192, 5, 1, 2, 1, true);
  int c3 = b.conv("features.6", 192, 384, 3, 1, 1, 1, true);
  int c4 = b.conv("features.8", 384, 256, 3, 1, 1, 1, true);
  int c5 = b.conv("features.10", 256, 256, 3, 1, 1, 1, true);
  int f1 = b.linear("classifier.1", 256 * 6 * 6, 4096);
  int f2 = b.linear("classifier.4", 4096, 4096);
  int f3 = b.linear("classifier.6", 4096, o.classes);
  int side = small ? o.input.height : out_size(o.input.height, 11, 4, 2, o);
  for (int i = 0; i < 3; ++i) side = out_size(side, 3, 2, 0, o);  // input large enough?
  (void)side;
  m.forward = [=](Model::Impl& m, Tensor x) {
    auto pool = F::MaxPool2dFuncOptions(3).stride(2);
    x = F::max_pool2d(torch::relu(m.run(c1, x)), pool);
    x = F::max_pool2d(torch::relu(m.run(c2, x)), pool);
    x = torch::relu(m.run(c3, x));
    x = torch::relu(m.run(c4, x));
    x = F::max_pool2d(torch::relu(m.run(c5, x)), pool);
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(6)).flatten(1);
    const bool t = m.root->is_training();
    x = torch::relu(m.run(f1, F::dropout(x, F::DropoutFuncOptions().p(0.5).training(t))));
    x = torch::relu(m.run(f2, F::dropout(x, F::DropoutFuncOptions().p(0.5).training(t))));
    return m.run(f3, x);
  };
}

// --- MobileNetV2 (Sandler et al. 2018), width 1.0 -----------------------------------------
struct ConvBn {
  int conv, bn;
  bool relu6;
};
struct InvertedResidual {
  std::vector<ConvBn> layers;
  bool residual;
};

void build_mobilenetv2(Model::Impl& m, const ModelOptions& o) {
  Builder b(m, ConvInit::kKaimingFanOut, LinearInit::kNormal001);
  const bool small = small_input(o);
  auto conv_bn = [&](const std::string& p, int in, int out, int k, int stride, int groups,
                     bool relu6) {
    int c = b.conv(p + "0", in, out, k, stride, (k - 1) / 2, groups);
    return ConvBn{c, b.bn(p + "1", out), relu6};
  };
  ConvBn stem = conv_bn("features.0.", o.input.channels, 32, 3, small ? 1 : 2, 1, true);
  const int settings[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                             {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::vector<InvertedResidual> blocks;
  int in = 32, idx = 1;
  for (const auto& s : settings) {
    for (int i = 0; i < s[2]; ++i, ++idx) {
      const int stride = i == 0 ? s[3] : 1, hidden = in * s[0], out = s[1];
      const std::string p = "features." + std::to_string(idx) + ".conv.";
      InvertedResidual r{{}, stride == 1 && in == out};
      int layer = 0;
      if (s[0] != 1)
        r.layers.push_back(conv_bn(p + std::to_string(layer++) + ".", in, hidden, 1, 1, 1, true));
      r.layers.push_back(
          conv_bn(p + std::to_string(layer++) + ".", hidden, hidden, 3, stride, hidden, true));
      int pw = b.conv(p + std::to_string(layer++), hidden, out, 1);
      int pw_bn = b.bn(p + std::to_string(layer++), out);
      r.layers.push_back(ConvBn{pw, pw_bn, false});
      blocks.push_back(r);
      in = out;
    }
  }
  ConvBn last = conv_bn("features." + std::to_string(idx) + ".", in, 1280, 1, 1, 1, true);
  int fc = b.linear("classifier.1", 1280, o.classes);
  m.forward = [=](Model::Impl& m, Tensor x) {
    auto apply = [&m](const ConvBn& l, Tensor t) {
      t = m.run(l.bn, m.run(l.conv, t));
      return l.relu6 ? torch::clamp(t, 0, 6) : t;
    };
    x = apply(stem, x);
    for (const auto& r : blocks) {
      Tensor y = x;
      for (const auto& l : r.layers) y = apply(l, y);
      x = r.residual ? x + y : y;
    }
    x = apply(last, x);
    x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
    x = F::dropout(x, F::DropoutFuncOptions().p(0.2).training(m.root->is_training()));
    return m.run(fc, x);
  };
}

}  // namespace

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> all = {
      {"cnn", build_cnn},
      {"lenet5", build_lenet5},
      {"resnet18", build_resnet18},
      {"resnet50", build_resnet50},
      {"vgg11", build_vgg11},
      {"vgg16", build_vgg16},
      {"mobilenetv2", build_mobilenetv2},
      {"alexnet", build_alexnet},
  };
  return all;
}

}  // namespace dynacomm::model
