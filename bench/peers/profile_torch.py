#!/usr/bin/python3
"""PyTorch's forward and backward time of dynacomm's architectures (bench/peers/ddp.py),
to compare side by side with `dynacomm profile` on the same machine in the same run.

Usage: profile_torch.py MODEL [--batch 32] [--threads 1] [--iterations 10] [--warmup 3]
Prints one JSON line: {"model", "forward_ms", "backward_ms"} (medians).
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ddp  # noqa: E402

MODELS = {"cnn": ddp.Cnn, "resnet18": ddp.ResNet18, "mobilenetv2": ddp.MobileNetV2}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", choices=sorted(MODELS))
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--iterations", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    model = MODELS[a.model]()
    model.train()
    x = torch.randn(a.batch, 1, 28, 28)
    y = torch.randint(0, 10, (a.batch,))
    forward, backward = [], []
    for i in range(a.warmup + a.iterations):
        model.zero_grad()
        t0 = time.perf_counter()
        loss = F.cross_entropy(model(x), y)
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        if i >= a.warmup:
            forward.append((t1 - t0) * 1e3)
            backward.append((t2 - t1) * 1e3)
    print(json.dumps({"model": a.model, "forward_ms": statistics.median(forward),
                      "backward_ms": statistics.median(backward)}))


if __name__ == "__main__":
    main()
