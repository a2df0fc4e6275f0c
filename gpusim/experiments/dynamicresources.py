"""The DynamicResources scheduler plugin at work (course 05-8): its extension points traced on real runs, one claim
followed through the structured allocator, and the same workloads under NVIDIA's device plugin and NVIDIA's DRA
driver compared.

Mirrors, by observing gpusim's models of them: kubernetes pkg/scheduler/framework/plugins/dynamicresources/
dynamicresources.go (1.36; gpusim.scheduler.plugins.dynamicresources), staging/src/k8s.io/dynamic-resource-allocation/
structured (the allocator, gpusim.scheduler.dra.allocator), pkg/controller/resourceclaim (gpusim.controllers.
resourceclaim) and NVIDIA/k8s-dra-driver-gpu's gpu-kubelet-plugin (gpusim.node.dra).

Tracing follows CONVENTIONS.md (wrap, don't subclass): :func:`traced_run` builds the Simulation, then replaces the
DynamicResources plugin instance's extension-point methods with wrappers that call the original and record what it
returned (:class:`Call`), and, at Filter, how many of the node's published devices survive each step of the
allocator's choice (:class:`Funnel`). The wrappers never change a result, so a traced run has the same event log as
an untraced one.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Optional

import yaml

from ..api.quantity import parse_quantity
from ..cluster.scenario import load
from ..cluster.simulation import Result, Simulation
from ..scheduler.dra.allocator import gather_pools
from ..scheduler.dra.cel import compile_selector
from ..scheduler.plugins import dynamicresources as drp
from ..views.dra import claim_paths

NAME = drp.NAME
# The extension points, in the order a pod meets them, with what upstream's plugin does there (1.36) and whether
# gpusim's plugin implements it (module docstring of gpusim.scheduler.plugins.dynamicresources).
POINTS = (
    ("PreEnqueue", "pre_enqueue", "every claim exists, is not being deleted, a template's claim is owned by the pod"),
    ("PreFilter", "pre_filter", "claims reservable, DeviceClasses exist; build the allocator once per cycle"),
    ("Filter", "filter", "allocated claim's nodeSelector matches; else run the allocator on this node"),
    ("PostFilter", "post_filter", "no node fits: deallocate an allocated claim nobody reserves, so it can move"),
    ("Score", "score", "firstAvailable: prefer nodes where earlier subrequests were allocated (8 - index each)"),
    ("Reserve", "reserve", "the node's allocation goes in flight (assume cache): its devices count as used"),
    ("Unreserve", "unreserve", "drop the in-flight allocation, remove the pod from reservedFor"),
    ("PreBind", "pre_bind", "write finalizer, status.allocation and the pod in status.reservedFor"),
)
WRAPPED = ("pre_enqueue", "pre_filter", "filter", "post_filter", "reserve", "unreserve", "pre_bind")
GPU_CLASS, MIG_CLASS = "gpu.nvidia.com", "mig.nvidia.com"
MEMORY_40GI = 'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0'
PROFILE_1G = "device.attributes['gpu.nvidia.com'].profile == '1g.10gb'"
PARENT = "gpu.nvidia.com/parentUUID"
INFER_IMAGE, TRAIN_IMAGE = "vllm/vllm-openai:latest", "nvcr.io/nvidia/pytorch:25.01-py3"


# --- tracing the plugin --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Call:
    """One call of a DynamicResources extension point: simulated time, point, pod, node ("" where the point has
    none), the returned status code and message, and what it allocated or wrote (device names)."""

    time: float
    point: str
    pod: str
    node: str
    code: str
    message: str
    devices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Funnel:
    """At one Filter call: how many devices of the node's pools are left after each step of the allocator's
    choice for the pod's pending claims: published, matching the DeviceClass's selectors, matching the request's
    selectors too, free (not allocated or in flight, and its counter consumption fits what is left), picked."""

    time: float
    pod: str
    node: str
    steps: tuple[tuple[str, int], ...]
    picked: tuple[str, ...]


@dataclass
class TracedRun:
    result: Result
    calls: list[Call] = field(default_factory=list)
    funnels: list[Funnel] = field(default_factory=list)
    points: dict[str, tuple[str, ...]] = field(default_factory=dict)   # the default profile's plugins per point

    def calls_of(self, pod: str, point: Optional[str] = None) -> list[Call]:
        return [c for c in self.calls if c.pod == pod and (point is None or c.point == point)]


def _pod_name(pod: Any) -> str:
    return pod.metadata.name


def _status(st: Any) -> tuple[str, str]:
    return st.code.name, "; ".join(st.reasons)


def _devices(results: Any) -> tuple[str, ...]:
    return tuple(r.device for a in results or () for r in a.devices.results)


def _remaining_counters(pool: Any, allocated: Any) -> dict[str, dict[str, Fraction]]:
    """The pool's counter sets minus what its allocated devices consume (checkAvailableCounters' view)."""
    left = {s: dict(c) for s, c in pool.counter_sets.items()}
    for d in pool.pool_devices:
        if allocated.allocated((pool.driver, pool.name, d.name)):
            for use in d.consumes_counters:
                for k, v in use.counters.items():
                    left.setdefault(use.counter_set, {})[k] = left.get(use.counter_set, {}).get(k, 0) - \
                        parse_quantity(v.value)
    return left


def _fits_counters(device: Any, left: dict[str, dict[str, Fraction]]) -> bool:
    return all(left.get(use.counter_set, {}).get(k, Fraction(0)) >= parse_quantity(v.value)
               for use in device.consumes_counters for k, v in use.counters.items())


def _claims_state(state: Any) -> Any:
    """The plugin's PreFilter state when the pod has claims or an extended resource claim (PreFilter writes an
    empty one for every pod)."""
    st = state.get(drp.STATE_KEY)
    return st if st is not None and (st.claims or st.extended is not None) else None


def _funnel(state: Any, node: str, classes: dict) -> list[tuple[str, int]]:
    """Devices left after each step, summed over the exactly-requests of the pod's pending claims."""
    st = state.get(drp.STATE_KEY)
    pools = [p for p in gather_pools(st.allocator.slices, node) if not p.invalid]
    devices = [(p, d) for p in pools for s in p.slices for d in s.spec.devices]
    left = {(p.driver, p.name): _remaining_counters(p, st.allocator.state) for p in pools}
    steps = {"published": 0, "DeviceClass": 0, "request selectors": 0, "free": 0}
    for claim in st.pending:
        for r in claim.spec.devices.requests:
            if r.exactly is None:
                continue
            dc = classes.get(r.exactly.device_class_name)
            cls = [s.cel.expression for s in dc.spec.selectors if s.cel] if dc else []
            req = [s.cel.expression for s in r.exactly.selectors if s.cel]
            for p, d in devices:
                steps["published"] += 1
                if not all(compile_selector(e).matches(p.driver, d) for e in cls):
                    continue
                steps["DeviceClass"] += 1
                if not all(compile_selector(e).matches(p.driver, d) for e in req):
                    continue
                steps["request selectors"] += 1
                if not st.allocator.state.allocated((p.driver, p.name, d.name)) and \
                        _fits_counters(d, left[(p.driver, p.name)]):
                    steps["free"] += 1
    return list(steps.items())


