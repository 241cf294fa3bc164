#!/usr/bin/python3
"""Writes a torchvision ResNet or MobileNetV2 as a TorchScript file that dynacomm trains (--model FILE.pt).

dynacomm's units are a TorchScript module's top-level children, run in order (or those
its `units: List[str]` attribute names), so the network goes in an nn.Sequential whose entries keep torchvision's names (conv1, bn1, ...,
layer4, avgpool, flatten, fc): the state_dict keys stay torchvision's. For inputs under 64
pixels the stem is the one dynacomm's zoo uses (3x3, stride 1, no max-pool).

    /usr/bin/python3 examples/torchscript_model.py resnet18.pt --arch resnet18
    dynacomm train --model resnet18.pt --workers 2

--init takes a state_dict (e.g. a dynacomm run's model.pt of the zoo's resnet18) as the
initial parameters, so the file starts where the built-in model starts:

    dynacomm export --model resnet18 --out runs/init
    /usr/bin/python3 examples/torchscript_model.py r18.pt --init runs/init/model.pt
"""
import argparse
import collections
import re
import sys

import torch
import torch.nn as nn
import torchvision


def sequential_resnet(arch, channels, classes, small):
    net = getattr(torchvision.models, arch)(num_classes=classes)
    if small:
        net.conv1 = nn.Conv2d(channels, 64, 3, 1, 1, bias=False)
        net.maxpool = nn.Identity()
    elif channels != 3:
        net.conv1 = nn.Conv2d(channels, 64, 7, 2, 3, bias=False)
    names = ["conv1", "bn1", "relu", "maxpool", "layer1", "layer2", "layer3", "layer4", "avgpool"]
    parts = [(n, getattr(net, n)) for n in names]
    parts += [("flatten", nn.Flatten(1)), ("fc", net.fc)]
    return nn.Sequential(collections.OrderedDict(parts))


def sequential_mobilenet_v2(channels, classes, small):
    """features' 19 blocks as top-level children (features_0 ... features_18), then the
    pooling and the classifier: 20 units (dynacomm's built-in mobilenetv2 has 104, one per
    convolution and batch-norm)."""
    net = torchvision.models.mobilenet_v2(num_classes=classes)
    net.features[0][0] = nn.Conv2d(channels, 32, 3, 1 if small else 2, 1, bias=False)
    parts = [(f"features_{i}", block) for i, block in enumerate(net.features)]
    parts += [("pool", nn.AdaptiveAvgPool2d(1)), ("flatten", nn.Flatten(1)),
              ("classifier", net.classifier)]
    return nn.Sequential(collections.OrderedDict(parts))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", help="the TorchScript file to write (*.pt)")
    p.add_argument("--arch", default="resnet18",
                   choices=["resnet18", "resnet34", "resnet50", "resnet101", "mobilenet_v2"])
    p.add_argument("--input", default="1x28x28", help="CxHxW of the data (default 1x28x28)")
    p.add_argument("--classes", type=int, default=10)
    p.add_argument("--init", help="a state_dict to start from (torchvision names)")
    a = p.parse_args()
    if not a.out.endswith(".pt"):
        sys.exit("torchscript_model.py: the output file must end in .pt")
    try:
        c, h, w = (int(x) for x in a.input.split("x"))
    except ValueError:
        sys.exit(f"torchscript_model.py: --input {a.input}: expected CxHxW, e.g. 1x28x28")
    small = min(h, w) < 64
    if a.arch == "mobilenet_v2":
        model = sequential_mobilenet_v2(c, a.classes, small)
    else:
        model = sequential_resnet(a.arch, c, a.classes, small)
    if a.init:  # torchvision's names; features.N. is features_N. here
        state = {re.sub(r"^features\.(\d+)\.", r"features_\1.", k): v
                 for k, v in torch.load(a.init).items()}
        model.load_state_dict(state, strict=True)
    scripted = torch.jit.script(model)
    scripted.save(a.out)
    params = sum(t.numel() for t in model.parameters())
    units = sum(1 for m in model.children() if any(True for _ in m.parameters()))
    print(f"{a.out}: {a.arch}, {params} parameters in {units} units, input {a.input}")


if __name__ == "__main__":
    main()
