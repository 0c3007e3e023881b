#!/usr/bin/env python3
"""Speed of prosgrow's arithmetic modes, as medians over interleaved runs.

Runs `prosgrow bench-model -r 1 --json` ROUNDS times per mode, the modes
interleaved (A B C A B C ...) so that a shared machine's changing load hits
them alike, and prints the median tokens/s of each test per mode, and each
mode's median relative to the first one; then the same for the best run
(the least disturbed by other work on a loaded machine).

  scripts/bench_arith.py [--prosgrow build/prosgrow] [-m MODEL.gguf] [--rounds 7]
      [-p 128] [-n 32] [-t 2] [--modes default,--no-repack,--precise]

A mode is a comma-separated item: `default` (no flag) or bench-model flags
separated by spaces.
"""
import argparse, json, statistics, subprocess


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--prosgrow', default='build/prosgrow')
    ap.add_argument('-m', '--model', default='')
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('-p', type=int, default=128)
    ap.add_argument('-n', type=int, default=32)
    ap.add_argument('-t', type=int, default=2)
    ap.add_argument('--modes', default='default,--no-repack,--precise')
    a = ap.parse_args()
    modes = a.modes.split(',')
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
