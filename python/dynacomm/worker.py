"""dynacomm.Worker: the C++ edge worker inside your Python process, training your own
torch.nn.Module with your own loop (DataLoader, loss) through a dynacomm PS.

    ps = dynacomm.start_ps(model="python:Net", workers=2, batch=64, epochs=1)
    worker = dynacomm.Worker(Net(), ps.endpoint, rank=0, steps_per_epoch=len(loader),
                             input_shape=(1, 28, 28), net="user", down="20mbit")
    for x, y in loader:
        loss = worker.step(x, y, torch.nn.functional.cross_entropy)
    summary = worker.close()     # rank 0's module now holds the job's final weights

The worker is the binary's (plans, gates, re-planning, compression, every scheduler): each
step hands the batch to it, a forward pre-hook on each unit waits for that unit's pull,
gradient hooks hand each unit over as soon as backward has made it, and step() returns the
loss once backward is done while the pushes go on. The job's settings (model name, batch,
epochs or iterations, scheduler, optimiser) are the PS's; the worker's own are its link
(net="user" with down/up/latency emulates one; default: the real network) and threads.

Units: the module's top-level children that have parameters, in the order forward() runs
them: an nn.Sequential's order, or the names in the module's `units` attribute (a list of
child names) when it has one. Every parameter must be in exactly one unit.
"""
from __future__ import annotations

import glob
import importlib.machinery
import importlib.util
import os
import subprocess
import tempfile
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn.functional as F

from . import DynacommError, _args, find_executable

_core_module = None


def _core():
    """The compiled worker (build/python/dynacomm/_core*.so, or $DYNACOMM_CORE)."""
    global _core_module
    if _core_module is not None:
        return _core_module
    here = os.path.dirname(os.path.abspath(__file__))
    places = [os.environ.get("DYNACOMM_CORE", ""), here,
              os.path.join(here, "..", "..", "build", "python", "dynacomm")]
    suffixes = importlib.machinery.EXTENSION_SUFFIXES
    for place in places:
        for path in sorted(glob.glob(os.path.join(place, "_core*"))) if place else []:
            if os.path.isfile(path) and any(path.endswith(s) for s in suffixes):
                spec = importlib.util.spec_from_file_location("dynacomm._core", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                _core_module = module
                return module
    raise DynacommError("dynacomm._core not found: build this checkout (cmake --build build; "
                        "it needs pybind11-dev) or set $DYNACOMM_CORE to its folder")


def units_of(model: torch.nn.Module) -> List[Tuple[str, torch.nn.Module]]:
    """The module's units, (name, child) in forward order; DynacommError if they do not fit."""
    children = dict(model.named_children())
    order = list(getattr(model, "units", None) or children.keys())
    for name in order:
        if name not in children:
            raise DynacommError(f"units: '{name}' is not a child of the module "
                                f"(children: {', '.join(children)})")
    units = [(n, children[n]) for n in order if any(True for _ in children[n].parameters())]
    if not units:
        raise DynacommError("the module has no child with parameters: units are its top-level "
                            "children (an nn.Sequential, or a module with a `units` list)")
    owner: Dict[int, str] = {}
    for name, child in units:
        for p in child.parameters():
            if id(p) in owner:
                raise DynacommError(f"units {owner[id(p)]} and {name} share a parameter "
                                    "(tied weights): give each unit its own")
            owner[id(p)] = name
    for name, p in model.named_parameters():
        if id(p) not in owner:
            raise DynacommError(f"parameter {name} is in no unit: units are the top-level "
                                "children (list them in the module's `units` attribute)")
    return units


class Worker:
    """One edge worker of the job at `ps` (tcp://HOST:PORT), training `model` in place."""

    def __init__(self, model: torch.nn.Module, ps: str, rank: int, *, steps_per_epoch: int,
                 input_shape: Sequence[int], name: Optional[str] = None, threads: int = 1,
                 key: Optional[str] = None, ps_key: Optional[str] = None, quiet: bool = False,
                 **flags: Any) -> None:
        """model: the module; its parameters become views of the worker's buffers.
        steps_per_epoch: the batches this worker runs per epoch (len(your loader)).
        input_shape: (channels, height, width) of one input.
        name: the job's model, "python:" + the module's class name by default; the PS must
            serve the same (dynacomm ps --model python:NAME).
        key, ps_key: CURVE key pair file and the PS's public key (dynacomm keygen).
        flags: `dynacomm worker` flags by name: net="user", down="20mbit", up=, latency=,
            timeout="60s", ... (the job's own settings come from the PS; one given here
            must agree with it).
        """
        self.model = model
        self.rank = rank
        self.units = units_of(model)
        name = name or "python:" + type(model).__name__
        args = _args(dict(flags, model=name))
        core = _core()
        wf = core.WorkerFlags()
        wf.ps, wf.rank, wf.threads, wf.args = ps, rank, threads, args
        wf.key, wf.ps_key = key or "", ps_key or ""
        parts = [(n, child, list(child.parameters())) for n, child in self.units]
        try:
            self._worker = core.Worker(model, parts, name, list(input_shape), 0,
                                       int(steps_per_epoch), wf, quiet)
        except (RuntimeError, ValueError) as e:
            raise DynacommError(str(e)) from None

    def step(self, inputs: torch.Tensor, targets: torch.Tensor,
             loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = F.cross_entropy
             ) -> float:
        """One iteration: forward (each unit once its parameters are in), loss_fn(output,
        targets), backward (each unit's gradients pushed as they come); returns the loss."""
        try:
            return self._worker.step(inputs.contiguous(), targets, loss_fn)
        except RuntimeError as e:
            raise DynacommError(str(e)) from None

    def close(self) -> Dict[str, Any]:
        """Ends this worker's part (goodbye to the PS) and returns its summary: iterations,
        iteration_ms, losses, median_iteration_ms, predicted_ms, scheduler, ..."""
        try:
            return self._worker.close()
        except RuntimeError as e:
            raise DynacommError(str(e)) from None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc: Any) -> None:
        summary_error = None
        try:
            self.close()
        except DynacommError as e:
            summary_error = e
        if summary_error is not None and exc[0] is None:
            raise summary_error


