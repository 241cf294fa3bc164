#!/usr/bin/python3
"""Every subcommand with each invalid value of each numeric and enumerated flag, and every
planner through `plan` on every shipped profile.

Valid input exits 0. Invalid input exits non-zero below 128 (never a signal), before
starting anything, with one line that names the flag. Usage: cli_sweep.py DYNACOMM PROFILES_DIR
"""
import atexit
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile

DYNACOMM, PROFILES = sys.argv[1], sys.argv[2]
TRACE_DIR = tempfile.mkdtemp(prefix="dynacomm-sweep-")
atexit.register(shutil.rmtree, TRACE_DIR, ignore_errors=True)  # also when a check fails
failures = []


def run(args, timeout=60):
    try:
        p = subprocess.run([DYNACOMM] + args, capture_output=True, text=True, timeout=timeout,
                           cwd=TRACE_DIR)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s (did it start a job?)" % timeout
    return p.returncode, p.stdout, p.stderr


def expect_rejected(args, names):
    """A bad value: exit 1..127, and a line naming the flag (any of `names`)."""
    rc, _, err = run(args, timeout=30)
    what = " ".join(args)
    if rc is None or rc <= 0 or rc >= 128:
        failures.append("%s: exit %s (want 1..127)\n  %s" % (what, rc, err.strip()[-300:]))
        return
    lines = [l for l in err.splitlines() if l.strip()]
    if not any(n in l for l in lines for n in names):
        failures.append("%s: no line names %s:\n  %s" % (what, names[0], err.strip()[-300:]))
    if len(lines) > 2:
        failures.append("%s: %d lines of error, want one:\n  %s" % (what, len(lines), err))


def expect_ok(args):
    rc, out, err = run(args)
    if rc != 0:
        failures.append("%s: exit %s\n  %s" % (" ".join(args), rc, err.strip()[-300:]))
    return out


# Invalid values of each flag, per subcommand (every one is checked before anything starts).
INT_POSITIVE = ["0", "-3", "abc", "1.5", "99999999999999999999"]
INT_NON_NEGATIVE = ["-1", "abc", "99999999999999999999"]
JOB = {
    "--model": ["foo", ""],
    "--workers": INT_POSITIVE + ["100000"],
    "--lr": ["0", "-1", "x"],
    "--lr-schedule": ["step"],
    "--momentum": ["-0.1", "1", "x"],
    "--weight-decay": ["-1", "x"],
    "--timeout": ["0s", "-1s", "10", "fast"],
}
WORKER = {
    "--batch": INT_POSITIVE,
    "--epochs": INT_POSITIVE,
    "--iterations": INT_NON_NEGATIVE,
    "--seed": ["-1", "x"],
    "--partition": ["random"],
    "--shards": INT_POSITIVE,
    "--train-samples": INT_NON_NEGATIVE,
    "--test-samples": INT_NON_NEGATIVE,
    "--scheduler": ["magic"],
    "--down": ["0mbit", "100MB", "fast", "-5mbit"],
    "--up": ["0mbit", "100MB"],
    "--latency": ["-1ms", "10", "soon"],
    "--extra-overhead": ["-1ms", "x"],
    "--warmup": ["0", "-1", "x"],
    "--net": ["wifi"],
    "--device-slowdown": ["0.5", "0", "x"],
    "--replan": ["sometimes"],
    "--replan-threshold": ["-0.1", "x"],
    "--replan-interval": ["0", "-1"],
    "--rotation-block": ["0", "-1"],
    "--data-dir": ["/nonexistent-fmnist"],
    "--link-trace": ["/nonexistent.csv"],
    "--device-slowdown-trace": ["/nonexistent.csv"],
}
LAUNCH = {"--threads": ["-1", "x", "100000"]}
BENCH = {"--block": ["0", "-1"], "--settle": ["-1", "3"], "--schedulers": ["magic", ","],
         "--peers": ["horovod"], "--policies": ["sometimes"], "--sweep-bandwidth": ["100MB"]}


def trace_for_worker_99():
    path = os.path.join(TRACE_DIR, "worker99.csv")
    with open(path, "w") as f:
        f.write("time_s,down,up,latency,worker\n0,10mbit,10mbit,10ms,99\n")
    return path


