#!/usr/bin/python3
"""The Python door's overhead: the same model and link through dynacomm.Worker (the user's
PyTorch module, forward in Python) and through the binary's C++ worker (the same module
as a TorchScript file), jobs taking turns, iteration times side by side.

    DYNACOMM=build/src/cli/dynacomm PYTHONPATH=python /usr/bin/python3 \
        bench/python_door.py --arch mobilenet_v2 --down 100mbit --rounds 2

Each job: a PS and 2 workers on this machine, the emulated link (--net user) each way,
Fashion-MNIST batches of the binary's order, --iterations per job; the medians leave out
the warm-up. Prints one line per job and the ratio of the medians (Python / C++).
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import dynacomm  # noqa: E402
import torchscript_model  # noqa: E402


def make_model(arch):
    torch.manual_seed(1)
    if arch == "mobilenet_v2":
        return torchscript_model.sequential_mobilenet_v2(1, 10, True)
    return torchscript_model.sequential_resnet(arch, 1, 10, True)


def child(a, rank, ps, state):
    """One Python worker process; prints its iteration times (after warm-up) as CSV."""
    model = make_model(a.arch)
    model.load_state_dict(torch.load(state))
    batches = dynacomm.worker_batches(rank, 2, a.batch, seed=1)
    worker = dynacomm.Worker(model, ps, rank, steps_per_epoch=len(batches), input_shape=(1, 28, 28),
                             quiet=True, net="user", down=a.down, up=a.down, latency=a.latency)
    for x, y in batches[:a.iterations]:
        worker.step(x, y)
    summary = worker.close()
    if rank == 0:
        print("ms," + ",".join(f"{m:.3f}" for m in summary["iteration_ms"][a.warmup + 1:]))


def job(a, kind, folder, pt, state):
    model = pt if kind == "cpp" else "python:Sequential"
    with dynacomm.start_ps(model=model, workers=2, batch=a.batch, iterations=a.iterations,
                           scheduler=a.scheduler, warmup=a.warmup) as ps:
        if kind == "cpp":
            out = os.path.join(folder, "cpp")
            cmds = [[dynacomm.find_executable(), "worker", "--ps", ps.endpoint, "--rank", str(r),
                     "--out", out, "--net", "user", "--down", a.down, "--up", a.down,
                     "--latency", a.latency] for r in range(2)]
        else:
            cmds = [[sys.executable, __file__, "--child", str(r), ps.endpoint, state] +
                    sys.argv[1:] for r in range(2)]
        procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                 for c in cmds]
        outs = [p.communicate(timeout=1800)[0] for p in procs]
        for p, o in zip(procs, outs):
            if p.returncode != 0:
                sys.exit(f"{kind} worker failed:\n{o[-2000:]}")
    if kind == "cpp":
        with open(os.path.join(out, "metrics.csv")) as f:
            rows = [r for r in csv.DictReader(f)]
        return [float(r["iteration_ms"]) for r in rows][a.warmup + 1:]
    line = [ln for ln in outs[0].splitlines() if ln.startswith("ms,")][0]
    return [float(x) for x in line[3:].split(",")]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--arch", default="mobilenet_v2")
    p.add_argument("--down", default="100mbit")
    p.add_argument("--latency", default="10ms")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--scheduler", default="dynacomm-fd")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a, _ = p.parse_known_args()
    if a.child:
        return child(a, int(a.child[0]), a.child[1], a.child[2])
    folder = tempfile.mkdtemp(prefix="dynacomm-python-door-")
    model = make_model(a.arch)
    state, pt = os.path.join(folder, "init.pt"), os.path.join(folder, "model.pt")
    torch.save(model.state_dict(), state)
    torch.jit.script(model).save(pt)
    medians = {"cpp": [], "python": []}
    for r in range(a.rounds):
        for kind in ("cpp", "python"):
            ms = job(a, kind, folder, pt, state)
            med = statistics.median(ms)
            medians[kind].append(med)
            print(f"round {r + 1} {kind:6s}: median {med:.1f} ms over {len(ms)} iterations "
                  f"(min {min(ms):.1f}, max {max(ms):.1f})", flush=True)
    cpp, py = statistics.median(medians["cpp"]), statistics.median(medians["python"])
    print(f"{a.arch} {a.down}: C++ worker {cpp:.1f} ms, Python door {py:.1f} ms, "
          f"ratio {py / cpp:.3f}")


if __name__ == "__main__":
    main()
