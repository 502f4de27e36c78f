"""Predictable randomness: our noise must come from the OS CSPRNG or a keyed ChaCha20 stream, nothing else.

Mersenne Twister state is recovered from 624 outputs, ``numpy.random``'s
global generator replays after ``seed()``, and both repeat across
``fork()``. These tests check that

* seeding :mod:`random` and ``numpy.random`` changes nothing: system-source
  noise is not reproducible by seeding, and a ChaCha stream gives the same
  noise whatever those generators' state;
* every public sampler, scalar and batch, runs with :mod:`random`,
  ``numpy.random`` and :mod:`secrets` patched to raise;
* after ``os.fork()`` parent and child draw different noise (buffers and
  pools are not shared);
* statically, no module under ``securedp/`` imports :mod:`random` or
  ``numpy.random``, or calls a floating-point ``exp``/``log`` (lines marked
  ``# float-ok`` are deliberate planning or display uses and are allowed).

**False-failure rate.** The "different noise" checks compare 64 draws of
discrete Laplace noise at scale 10, each value having probability at most
``(1 - q) / (1 + q) < 0.05``: equal sequences have probability < 0.05**64 <
1e-83. Everything else is deterministic.
"""

from __future__ import annotations

import ast
import os
import pickle
import random
import secrets
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import securedp
from securedp import ChaChaSource, SystemSource
from securedp.hazmat import samplers

SEED = bytes(range(32))

# Every public sampler, as (name, draw(size, rng)). Parameters are unusual on purpose, so that the
# plans are built (not fetched from a cache) inside the tests below; the large ones take the
# levelled, object-array and long-table paths.
SAMPLERS = [
    ("bernoulli", lambda size, rng: samplers.bernoulli(Fraction(3, 11), size, rng=rng)),
    ("bernoulli_exp", lambda size, rng: samplers.bernoulli_exp(Fraction(5, 13), size, rng=rng)),
    ("uniform_below", lambda size, rng: samplers.uniform_below(1000003, size, rng=rng)),
    ("uniform_below_huge", lambda size, rng: samplers.uniform_below(2**70 + 1, size, rng=rng)),
    ("geometric_scale", lambda size, rng: samplers.geometric(Fraction(29, 3), size, rng=rng)),
    ("geometric_p", lambda size, rng: samplers.geometric(size=size, p=Fraction(1, 1009), rng=rng)),
    ("discrete_laplace", lambda size, rng: samplers.discrete_laplace(Fraction(97, 7), size, rng=rng)),
    ("discrete_laplace_large", lambda size, rng: samplers.discrete_laplace(10**6 + 3, size, rng=rng)),
    ("discrete_gaussian", lambda size, rng: samplers.discrete_gaussian(Fraction(23, 3), size, rng=rng)),
    ("discrete_gaussian_variance", lambda size, rng: samplers.discrete_gaussian(size=size, variance=2, rng=rng)),
    ("discrete_gaussian_large", lambda size, rng: samplers.discrete_gaussian(1003, size, rng=rng)),
]
SAMPLER_IDS = [name for name, _ in SAMPLERS]


def laplace_noise(rng=None) -> tuple[list[int], list[int]]:
    """64 scalar draws and a batch of 64 of discrete Laplace noise at scale 10."""
    scalars = [samplers.discrete_laplace(10, rng=rng) for _ in range(64)]
    return scalars, samplers.discrete_laplace(10, size=64, rng=rng).tolist()


def seed_insecure_generators(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)


def test_seeding_does_not_reproduce_system_noise():
    """Reseeding ``random`` and ``numpy.random`` identically does not replay system-source noise."""
    seed_insecure_generators(0)
    first = laplace_noise(SystemSource())  # a fresh source, so its pool is filled after the seeding
    seed_insecure_generators(0)
    second = laplace_noise(SystemSource())
    assert first[0] != second[0]
    assert first[1] != second[1]


@pytest.mark.parametrize("name,draw", SAMPLERS, ids=SAMPLER_IDS)
def test_chacha_noise_ignores_insecure_generators(name, draw):
    """A ChaCha stream yields the same noise whatever the state of ``random`` and ``numpy.random``."""
    seed_insecure_generators(1)
    first = [draw(None, ChaChaSource(SEED)) for _ in range(3)], draw(50, ChaChaSource(SEED)).tolist()
    seed_insecure_generators(2)
    random.random(), np.random.random(7)  # move both generators on
    second = [draw(None, ChaChaSource(SEED)) for _ in range(3)], draw(50, ChaChaSource(SEED)).tolist()
    assert first == second


