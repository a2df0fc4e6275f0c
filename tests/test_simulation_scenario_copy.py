"""A run never mutates the Scenario it was built from (Simulation's _copy_scenario gives each run its own
objects), so one loaded scenario can be run again, with the same result, as notebooks and experiments do."""
from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
NAMES = sorted(p.stem for p in EXAMPLES.glob("*.yaml"))


def fingerprint(sc) -> bytes:
    """Every object the scenario holds (nodes and sources included), as bytes."""
    return pickle.dumps(sc, pickle.HIGHEST_PROTOCOL)


@pytest.mark.parametrize("name", NAMES)
def test_a_run_leaves_its_scenario_unchanged(name):
    sc = load([str(EXAMPLES / f"{name}.yaml")])
    before = fingerprint(sc)
    first = Simulation(sc).run()
    assert fingerprint(sc) == before
    second = Simulation(sc).run()
    assert fingerprint(sc) == before
    log = lambda r: [(e.time, e.reason, e.object.kind, e.object.name, e.message) for e in r.events.log]
    assert log(first) == log(second) and log(first)
    # the run's objects are its own: none of the scenario's API objects is shared with a run
    ids = {id(o) for o in [*sc.nodes, *sc.pods, *sc.jobs, *sc.namespaces, *(x for v in sc.objects.values() for x in v)]}
    assert not ids & {id(o) for o in [*first.scenario.nodes, *first.scenario.pods, *first.scenario.jobs]}
