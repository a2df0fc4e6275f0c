"""The course's scenarios with one thing changed, as its exercises ask: a pod's GPU request, a fault's fields,
a PriorityClass, an extra pod, a Volcano Queue's weight, a Job's ``minAvailable``, an ElasticQuota, a Kueue
ClusterQueue's quota fields, or any one field by its path (:func:`with_field`). Each takes and returns YAML text (what a user would ``kubectl apply``); the object
to change must exist, or a KeyError names it."""
from __future__ import annotations

from typing import Any, Optional

import yaml

GPU = "nvidia.com/gpu"


def docs(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def dump(items: list[dict]) -> str:
    return yaml.safe_dump_all(items, sort_keys=False)


def find(items: list[dict], kind: str, name: str, namespace: Optional[str] = None) -> dict:
    for d in items:
        meta = d.get("metadata") or {}
        if d.get("kind") == kind and meta.get("name") == name and (namespace is None
                                                                  or meta.get("namespace", "default") == namespace):
            return d
    where = f" in namespace {namespace}" if namespace else ""
    raise KeyError(f"no {kind} named {name!r}{where} in the scenario")


def with_field(text: str, kind: str, name: str, path: str, value: Any, namespace: Optional[str] = None) -> str:
    """Object ``kind``/``name`` with the field at the dotted ``path`` set to ``value`` (list items by index,
    e.g. ``spec.tasks.0.replicas``; missing mappings on the way are created); ``value=None`` removes the field."""
    items = docs(text)
    node: Any = find(items, kind, name, namespace)
    *parents, leaf = path.split(".")
    for i, key in enumerate(parents):
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise KeyError(f"{kind} {name!r}: no item {key!r} at {'.'.join(parents[:i + 1])}")
            node = node[int(key)]
        else:
            node = node.setdefault(key, {})
    if isinstance(node, list):
        if not leaf.isdigit() or int(leaf) >= len(node):
            raise KeyError(f"{kind} {name!r}: no item {leaf!r} at {path}")
        node[int(leaf)] = value
    elif value is None:
        node.pop(leaf, None)
    else:
        node[leaf] = value
    return dump(items)


def with_pod_gpus(text: str, pod: str, count: int) -> str:
    """Every container of Pod ``pod`` limited to ``count`` ``nvidia.com/gpu``."""
    items = docs(text)
    for c in find(items, "Pod", pod)["spec"]["containers"]:
        c.setdefault("resources", {}).setdefault("limits", {})[GPU] = count
    return dump(items)


def with_fault(text: str, fault: str, **spec: Any) -> str:
    """Fields of Fault ``fault``'s spec replaced (e.g. ``downtime="8s"``, ``xid=43``)."""
    items = docs(text)
    find(items, "Fault", fault)["spec"].update(spec)
    return dump(items)


def with_priority_class(text: str, pod: str, value: int, name: str = "high-priority") -> str:
    """A PriorityClass ``name`` (``value``) and Pod ``pod`` using it."""
    items = docs(text)
    find(items, "Pod", pod)["spec"]["priorityClassName"] = name
    items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                  "value": value})
    return dump(items)


def with_pod(text: str, name: str, gpus: int, submit_at: str = "0s", duration: str = "30m",
             namespace: str = "default", image: str = "nvcr.io/nvidia/pytorch:24.08-py3") -> str:
    """One more bare Pod (``restartPolicy: Never``) asking for ``gpus`` GPUs at ``submit_at``."""
    items = docs(text)
    items.append({"apiVersion": "v1", "kind": "Pod",
                  "metadata": {"name": name, "namespace": namespace,
                               "annotations": {"gpusim.io/submit-at": submit_at, "gpusim.io/duration": duration}},
                  "spec": {"restartPolicy": "Never", "containers": [
                      {"name": "main", "image": image, "resources": {"limits": {GPU: gpus}}}]}})
    return dump(items)


def with_queue_weights(text: str, weights: dict[str, int]) -> str:
    """Volcano Queues' ``spec.weight`` set, by queue name."""
    items = docs(text)
    for q, w in weights.items():
        find(items, "Queue", q)["spec"]["weight"] = int(w)
    return dump(items)


def with_min_available(text: str, job: str, n: int) -> str:
    """Volcano Job ``job``'s ``spec.minAvailable`` set to ``n``."""
    items = docs(text)
    find(items, "Job", job)["spec"]["minAvailable"] = int(n)
    return dump(items)


def with_elastic_quota(text: str, namespace: str, min: Optional[dict] = None, max: Optional[dict] = None) -> str:
    """The ElasticQuota of ``namespace`` with its ``min`` / ``max`` replaced (those given)."""
    items = docs(text)
    eq = next((d for d in items if d.get("kind") == "ElasticQuota"
               and (d.get("metadata") or {}).get("namespace") == namespace), None)
    if eq is None:
        raise KeyError(f"no ElasticQuota in namespace {namespace!r} in the scenario")
    if min is not None:
        eq["spec"]["min"] = dict(min)
    if max is not None:
        eq["spec"]["max"] = dict(max)
    return dump(items)


def with_cluster_queue_quota(text: str, cluster_queue: str, resource: str = GPU, **fields: Any) -> str:
    """Kueue ClusterQueue ``cluster_queue``: ``fields`` (``nominalQuota``, ``borrowingLimit``, ``lendingLimit``)
    set on ``resource`` in every flavor."""
    items = docs(text)
    cq = find(items, "ClusterQueue", cluster_queue)
    for group in cq["spec"]["resourceGroups"]:
        for flavor in group["flavors"]:
            for r in flavor["resources"]:
                if r["name"] == resource:
                    r.update(fields)
    return dump(items)


def with_annotation(text: str, kind: str, name: str, key: str, value: str, namespace: Optional[str] = None) -> str:
    """An annotation of object ``kind``/``name`` set (e.g. a Pod's ``gpusim.io/duration``)."""
    items = docs(text)
    meta = find(items, kind, name, namespace).setdefault("metadata", {})
    meta.setdefault("annotations", {})[key] = value
    return dump(items)


def with_pod_groups(text: str, groups: dict[str, int], args: Optional[dict] = None) -> str:
    """scheduler-plugins Coscheduling for several Jobs: one PodGroup per Job (named after it, ``minMember``
    from ``groups``), each Job's pod template labelled into its group, and the Coscheduling profile of
    scheduler-plugins' sample config (with ``args`` as its pluginConfig)."""
    import copy

    from ..views.gang import COSCHEDULING_PROFILE, POD_GROUP_LABEL
    items = docs(text)
    for job, n in groups.items():
        tmpl = find(items, "Job", job)["spec"]["template"]
        meta = tmpl.setdefault("metadata", {}) or {}
        tmpl["metadata"] = meta
        meta.setdefault("labels", {})[POD_GROUP_LABEL] = job
        items.append({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup", "metadata": {"name": job},
                      "spec": {"minMember": int(n)}})
    profile = copy.deepcopy(COSCHEDULING_PROFILE)
    if args:
        profile["profiles"][0]["pluginConfig"] = [{"name": "Coscheduling", "args": dict(args)}]
    return dump(items + [profile])