def _forbidden(*args, **kwargs):
    raise AssertionError("securedp consulted a non-cryptographic or unexpected source of randomness")


@pytest.fixture
def insecure_randomness_forbidden(monkeypatch):
    """Every public callable of ``random``, ``numpy.random`` and ``secrets`` raises while the test runs."""
    for module, names in ((random, random.__all__), (np.random, np.random.__all__), (secrets, secrets.__all__)):
        for name in names:
            if callable(getattr(module, name)):
                monkeypatch.setattr(module, name, _forbidden)


@pytest.mark.parametrize("name,draw", SAMPLERS, ids=SAMPLER_IDS)
def test_samplers_need_no_insecure_randomness(name, draw, insecure_randomness_forbidden):
    """Scalar and batch draws, default and explicit sources, with ``random``/``numpy.random``/``secrets`` raising."""
    with pytest.raises(AssertionError):  # the patch is in force
        np.random.default_rng()
    for rng in (None, SystemSource(), ChaChaSource(SEED)):  # fresh sources: pools are refilled here
        draw(None, rng)
        assert len(draw(100, rng)) == 100


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_parent_and_child_draw_different_noise_after_fork():
    """After ``fork()`` the child neither replays the parent's buffered bytes nor its pooled values.

    ``numpy.random``'s global generator, which does repeat across ``fork()``,
    is the negative control: the same comparison finds it identical.
    """
    samplers.discrete_laplace(10)  # fill the default source's buffer and its scale-10 pool
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: send its noise and exit without running pytest's teardown
        try:
            with os.fdopen(write_end, "wb") as out:
                pickle.dump((laplace_noise(), np.random.random(8).tolist()), out)
        finally:
            os._exit(0)
    os.close(write_end)
    parent = laplace_noise(), np.random.random(8).tolist()
    with os.fdopen(read_end, "rb") as incoming:
        child = pickle.load(incoming)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    (parent_scalars, parent_batch), parent_numpy = parent
    (child_scalars, child_batch), child_numpy = child
    assert parent_scalars != child_scalars
    assert parent_batch != child_batch
    assert parent_numpy == child_numpy  # the harness does see a shared generator


# --- static checks on the library's source ---

PACKAGE = Path(securedp.__file__).resolve().parent
FLOAT_FUNCTIONS = {"exp", "expm1", "exp2", "log", "log1p", "log2", "log10"}
FLOAT_MODULES = {"math", "numpy", "np"}


def randomness_and_float_findings(source: str) -> list[str]:
    """Imports of ``random``/``numpy.random`` and float exp/log calls not marked ``# float-ok``."""
    lines = source.splitlines()
    findings = []

    def report(node: ast.AST, what: str) -> None:
        findings.append(f"line {node.lineno}: {what}")

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "random" or alias.name.startswith("numpy.random"):
                    report(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = {alias.name for alias in node.names}
            if module == "random" or module.startswith("numpy.random") or (module == "numpy" and "random" in names):
                report(node, f"from {module} import {', '.join(sorted(names))}")
            if module == "math" and names & FLOAT_FUNCTIONS:
                report(node, f"from math import {', '.join(sorted(names & FLOAT_FUNCTIONS))}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            base, attr = node.value.id, node.attr
            if base in {"numpy", "np"} and attr == "random":
                report(node, f"{base}.random")
            if base in FLOAT_MODULES and attr in FLOAT_FUNCTIONS and "# float-ok" not in lines[node.lineno - 1]:
                report(node, f"{base}.{attr} without '# float-ok'")
    return findings


def test_static_check_detects_what_it_forbids():
    """The checker flags each forbidden pattern, and accepts a marked float use."""
    bad = (
        "import random\n"
        "import numpy.random\n"
        "from numpy import random as npr\n"
        "import numpy as np\n"
        "import math\n"
        "x = np.random.default_rng()\n"
        "y = math.exp(1.0)\n"
        "z = np.log(2.0)\n"
    )
    assert len(randomness_and_float_findings(bad)) == 6
    assert randomness_and_float_findings("import math\nq = math.exp(-1)  # float-ok: planning only\n") == []


def test_library_uses_no_insecure_randomness_or_float_exp_log():
    """No module under ``securedp/`` imports ``random``/``numpy.random`` or calls an unmarked float exp/log."""
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 10
    findings = {
        str(path.relative_to(PACKAGE)): found
        for path in modules
        if (found := randomness_and_float_findings(path.read_text(encoding="utf-8")))
    }
    assert findings == {}