def _wrap(run: TracedRun, plugin: Any, now: Any) -> None:
    """Replace the plugin instance's extension-point methods by recording wrappers (same results)."""
    orig = {m: getattr(plugin, m) for m in WRAPPED}

    def pre_enqueue(pod):
        st = orig["pre_enqueue"](pod)
        if pod.spec.resource_claims:
            run.calls.append(Call(now(), "PreEnqueue", _pod_name(pod), "", *_status(st)))
        return st

    def pre_filter(state, pi, nodes):
        names, st = orig["pre_filter"](state, pi, nodes)
        if st.code.name != "Skip":
            run.calls.append(Call(now(), "PreFilter", _pod_name(pi.pod), "", *_status(st)))
        return names, st

    def filter(state, pi, ni):
        st = orig["filter"](state, pi, ni)
        s = _claims_state(state)
        if s is not None:
            picked = _devices(s.per_node.get(ni.name)) if st.is_success() else ()
            run.calls.append(Call(now(), "Filter", _pod_name(pi.pod), ni.name, *_status(st), picked))
            if s.pending and s.allocator is not None and st.code.name != "Error":
                classes = {c.metadata.name: c for c in plugin.api.list("DeviceClass")}
                steps = _funnel(state, ni.name, classes) + [("picked", len(picked))]
                run.funnels.append(Funnel(now(), _pod_name(pi.pod), ni.name, tuple(steps), picked))
        return st

    def reserve(state, pi, node):
        st = orig["reserve"](state, pi, node)
        s = _claims_state(state)
        if s is not None:
            uid = pi.pod.metadata.uid
            in_flight = [r.device for c, p in plugin.in_flight_pod.items() if p == uid
                         for r in plugin.in_flight[c].devices.results]
            run.calls.append(Call(now(), "Reserve", _pod_name(pi.pod), node, *_status(st), tuple(sorted(in_flight))))
        return st

    def unreserve(state, pi, node):
        orig["unreserve"](state, pi, node)
        if _claims_state(state) is not None:
            run.calls.append(Call(now(), "Unreserve", _pod_name(pi.pod), node, "Success", ""))

    def post_filter(state, pi, statuses):
        nominated, st = orig["post_filter"](state, pi, statuses)
        if pi.pod.spec.resource_claims and st.reasons:
            run.calls.append(Call(now(), "PostFilter", _pod_name(pi.pod), "", *_status(st)))
        return nominated, st

    def pre_bind(state, pi, node):
        st = orig["pre_bind"](state, pi, node)
        s = _claims_state(state)
        if s is not None:
            written = [plugin.api.get("ResourceClaim", c.metadata.namespace, c.metadata.name) for c in s.claims]
            run.calls.append(Call(now(), "PreBind", _pod_name(pi.pod), node, *_status(st),
                                  _devices(c.status.allocation for c in written if c and c.status.allocation)))
        return st

    for m, f in (("pre_enqueue", pre_enqueue), ("pre_filter", pre_filter), ("filter", filter),
                 ("post_filter", post_filter), ("reserve", reserve), ("unreserve", unreserve),
                 ("pre_bind", pre_bind)):
        setattr(plugin, m, f)


