"""ComputeDomains as kubectl shows them and the path of an IMEX channel from the object to the container.

- ``get_computedomains``: ``kubectl get computedomains``: the CRD (crds/resource.nvidia.com_computedomains.yaml at
  5a0112cb4b3a47c9a4d8812ee3c361bae8cfee49) has no additionalPrinterColumns, so kubectl prints NAME and AGE.
- ``describe_computedomain``: ``kubectl describe computedomain``: the generic describer's Name, Namespace,
  Labels, API Version, Kind, Spec and Status blocks.
- ``channel_paths``: one row per workload pod that got a channel of the domain: its node, claim, device, CDI id
  and the device node the container sees, with the IMEX daemon's entry of that node in ``status.nodes``.
- ``domain_timeline``: the compute-domain controller's and daemons' steps from the trace.
"""
from __future__ import annotations

from typing import Any

from ..api.resource_nvidia_com_v1beta1 import COMPUTE_DOMAIN_LABEL, DRIVER_NAME, DRIVER_NAMESPACE
from .kubectl import _table, human_duration

PREPARE = "dra.(*ManagerImpl).PrepareResources"


def _domain(result, name: str, namespace: str):
    cd = result.api.get("ComputeDomain", namespace, name)
    if cd is None:
        raise KeyError(f'computedomains.resource.nvidia.com "{name}" not found')
    return cd


def get_computedomains(result, namespace: str = "default") -> str:
    rows = [["NAME", "AGE"]] + [[cd.metadata.name, human_duration(result.end - cd.metadata.creation_timestamp)]
                                for cd in sorted(result.api.list("ComputeDomain"), key=lambda c: c.metadata.name)
                                if cd.metadata.namespace == namespace]
    return _table(rows) if len(rows) > 1 else f"No resources found in {namespace} namespace."


def describe_computedomain(result, name: str, namespace: str = "default") -> str:
    cd = _domain(result, name, namespace)
    s, st = cd.spec, cd.status
    labels = "\n".join(f"{' ' * 14 if i else ''}{k}={v}" for i, (k, v) in enumerate(sorted(cd.metadata.labels.items())))
    lines = [f"Name:         {name}", f"Namespace:    {namespace}", f"Labels:       {labels or '<none>'}",
             f"API Version:  {cd.api_version}", f"Kind:         {cd.kind}", "Metadata:",
             f"  Finalizers:  {', '.join(cd.metadata.finalizers) or '<none>'}", f"  UID:         {cd.metadata.uid}",
             "Spec:", "  Channel:", f"    Allocation Mode:  {s.channel.allocation_mode}",
             "    Resource Claim Template:", f"      Name:  {s.channel.resource_claim_template.name}",
             f"  Num Nodes:  {s.num_nodes}", "Status:"]
    if st.nodes:
        lines.append("  Nodes:")
        for n in st.nodes:
            lines += [f"    Clique ID:   {n.clique_id}", f"    Index:       {n.index}",
                      f"    Ip Address:  {n.ip_address}", f"    Name:        {n.name}", f"    Status:      {n.status}"]
    lines.append(f"  Status:  {st.status}")
    events = [e for e in result.events.log if e.object.kind == "ComputeDomain" and e.object.name == name]
    lines.append("Events:  " + ("<none>" if not events else ""))
    lines += [f"  {e.type}  {e.reason}  {e.message}" for e in events]
    return "\n".join(lines)


def channel_paths(result, name: str, namespace: str = "default") -> list[dict[str, Any]]:
    """One row per prepared channel of the domain (see the module docstring)."""
    cd = _domain(result, name, namespace)
    uid, nodes = cd.metadata.uid, {n.name: n for n in cd.status.nodes}
    daemons = {p.spec.node_name: p for p in result.api.list("Pod") if p.metadata.namespace == DRIVER_NAMESPACE
               and p.metadata.labels.get(COMPUTE_DOMAIN_LABEL) == uid}
    template = cd.spec.channel.resource_claim_template.name
    rows = []
    for rec in result.ctx.trace.records:
        if rec.function != PREPARE or rec.result != "Success":
            continue
        pod_ns, pod = rec.object.split(" ", 1)[1].split("/")
        if pod_ns == DRIVER_NAMESPACE:
            continue
        for c in rec.details.get("claims", []):
            if c["driver"] != DRIVER_NAME:
                continue
            entry, daemon = nodes.get(c["pool"]), daemons.get(c["pool"])
            rows.append({"time": rec.time, "pod": pod, "node": c["pool"], "template": template, "claim": c["claim"],
                         "deviceClass": c["deviceClassName"], "device": c["device"],
                         "cdiDeviceIDs": list(c["cdiDeviceIDs"]), "deviceNodes": list(c.get("deviceNodes", [])),
                         "daemon": daemon.metadata.name if daemon is not None else "-",
                         "daemonStatus": entry.status if entry is not None else "-",
                         "index": entry.index if entry is not None else None})
    return rows


def channel_path_table(result, name: str, namespace: str = "default") -> str:
    rows = [["POD", "NODE", "CLAIM", "DEVICE", "DEVICE NODE", "IMEX DAEMON", "INDEX"]]
    for r in channel_paths(result, name, namespace):
        dev = r["deviceNodes"]
        shown = ",".join(dev) if len(dev) <= 2 else f"{dev[0]} … {dev[-1].rsplit('/', 1)[1]} ({len(dev)})"
        rows.append([r["pod"], r["node"], r["claim"], r["device"], shown or "-", r["daemon"],
                     "-" if r["index"] is None else str(r["index"])])
    return _table(rows)


def domain_timeline(result, name: str, namespace: str = "default") -> list[tuple[float, str, str]]:
    """(time, function, result) of the controller's and the daemons' steps for the domain."""
    obj = f"ComputeDomain {namespace}/{name}"
    return [(r.time, r.function, r.result) for r in result.ctx.trace.records if r.object == obj]