SWEEP = {
    "train": [[], {**JOB, **WORKER, **LAUNCH,
                   "--link": ["5:10mbit,10mbit,1ms", "1:10mbit,fast,1ms", "x"]}],
    "bench": [["--model", "cnn"], {**JOB, **WORKER, **LAUNCH, **BENCH}],
    # --workers given: the rank is checked against it before the PS is asked.
    "worker": [["--ps", "tcp://127.0.0.1:9", "--rank", "0", "--workers", "2"],
               {**JOB, **WORKER, "--threads": ["0", "-1"], "--rank": ["-1", "2", "x"],
                "--ps": ["tcp://127.0.0.1:99999", "nowhere"]}],
    "ps": [["--timeout", "1s"], {**JOB, "--listen": ["tcp://127.0.0.1:99999", "udp://x:1"]}],
    "profile": [["--model", "lenet5"], {"--model": ["foo"], "--batch": INT_POSITIVE,
                                        "--threads": ["0", "-1"], "--iterations": ["0", "-1"],
                                        "--warmup": ["-1"], "--classes": ["-1"],
                                        "--input": ["28x28", "0x28x28", "x"]}],
}
PLAN_BASE = ["--profile", os.path.join(PROFILES, "cnn-1x28x28-b32.json"), "--down", "10mbit"]
SWEEP["plan"] = [PLAN_BASE, {
    "--profile": ["/nonexistent.json", "/", "/dev/null"],
    "--down": ["0mbit", "100MB"], "--up": ["x"], "--latency": ["-1ms"], "--overhead": ["x"],
    "--overhead-down": ["-1ms"], "--overhead-up": ["x"], "--scheduler": ["magic"],
    "--aggregation": ["x"], "--bucket-mb": ["0", "-1"], "--first-bucket-mb": ["0"],
    "--fd-evaluations": ["0", "-1"], "--sweep-bandwidth": ["x"], "--sync": ["ssp:2", "x"]}]

cases = []
for command, (base, flags) in SWEEP.items():
    for flag, values in flags.items():
        for v in values:
            # The flag's own value replaces the base's (the base gives what is required).
            args = list(base)
            if flag in args:
                i = args.index(flag)
                del args[i:i + 2]
            cases.append(([command] + args + [flag, v], [flag, flag.lstrip("-")]))
with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
    list(pool.map(lambda c: expect_rejected(*c), cases))

# Checks that need the job as a whole: a trace row for a worker the job lacks.
expect_rejected(["train", "--link-trace", trace_for_worker_99()], ["worker 99", "--link-trace"])
expect_rejected(["bench", "--link-trace", trace_for_worker_99()], ["worker 99", "--link-trace"])
# A profile with a number out of range names the file.
big = os.path.join(TRACE_DIR, "big.json")
with open(os.path.join(PROFILES, "cnn-1x28x28-b32.json")) as f:
    text = f.read()
with open(big, "w") as f:
    f.write(text.replace('"batch": 32', '"batch": 1e400'))
expect_rejected(["plan", "--profile", big, "--down", "10mbit"], [big])
# No subcommand, an unknown one, an unknown flag.
for args in ([], ["fly"], ["plan", "--frobnicate"]):
    rc, _, _ = run(args)
    if rc is None or rc <= 0 or rc >= 128:
        failures.append("%s: exit %s (want 1..127)" % (" ".join(args) or "(no arguments)", rc))

# Every planner through plan, on every shipped profile: table, --json, --full-duplex.
profiles = sorted(p for p in os.listdir(PROFILES) if p.endswith(".json"))
planners = [json.loads(l)["scheduler"] for l in
            expect_ok(["plan", "--profile", os.path.join(PROFILES, profiles[0]), "--down",
                       "10mbit", "--json"]).splitlines()]
assert len(planners) >= 9, planners


def plan_case(prof, s, extra):
    # A small search budget: this checks that every planner runs, not how well it searches.
    out = expect_ok(["plan", "--profile", os.path.join(PROFILES, prof), "--down", "20mbit", "--up",
                     "10mbit", "--fd-evaluations", "2000", "--scheduler", s] + extra)
    if not extra and "recommended:" not in out:
        failures.append("plan %s --scheduler %s: no recommendation" % (prof, s))


with concurrent.futures.ThreadPoolExecutor(max_workers=3) as pool:
    list(pool.map(lambda c: plan_case(*c),
                  [(prof, s, extra) for prof in profiles for s in planners + ["all"]
                   for extra in ([], ["--json"], ["--full-duplex"])]))

# Planned for a PS that answers pulls at once: the recommendation runs it so.
out = expect_ok(["plan"] + PLAN_BASE + ["--sync", "asp", "--full-duplex", "--fd-evaluations", "2000"])
if "--sync asp" not in out:
    failures.append("plan --sync asp: the recommended command has no --sync asp")

for f in failures:
    print("FAIL:", f)
checked = sum(len(v) for _, fl in SWEEP.values() for v in fl.values())
print("%d invalid values checked, %d profiles x %d planners planned" %
      (checked, len(profiles), len(planners) + 1))
sys.exit(1 if failures else 0)