def traced_run(*paths: str, text: Optional[str] = None) -> TracedRun:
    """Run a scenario (files and/or YAML ``text``) with the DynamicResources plugin's calls recorded."""
    sim = Simulation(load(paths, [("<text>", text)] if text else []))
    fw = sim.scheduler.framework
    plugin = next(p for p in fw.plugins if p.name == NAME)
    run = TracedRun(result=None, points=dict(fw.names))   # type: ignore[arg-type]
    _wrap(run, plugin, lambda: sim.ctx.env.now)
    run.result = sim.run()
    return run


def extension_points(run: TracedRun) -> list[dict[str, Any]]:
    """Per extension point: whether the default profile runs DynamicResources there, whether gpusim's plugin
    implements it, how often it was called in ``run``, and what upstream's plugin does there."""
    called = {}
    for c in run.calls:
        called[c.point] = called.get(c.point, 0) + 1
    rows = []
    for point, method, upstream in POINTS:
        enabled = NAME in run.points.get(point, ()) or (point == "Unreserve" and NAME in run.points.get("Reserve", ()))
        rows.append({"point": point, "enabled": enabled, "modelled": hasattr(drp.DynamicResources, method),
                     "calls": called.get(point, 0), "upstream": upstream})
    return rows


def format_extension_points(run: TracedRun) -> str:
    from ..views.kubectl import _table
    rows = [["POINT", "IN PROFILE", "GPUSIM", "CALLS", "UPSTREAM (1.36)"]]
    for r in extension_points(run):
        rows.append([r["point"], "yes" if r["enabled"] else "no", "modelled" if r["modelled"] else "not modelled",
                     str(r["calls"]), r["upstream"]])
    return _table(rows)


def format_calls(run: TracedRun, pods: Optional[tuple[str, ...]] = None, collapse: bool = True) -> str:
    """The recorded calls as a table. ``collapse``: of a pod's scheduling attempts (its calls at one instant),
    only the first and the last are shown, with the number left out in between (as ``gpusim explain``)."""
    from ..views.kubectl import _table
    rows = [["TIME", "POD", "POINT", "NODE", "CODE", "MESSAGE", "DEVICES"]]
    calls = [c for c in run.calls if pods is None or c.pod in pods]
    times: dict[str, list[float]] = {}
    for c in calls:
        if c.time not in times.setdefault(c.pod, []):
            times[c.pod].append(c.time)
    noted: set[str] = set()
    for c in calls:
        ts = times[c.pod]
        if collapse and len(ts) > 2 and c.time not in (ts[0], ts[-1]):
            if c.pod not in noted:
                noted.add(c.pod)
                rows.append(["…", c.pod, f"({len(ts) - 2} attempts in between not shown)", "", "", "", ""])
            continue
        rows.append([f"{c.time:g}", c.pod, c.point, c.node or "-", c.code, c.message or "-",
                     ", ".join(c.devices) or "-"])
    return _table(rows)


def plot_calls(run: TracedRun, pods: Optional[tuple[str, ...]] = None, ax=None):
    """Each pod's DynamicResources calls over simulated time: one marker per call, coloured by point, hollow
    when the call rejected the pod."""
    import matplotlib.pyplot as plt
    calls = [c for c in run.calls if pods is None or c.pod in pods]
    names = sorted({c.pod for c in calls}, reverse=True)
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 0.5 * len(names) + 1.6))
    order = [p for p, _, _ in POINTS]
    for k, point in enumerate(order):
        for ok in (True, False):
            xs = [c.time / 60 for c in calls if c.point == point and (c.code == "Success") == ok]
            ys = [names.index(c.pod) + (k - 3) * 0.08 for c in calls if c.point == point and (c.code == "Success") == ok]
            if xs:
                ax.scatter(xs, ys, s=30, marker="o", color=f"C{k}", facecolors=f"C{k}" if ok else "none",
                           label=point if ok or not any(c.point == point and c.code == "Success" for c in calls)
                           else None)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("time (min)")
    ax.set_title("DynamicResources extension points per pod (hollow: rejected)")
    ax.legend(fontsize=7, ncol=4, loc="upper center", bbox_to_anchor=(0.5, -0.25))
    return ax


def funnel(run: TracedRun, pod: str, node: str, which: int = 0) -> Funnel:
    """The ``which``-th Filter funnel of ``pod`` on ``node`` (0: first attempt, -1: last)."""
    return [f for f in run.funnels if f.pod == pod and f.node == node][which]


