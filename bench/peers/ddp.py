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

With --data DIR it trains on Fashion-MNIST instead (the idx files dynacomm reads, normalised
with the same mean and standard deviation): each rank a DistributedSampler-style share of
the training set, reshuffled every epoch, SGD with dynacomm's defaults (lr 0.05, cosine
over --epochs, momentum 0.9, weight decay 5e-4), rank 0 evaluating on the whole test set
every --eval-every iterations; with --target-accuracy it stops at the first evaluation
that reaches it. The JSON then adds "evaluations" ([{iteration, accuracy, train_s}], the
training time from the first iteration with the evaluations' own time left out) and
"reached" (the first of them at the target, or null):

    ddp.py --rank R --world 2 --master 127.0.0.1:29600 --model cnn \
           --data /usr/share/datasets/fashion-mnist --epochs 3 --eval-every 50 \
           --target-accuracy 0.88 --out ddp-rank0.json
"""
import argparse
import gzip
import json
import math
import os
import struct
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

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST's, as dynacomm normalises (data/fashion_mnist.h)


def read_idx(folder, base):
    """An idx file (or its .gz) as a uint8 tensor of its dimensions."""
    path = os.path.join(folder, base)
    opener = gzip.open if os.path.exists(path + ".gz") else open
    with opener(path + ".gz" if opener is gzip.open else path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = struct.unpack(">" + "I" * (magic & 0xff), data[4:4 + 4 * (magic & 0xff)])
    body = torch.frombuffer(bytearray(data[4 + 4 * len(dims):]), dtype=torch.uint8)
    if body.numel() != math.prod(dims):
        sys.exit(f"ddp.py: {path}: {body.numel()} bytes for dimensions {dims}")
    return body.reshape(dims)


def fashion_mnist(folder, split):
    """Images (N x 1 x 28 x 28, normalised) and labels of the train or t10k split."""
    images = read_idx(folder, f"{split}-images-idx3-ubyte").float().div_(255)
    labels = read_idx(folder, f"{split}-labels-idx1-ubyte").long()
    return images.sub_(MEAN).div_(STD).unsqueeze(1), labels


def accuracy(model, images, labels, batch=1000):
    model.eval()
    right = 0
    with torch.no_grad():
        for i in range(0, len(labels), batch):
            right += (model(images[i:i + batch]).argmax(1) == labels[i:i + batch]).sum().item()
    model.train()
    return right / len(labels)


def train_to_accuracy(a, ddp, model):
    """--data: epochs over Fashion-MNIST, evaluated on rank 0, stopped at the target."""
    images, labels = (t[:a.train_samples or None] for t in fashion_mnist(a.data, "train"))
    test = None
    if a.rank == 0:
        test = tuple(t[:a.test_samples or None] for t in fashion_mnist(a.data, "t10k"))
    steps = math.ceil(len(labels) / a.world / a.batch)
    total = steps * a.epochs
    opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda it: 0.5 * (1 + math.cos(math.pi * min(it, total) / total)))
    out = {"iteration_ms": [], "evaluations": [], "reached": None}
    train_s, it = 0.0, 0
    for epoch in range(a.epochs):
        order = torch.randperm(len(labels), generator=torch.Generator().manual_seed(epoch))
        mine = order[a.rank::a.world]
        for step in range(steps):
            batch = mine[step * a.batch:(step + 1) * a.batch]
            t0 = time.perf_counter()
            opt.zero_grad()
            F.cross_entropy(ddp(images[batch]), labels[batch]).backward()
            opt.step()
            sched.step()
            ms = 1000 * (time.perf_counter() - t0)
            out["iteration_ms"].append(ms)
            train_s += ms / 1000
            it += 1
            if it % a.eval_every and it != total:
                continue
            stop = torch.zeros(1)
            if a.rank == 0:
                acc = accuracy(model, *test)
                out["evaluations"].append({"iteration": it - 1, "accuracy": acc,
                                           "train_s": train_s})
                print(f"ddp: iteration {it - 1}: test accuracy {100 * acc:.2f}% after "
                      f"{train_s:.1f} s of training", flush=True)
                if a.target_accuracy and acc >= a.target_accuracy and not out["reached"]:
                    out["reached"] = out["evaluations"][-1]
                    stop[0] = 1
            dist.broadcast(stop, 0)
            if stop[0]:
                return out
    return out


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
    p.add_argument("--data", help="Fashion-MNIST folder: train on it (above), not random batches")
    p.add_argument("--epochs", type=int, default=3, help="--data: epochs (cosine over them)")
    p.add_argument("--eval-every", type=int, default=50, help="--data: rank 0 evaluates")
    p.add_argument("--target-accuracy", type=float, default=0,
                   help="--data: stop at the first evaluation at least this (0 to 1)")
    p.add_argument("--train-samples", type=int, default=0, help="--data: the first N (0: all)")
    p.add_argument("--test-samples", type=int, default=0, help="--data: the first N (0: all)")
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
    if (a.epochs < 1 or a.eval_every < 1 or not 0 <= a.target_accuracy <= 1
            or a.train_samples < 0 or a.test_samples < 0):
        sys.exit("ddp.py: bad --epochs/--eval-every/--target-accuracy/--*-samples")
    if a.data and not os.path.isdir(a.data):
        sys.exit(f"ddp.py: --data {a.data}: no such folder")
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
    result = {"params": params, "model": a.model, "torch": torch.__version__}
    if a.data:
        result.update(train_to_accuracy(a, ddp, model))
        write_json(a.out, result)
        dist.destroy_process_group()
        return
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
    result["iteration_ms"] = times
    write_json(a.out, result)
    dist.destroy_process_group()


def write_json(path, value):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(value, f)
    os.replace(tmp, path)


if __name__ == "__main__":
    main()
