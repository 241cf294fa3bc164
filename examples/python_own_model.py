#!/usr/bin/python3
"""Your own PyTorch model on your own .npy arrays: dynacomm with 2 workers on 20 Mbit/s links,
against the same model trained locally in plain PyTorch.

    PYTHONPATH=python /usr/bin/python3 examples/python_own_model.py [--data-dir FOLDER]

FOLDER holds train_images.npy, train_labels.npy, test_images.npy, test_labels.npy
(docs/own-data.md); without it, Fashion-MNIST from Debian's dataset-fashion-mnist is
written as such arrays first. Both runs see the same images: dynacomm's 2 workers take
batches of 32 each and the PS averages them, so the local run takes batches of 64, with
the same SGD (lr 0.05, momentum 0.9, weight decay 5e-4) and as many iterations. Prints
one JSON line with both test accuracies on the whole test set.
"""
import argparse
import gzip
import json
import os
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import dynacomm  # noqa: E402


def my_model(channels, classes, side):
    """The user's model: any nn.Sequential; dynacomm's units are its children with weights."""
    return nn.Sequential(
        nn.Conv2d(channels, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * (side // 4) ** 2, 64), nn.ReLU(), nn.Linear(64, classes))


def fashion_mnist_as_npy(folder, source="/usr/share/datasets/fashion-mnist"):
    def idx(name):
        with gzip.open(os.path.join(source, name + ".gz"), "rb") as f:
            data = f.read()
        dims = data[3]
        shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
        return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)
    dynacomm.save_dataset(folder,
                          idx("train-images-idx3-ubyte")[:, None], idx("train-labels-idx1-ubyte"),
                          idx("t10k-images-idx3-ubyte")[:, None], idx("t10k-labels-idx1-ubyte"))
    return folder


def as_float(images):
    return torch.from_numpy(images).float() / 255 if images.dtype == np.uint8 else \
        torch.from_numpy(images)


def accuracy(model, images, labels):
    model.eval()
    with torch.no_grad():
        predicted = torch.cat([model(as_float(images[i:i + 1000])).argmax(1)
                               for i in range(0, len(images), 1000)])
    return float((predicted.numpy() == labels).mean())


def train_locally(model, x, y, iterations, batch, seed):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    order = np.random.default_rng(seed).permutation(len(x))
    model.train()
    for it in range(iterations):
        idx = order[(it * batch) % len(x):(it * batch) % len(x) + batch]
        loss = nn.functional.cross_entropy(model(as_float(x[idx])), torch.from_numpy(y[idx]).long())
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data-dir", help="a folder of the four .npy arrays")
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--link", default="20mbit", help="each worker's link, both ways")
    a = p.parse_args()
    data = a.data_dir or fashion_mnist_as_npy(tempfile.mkdtemp(prefix="fmnist-npy-"))
    x = np.load(os.path.join(data, "train_images.npy"))
    y = np.load(os.path.join(data, "train_labels.npy"))
    tx = np.load(os.path.join(data, "test_images.npy"))
    ty = np.load(os.path.join(data, "test_labels.npy"))
    classes, side = int(y.max()) + 1, x.shape[2]
    torch.manual_seed(0)
    model = my_model(x.shape[1], classes, side)
    initial = {k: v.clone() for k, v in model.state_dict().items()}

    start = time.time()
    run = dynacomm.train(model, data, workers=2, epochs=a.epochs, batch=32, down=a.link,
                         up=a.link, latency="10ms")
    dynacomm_s = time.time() - start
    iterations = int(run.summary["iterations"])

    model.load_state_dict(initial)
    start = time.time()
    local = train_locally(model, x, y, iterations, 64, seed=1)
    local_s = time.time() - start
    print(json.dumps({
        "iterations": iterations, "link": a.link,
        "dynacomm_test_accuracy": run.test_accuracy,
        "dynacomm_test_accuracy_in_pytorch": accuracy(run.model, tx, ty),
        "local_pytorch_test_accuracy": accuracy(local, tx, ty),
        "dynacomm_s": round(dynacomm_s, 1), "local_pytorch_s": round(local_s, 1),
        "run": run.folder}))


if __name__ == "__main__":
    main()
