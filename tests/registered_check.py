#!/usr/bin/env python3
"""Checks that every doctest test case of each test binary is registered as exactly one ctest
test that selects it, and that ctest registers nothing else for those binaries.

    registered_check.py BUILD_DIR BINARY...

Reads the binaries' own lists (--list-test-cases) and ctest's (ctest -N --show-only=json-v1),
and prints each difference: a test case no ctest test runs, a ctest test whose filter selects
no test case or another one, a name listed twice. Exit 0 when the sets agree, 1 otherwise, 2 on
bad usage. Run as the ctest test tests.registered, so every ./ci/test checks it.
"""
import json
import subprocess
import sys


def listed(binary):
    """The test case names BINARY lists, in its order (duplicates kept)."""
    out = subprocess.run([binary, "--list-test-cases", "--no-version=true"], check=True,
                         capture_output=True, text=True).stdout
    names = []
    for line in out.splitlines():
        if not line or set(line) == {"="} or line.startswith("[doctest] "):
            continue
        names.append(line)
    return names


def unescape(value):
    """doctest's --test-case value as the one filter it stands for ('\\,' is ',', '\\\\' is
    '\\'); None when it holds an unescaped ',' (then it is several filters)."""
    out, i = [], 0
    while i < len(value):
        c = value[i]
        if c == "\\" and i + 1 < len(value) and value[i + 1] in ",\\":
            out.append(value[i + 1])
            i += 2
            continue
        if c == ",":
            return None
        out.append(c)
        i += 1
    return "".join(out)


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    build, binaries = argv[1], argv[2:]
    shown = subprocess.run(["ctest", "--test-dir", build, "-N", "--show-only=json-v1"],
                           check=True, capture_output=True, text=True).stdout
    registered = {b: [] for b in binaries}
    problems = []
    tests = json.loads(shown).get("tests", [])
    every = [t["name"] for t in tests]
    for name in sorted({n for n in every if every.count(n) > 1}):
        problems.append(f"ctest test name {name!r} is taken {every.count(name)} times")
    for test in tests:
        cmd = test.get("command") or []
        if not cmd or cmd[0] not in registered:
            continue
        filters = [a[len("--test-case="):] for a in cmd[1:] if a.startswith("--test-case=")]
        selected = unescape(filters[0]) if len(filters) == 1 else None
        if selected != test["name"]:
            problems.append(f"ctest test {test['name']!r} of {cmd[0]} selects "
                            f"{filters!r}, not its own name")
        registered[cmd[0]].append(test["name"])
    total = 0
    for binary in binaries:
        names = listed(binary)
        total += len(names)
        for name in sorted({n for n in names if names.count(n) > 1}):
            problems.append(f"{binary}: test case {name!r} is defined {names.count(name)} times")
        have, want = set(registered[binary]), set(names)
        for name in sorted(want - have):
            problems.append(f"{binary}: test case {name!r} has no ctest test")
        for name in sorted(have - want):
            problems.append(f"{binary}: ctest test {name!r} is no test case of the binary")
        for name in sorted({n for n in registered[binary] if registered[binary].count(n) > 1}):
            problems.append(f"{binary}: ctest test {name!r} is registered more than once")
    for p in problems:
        print(p)
    if problems:
        print(f"registered: {len(problems)} problem(s); fix the names or cmake/DoctestAdd.cmake")
        return 1
    print(f"registered: {total} test cases in {len(binaries)} binaries, each one ctest test")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
