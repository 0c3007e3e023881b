#!/usr/bin/env python3
"""How a CTest run went, from its JUnit file (`ctest --output-junit FILE`):
how many tests ran, passed and failed, how many were skipped, and why,
grouped by reason. scripts/test.sh ends with it.

usage: scripts/test_summary.py TITLE JUNIT_XML [TITLE JUNIT_XML ...]

A skip's reason is what the test printed: for a GoogleTest case, the message
after "Skipped" (GTEST_SKIP() << "..."); for a check that exits 77, its
"SKIP: ..." line (or its last line). Exit status: 1 when any test failed or
did not run for another reason than a skip, else 0.
"""
import collections
import re
import sys
import xml.etree.ElementTree as ET


def skip_reason(output):
    lines = [l.rstrip() for l in output.splitlines()]
    for i, line in enumerate(lines):
        if re.search(r":\d+: Skipped$", line) or line == "Skipped":
            why = []
            for nxt in lines[i + 1:]:
                if not nxt.strip() or nxt.startswith("[  SKIPPED ]"):
                    break
                why.append(nxt.strip())
            return " ".join(why) or "(no reason given)"
    for line in lines:
        if line.startswith("SKIP"):
            return re.sub(r"^SKIP(PED)?:?\s*", "", line) or "(no reason given)"
    rest = [l for l in lines if l.strip()]
    return rest[-1].strip() if rest else "(no reason given)"


def summarize(title, path):
    root = ET.parse(path).getroot()
    cases = root.iter("testcase")
    passed, failed, skipped = [], [], collections.defaultdict(list)
    for c in cases:
        name = c.get("name", "?")
        out = "".join(e.text or "" for e in c.iter("system-out"))
        if c.find("failure") is not None or c.find("error") is not None or c.get("status") == "fail":
            failed.append(name)
        elif c.find("skipped") is not None or c.get("status") in ("notrun", "disabled"):
            why = c.find("skipped").get("message", "") if c.find("skipped") is not None else ""
            if c.get("status") == "disabled":
                skipped["disabled in CTest"].append(name)
            elif why.startswith("SKIP_"):  # SKIP_RETURN_CODE=77, SKIP_REGULAR_EXPRESSION_MATCHED
                skipped[skip_reason(out)].append(name)
            else:  # e.g. "Unable to find executable": not a skip
                failed.append(f"{name} (did not run: {why or 'unknown'})")
        else:
            passed.append(name)
    n_skipped = sum(len(v) for v in skipped.values())
    ran = len(passed) + len(failed)
    print(f"== {title}: {ran} tests ran ({len(passed)} passed, {len(failed)} failed), {n_skipped} skipped")
    for name in failed:
        print(f"   FAILED  {name}")
    for why, names in sorted(skipped.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        shown = ", ".join(names[:4]) + (f", ... ({len(names) - 4} more)" if len(names) > 4 else "")
        print(f"   skipped {len(names):4d}: {why}\n                  {shown}")
    return not failed


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    ok = True
    for title, path in zip(args[::2], args[1::2]):
        try:
            ok = summarize(title, path) and ok
        except (OSError, ET.ParseError) as e:
            print(f"== {title}: no results ({e})")
            ok = False
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
