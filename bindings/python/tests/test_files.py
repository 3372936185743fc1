"""Graph files read by the library's own readers (every format and compression the
command line reads), their arrays viewed without copying, and forests equal to those the
C API computes for the same files."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from conftest import ROOT, SHARED_DATA, TEST_DATA

import gpumst
from gpumst import _native


def test_every_format_and_compression():
    for name in ("small.gr", "small.gr.gz", "small.gr.xz"):
        g = gpumst.load_graph(TEST_DATA / name)
        assert (g.format, g.vertex_base, g.num_vertices, g.num_edges) == ("dimacs", 1, 5, 6)
        assert g.u.tolist() == [0, 1, 0, 3, 1, 4] and g.v.tolist() == [1, 2, 1, 3, 0, 2]
        assert g.weights.dtype == np.uint32 and g.weights.tolist() == [7, 3, 7, 2, 5, 1]
        assert not g.u.flags.writeable and not g.u.flags.owndata  # the library's array
        f = g.minimum_spanning_forest()
        assert f.edges.tolist() == [1, 4, 5] and f.total_weight == 9 and f.num_components == 2
    cases = {
        "sym.mtx.xz": ("mtx", np.int64),
        "general.mtx.gz": ("mtx", np.float64),
        "pattern.mtx": ("mtx", None),
        "small.txt.xz": ("edgelist", np.uint32),
        "unweighted.el": ("edgelist", None),
        "small.egr.gz": ("egr", np.int32),
        "unweighted.egr": ("egr", None),
        "small.gmst": ("gmst", np.uint32),
        "general.gmst.gz": ("gmst", np.float64),
    }
    for name, (fmt, dtype) in cases.items():
        g = gpumst.load_graph(TEST_DATA / name)
        assert g.format == fmt, name
        assert (g.weights is None) if dtype is None else (g.weights.dtype == dtype), name
    g = gpumst.load_graph(TEST_DATA / "unweighted.el", format="edgelist")
    assert (g.u.tolist(), g.v.tolist()) == ([0, 1, 3], [1, 2, 1])


def test_file_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        gpumst.load_graph(tmp_path / "missing.gr")
    bad = tmp_path / "bad.gr"
    bad.write_text("p sp 3 2\na 1 2 5\na 2 x 5\n")
    with pytest.raises(gpumst.InvalidGraph, match=r"bad\.gr:3:"):
        gpumst.load_graph(bad)
    with pytest.raises(ValueError, match="unknown format 'csv'"):
        gpumst.load_graph(bad, format="csv")
    # The graph stays usable after its GraphFile object is gone.
    g = gpumst.load_graph(TEST_DATA / "small.gr")
    u = g.u
    del g
    assert u.tolist() == [0, 1, 0, 3, 1, 4]


@pytest.fixture(scope="module")
def c_forest(tmp_path_factory):
    """The C program c_forest.c, built against gpumst.h and this package's libgpumst."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        pytest.skip("no C compiler here to build the C API reference program")
    exe = tmp_path_factory.mktemp("c") / "c_forest"
    lib = _native.LIBRARY_PATH
    subprocess.run(
        [
            compiler,
            "-std=c11",
            "-Wall",
            "-Werror",
            "-I",
            str(ROOT / "include"),
            str(ROOT / "bindings/python/tests/c_forest.c"),
            lib,
            f"-Wl,-rpath,{lib.rsplit('/', 1)[0]}",
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


def graphs_for_the_c_comparison():
    files = [TEST_DATA / n for n in ("small.gr.xz", "sym.mtx", "general.mtx.xz", "small.egr", "unweighted.el")]
    for name in ("NY.gr.xz", "BAY.gr.xz"):
        files.append(SHARED_DATA / name)
    return files


@pytest.mark.parametrize("path", graphs_for_the_c_comparison(), ids=lambda p: p.name)
@pytest.mark.parametrize("maximum", [False, True])
def test_python_and_c_give_the_same_forest(c_forest, ctx, path, maximum):
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    args = [str(c_forest), str(path)] + (["maximum"] if maximum else [])
    lines = subprocess.run(args, check=True, capture_output=True, text=True).stdout.split()
    count, total, edges = int(lines[0]), lines[1], [int(x) for x in lines[2:]]
    f = gpumst.load_graph(path).minimum_spanning_forest(maximum=maximum, context=ctx)
    assert len(f) == count and f.edges.tolist() == edges
    assert str(f.total_weight) == total or float(total) == f.total_weight


def test_the_road_graphs_have_their_published_answers(ctx):
    answers = {"NY.gr.xz": (264345, 27253492594), "BAY.gr.xz": (321269, 44047422157)}
    for name, (edges, weight) in answers.items():
        path = SHARED_DATA / name
        if not path.exists():
            pytest.skip(f"{path} is not on this machine")
        f = gpumst.load_graph(path).minimum_spanning_forest(context=ctx)
        assert (len(f), f.total_weight, f.num_components) == (edges, weight, 1)
