#!/usr/bin/env python3
"""Replays a full-duplex priority job (p3, dynacomm-fd or bytescheduler turns of a
`dynacomm bench` / `dynacomm train` run) with W workers, from what its trace measured.

What the one-worker model (src/plan/model/duplex.h) leaves out with several workers: the PS
releases a unit's parameters only when the *last* worker's gradient is in, and which
worker is last changes from unit to unit and iteration to iteration, so the releases,
and the acks queued behind them, come in bursts. This replay runs the same rules as the
model (pushes handed to a FIFO uplink lowest-ready-first within the credit, acks behind
the replies on a FIFO downlink, replies as released, forward gated by each unit's
pieces) for W workers at once, with the unit times the trace measured, three ways:

  each    every worker its own measured unit times, iteration by iteration;
  one     every worker worker 0's times (workers alike: what the model assumes);
  spread  worker w takes worker 0's times of another measured iteration (w later in the
          list): the other workers are like worker 0 in distribution, known locally.

and prints each replay's median period next to the measured median (worker 0's forward
starts). Links: the bandwidths fitted in the run (summary.json), its latency.

  bench/fd_replay.py runs/bench-mobilenetv2/100mbit --plan p3

Reads trace.json and summary.json; the traced iterations of the plan (a rotation's turn
is traced whole) are the ones replayed, cyclically, six times; the first cycle is left
out of the median.
"""
import argparse
import collections
import heapq
import json
import os
import statistics
import sys


def traced_iterations(events, plan_id):
    return sorted({e["args"]["iteration"] for e in events
                   if e["pid"] == 0 and e["cat"] == "forward"
                   and e["args"].get("plan_id") == plan_id})


def plan_of(summary, run_dir, plan_name):
    plans = [p for p in summary["plans"] if p["scheduler"] == plan_name]
    if not plans:
        sys.exit(f"fd_replay: no plan '{plan_name}' in {run_dir}/summary.json")
    return plans[0]


def load(run_dir, plan_name):
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(run_dir, "trace.json")) as f:
        events = [e for e in json.load(f)["traceEvents"] if e.get("ph") == "X"]
    plan = plan_of(summary, run_dir, plan_name)
    if not plan["plan"].get("credit_bytes"):
        sys.exit(f"fd_replay: '{plan_name}' is not a priority plan (no credit_bytes)")
    iterations = traced_iterations(events, plan["id"])
    if len(iterations) < 2:
        sys.exit(f"fd_replay: fewer than 2 traced iterations of '{plan_name}'")
    return summary, events, plan["plan"]["credit_bytes"], iterations