def plot_funnels(funnels: list[Funnel], ax=None):
    """Devices left after each step of the allocator, one bar group per Filter call."""
    import matplotlib.pyplot as plt
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 3.2))
    labels = [s for s, _ in funnels[0].steps]
    width = 0.8 / len(funnels)
    for i, f in enumerate(funnels):
        xs = [j + (i - (len(funnels) - 1) / 2) * width for j in range(len(labels))]
        bars = ax.bar(xs, [n for _, n in f.steps], width, label=f"{f.pod} at t={f.time:g}s on {f.node}")
        ax.bar_label(bars, fontsize=7)
    ax.set_xticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylabel("devices")
    ax.set_title("Allocator funnel: devices left after each step")
    ax.legend(fontsize=7)
    return ax


# --- scenarios -----------------------------------------------------------------------------------------------
def _sim(name: str, until: Optional[str] = None) -> dict:
    spec: dict = {"seed": 7, **({"until": until} if until else {})}
    return {"apiVersion": "gpusim.io/v1alpha1", "kind": "Simulation", "metadata": {"name": name}, "spec": spec}


def _pool(name: str, model: str, gpus: int, dra: bool, labels: Optional[dict] = None, count: int = 1) -> dict:
    spec: dict = {"count": count, "gpu": {"model": model, "count": gpus, **({"allocation": "dra"} if dra else {})}}
    if labels:
        spec["labels"] = labels
    return {"apiVersion": "gpusim.io/v1alpha1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def _request(name: str, cls: str, selectors: tuple[str, ...] = (), count: int = 1) -> dict:
    e: dict = {"deviceClassName": cls}
    if selectors:
        e["selectors"] = [{"cel": {"expression": s}} for s in selectors]
    if count != 1:
        e["count"] = count
    return {"name": name, "exactly": e}


def _claim_spec(request: dict, constraints: Optional[list] = None) -> dict:
    return {"devices": {"requests": [request], **({"constraints": constraints} if constraints else {})}}


def _template(name: str, request: dict, constraints: Optional[list] = None) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": _claim_spec(request, constraints)}}


def _claim(name: str, request: dict) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": _claim_spec(request)}


def _pod(name: str, containers: list[tuple[str, str, Any]], duration: str = "30m", at: str = "0s",
         claims: Optional[dict[str, dict]] = None, node_selector: Optional[dict] = None) -> dict:
    """``containers``: (name, image, resources), resources a ``{resource: count}`` of limits or a list of claim
    names; ``claims``: pod claim name → ``{resourceClaimName|resourceClaimTemplateName: ...}``."""
    cs = []
    for cname, image, res in containers:
        r = {"claims": [{"name": n} for n in res]} if isinstance(res, list) else {"limits": dict(res)}
        cs.append({"name": cname, "image": image, "resources": r})
    spec: dict = {"restartPolicy": "Never", "containers": cs}
    if claims:
        spec["resourceClaims"] = [{"name": k, **v} for k, v in claims.items()]
    if node_selector:
        spec["nodeSelector"] = node_selector
    return {"apiVersion": "v1", "kind": "Pod", "spec": spec, "metadata": {
        "name": name, "annotations": {"gpusim.io/duration": duration, "gpusim.io/submit-at": at}}}


def _dump(docs: list[dict]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)


def _cluster_policy(strategy: str) -> dict:
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
            "spec": {"mig": {"strategy": strategy}}}


# --- what the scheduler can see ------------------------------------------------------------------------------
def visibility(model: str = "H100-SXM5-80GB", gpus: int = 2) -> dict[str, dict[str, Any]]:
    """What the scheduler gets about one node's GPUs: under the device plugin the node's ``nvidia.com/*`` entries
    of ``status.allocatable``; under DRA the ResourceSlices' devices with their attributes and capacities, and
    the counter sets of partitionable devices."""
    out: dict[str, dict[str, Any]] = {}
    for label, dra in (("device-plugin", False), ("dra", True)):
        r = _run_text(_dump([_sim(f"see-{label}"), _pool("gpu", model, gpus, dra)]))
        node = r.nodes()[0]
        alloc = {k: v for k, v in node.status.allocatable.items() if k.startswith("nvidia.com/")}
        slices = r.api.list("ResourceSlice")
        devices = [d for s in slices for d in s.spec.devices]
        out[label] = {
            "allocatable": alloc, "numbers": len(alloc), "slices": len(slices), "devices": len(devices),
            "gpus": sum(1 for d in devices if d.attributes["type"].value() == "gpu"),
            "mig placements": sum(1 for d in devices if d.attributes["type"].value() == "mig"),
            "attributes per GPU": max((len(d.attributes) for d in devices if d.attributes["type"].value() == "gpu"),
                                      default=0),
            "counter sets": sum(len(s.spec.shared_counters or ()) for s in slices),
            "example": next((d for d in devices if d.attributes["type"].value() == "gpu"), None)}
    return out


