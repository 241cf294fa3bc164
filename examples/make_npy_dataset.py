#!/usr/bin/python3
"""Writes a small image-classification dataset in dynacomm's .npy folder format.

    /usr/bin/python3 examples/make_npy_dataset.py data/squares
    dynacomm train --data-dir data/squares --model cnn --workers 2

The four files dynacomm reads from a --data-dir (docs/own-data.md):
train_images.npy and test_images.npy, N x C x H x W (uint8 here: dynacomm scales it to
0..1; float32 is used as given), and train_labels.npy / test_labels.npy, N integers 0..K-1.
Here: 3 x 16 x 16 noise images, class k a brighter square in quadrant k (4 classes).
"""
import os
import sys

import numpy as np


def make(n, rng):
    labels = rng.integers(0, 4, n)
    images = rng.integers(0, 120, (n, 3, 16, 16)).astype(np.uint8)
    for i, k in enumerate(labels):
        r, c = (k // 2) * 8, (k % 2) * 8
        images[i, :, r + 2:r + 6, c + 2:c + 6] += 100
    return images, labels.astype(np.int64)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "squares"
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(1)
    for split, n in (("train", 2000), ("test", 500)):
        images, labels = make(n, rng)
        np.save(os.path.join(out, split + "_images.npy"), images)
        np.save(os.path.join(out, split + "_labels.npy"), labels)
    print(out)


if __name__ == "__main__":
    main()