def replay(summary, events, credit, iterations, mode, samples=None):
    units = summary["profile"]["units"]
    n_units = len(units)
    workers = summary["workers"]
    link = summary["measured_link"]
    down_bps, up_bps = link["down"]["bandwidth_bps"], link["up"]["bandwidth_bps"]
    lat = float(summary["link"]["latency"].rstrip("ms"))
    # The atoms (pieces) and their units, from worker 0's pulls of the first iteration.
    atom_bytes = {}
    for e in events:
        if e["pid"] == 0 and e["cat"] == "pull" and e["args"]["iteration"] == iterations[0]:
            atom_bytes[int(e["name"].split()[1])] = e["args"]["bytes"]
    n_atoms = len(atom_bytes)
    atoms_of = collections.defaultdict(list)
    u, filled = 0, 0
    for a in range(n_atoms):
        atoms_of[u].append(a)
        filled += atom_bytes[a]
        if filled >= units[u]["bytes"]:
            u, filled = u + 1, 0
    index = {x["name"]: i for i, x in enumerate(units)}
    times = {}
    for e in events:
        if e["pid"] < workers and e["cat"] in ("forward", "backward"):
            f, b = times.setdefault((e["pid"], e["args"]["iteration"]),
                                    ([0.0] * n_units, [0.0] * n_units))
            (f if e["cat"] == "forward" else b)[index[e["name"][4:]]] += e["dur"] / 1e3

    def unit_times(w, k):  # worker w in the k-th replayed iteration
        it = iterations[k % len(iterations)]
        if mode == "each":
            return times[(w, it)]
        if mode == "one":
            return times[(0, it)]
        pool = samples or iterations
        return times[(0, pool[(k + w) % len(pool)])]

    down_free = [0.0] * workers
    up_free = [0.0] * workers
    flight = [[] for _ in range(workers)]  # (ack back, bytes)
    arrive = [[0.0] * n_atoms for _ in range(workers)]
    backward_end = [0.0] * workers
    starts = []
    rounds = 6 * len(iterations)
    for k in range(rounds):
        ready = [[0.0] * n_atoms for _ in range(workers)]
        request = [0.0] * workers
        for w in range(workers):
            fwd, bwd = unit_times(w, k)
            now = backward_end[w]
            for u in range(n_units):
                now = max([now] + [arrive[w][a] for a in atoms_of[u]])
                if u == 0 and w == 0:
                    starts.append(now)
                now += fwd[u]
            request[w] = now + lat
            for u in range(n_units - 1, -1, -1):
                now += bwd[u]
                for a in atoms_of[u]:
                    ready[w][a] = now
            backward_end[w] = now
        # Pushes of k, their acks, and the replies of k+1, all workers, in time order.
        heap = []
        sent = [[False] * n_atoms for _ in range(workers)]
        left = [n_atoms] * workers
        slot = {}
        count, last = [0] * n_atoms, [0.0] * n_atoms
        for w in range(workers):
            for a in range(n_atoms):
                heapq.heappush(heap, (ready[w][a], 2, w, a))
            for back, _ in flight[w]:
                heapq.heappush(heap, (back, 2, w, 0))
        while heap:
            t, kind, w, a = heapq.heappop(heap)
            if kind == 0:  # w's piece a reaches the PS; the ack goes behind w's replies
                back = max(t, down_free[w]) + lat
                flight[w][slot[(w, a)]] = (back, atom_bytes[a])
                heapq.heappush(heap, (back, 2, w, 0))
                count[a] += 1
                last[a] = max(last[a], t)
                if count[a] == workers:  # released: a reply to every worker
                    for v in range(workers):
                        heapq.heappush(heap, (max(last[a], request[v]), 1, v, a))
            elif kind == 1:  # a reply handed to v's downlink
                down_free[w] = max(t, down_free[w]) + atom_bytes[a] * 8e3 / down_bps
                arrive[w][a] = down_free[w] + lat
            else:  # w hands over what the credit allows, lowest ready first
                while left[w] > 0:
                    unacked = sum(b for back, b in flight[w] if back > t)
                    pick = next((x for x in range(n_atoms)
                                 if not sent[w][x] and ready[w][x] <= t), None)
                    if pick is None or (unacked > 0 and unacked + atom_bytes[pick] > credit):
                        break
                    up_free[w] = max(t, up_free[w]) + atom_bytes[pick] * 8e3 / up_bps
                    sent[w][pick] = True
                    left[w] -= 1
                    slot[(w, pick)] = len(flight[w])
                    flight[w].append((float("inf"), atom_bytes[pick]))
                    heapq.heappush(heap, (up_free[w] + lat, 0, w, pick))
        for w in range(workers):
            flight[w] = [f for f in flight[w] if f[0] > up_free[w]]
    periods = [b - a for a, b in zip(starts, starts[1:])][len(iterations):]
    return statistics.median(periods), min(periods), max(periods)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run_dir", help="a run folder with trace.json and summary.json")
    ap.add_argument("--plan", default="dynacomm-fd", help="the scheduler whose turns to replay")
    ap.add_argument("--samples-from", help="spread: worker 0's iterations of this plan's turn")
    args = ap.parse_args()
    summary, events, credit, iterations = load(args.run_dir, args.plan)
    samples = None
    if args.samples_from:
        samples = traced_iterations(events, plan_of(summary, args.run_dir, args.samples_from)["id"])
        if not samples:
            sys.exit(f"fd_replay: no traced iterations of '{args.samples_from}'")
    starts = {}
    for e in events:
        if e["pid"] == 0 and e["cat"] == "forward":
            it = e["args"]["iteration"]
            starts[it] = min(starts.get(it, 1e18), e["ts"] / 1e3)
    measured = [starts[i + 1] - starts[i] for i in iterations if i + 1 in starts]
    print(f"{args.plan}: {summary['workers']} workers, credit {credit} bytes, "
          f"iterations {','.join(map(str, iterations))}")
    print(f"  measured  median {statistics.median(measured):.0f} ms "
          f"({min(measured):.0f}-{max(measured):.0f})")
    for mode in ("each", "one", "spread"):
        med, lo, hi = replay(summary, events, credit, iterations, mode, samples)
        print(f"  {mode:8s}  median {med:.0f} ms ({lo:.0f}-{hi:.0f})")


if __name__ == "__main__":
    main()
