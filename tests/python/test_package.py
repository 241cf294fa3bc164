"""The Python package (python/dynacomm): a user's nn.Sequential and arrays through a PS and
2 workers, the trained module back; errors as DynacommError with the binary's message.

Run: DYNACOMM=build/src/cli/dynacomm PYTHONPATH=python /usr/bin/python3 \
    tests/python/test_package.py -v
"""
import os
import sys
import unittest

import numpy as np
import torch
import torch.nn as nn

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import dynacomm  # noqa: E402
from make_npy_dataset import make  # noqa: E402  (noise images, a bright square per class)


def squares():
    rng = np.random.default_rng(1)
    return (*make(2000, rng), *make(500, rng))


def small_net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 8 * 8, 4))


class Scaled(nn.Module):  # forward() is not its children in order
    def __init__(self):
        super().__init__()
        self.net = small_net()

    def forward(self, x):
        return self.net(x) * 2


class PackageTest(unittest.TestCase):
    def test_trains_a_users_module_on_arrays_and_returns_it_trained(self):
        data = squares()
        run = dynacomm.train(small_net(), data, workers=2, iterations=40, down="1gbit",
                             latency="1ms", timeout=300)
        self.assertGreater(run.test_accuracy, 0.9)  # 4 easy classes, 500 test images
        self.assertIsInstance(run.model, torch.jit.ScriptModule)
        run.model.eval()
        x = torch.from_numpy(data[2]).float() / 255
        with torch.no_grad():
            predicted = run.model(x).argmax(1).numpy()
        self.assertAlmostEqual(float((predicted == data[3]).mean()), run.test_accuracy, places=9)

    def test_a_model_that_is_not_its_children_in_order_is_refused_with_the_reason(self):
        with self.assertRaises(dynacomm.DynacommError) as e:
            dynacomm.train(Scaled(), squares(), iterations=2, timeout=120)
        self.assertIn("units are the module's top-level children", str(e.exception))

    def test_bad_arrays_and_flags_are_refused_with_the_binarys_message(self):
        x, y, tx, ty = squares()
        with self.assertRaises(dynacomm.DynacommError) as e:
            dynacomm.train(small_net(), (x, y[:10], tx, ty), iterations=2, timeout=120)
        self.assertIn("train_labels.npy", str(e.exception))
        with self.assertRaises(dynacomm.DynacommError) as e:
            dynacomm.train(small_net(), (x, y, tx, ty), down="fast", timeout=120)
        self.assertIn("--down", str(e.exception))


if __name__ == "__main__":
    unittest.main()