def format_visibility(v: dict[str, dict[str, Any]]) -> str:
    from ..views.kubectl import _table
    keys = ["numbers", "slices", "devices", "gpus", "mig placements", "attributes per GPU", "counter sets"]
    rows = [["", *v]] + [[k, *(str(v[a][k]) for a in v)] for k in keys]
    dp = ", ".join(f"{k}: {x}" for k, x in v["device-plugin"]["allocatable"].items())
    ex = v["dra"]["example"]
    attrs = "\n".join(f"  {k}: {a.value()}" for k, a in sorted(ex.attributes.items())) if ex else ""
    caps = "\n".join(f"  capacity {k}: {c.value}" for k, c in sorted(ex.capacity.items())) if ex else ""
    return (_table(rows) + f"\n\ndevice plugin, node allocatable: {dp}\nDRA, device {ex.name if ex else '-'}:\n"
            + attrs + "\n" + caps)


def _run_text(text: str) -> Result:
    sim = Simulation(load([], [("<text>", text)]))
    return sim.run()


# --- sharing -------------------------------------------------------------------------------------------------
def sharing_scenario(allocation: str, gpus: int = 4) -> str:
    """An inference pod with two containers that both need the GPU (the server and a tokenizer/metrics sidecar)
    and two inference pods meant to share one GPU. Device plugin: each container asks ``nvidia.com/gpu: 1``;
    DRA: the pod's two containers list one pod claim, the two pods one named ResourceClaim."""
    dra = allocation == "dra"
    docs = [_sim(f"share-{allocation}"), _pool("h100", "H100-SXM5-80GB", gpus, dra)]
    if dra:
        docs += [_template("one-gpu", _request("gpu", GPU_CLASS)), _claim("shared-gpu", _request("gpu", GPU_CLASS))]
        docs.append(_pod("two-containers", [("server", INFER_IMAGE, ["gpu"]), ("sidecar", INFER_IMAGE, ["gpu"])],
                         claims={"gpu": {"resourceClaimTemplateName": "one-gpu"}}))
        for n in ("pair-a", "pair-b"):
            docs.append(_pod(n, [("server", INFER_IMAGE, ["gpu"])], claims={"gpu": {"resourceClaimName": "shared-gpu"}}))
    else:
        one = {"nvidia.com/gpu": 1}
        docs.append(_pod("two-containers", [("server", INFER_IMAGE, one), ("sidecar", INFER_IMAGE, one)]))
        for n in ("pair-a", "pair-b"):
            docs.append(_pod(n, [("server", INFER_IMAGE, one)]))
    return _dump(docs)


def gpus_per_pod(result: Result) -> dict[str, list[str]]:
    """The GPU UUIDs each pod held (the kubelet's holdings)."""
    out: dict[str, set] = {}
    for h in result.ctx.holdings:
        out.setdefault(h.pod, set()).add(h.device)
    return {p: sorted(v) for p, v in sorted(out.items())}


def sharing_comparison(gpus: int = 4) -> dict[str, dict[str, Any]]:
    """Per allocation: GPUs each pod held, distinct GPUs in use, and the container → CDI ids of the DRA pod."""
    out = {}
    for a in ("device-plugin", "dra"):
        r = _run_text(sharing_scenario(a, gpus))
        held = gpus_per_pod(r)
        cdi = {}
        for rec in r.ctx.trace.records:
            if rec.function == "dra.(*ManagerImpl).PrepareResources" and rec.object.endswith("/two-containers"):
                cdi = dict(rec.details.get("cdi_devices", {}))
        out[a] = {"result": r, "held": held, "gpus used": len({g for v in held.values() for g in v}),
                  "two-containers": len(held.get("two-containers", [])), "cdi": cdi}
    return out


def format_sharing(cmp: dict[str, dict[str, Any]]) -> str:
    from ..views.kubectl import _table
    rows = [["ALLOCATION", "POD", "GPUS HELD"]]
    for a, c in cmp.items():
        for pod, g in c["held"].items():
            rows.append([a, pod, ", ".join(x[:12] for x in g)])
        rows.append([a, "(distinct GPUs)", str(c["gpus used"])])
    return _table(rows) + "\n\nDRA two-containers, CDI ids per container: " + str(cmp["dra"]["cdi"])


# --- MIG: mig-manager profiles vs dynamic MIG from counters --------------------------------------------------
MIG_SETUPS = ("device plugin, mig.config=all-1g.10gb", "device plugin, mig.config=all-disabled", "DRA, dynamic MIG")


