#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpus (fuzz/corpus/): well-formed jobs and the hostile
cases the tests know, as ps_session records and wire_decode inputs. Run it again after a
change of the wire format; libFuzzer mutates from here."""
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
UNITS = [12, 4, 40]  # bytes of a 3-unit model
JOB = json.dumps({"model": "fake", "workers": 2, "unit_bytes": UNITS, "total_iterations": 3}).encode()
(HELLO, INIT, PULL, PULL_REPLY, PUSH, ERROR, SHUTDOWN, ACK, PLANS, REPLAN, JOB_CONFIG,
 HEARTBEAT, CHECKPOINT) = range(1, 14)
PROTOCOL = 11  # net/wire.h's kProtocolVersion


def rec(peer, mtype, sender, it=0, first=0, last=0, flags=0, payload=b""):
    body = struct.pack("<HiqIIHI", mtype, sender, it, first, last, flags, 0) + payload
    return bytes([peer << 1]) + struct.pack("<H", len(body)) + body


def raw(peer, data):
    return bytes([(peer << 1) | 1]) + struct.pack("<H", len(data)) + data


def floats(first, last, value):
    n = sum(UNITS[first:last + 1]) // 4
    return struct.pack("<%df" % n, *([value] * n))


def frame(mtype, sender, it, first, last, payload=b"", flags=0):
    """A wire frame as net/wire.h lays it out, checksums and all."""
    h = struct.pack("<IHHiHHqIIQIQQQQq", 0x434E5944, PROTOCOL, mtype, sender, 0, flags, it, first, last,
                    len(payload), zlib.crc32(payload), 0, 0, 0, 0, 0)
    return h + struct.pack("<I", zlib.crc32(h)) + payload


def job(iterations, extra=()):
    r = [rec(0, HELLO, 0, payload=JOB), rec(1, HELLO, 1, payload=JOB),
         rec(0, INIT, 0, 0, 0, 2, payload=floats(0, 2, 0.5))]
    for t in range(iterations):
        for p in (0, 1):
            r.append(rec(p, PULL, p, t, 0, 2, flags=1))
            r.append(rec(p, PUSH, p, t, 0, 1, payload=floats(0, 1, 0.1)))
            r.append(rec(p, PUSH, p, t, 2, 2, payload=floats(2, 2, 0.2)))
            r.append(rec(p, HEARTBEAT, p))
    r.extend(extra)
    r += [rec(0, SHUTDOWN, 0), rec(1, SHUTDOWN, 1)]
    return b"".join(r)


def offer(rank):
    return json.dumps({"plans": [{"index": 0, "predicted_ms": 10.0 + rank,
                                  "plan": {"scheduler": "x"}}]}).encode()


def main():
    sessions = {
        "job": job(3),
        "plans": job(1, [rec(0, PLANS, 0, payload=offer(0)), rec(1, PLANS, 1, payload=offer(1)),
                         rec(0, REPLAN, 0, 1, payload=json.dumps({"current_ms": 5.0}).encode())]),
        "rejoin": job(1, [rec(2, HELLO, 1, payload=JOB), rec(2, PULL, 1, 1, 0, 2)]),
        "hostile": b"".join([rec(0, HELLO, 0, payload=JOB), rec(3, PUSH, 1, 0, 0, 0, payload=floats(0, 0, 1)),
                             rec(0, INIT, 0, 0, 0, 2, payload=floats(0, 2, 0.5)),
                             rec(0, PULL, 0, 7, 0, 2), rec(0, PUSH, 0, 0, 0, 0, payload=floats(0, 0, float("nan"))),
                             rec(0, HELLO, 0, payload=b'{"model":"fake","workers":2,"unit_bytes":[-4,8]}'),
                             rec(0, PLANS, 0, payload=b"[" * 100), rec(1, ERROR, 1, payload=b"gone"),
                             raw(2, b"junk" * 10), rec(3, JOB_CONFIG, 0), rec(1, CHECKPOINT, 1, 4)]),
    }
    wire = {
        "push": bytes([0]) + frame(PUSH, 1, 2, 0, 1, floats(0, 1, 0.25)),
        "pull": bytes([0]) + frame(PULL, 0, 1, 0, 2, flags=1),
        "ack": bytes([0]) + frame(ACK, -1, 1, 0, 0, b"\0" * 24),
        "checkpoint": bytes([0]) + frame(CHECKPOINT, -1, 30, 0, 0),
        "hello": bytes([1]) + JOB,
        "config": bytes([2]) + json.dumps({"settings": [["--lr", "0.05"]]}).encode(),
        "offer": bytes([3]) + offer(0),
        "replan": bytes([5]) + json.dumps({"current_ms": 5.0}).encode(),
    }
    # codecs: method (fuzz/codecs.cc's list), 16 values, a payload of that method's size.
    n = 16
    sizes = [4 * n, 2 * n, 4 + n, 4 + (3 * n + 7) // 8, 4 + (2 * n + 7) // 8,
             4 + (n + 7) // 8, 4 + (n + 7) // 8, 8 + (n + 7) // 8, 8 * 4, 8 * 16, 4 * 4, 4]
    codecs = {"method-%d" % i: bytes([i, n, 0]) + b"\0" * size for i, size in enumerate(sizes)}
    for target, files in (("ps_session", sessions), ("wire_decode", wire), ("codecs", codecs)):
        d = os.path.join(HERE, "corpus", target)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
