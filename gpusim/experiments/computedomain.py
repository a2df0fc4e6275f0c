"""A ComputeDomain followed from the object to the container (course 05-8 §5): examples/compute-domain.yaml run
with NVIDIA's DRA driver models (gpusim.controllers.computedomain, gpusim.node.computedomain) and read back.

:func:`walkthrough` returns the run and four tables: the controller's and daemons' steps (``timeline``), the
generated workload template (``template``), the daemons' entries in ``status.nodes`` (``nodes``) and each worker's
channel as its container got it (``channels``).
"""
from __future__ import annotations

import pathlib
from dataclasses import dataclass
from typing import Any, Optional

from ..api.duration import parse_duration
from ..cluster.scenario import load
from ..cluster.simulation import Result, Simulation
from ..views import computedomain as views
from ..views.kubectl import get_pods

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "compute-domain.yaml"
DOMAIN = "train-cd"


@dataclass
class Walkthrough:
    result: Result
    timeline: list[tuple[float, str, str]]
    template: dict[str, Any]
    nodes: list[dict[str, Any]]
    channels: list[dict[str, Any]]
    failed_prepare: list[tuple[float, str, str]]    # (time, pod, message) of FailedPrepareDynamicResources

    def pods_table(self) -> str:
        return get_pods(self.result)


def walkthrough(until: str = "30m", num_nodes: Optional[int] = None) -> Walkthrough:
    """Run the example to ``until`` (default: while the 16-GPU job runs), with the domain's ``spec.numNodes`` set
    to ``num_nodes`` when given, and collect the tables."""
    text = EXAMPLE.read_text(encoding="utf-8")
    if num_nodes is not None:
        text = text.replace("  numNodes: 4\n", f"  numNodes: {int(num_nodes)}\n")
    sim = Simulation(load(texts=[(str(EXAMPLE), text)]), until=parse_duration(until))
    r = sim.run()
    cd = r.api.get("ComputeDomain", "default", DOMAIN)
    rct = r.api.get("ResourceClaimTemplate", "default", cd.spec.channel.resource_claim_template.name)
    req = rct.spec.spec.devices.requests[0]
    template = {"name": rct.metadata.name, "labels": dict(rct.metadata.labels), "request": req.name,
                "deviceClassName": req.exactly.device_class_name,
                "config": rct.spec.spec.devices.config[0]["opaque"]}
    nodes = [{"name": n.name, "cliqueID": n.clique_id, "index": n.index, "status": n.status}
             for n in cd.status.nodes]
    failed = [(e.time, e.object.name, e.message) for e in r.events.log if e.reason == "FailedPrepareDynamicResources"]
    return Walkthrough(r, views.domain_timeline(r, DOMAIN), template, nodes, views.channel_paths(r, DOMAIN), failed)