def mig_scenario(setup: str, model: str = "A100-SXM4-80GB", gpus: int = 2, inference: int = 7) -> str:
    """``inference`` servers that each need a 1g.10gb MIG instance (30 min, at 0) and one trainer that needs a
    whole GPU (30 min, at 1 min), on one node of ``gpus`` MIG-capable GPUs. Device plugin: the GPU Operator with
    ``mig.strategy: mixed`` and the node's ``nvidia.com/mig.config`` label (mig-manager applies one layout per
    node; pods ask ``nvidia.com/mig-1g.10gb: 1`` or ``nvidia.com/gpu: 1``). DRA: the pods ask through
    ResourceClaimTemplates (``mig.nvidia.com`` with a profile selector, ``gpu.nvidia.com``) and the driver
    publishes every placement as partitionable devices."""
    if setup not in MIG_SETUPS:
        raise ValueError(f"setup must be one of {MIG_SETUPS}, not {setup!r}")
    dra = setup.startswith("DRA")
    docs = [_sim("mig", None if dra else "3h")]
    if dra:
        docs += [_pool("a100", model, gpus, True),
                 _template("mig-1g", _request("mig", MIG_CLASS, (PROFILE_1G,))),
                 _template("whole-gpu", _request("gpu", GPU_CLASS))]
    else:
        layout = setup.split("=", 1)[1]
        docs += [_cluster_policy("mixed"), _pool("a100", model, gpus, False, {"nvidia.com/mig.config": layout})]
    for i in range(inference):
        res = ["mig"] if dra else {"nvidia.com/mig-1g.10gb": 1}
        docs.append(_pod(f"infer-{i}", [("server", INFER_IMAGE, res)],
                         claims={"mig": {"resourceClaimTemplateName": "mig-1g"}} if dra else None))
    docs.append(_pod("train", [("trainer", TRAIN_IMAGE, ["gpu"] if dra else {"nvidia.com/gpu": 1})], at="1m",
                     claims={"gpu": {"resourceClaimTemplateName": "whole-gpu"}} if dra else None))
    return _dump(docs)


def _outcome(r: Result) -> dict[str, Any]:
    pods = [p for p in r.pods() if p.metadata.namespace == "default"]
    done = [p for p in pods if p.status.phase == "Succeeded"]
    waits = {}
    for e in r.events.log:
        if e.reason == "FailedScheduling":
            waits.setdefault(e.object.name, e.message)
    ends = [h.end for h in r.ctx.holdings if h.end is not None]
    return {"completed": len(done), "pending": len(pods) - len(done),
            "last end (min)": round(max(ends) / 60, 1) if ends else None,
            "pending messages": {p.metadata.name: waits.get(p.metadata.name, "") for p in pods if p not in done}}


def mig_comparison(**kw) -> dict[str, dict[str, Any]]:
    """Run the MIG workload under each setup: completed and pending pods, when the last one ended, the first
    FailedScheduling message of each pod that never ran, the node's ``nvidia.com/*`` allocatable."""
    out = {}
    for s in MIG_SETUPS:
        r = _run_text(mig_scenario(s, **kw))
        o = _outcome(r)
        o["allocatable"] = {k: v for k, v in r.nodes()[0].status.allocatable.items() if k.startswith("nvidia.com/")}
        o["result"] = r
        out[s] = o
    return out


def format_mig(cmp: dict[str, dict[str, Any]]) -> str:
    from ..views.kubectl import _table
    rows = [["SETUP", "NODE ALLOCATABLE", "COMPLETED", "NEVER RAN", "LAST END (MIN)", "WHY (FIRST MESSAGE)"]]
    for s, o in cmp.items():
        msgs = sorted(set(o["pending messages"].values()))
        rows.append([s, ", ".join(f"{k}: {v}" for k, v in o["allocatable"].items()) or "(ResourceSlices)",
                     str(o["completed"]), str(o["pending"]), str(o["last end (min)"]), " | ".join(msgs) or "-"])
    return _table(rows)


def memory_slices_at(result: Result, t: float) -> dict[str, list[str]]:
    """Per GPU device of the DRA pool: which pod holds each memory slice at time ``t`` ("" = free), read from
    the claims the kubelet prepared (views.dra.claim_paths), the pods' holdings and the devices'
    ``consumesCounters`` (``memory-slice-<i>``)."""
    devices = {d.name: d for s in result.api.list("ResourceSlice") for d in s.spec.devices}
    spans = {}
    for h in result.ctx.holdings:
        spans.setdefault(h.pod, (h.start, result.end if h.end is None else h.end))
    gpus = sorted({n for n, d in devices.items() if d.attributes["type"].value() == "gpu"})
    size = {g: sum(1 for u in devices[g].consumes_counters for k in u.counters if k.startswith("memory-slice-"))
            for g in gpus}
    out = {g: [""] * size[g] for g in gpus}
    for row in claim_paths(result):
        pod = row["pod"].split("/", 1)[1]
        start, end = spans.get(pod, (row["time"], row["time"]))
        if not (start <= t < end):
            continue
        d = devices[row["device"]]
        gpu = row["device"].split("-mig-")[0]
        for u in d.consumes_counters:
            for k in u.counters:
                if k.startswith("memory-slice-"):
                    out[gpu][int(k.rsplit("-", 1)[1])] = pod
    return out


