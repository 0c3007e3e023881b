#!/usr/bin/env python3
"""Where the slowest requests' TTFT went: waiting for a step, or in steps.

    scripts/step_spans.py SERVE_LOG RUN_DIR [N]

SERVE_LOG is the stderr of a `prosgrow serve` started with PROSGROW_LOG=debug
(one "step at T s took D s, ..." line per forward step); RUN_DIR holds the
`prosgrow bench --out` run.json of the requests it served (or
optimized/run.json). A request is matched to the sequence whose steps
prefilled exactly its uncached tokens after its cached ones (requests with the
same counts in sending order; a speculated sequence's verification steps
count as prefill, so with --spec some requests stay unmatched, and the
count says so). For the N slowest requests (default: the
slowest tenth): TTFT; span, from the start of its first step to the end of the
step that gave its first token; the steps in that span, and how many of them
it shared with other sequences; and TTFT - span, the time before its first
step (queueing behind the step in flight, and the HTTP and tokenizer work).
Then the sums over those requests.
"""
import collections
import re
import sys

from ttft_tail import load  # the run folder's run.json (RUN_DIR or RUN_DIR/optimized)

STEP = re.compile(r"step at ([0-9.]+) s took ([0-9.]+) s, \d+ tokens:(.*)$")


def read_steps(path):
    steps = []
    with open(path, errors="replace") as f:
        for line in f:
            m = STEP.search(line)
            if not m:
                continue
            seqs = []
            for item in m.group(3).split():
                sid, rest = item.split(":")
                k, pos = rest.split("@")
                seqs.append((int(sid), int(k), int(pos)))
            steps.append((float(m.group(1)), float(m.group(2)), seqs))
    return steps


def prefills(steps):
    """(uncached tokens, start position) -> [(first step, last prefill step)] in time order."""
    first, last, tokens, start = {}, {}, collections.Counter(), {}
    for i, (_, _, seqs) in enumerate(steps):
        for sid, k, pos in seqs:
            if sid not in first:
                first[sid], start[sid] = i, pos
            elif k <= 1:
                continue  # a decode step after its prefill
            last[sid] = i
            tokens[sid] += k
    out = collections.defaultdict(list)
    for sid in sorted(first, key=lambda s: first[s]):
        out[(tokens[sid], start[sid])].append((first[sid], last[sid]))
    return out


def completed_requests(path):
    """The completed requests past warm-up of a run folder, as ttft_tail.py counts them."""
    _, run = load(path)
    return [r for r in run["requests"] if r["ok"] and not r.get("warmup") and r["ttft_s"] is not None]


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.strip().splitlines()[2].strip())
    steps = read_steps(sys.argv[1])
    if not steps:
        sys.exit(f"step_spans: no step lines in {sys.argv[1]} (serve with PROSGROW_LOG=debug)")
    by_key = prefills(steps)
    requests = sorted(completed_requests(sys.argv[2]), key=lambda r: r["send_s"])
    rows = []
    for r in requests:
        key = (r["prompt_tokens"] - r["cached_tokens"], r["cached_tokens"])
        if not by_key.get(key):
            continue
        i0, i1 = by_key[key].pop(0)
        span = steps[i1][0] + steps[i1][1] - steps[i0][0]
        shared = sum(1 for i in range(i0, i1 + 1) if len(steps[i][2]) > 1)
        rows.append((r["ttft_s"], key[0], key[1], span, i1 - i0 + 1, shared))
    rows.sort(reverse=True)
    n = int(sys.argv[3]) if len(sys.argv) == 4 else max(1, len(requests) // 10)
    print(f"{len(rows)} of {len(requests)} requests matched to their steps; the {n} slowest:")
    print("  TTFT s   new  cached   span s  steps shared  before s")
    for ttft, new, cached, span, k, shared in rows[:n]:
        print(f"  {ttft:6.3f} {new:5d} {cached:7d}   {span:6.3f} {k:6d} {shared:6d}   {ttft - span:7.3f}")
    top = rows[:n]
    total = sum(r[0] for r in top)
    in_span = sum(r[3] for r in top)
    print(f"sum: TTFT {total:.2f} s = span {in_span:.2f} s ({100 * in_span / total:.0f}%) "
          f"+ before the first step {total - in_span:.2f} s")


if __name__ == "__main__":
    main()
