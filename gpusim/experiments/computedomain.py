"""A ComputeDomain followed from the object to the container (course 05-8 §5): examples/compute-domain.yaml run
with NVIDIA's DRA driver models (gpusim.controllers.computedomain, gpusim.node.computedomain) and read back.

The API a notebook or lab uses (everything else is internal):

- ``walkthrough(until="30m", num_nodes=None) -> Walkthrough``: run the example (its ComputeDomain ``train-cd``'s
  ``spec.numNodes`` replaced when ``num_nodes`` is given). ``Walkthrough`` has ``result`` (the run, as
  ``gpusim.cluster.simulation.run`` returns it), ``timeline`` ([(time, upstream function, result)] of the
  controller, the DaemonSet part and the daemons), ``template`` (the generated workload ResourceClaimTemplate: name,
  labels, request, deviceClassName, opaque config), ``nodes`` (``status.nodes`` as dicts), ``channels`` (one row per
  worker: pod, node, claim, device, cdiDeviceIDs, deviceNodes, daemon, daemonStatus, index), ``failed_prepare``
  ([(time, pod, message)] of FailedPrepareDynamicResources) and ``pods_table()``.
- On any run: ``gpusim.views.computedomain`` ``get_computedomains``, ``describe_computedomain``, ``channel_paths`` /
  ``channel_path_table``, ``domain_timeline`` (a domain by name and namespace); the CLI's
  ``gpusim describe computedomain NAME -f FILE``; the daemon pods with ``gpusim run FILE -n nvidia-dra-driver-gpu``.
- Scenario side: ``NodePool spec.gpu: {model: GB200, count: 4, topology: gb200-nvl72, allocation: dra}`` (trays of
  18 per rack share ``nvidia.com/gpu.clique``; only such nodes run the compute-domain kubelet plugin) and a
  ``resource.nvidia.com/v1beta1`` ComputeDomain whose ``spec.channel.resourceClaimTemplate.name`` pods reference.
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
