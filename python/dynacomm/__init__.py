"""dynacomm from Python: train your own PyTorch model on your own arrays with a PS and edge
workers on shaped links, and get the trained module back.

    import dynacomm, torch.nn as nn
    net = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                        nn.Flatten(), nn.Linear(16 * 14 * 14, 10))
    run = dynacomm.train(net, (x_train, y_train, x_test, y_test), workers=2, down="20mbit")
    print(run.test_accuracy)          # on the whole test set, as dynacomm measured it
    trained = run.model               # a TorchScript module with the trained parameters

The other door, dynacomm.Worker (worker.py), runs the C++ worker inside this process on
your own training loop: `worker.step(inputs, targets, loss_fn)`.

This door runs the dynacomm binary (a launcher, a PS and a process per worker; the same
plans, gates and re-planning as any `dynacomm train`): the model goes to it as a
TorchScript file (`--model FILE.pt`), so it must be an nn.Sequential, or a module whose
forward() is its top-level children in order. Errors come back as DynacommError with the
binary's message. The binary is `$DYNACOMM`, else `dynacomm` on PATH, else this checkout's
build/src/cli/dynacomm.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

import numpy as np
import torch

__all__ = ["DynacommError", "PS", "Run", "Worker", "find_executable", "save_dataset",
           "start_ps", "train", "units_of", "worker_batches"]

Arrays = Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class DynacommError(RuntimeError):
    """A dynacomm command failed; the message is the binary's own."""


@dataclass
class Run:
    """What a training run left: its folder, summary.json, and the trained model."""

    folder: str
    summary: Dict[str, Any]
    model: Any  # torch.jit.ScriptModule for a model given as a module or file, else None

    @property
    def test_accuracy(self) -> float:
        """Test accuracy on the whole test set at the end of the run (0..1)."""
        return float(self.summary["test_accuracy"])


def find_executable() -> str:
    """The dynacomm binary: $DYNACOMM, dynacomm on PATH, or this checkout's build."""
    candidates = [os.environ.get("DYNACOMM"), shutil.which("dynacomm"),
                  os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                               "build", "src", "cli", "dynacomm")]
    for c in candidates:
        if c and os.access(c, os.X_OK):
            return os.path.abspath(c)
    raise DynacommError("dynacomm binary not found: set $DYNACOMM, put dynacomm on PATH, or "
                        "build this checkout (cmake --build build)")


def save_dataset(folder: str, train_images: np.ndarray, train_labels: np.ndarray,
                 test_images: np.ndarray, test_labels: np.ndarray) -> str:
    """Writes the four arrays as the .npy files --data-dir reads; returns the folder.

    Images are N x C x H x W, uint8 (scaled to 0..1 by dynacomm) or float32 (used as
    given); labels are N integers 0..K-1. dynacomm checks them when a run starts.
    """
    os.makedirs(folder, exist_ok=True)
    named = {"train_images": train_images, "train_labels": train_labels,
             "test_images": test_images, "test_labels": test_labels}
    for name, a in named.items():
        a = np.asarray(a)
        if a.dtype == np.float64:
            a = a.astype(np.float32)
        np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(a))
    return folder


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _args(flags: Dict[str, Any]) -> List[str]:
    """Keyword arguments as command-line flags: True a bare flag, False and None none."""
    args: List[str] = []
    for name, value in flags.items():
        if value is True:
            args.append(_flag(name))
        elif value is not False and value is not None:
            args += [_flag(name), str(value)]
    return args


def _error_message(output: str, code: int) -> str:
    lines = [ln for ln in output.splitlines() if "error" in ln.lower() or "failed" in ln.lower()]
    tail = lines[-3:] if lines else output.strip().splitlines()[-5:]
    return f"dynacomm exited with {code}: " + " | ".join(ln.strip() for ln in tail)


def train(model: Union[torch.nn.Module, str], data: Union[str, Arrays, None] = None, *,
          workers: int = 2, out: Optional[str] = None, timeout: Optional[float] = None,
          verbose: bool = False, **flags: Any) -> Run:
    """Trains `model` with a PS and `workers` edge workers on this machine.

    model: a torch.nn.Module (scripted with torch.jit.script), a TorchScript file (*.pt) or
        the name of a built-in model ("cnn", "resnet18", ...).
    data: a folder for --data-dir, the four arrays (train images, train labels, test
        images, test labels; see save_dataset), or None for Fashion-MNIST.
    out: the run folder (default: a new temporary folder, kept).
    flags: any `dynacomm train` flag by name, e.g. down="20mbit", latency="10ms",
        epochs=2, iterations=100, batch=32, lr=0.05, scheduler="dynacomm-fd",
        arch="allreduce", net="netns"; True adds a bare flag (local=True).
    Raises DynacommError with the binary's message when the run fails.
    """
    exe = find_executable()
    out = out or tempfile.mkdtemp(prefix="dynacomm-run-")
    with tempfile.TemporaryDirectory(prefix="dynacomm-in-") as inputs:
        if isinstance(model, torch.nn.Module):
            path = os.path.join(inputs, "model.pt")
            try:
                scripted = torch.jit.script(model)
            except Exception as e:  # TorchScript's own message says what it cannot compile
                raise DynacommError(f"the model cannot be scripted (torch.jit.script): {e}") from e
            scripted.save(path)
            model = path
        args = [exe, "train", "--model", str(model), "--workers", str(workers), "--out", out]
        if isinstance(data, (tuple, list)):
            if len(data) != 4:
                raise DynacommError("data: expected (train_images, train_labels, test_images, "
                                    f"test_labels), got {len(data)} arrays")
            data = save_dataset(os.path.join(inputs, "data"), *data)
        if data is not None:
            args += ["--data-dir", str(data)]
        args += _args(flags)
        done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=timeout)
    if verbose:
        print(done.stdout, end="")
    if done.returncode != 0:
        raise DynacommError(_error_message(done.stdout, done.returncode))
    with open(os.path.join(out, "summary.json")) as f:
        summary = json.load(f)
    trained = None
    if str(summary.get("model", "")).endswith(".pt") or isinstance(model, str) and model.endswith(".pt"):
        trained = torch.jit.load(os.path.join(out, "model.pt"))
    return Run(folder=out, summary=summary, model=trained)


from .worker import PS, Worker, start_ps, units_of, worker_batches  # noqa: E402
