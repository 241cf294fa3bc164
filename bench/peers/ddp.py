#!/usr/bin/python3
"""The peer users would pick instead of dynacomm: PyTorch DistributedDataParallel (Gloo).

One process per worker, started by `dynacomm bench --peers ddp` in the worker's network
namespace (the same veth + tbf links as dynacomm's workers; traffic between workers goes
through the PS namespace, which forwards). Trains the same architecture as dynacomm's
model zoo (the parameter count is printed and checked by the caller) on random
Fashion-MNIST-shaped batches: iteration time does not depend on the pixel values.

    ddp.py --rank R --world N --master 10.213.0.2:29500 --model resnet18 --batch 32 \
           --iterations 20 --warmup 2 --out ddp-rank0.json

Writes {"params": P, "iteration_ms": [...]} (after warm-up) to --out.
"""
import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Cnn(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1, 1)
        self.fc1 = nn.Linear(64 * 7 * 7, 256)
        self.fc2 = nn.Linear(256, classes)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = F.dropout(x.flatten(1), 0.25, self.training)
        x = F.dropout(F.relu(self.fc1(x)), 0.5, self.training)
        return self.fc2(x)


class BasicBlock(nn.Module):
    def __init__(self, cin, width, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, width, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv2 = nn.Conv2d(width, width, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(width)
        self.down = None
        if stride != 1 or cin != width:
            self.down = nn.Sequential(nn.Conv2d(cin, width, 1, stride, bias=False),
                                      nn.BatchNorm2d(width))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (self.down(x) if self.down is not None else x))


class ResNet18(nn.Module):
    """dynacomm's resnet18 for inputs under 64 px: 3x3 stem, stride 1, no max-pool."""

    def __init__(self, channels=1, classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        blocks, cin = [], 64
        for layer in range(4):
            width = 64 << layer
            for i in range(2):
                blocks.append(BasicBlock(cin, width, 2 if layer > 0 and i == 0 else 1))
                cin = width
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(512, classes)

    def forward(self, x):
        x = self.blocks(F.relu(self.bn1(self.conv1(x))))
        return self.fc(F.adaptive_avg_pool2d(x, 1).flatten(1))


def conv_bn(cin, cout, k, stride, groups, relu6):
    layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    if relu6:
        layers.append(nn.ReLU6())
    return nn.Sequential(*layers)


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, stride, expand):
        super().__init__()
        hidden = cin * expand
        layers = [] if expand == 1 else [conv_bn(cin, hidden, 1, 1, 1, True)]
        layers += [conv_bn(hidden, hidden, 3, stride, hidden, True),
                   conv_bn(hidden, cout, 1, 1, 1, False)]
        self.conv = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.conv(x) if self.residual else self.conv(x)


class MobileNetV2(nn.Module):
    """dynacomm's mobilenetv2 for inputs under 64 px: stem stride 1."""

    def __init__(self, channels=1, classes=10):
        super().__init__()
        layers, cin = [conv_bn(channels, 32, 3, 1, 1, True)], 32
        for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                           (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)]:
            for i in range(n):
                layers.append(InvertedResidual(cin, c, s if i == 0 else 1, t))
                cin = c
        layers.append(conv_bn(cin, 1280, 1, 1, 1, True))
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(1280, classes)

    def forward(self, x):
        x = F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)
        return self.fc(F.dropout(x, 0.2, self.training))


MODELS = {"cnn": Cnn, "resnet18": ResNet18, "mobilenetv2": MobileNetV2}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check-params", nargs="+", metavar="PROFILE",
                   help="compare each model's parameter count with dynacomm profiles "
                        "(JSON) of the same model, print both, exit 1 on a mismatch")
    p.add_argument("--rank", type=int)
    p.add_argument("--world", type=int)
    p.add_argument("--master", help="HOST:PORT of rank 0")
    p.add_argument("--model", help=f"{', '.join(sorted(MODELS))}, or a TorchScript file *.pt")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--ifname", help="network interface Gloo uses (the worker's edge link)")
    p.add_argument("--timeout", type=float, default=300, help="seconds for any collective")
    p.add_argument("--out")
    a = p.parse_args()
    if a.check_params:
        bad = 0
        for path in a.check_params:
            with open(path) as f:
                prof = json.load(f)
            ours = sum(u["params"] for u in prof["units"])
            theirs = sum(t.numel() for t in MODELS[prof["model"]]().parameters())
            print(f"{prof['model']}: dynacomm {ours} parameters, PyTorch peer {theirs}")
            bad += ours != theirs
        sys.exit(1 if bad else 0)
    if None in (a.rank, a.world, a.master, a.model, a.out):
        sys.exit("ddp.py: --rank, --world, --master, --model and --out are required")
    if a.world < 1 or not 0 <= a.rank < a.world or a.iterations < 1 or a.batch < 1:
        sys.exit("ddp.py: bad --rank/--world/--iterations/--batch")
    host, _, port = a.master.rpartition(":")
    if a.ifname:
        os.environ["GLOO_SOCKET_IFNAME"] = a.ifname
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    dist.init_process_group("gloo", init_method=f"tcp://{host}:{port}", rank=a.rank,
                            world_size=a.world,
                            timeout=__import__("datetime").timedelta(seconds=a.timeout))
    if a.model.endswith(".pt"):
        model = torch.jit.load(a.model)
    elif a.model in MODELS:
        model = MODELS[a.model]()
    else:
        sys.exit(f"ddp.py: unknown --model {a.model}")
    params = sum(t.numel() for t in model.parameters())
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    g = torch.Generator().manual_seed(a.rank)
    times = []
    for it in range(a.warmup + a.iterations):
        x = torch.rand(a.batch, 1, 28, 28, generator=g)
        y = torch.randint(0, 10, (a.batch,), generator=g)
        dist.barrier()  # every rank starts the iteration together, as under BSP
        t0 = time.perf_counter()
        opt.zero_grad()
        F.cross_entropy(ddp(x), y).backward()  # all-reduce overlaps the backward pass
        opt.step()
        if it >= a.warmup:
            times.append(1000 * (time.perf_counter() - t0))
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"params": params, "iteration_ms": times, "model": a.model,
                   "torch": torch.__version__}, f)
    os.replace(tmp, a.out)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