def worker_batches(rank: int, workers: int, batch: int, *, seed: int = 1, epoch: int = 1,
                   data_dir: str = "", train_samples: int = 0
                   ) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    """The batches `dynacomm worker --rank RANK` trains on in `epoch` (1-based), from the
    --data-dir folder (default Fashion-MNIST): its share, in its order, normalised alike."""
    try:
        return _core().worker_batches(data_dir, rank, workers, batch, seed, epoch, train_samples)
    except RuntimeError as e:
        raise DynacommError(str(e)) from None


class PS:
    """A `dynacomm ps` process on this machine; close() (or `with`) stops it."""

    def __init__(self, process: subprocess.Popen, endpoint: str, log: str) -> None:
        self.process, self.endpoint, self.log = process, endpoint, log

    def wait(self, timeout: Optional[float] = None) -> int:
        """Waits for the PS to end (it does once every worker has said goodbye)."""
        return self.process.wait(timeout)

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> "PS":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def start_ps(*, listen: str = "tcp://127.0.0.1:0", start_timeout: float = 30,
             **flags: Any) -> PS:
    """Starts `dynacomm ps` with these flags by name (model="python:Net", workers=2,
    batch=64, epochs=1, scheduler="dynacomm-fd", lr=0.05, ...) and returns it once it
    listens (ps.endpoint: the bound endpoint, port 0 picks a free one)."""
    folder = tempfile.mkdtemp(prefix="dynacomm-ps-")
    endpoint_file, log = os.path.join(folder, "endpoint"), os.path.join(folder, "ps.log")
    args = [find_executable(), "ps", "--listen", listen, "--endpoint-file", endpoint_file]
    args += _args(flags)
    with open(log, "w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + start_timeout
    while time.monotonic() < deadline:
        if os.path.exists(endpoint_file) and os.path.getsize(endpoint_file) > 0:
            with open(endpoint_file) as f:
                return PS(process, f.read().strip(), log)
        if process.poll() is not None:
            with open(log) as f:
                raise DynacommError(f"dynacomm ps exited with {process.returncode}: "
                                    + f.read().strip()[-500:])
        time.sleep(0.05)
    process.kill()
    raise DynacommError(f"dynacomm ps did not listen within {start_timeout} s (log: {log})")
