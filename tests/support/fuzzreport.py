"""The figures of a fuzzing log (RULEBOOK_FUZZ_LOG): inputs per stream and command, exit
statuses, valid share, processor time, the slowest inputs and the failures.

    python tests/support/fuzzreport.py build/fuzz/log.jsonl"""
from __future__ import annotations

import collections
import json
import sys


def report(path: str) -> str:
    runs = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    by_stream = collections.Counter(r["stream"] for r in runs)
    cpu_stream = collections.defaultdict(float)
    by_cmd = collections.Counter()
    status = collections.defaultdict(collections.Counter)
    valid = collections.Counter()
    unknown = collections.Counter()
    for r in runs:
        cpu_stream[r["stream"]] += r["cpu"]
        by_cmd[r["argv"][0]] += 1
        status[r["argv"][0]][str(r["status"])] += 1
        if r["valid"]:
            valid[r["argv"][0]] += 1
        if r.get("unknown"):
            unknown[r["stream"]] += 1
    total_cpu = sum(cpu_stream.values())
    inputs = len({r["digest"] for r in runs})
    out = [f"{len(runs)} command runs of {inputs} distinct inputs, "
           f"{total_cpu:.0f} s of processor time in the commands",
           "", "stream                 runs   cpu s   runs/cpu-s"]
    for s, n in sorted(by_stream.items()):
        out.append(f"{s:22s} {n:6d} {cpu_stream[s]:7.0f} {n / max(cpu_stream[s], 1e-9):9.1f}")
    out += ["", "command      runs  valid  exit statuses"]
    for c, n in sorted(by_cmd.items()):
        st = ", ".join(f"{k}: {v}" for k, v in sorted(status[c].items()))
        out.append(f"{c:12s} {n:6d} {valid[c]:6d}  {st}")
    out += ["", "answers holding \"unknown\" (out of time): " +
            (", ".join(f"{s} {n}" for s, n in sorted(unknown.items())) or "none")]
    slow = sorted(runs, key=lambda r: -r["cpu"])[:5]
    out += ["", "slowest (processor s, clock s, command):"]
    out += [f"  {r['cpu']:6.2f} {r['wall']:6.2f}  {' '.join(r['argv'])}  [{r['digest']}]"
            for r in slow]
    fails = [r for r in runs if r.get("fail")]
    out += ["", f"failures: {len(fails)}"]
    out += [f"  {r['fail']}: {' '.join(r['argv'])}  [{r['digest']}]" for r in fails[:30]]
    return "\n".join(out)


if __name__ == "__main__":
    print(report(sys.argv[1]))
