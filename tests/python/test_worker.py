"""dynacomm.Worker, the C++ worker inside Python on the user's own loop: the built-in cnn's
architecture written in PyTorch gives the C++ worker's weights bit for bit (same initial
weights, data order and seed), and its errors come back as DynacommError.

Run: DYNACOMM=build/src/cli/dynacomm PYTHONPATH=python /usr/bin/python3 \
    tests/python/test_worker.py -v
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import dynacomm

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench",
                                "peers"))
from ddp import Cnn  # noqa: E402  the built-in cnn (src/model/zoo.cc) written in PyTorch

JOB = dict(workers=2, batch=32, iterations=8, seed=3, scheduler="dynacomm-fd", warmup=3,
           lr=0.05, momentum=0.9, weight_decay=5e-4, timeout="60s")


def flat(model):
    return torch.cat([p.detach().reshape(-1) for _, u in dynacomm.units_of(model)
                      for p in u.parameters()]).numpy()


def python_worker(rank, ps, init, out):
    """A child process: one Python worker of the job at `ps`; rank 0 writes its weights."""
    model = Cnn()
    model.load_state_dict(torch.load(init))
    batches = dynacomm.worker_batches(rank, JOB["workers"], JOB["batch"], seed=JOB["seed"])
    worker = dynacomm.Worker(model, ps, rank, steps_per_epoch=len(batches),
                             input_shape=(1, 28, 28), quiet=True)
    losses = [worker.step(x, y, F.cross_entropy) for x, y in batches[:JOB["iterations"]]]
    summary = worker.close()
    assert summary["iterations"] == JOB["iterations"], summary
    assert all(np.isfinite(losses)), losses
    if rank == 0:
        flat(model).astype(np.float32).tofile(out)


def run_workers(commands, timeout=300):
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for c in commands]
    outputs = [p.communicate(timeout=timeout)[0] for p in procs]
    for p, o in zip(procs, outputs):
        if p.returncode != 0:
            raise AssertionError(f"{p.args[:4]} exited with {p.returncode}:\n{o[-3000:]}")


class WorkerTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory(prefix="dynacomm-worker-test-")
        self.exe = dynacomm.find_executable()

    def tearDown(self):
        self.dir.cleanup()

    def path(self, *names):
        return os.path.join(self.dir.name, *names)

    def test_the_python_worker_gives_the_cpp_workers_weights_bit_for_bit(self):
        subprocess.run([self.exe, "export", "--model", "cnn", "--seed", str(JOB["seed"]),
                        "--out", self.path("init")], check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with dynacomm.start_ps(model="cnn", **JOB) as ps:
            run_workers([[self.exe, "worker", "--ps", ps.endpoint, "--rank", str(r),
                          "--out", self.path("cpp")] for r in range(JOB["workers"])])
            self.assertEqual(ps.wait(60), 0)
        with dynacomm.start_ps(model="python:Cnn", **JOB) as ps:
            run_workers([[sys.executable, __file__, "--worker", str(r), ps.endpoint,
                          self.path("init", "model.pt"), self.path("python.bin")]
                         for r in range(JOB["workers"])])
            self.assertEqual(ps.wait(60), 0)
        cpp = np.fromfile(self.path("cpp", "weights.bin"), dtype=np.float32)
        python = np.fromfile(self.path("python.bin"), dtype=np.float32)
        initial = np.fromfile(self.path("init", "weights.bin"), dtype=np.float32)
        self.assertEqual(cpp.size, 824458)  # the cnn's parameters
        self.assertFalse(np.array_equal(cpp, initial))  # it trained
        self.assertEqual(python.tobytes(), cpp.tobytes())

    def test_a_parameter_outside_the_units_is_refused_with_the_reason(self):
        model = Cnn()
        model.scale = nn.Parameter(torch.ones(1))
        with self.assertRaises(dynacomm.DynacommError) as e:
            dynacomm.Worker(model, "tcp://127.0.0.1:1", 0, steps_per_epoch=1,
                            input_shape=(1, 28, 28))
        self.assertIn("parameter scale is in no unit", str(e.exception))

    def test_no_ps_a_bad_flag_and_another_model_are_errors_naming_them(self):
        with self.assertRaises(dynacomm.DynacommError) as e:
            dynacomm.Worker(Cnn(), "tcp://127.0.0.1:9", 0, steps_per_epoch=1,
                            input_shape=(1, 28, 28), timeout="1s")
        self.assertIn("tcp://127.0.0.1:9", str(e.exception))
        with dynacomm.start_ps(model="python:Other", workers=1, iterations=1) as ps:
            with self.assertRaises(dynacomm.DynacommError) as e:
                dynacomm.Worker(Cnn(), ps.endpoint, 0, steps_per_epoch=1,
                                input_shape=(1, 28, 28), down="fast")
            self.assertIn("--down", str(e.exception))
            with self.assertRaises(dynacomm.DynacommError) as e:
                dynacomm.Worker(Cnn(), ps.endpoint, 0, steps_per_epoch=1,
                                input_shape=(1, 28, 28))
            self.assertIn("python:Other", str(e.exception))

    def test_a_step_after_the_job_ended_and_a_failing_loss_are_errors(self):
        torch.manual_seed(0)
        model = Cnn()
        x, y = torch.randn(8, 1, 28, 28), torch.randint(0, 10, (8,))
        with dynacomm.start_ps(model="python:Cnn", workers=1, batch=8, iterations=4,
                               warmup=1) as ps:
            with dynacomm.Worker(model, ps.endpoint, 0, steps_per_epoch=10,
                                 input_shape=(1, 28, 28), quiet=True) as worker:
                losses = [worker.step(x, y) for _ in range(4)]
                self.assertLess(losses[-1], losses[0])  # it learns the one batch
                with self.assertRaises(dynacomm.DynacommError) as e:
                    worker.step(x, y)
                self.assertIn("ended after 4 step(s)", str(e.exception))
        with dynacomm.start_ps(model="python:Cnn", workers=1, batch=8, iterations=4) as ps:
            worker = dynacomm.Worker(model, ps.endpoint, 0, steps_per_epoch=10,
                                     input_shape=(1, 28, 28), quiet=True)
            with self.assertRaises(dynacomm.DynacommError) as e:
                worker.step(x, y, lambda out, t: out.sum() / 0 + "not a tensor")
            self.assertIn("loss_fn failed at iteration 0", str(e.exception))
            with self.assertRaises(dynacomm.DynacommError):
                worker.close()
        # The module is the user's again: hooks off, it trains and runs in plain PyTorch.
        F.cross_entropy(model(x), y).backward()
        self.assertIsNotNone(model.fc2.weight.grad)


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--worker":
        python_worker(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5])
    else:
        unittest.main()