def plot_memory_slices(result: Result, t: float, ax=None):
    """The GPUs' memory slices at time ``t``, each labelled with the pod whose MIG device (or whole GPU) holds it."""
    import matplotlib.pyplot as plt
    m = memory_slices_at(result, t)
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 0.7 * len(m) + 1.2))
    pods = sorted({p for row in m.values() for p in row if p})
    for y, (gpu, row) in enumerate(m.items()):
        for x, pod in enumerate(row):
            color = f"C{pods.index(pod) % 10}" if pod else "whitesmoke"
            ax.barh(y, 1, left=x, color=color, edgecolor="grey")
            if pod:
                ax.text(x + 0.5, y, pod, ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(m)), list(m))
    ax.set_xlabel("memory slice")
    ax.set_title(f"Dynamic MIG at t={t:g}s: memory slices held per GPU")
    return ax


def memory_slices_widget(result: Result) -> None:
    """A time slider over ``plot_memory_slices`` (static twin: call it once at a chosen time)."""
    import ipywidgets as w
    import matplotlib.pyplot as plt
    from ..views.display import show_widget
    times = sorted({0.0} | {h.start for h in result.ctx.holdings} | {h.end for h in result.ctx.holdings if h.end})
    slider = w.SelectionSlider(options=[(f"{x:g}s", x) for x in times], value=times[0], description="t",
                               continuous_update=False, layout=w.Layout(width="90%"))
    out = w.Output()

    def show(change=None):
        with out:
            out.clear_output(wait=True)
            plot_memory_slices(result, slider.value)
            plt.show()

    slider.observe(show, names="value")
    show()
    show_widget(w.VBox([slider, out]))


# --- constraints ---------------------------------------------------------------------------------------------
CONSTRAINT_CASES = ("device plugin", "DRA matchAttribute", "DRA distinctAttribute")


def constraint_scenario(case: str, count: int = 2, model: str = "A100-SXM4-80GB", gpus: int = 2) -> str:
    """One pod that wants ``count`` 1g.10gb MIG instances. Device plugin (all-1g.10gb, mixed): a count, from any
    GPU. DRA: one request of ``count`` devices with ``matchAttribute: gpu.nvidia.com/parentUUID`` (all on one
    physical GPU, NVIDIA's gpu-test4) or ``distinctAttribute`` (each on a different GPU)."""
    if case not in CONSTRAINT_CASES:
        raise ValueError(f"case must be one of {CONSTRAINT_CASES}, not {case!r}")
    if case == "device plugin":
        docs = [_sim("pair", "2h"), _cluster_policy("mixed"),
                _pool("a100", model, gpus, False, {"nvidia.com/mig.config": "all-1g.10gb"}),
                _pod("pair", [("worker", TRAIN_IMAGE, {"nvidia.com/mig-1g.10gb": count})])]
        return _dump(docs)
    kind = "matchAttribute" if case.endswith("matchAttribute") else "distinctAttribute"
    docs = [_sim("pair", "2h"), _pool("a100", model, gpus, True),
            _template("migs", _request("mig", MIG_CLASS, (PROFILE_1G,), count), [{kind: PARENT}]),
            _pod("pair", [("worker", TRAIN_IMAGE, ["mig"])], claims={"mig": {"resourceClaimTemplateName": "migs"}})]
    return _dump(docs)


def parents_of(result: Result, pod: str = "pair") -> Optional[list[int]]:
    """The physical GPU (minor) behind each device the pod got, or None if it never ran."""
    rows = [r for r in claim_paths(result) if r["pod"] == f"default/{pod}"]
    if rows:
        return sorted(int(r["device"].split("-")[1]) for r in rows)
    held = [h.device for h in result.ctx.holdings if h.pod == pod]
    if not held:
        return None
    parent = {m.id: m.index for kl in result.kubelets.values() if kl.plugin is not None
              for m in getattr(kl.plugin, "mig_devices", [])}
    return sorted(parent.get(d, -1) for d in held)


def constraint_row(count: int, case: str) -> dict[str, Any]:
    """One case: the physical GPUs the pod's instances come from (None: never scheduled) and its first
    FailedScheduling message."""
    r = _run_text(constraint_scenario(case, count))
    waits = [e.message for e in r.events.log if e.reason == "FailedScheduling" and e.object.name == "pair"]
    return {"case": case, "count": count, "parents": parents_of(r), "message": waits[0] if waits else ""}


def constraint_comparison(counts: tuple[int, ...] = (2, 7, 8)) -> list[dict[str, Any]]:
    """:func:`constraint_row` for each count and case."""
    return [constraint_row(count, case) for count in counts for case in CONSTRAINT_CASES]


def format_constraints(rows: list[dict[str, Any]]) -> str:
    from ..views.kubectl import _table
    out = [["COUNT", "CASE", "PHYSICAL GPUS (MINOR PER INSTANCE)", "FIRST PENDING MESSAGE"]]
    for r in rows:
        out.append([str(r["count"]), r["case"], "-" if r["parents"] is None else str(r["parents"]),
                    r["message"] or "-"])
    return _table(out)


