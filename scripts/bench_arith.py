#!/usr/bin/env python3
"""Speed of prosgrow's arithmetic modes, as medians over interleaved runs.

Runs `prosgrow bench-model -r 1 --json` ROUNDS times per mode, the modes
interleaved (A B C A B C ...) so that a shared machine's changing load hits
them alike, and prints the median tokens/s of each test per mode, and each
mode's median relative to the first one; then the same for the best run
(the least disturbed by other work on a loaded machine).

  scripts/bench_arith.py [--prosgrow build/prosgrow] [-m MODEL.gguf] [--rounds 7]
      [-p 128] [-n 32] [-t 2] [--modes default,--no-repack,--precise] [--cpu]

A mode is a comma-separated item: `default` (no flag) or bench-model flags
separated by spaces.

--cpu: instead, the median CPU seconds (user + sys) of whole single-thread
bench-model runs (-t 1 -r 1) of three workloads: load only (-p 1 -n 1),
prefill (-p P -n 1) and decode (-p 1 -n N), and from them the CPU time per
prefill token and per decode step (workload minus load only; the decode
workload also runs bd4/bd16, so "per decode step" is per step of the three
batch sizes together). CPU time is far less disturbed than wall time by other
work on a loaded machine.
"""
import argparse, json, resource, statistics, subprocess


def cpu_seconds(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cpu_mode(a, modes):
    work = {'load': (1, 1), 'prefill': (a.p, 1), 'decode': (1, a.n)}
    samples = {m: {w: [] for w in work} for m in modes}
    for _ in range(a.rounds):
        for mode in modes:
            for w, (p, n) in work.items():
                cmd = [a.prosgrow, 'bench-model', '-t', '1', '-r', '1', '-p', str(p), '-n', str(n)]
                if a.model:
                    cmd += ['-m', a.model]
                if mode != 'default':
                    cmd += mode.split()
                samples[mode][w].append(cpu_seconds(cmd))
    med = {m: {w: statistics.median(v) for w, v in samples[m].items()} for m in modes}
    print(f'median CPU time of {a.rounds} runs, one thread\n')
    print('| | ' + ' | '.join(modes) + ' |')
    print('|---|' + '---|' * len(modes))
    rows = [('ms per prefill token (pp%d)' % a.p, lambda d: 1e3 * (d['prefill'] - d['load']) / (a.p - 1)),
            ('ms per decode step (tg + bd4 + bd16, %d steps)' % a.n,
             lambda d: 1e3 * (d['decode'] - d['load']) / (a.n - 1))]
    for label, f in rows:
        v = [f(med[m]) for m in modes]
        cells = [f'{x:.2f}' + ('' if i == 0 else f' ({x / v[0]:.2f}x)') for i, x in enumerate(v)]
        print(f'| {label} | ' + ' | '.join(cells) + ' |')


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--prosgrow', default='build/prosgrow')
    ap.add_argument('-m', '--model', default='')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('-p', type=int, default=128)
    ap.add_argument('-n', type=int, default=32)
    ap.add_argument('-t', type=int, default=2)
    ap.add_argument('--modes', default='default,--no-repack,--precise')
    ap.add_argument('--cpu', action='store_true')
    a = ap.parse_args()
    modes = a.modes.split(',')
    if a.cpu:
        return cpu_mode(a, modes)
    samples = {m: {} for m in modes}
    for _ in range(a.rounds):
        for mode in modes:
            cmd = [a.prosgrow, 'bench-model', '-t', str(a.t), '-r', '1', '-p', str(a.p), '-n', str(a.n), '--json']
            if a.model:
                cmd += ['-m', a.model]
            if mode != 'default':
                cmd += mode.split()
            out = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            for r in out['results']:
                samples[mode].setdefault(r['test'], []).append(r['tokens_per_s'])
    tests = list(samples[modes[0]].keys())
    for label, f in (('median', statistics.median), ('best', max)):
        print(f'\n{label} of {a.rounds} runs, tokens/s\n')
        print('| test | ' + ' | '.join(modes) + ' |')
        print('|---|' + '---|' * len(modes))
        for t in tests:
            v = [f(samples[m][t]) for m in modes]
            cells = [f'{x:.1f}' + ('' if i == 0 else f' ({x / v[0]:.2f}x)') for i, x in enumerate(v)]
            print(f'| {t} | ' + ' | '.join(cells) + ' |')


if __name__ == '__main__':
    main()
