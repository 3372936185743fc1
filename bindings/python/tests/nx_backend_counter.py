"""A pytest plugin for running NetworkX's own tests against the gpumst backend: it counts,
per test, whether the backend really computed something (or declined, letting NetworkX
fall back), prints the tally, and writes it as JSON to $GPUMST_NX_TALLY.

    NETWORKX_TEST_BACKEND=gpumst NETWORKX_FALLBACK_TO_NX=True GPUMST_NX_MIN_TESTS=50 \\
        pytest -p nx_backend_counter --pyargs networkx.algorithms.tree

With GPUMST_NX_MIN_TESTS set, the run fails unless at least that many tests ran
spanning-tree calls on gpumst and each of minimum/maximum_spanning_edges/tree ran there
(a run in which everything fell back to NetworkX proves nothing).
"""

import json
import os

import pytest

_tests = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    from gpumst.networkx._mst import calls

    before = calls.copy()
    yield
    delta = calls - before
    ran = sum(n for k, n in delta.items() if not k.startswith("declined "))
    declined = sum(n for k, n in delta.items() if k.startswith("declined "))
    _tests[item.nodeid] = {"ran": ran, "declined": declined, "calls": dict(delta)}


def pytest_terminal_summary(terminalreporter):
    from gpumst.networkx._mst import calls

    ran = sorted(t for t, d in _tests.items() if d["ran"])
    declined = sorted(t for t, d in _tests.items() if d["declined"])
    write = terminalreporter.write_line
    write(
        f"gpumst backend: {len(ran)} of {len(_tests)} tests ran spanning-tree calls on gpumst; "
        f"{len(declined)} had a call declined (NetworkX fell back)"
    )
    for key, n in sorted(calls.items()):
        write(f"  {n:6d}  {key}")
    path = os.environ.get("GPUMST_NX_TALLY")
    if path:
        with open(path, "w") as f:
            json.dump({"tests": _tests, "calls": dict(calls)}, f, indent=1, sort_keys=True)
    for problem in _problems():
        write(f"gpumst backend: FAILED: {problem}", red=True)


_REQUIRED = ["minimum_spanning_edges", "maximum_spanning_edges", "minimum_spanning_tree", "maximum_spanning_tree"]


def _problems():
    from gpumst.networkx._mst import calls

    minimum = os.environ.get("GPUMST_NX_MIN_TESTS")
    if not minimum:
        return []
    found = []
    ran = sum(1 for d in _tests.values() if d["ran"])
    if ran < int(minimum):
        found.append(f"only {ran} tests ran on gpumst (at least {minimum} expected)")
    for name in _REQUIRED:
        if not any(k.startswith(name) for k in calls):
            found.append(f"{name} never ran on gpumst")
    return found


def pytest_sessionfinish(session, exitstatus):
    if _problems() and session.exitstatus == 0:
        session.exitstatus = 1