# --- failure messages ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FailureCase:
    name: str
    what: str
    docs: tuple[dict, ...]


def failure_cases() -> list[FailureCase]:
    """Small scenarios, each making the scheduler refuse pod ``p`` for one reason. One 2-GPU H100 node under
    the device plugin (``gpu-dp-0``) or the DRA driver (``gpu-dra-0``)."""
    dp = [_sim("fail", "1h"), _pool("gpu-dp", "H100-SXM5-80GB", 2, False)]
    dra = [_sim("fail", "1h"), _pool("gpu-dra", "H100-SXM5-80GB", 2, True)]
    three = {"nvidia.com/gpu": 3}
    tpl = {"gpu": {"resourceClaimTemplateName": "t"}}
    return [
        FailureCase("too many GPUs (device plugin)", "3 GPUs on a 2-GPU node",
                    (*dp, _pod("p", [("c", TRAIN_IMAGE, three)]))),
        FailureCase("too many GPUs (DRA)", "a claim for 3 GPUs on a 2-GPU node",
                    (*dra, _template("t", _request("gpu", GPU_CLASS, count=3)), _pod("p", [("c", TRAIN_IMAGE, ["gpu"])], claims=tpl))),
        FailureCase("no device matches the selector", "a CEL selector for more memory than any GPU has",
                    (*dra, _template("t", _request("gpu", GPU_CLASS, (
                        'device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("100Gi")) >= 0',))),
                     _pod("p", [("c", TRAIN_IMAGE, ["gpu"])], claims=tpl))),
        FailureCase("named claim missing", "resourceClaimName of a claim nobody created",
                    (*dra, _pod("p", [("c", TRAIN_IMAGE, ["gpu"])], claims={"gpu": {"resourceClaimName": "nope"}}))),
        FailureCase("DeviceClass missing", "a request for class example.com/gpu, which does not exist",
                    (*dra, _template("t", _request("gpu", "example.com")), _pod("p", [("c", TRAIN_IMAGE, ["gpu"])], claims=tpl))),
        FailureCase("CEL error", "a selector reading an attribute domain the device does not have",
                    (*dra, _template("t", _request("gpu", GPU_CLASS, ('device.attributes["example.com"].x == 1',))),
                     _pod("p", [("c", TRAIN_IMAGE, ["gpu"])], claims=tpl))),
        FailureCase("claim allocated on another node", "a shared claim in use on gpu-dra-0; p must run on gpu-dra-1",
                    (_sim("fail", "1h"), _pool("gpu-dra", "H100-SXM5-80GB", 2, True, count=2),
                     _claim("shared", _request("gpu", GPU_CLASS)),
                     _pod("first", [("c", INFER_IMAGE, ["gpu"])], claims={"gpu": {"resourceClaimName": "shared"}},
                          node_selector={"kubernetes.io/hostname": "gpu-dra-0"}),
                     _pod("p", [("c", INFER_IMAGE, ["gpu"])], at="1m", claims={"gpu": {"resourceClaimName": "shared"}},
                          node_selector={"kubernetes.io/hostname": "gpu-dra-1"}))),
    ]


def failure_scenario(name: str) -> str:
    """The scenario YAML of the failure case called ``name`` (:func:`failure_cases`)."""
    for case in failure_cases():
        if case.name == name:
            return _dump(list(case.docs))
    raise KeyError(f"no failure case {name!r}; the cases are: {', '.join(c.name for c in failure_cases())}")


def failure_messages() -> list[dict[str, str]]:
    """Per case: the extension point and status of the last DynamicResources call that refused ``p`` (from the
    traced plugin; "-" when another plugin refused it), and the pod's first FailedScheduling event as kubectl shows it ("" when PreEnqueue keeps the pod
    out of the active queue: upstream records no event then)."""
    rows = []
    for case in failure_cases():
        run = traced_run(text=_dump(list(case.docs)))
        # the last refusal: a template's claim is "not created yet" for an instant before the controller makes it
        # (PostFilter, which only runs after a refusal, is not one)
        refused = next((c for c in reversed(run.calls) if c.pod == "p" and c.code != "Success"
                        and c.point != "PostFilter"), None)
        events = [e.message for e in run.result.events.log if e.reason == "FailedScheduling" and e.object.name == "p"]
        rows.append({"case": case.name, "what": case.what,
                     "point": refused.point if refused else "-", "code": refused.code if refused else "-",
                     "plugin message": refused.message if refused else "-",
                     "event": events[0] if events else ""})
    return rows


def format_failures(rows: list[dict[str, str]]) -> str:
    """One block per case: the plugin's verdict and the event message."""
    out = []
    for r in rows:
        out.append(f"== {r['case']}: {r['what']}\n  plugin:  {r['point']} {r['code']}: {r['plugin message']}\n"
                   f"  event:   {r['event'] or '(no FailedScheduling event)'}")
    return "\n".join(out)
