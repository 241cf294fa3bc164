#!/usr/bin/python3
"""Loads a dynacomm run's model.pt into PyTorch and evaluates it on Fashion-MNIST's test set.

model.pt is the trained model's state_dict (torch.load reads it: parameters and batch-norm
statistics by torchvision-style name). This script builds the same architecture in
PyTorch (bench/peers/ddp.py's cnn), loads it strictly and prints the test accuracy, which
is the one dynacomm reported for the run:

    dynacomm train --model cnn --out runs/cnn
    /usr/bin/python3 examples/evaluate_model_pt.py runs/cnn
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bench", "peers"))
from ddp import Cnn  # noqa: E402  (the same architecture as dynacomm's cnn)


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run", help="a run folder with model.pt (and summary.json)")
    p.add_argument("--data-dir", default="/usr/share/datasets/fashion-mnist")
    a = p.parse_args()
    state = torch.load(os.path.join(a.run, "model.pt"))
    model = Cnn()
    model.load_state_dict(state, strict=True)
    model.eval()
    # dynacomm's normalisation (data/fashion_mnist.h): pixels / 255, then (x - mean) / std.
    images = idx(os.path.join(a.data_dir, "t10k-images-idx3-ubyte.gz")).astype(np.float32) / 255
    labels = idx(os.path.join(a.data_dir, "t10k-labels-idx1-ubyte.gz")).astype(np.int64)
    x = (torch.from_numpy(images).unsqueeze(1) - 0.2860) / 0.3530
    correct = 0
    with torch.no_grad():
        for i in range(0, len(labels), 256):
            logits = model(x[i:i + 256])
            correct += int((logits.argmax(1) == torch.from_numpy(labels[i:i + 256])).sum())
    print(json.dumps({"tensors": len(state), "test_accuracy": correct / len(labels)}))


if __name__ == "__main__":
    main()
