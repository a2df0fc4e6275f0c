"""Topology-Aware Scheduling placement for one TAS ResourceFlavor (mirrors kueue
pkg/cache/scheduler/tas_flavor_snapshot.go, v0.19: ``TASFlavorSnapshot``, ``findTopologyAssignment``,
``fillInCounts``, ``findLevelWithFitDomains``, ``updateCountsToMinimumGeneric``, ``sortedDomains``,
``buildAssignment``, ``notFitMessage``).

Picture a building of blocks → racks → hosts: every host knows how many copies of one pod (its requests plus one
``pods``) still fit in it; a rack is the sum of its hosts, a block the sum of its racks. With a slice size *s* at
the slice level, a domain there holds ⌊pods/s⌋ slices and its parents sum slices.

- **BestFit** (required / preferred): at the requested level sort domains by slices (most first), then pods
  (fewest first), then their level values; if the first one fits, take the fitting domain with the fewest
  slices (least leftover). Else: required → fail; preferred → the level above; at the top level → take domains
  greedily, the last one by BestFit. Then descend level by level, children sorted the same way, taken greedily
  with BestFit for the last.
- **LeastFreeCapacity** (unconstrained, or TAS implied by a TAS-only ClusterQueue; ``TASProfileMixed`` is on
  by default since v0.15): the same at the lowest level, sorted by slices ascending, without BestFit.

Failure messages are upstream's: ``topology "…" allows to fit only N out of M pod(s)`` (``slice(s)`` when the
slice size is not 1), ``doesn't allow to fit any of``, with ``. Total nodes: T; excluded: …`` listing why leaves
were left out (``nodeSelector``, ``affinity``, ``taint "k=v:Effect"``, ``resource "cpu"``).

Not modelled (off by default in 0.19 or out of scope): leader/worker PodSet groups
(``kueue.x-k8s.io/podset-group-name``), ``TASBalancedPlacement`` (alpha), ``TASRespectNodeAffinityPreferred``
(alpha), multi-layer slice constraints, failed-node replacement and elastic workload slices. Where upstream
iterates a Go map (a resource's limiting count, equal-count ties) gpusim takes names in sorted order.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.kueue_x_k8s_io import LABEL_HOSTNAME, PodSetTopologyRequest
from ..componenthelpers.nodeaffinity import selector_matches
from ..componenthelpers.taints import find_matching_untolerated_taint, taint_string

Requests = dict[str, int]
PODS = "pods"


def count_in(req: Requests, capacity: Requests) -> tuple[int, str]:
    """resources.Requests.CountInWithLimitingResource: how many copies of ``req`` fit in ``capacity``, and
    the resource that limits it (a resource the capacity lacks fits 0). Integer division truncates toward
    zero, as Go's does on an over-committed (negative) capacity."""
    result: Optional[int] = None
    limiting = ""
    for name in sorted(req):
        v = req[name]
        if v <= 0:
            continue
        if name not in capacity:
            return 0, name
        c = capacity[name]
        n = abs(c) // v * (1 if c >= 0 else -1)
        if result is None or n < result:
            result, limiting = n, name
    return (0, "") if result is None else (result, limiting)


def add(a: Requests, b: Requests, sign: int = 1) -> Requests:
    for k, v in b.items():
        a[k] = a.get(k, 0) + sign * v
    return a


@dataclass(eq=False)
class Domain:
    """A topology domain; leaves carry capacity (``free``: allocatable − non-TAS usage) and TAS usage."""

    id: str
    level_values: tuple[str, ...]
    parent: Optional["Domain"] = None
    children: list["Domain"] = field(default_factory=list)
    state: int = 0              # pods that fit (phase 1) / pods assigned (phase 2)
    slice_state: int = 0
    free: Requests = field(default_factory=dict)
    tas_usage: Requests = field(default_factory=dict)
    node: Any = None


@dataclass
class ExclusionStats:
    """Why leaves were left out (tas_flavor_snapshot.go ExclusionStats)."""

    taints: dict[str, int] = field(default_factory=dict)
    node_selector: int = 0
    affinity: int = 0
    topology_domain: int = 0
    resources: dict[str, int] = field(default_factory=dict)
    total_nodes: int = 0

    def has_exclusions(self) -> bool:
        return bool(self.node_selector or self.affinity or self.topology_domain or self.taints or self.resources)

    def format_reasons(self) -> str:
        reasons = []
        if self.node_selector:
            reasons.append(f"nodeSelector: {self.node_selector}")
        if self.affinity:
            reasons.append(f"affinity: {self.affinity}")
        if self.topology_domain:
            reasons.append(f"topologyDomain: {self.topology_domain}")
        reasons += [f'taint "{t}": {n}' for t, n in self.taints.items()]
        reasons += [f'resource "{r}": {n}' for r, n in self.resources.items()]
        return ", ".join(sorted(reasons))


@dataclass
class TASPodSetRequest:
    """TASPodSetRequests: one PodSet of a workload, on its assigned TAS flavor."""

    name: str
    pod_spec: Any                                   # the PodSet template's spec (selector, affinity, tolerations)
    single_pod_requests: Requests
    count: int
    topology_request: Optional[PodSetTopologyRequest] = None
    implied: bool = False                           # TAS-only ClusterQueue, no annotation on the PodSet

    def total(self) -> Requests:
        return {k: v * self.count for k, v in self.single_pod_requests.items()}


@dataclass
class Placement:
    """utiltas.TopologyAssignment: node-label keys and, per lowest-level domain, its values and pod count."""

    levels: list[str]
    domains: list[tuple[list[str], int]]

    def usage(self, single_pod: Requests) -> dict[str, Requests]:
        """ComputeUsagePerDomain: requests × count plus ``pods`` per domain, keyed by domain ID."""
        out: dict[str, Requests] = {}
        for values, count in self.domains:
            u = {k: v * count for k, v in single_pod.items()}
            u[PODS] = u.get(PODS, 0) + count
            add(out.setdefault(",".join(values), {}), u)
        return out


def _is_required(tr: Optional[PodSetTopologyRequest]) -> bool:
    return tr is not None and tr.required is not None


def _slice_only(tr: Optional[PodSetTopologyRequest]) -> bool:
    return tr is not None and tr.required is None and tr.preferred is None and \
        tr.pod_set_slice_required_topology is not None


def _is_unconstrained(tr: Optional[PodSetTopologyRequest], implied: bool) -> bool:
    return (tr is not None and bool(tr.unconstrained)) or implied or _slice_only(tr)


class TASFlavorSnapshot:
    """The topology tree of one TAS flavor at one scheduling cycle."""

    def __init__(self, topology_name: str, levels: list[str], tolerations: Optional[list[Any]] = None):
        self.topology_name = topology_name
        self.level_keys = list(levels)
        self.tolerations = list(tolerations or [])
        self.is_lowest_level_node = bool(levels) and levels[-1] == LABEL_HOSTNAME
        self.leaves: dict[str, Domain] = {}
        self.domains: dict[str, Domain] = {}
        self.roots: dict[str, Domain] = {}
        self.per_level: list[dict[str, Domain]] = [{} for _ in levels]

    # --- construction (addNode, initialize, addCapacity, addNonTASUsage, addTASUsage) -----------------------
    def add_node(self, node: Any, allocatable: Requests) -> str:
        values = tuple(node.metadata.labels.get(k, "") for k in self.level_keys)
        did = values[-1] if self.is_lowest_level_node else ",".join(values)
        leaf = self.leaves.get(did)
        if leaf is None:
            leaf = self.leaves[did] = Domain(did, values, node=node if self.is_lowest_level_node else None)
        add(leaf.free, allocatable)
        return did

    def add_non_tas_usage(self, domain_id: str, usage: Requests) -> None:
        leaf = self.leaves.get(domain_id)
        if leaf is not None:
            add(leaf.free, usage, -1)

    def add_tas_usage(self, domain_id: str, usage: Requests, sign: int = 1) -> None:
        leaf = self.leaves.get(domain_id)
        if leaf is not None:      # the backing node may be gone or NotReady: skip, as upstream
            add(leaf.tas_usage, usage, sign)

    def initialize(self) -> None:
        for leaf in self.leaves.values():
            self.domains[leaf.id] = leaf
            self.per_level[len(leaf.level_values) - 1][leaf.id] = leaf
            self._link(leaf)

    def _link(self, dom: Domain) -> None:
        if len(dom.level_values) == 1:
            self.roots[dom.id] = dom
            return
        pvalues = dom.level_values[:-1]
        pid = ",".join(pvalues)
        parent = self.domains.get(pid)
        if parent is None:
            parent = self.domains[pid] = Domain(pid, pvalues)
            self.per_level[len(pvalues) - 1][pid] = parent
            self._link(parent)
        dom.parent = parent
        parent.children.append(dom)

    def lowest_level(self) -> str:
        return self.level_keys[-1]

    def has_level(self, tr: Optional[PodSetTopologyRequest]) -> bool:
        """HasLevel: the requested level and the slice level are levels of this topology."""
        key = self._level_key(tr)
        if key is None:
            return False
        slice_key = self._slice_key(tr)
        return key in self.level_keys and slice_key in self.level_keys

    def _level_key(self, tr: Optional[PodSetTopologyRequest]) -> Optional[str]:
        if tr is None:
            return None
        if tr.required is not None:
            return tr.required
        if tr.preferred is not None:
            return tr.preferred
        if _slice_only(tr):
            return self.level_keys[0]
        if tr.unconstrained:
            return self.lowest_level()
        return None

    def _slice_key(self, tr: Optional[PodSetTopologyRequest]) -> str:
        if tr is not None and tr.pod_set_slice_required_topology is not None:
            return tr.pod_set_slice_required_topology
        return self.lowest_level()

    # --- the algorithm ---------------------------------------------------------------------------------------
    def find_topology_assignments(self, requests: list[TASPodSetRequest], simulate_empty: bool = False,
                                  assumed_usage: Optional[dict[str, Requests]] = None
                                  ) -> dict[str, tuple[Optional[Placement], str]]:
        """FindTopologyAssignmentsForFlavor: PodSets in order, each seeing the usage the previous ones were
        assigned; stops at the first failure."""
        assumed: dict[str, Requests] = {k: dict(v) for k, v in (assumed_usage or {}).items()}
        out: dict[str, tuple[Optional[Placement], str]] = {}
        for tr in requests:
            placement, reason = self.find_topology_assignment(tr, assumed, simulate_empty)
            out[tr.name] = (placement, reason)
            if reason:
                return out
            for did, u in placement.usage(tr.single_pod_requests).items():
                add(assumed.setdefault(did, {}), u)
        return out

    def find_topology_assignment(self, tr: TASPodSetRequest, assumed: Optional[dict[str, Requests]] = None,
                                 simulate_empty: bool = False) -> tuple[Optional[Placement], str]:
        """findTopologyAssignment (without a leader PodSet): (placement, "") or (None, reason)."""
        treq = tr.topology_request
        requests = dict(tr.single_pod_requests)
        requests[PODS] = requests.get(PODS, 0) + 1
        slice_size = 1
        if treq is not None and treq.pod_set_slice_required_topology is not None:
            if treq.pod_set_slice_size is None:
                return None, "slice topology requested, but slice size not provided"
            slice_size = treq.pod_set_slice_size
        required = _is_required(treq)
        unconstrained = _is_unconstrained(treq, tr.implied)
        key = self._level_key(treq)
        if key is None and tr.implied:
            key = self.lowest_level()
        if key is None:
            return None, "topology level not specified"
        if key not in self.level_keys:
            return None, f"no requested topology level: {key}"
        level_idx = self.level_keys.index(key)
        slice_key = self._slice_key(treq)
        if slice_key not in self.level_keys:
            return None, f"no requested topology level for slices: {slice_key}"
        slice_idx = self.level_keys.index(slice_key)
        if level_idx > slice_idx:
            return None, f"podset slice topology {slice_key} is above the podset topology {key}"
        stats = ExclusionStats()
        self._fill_in_counts(tr, requests, assumed or {}, simulate_empty, slice_size, slice_idx, stats)
        fit_idx, fit, reason = self._find_level_with_fit_domains(level_idx, tr.count, slice_size, required,
                                                                 unconstrained, stats)
        if reason:
            return None, reason
        cur = self._update_counts_to_minimum(fit, tr.count, slice_size, unconstrained, True)
        level = fit_idx
        last = len(self.per_level) - 1
        while level < min(last, slice_idx):
            lower = self._sorted([c for d in cur for c in d.children], unconstrained)
            cur = self._update_counts_to_minimum(lower, tr.count, slice_size, unconstrained, True)
            level += 1
        while level < last:
            nxt: list[Domain] = []
            for d in cur:
                nxt += self._update_counts_to_minimum(self._sorted(d.children, unconstrained), d.state, 1,
                                                      unconstrained, False)
            cur = nxt
            level += 1
        return self._build_assignment(cur), ""

    def _fill_in_counts(self, tr: TASPodSetRequest, requests: Requests, assumed: dict[str, Requests],
                        simulate_empty: bool, slice_size: int, slice_idx: int, stats: ExclusionStats) -> None:
        for d in self.domains.values():
            d.state = d.slice_state = 0
        spec = tr.pod_spec
        tolerations = list(spec.tolerations) + self.tolerations if spec is not None else list(self.tolerations)
        aff = spec.affinity.node_affinity if spec is not None and spec.affinity else None
        required_affinity = aff.required_during_scheduling_ignored_during_execution if aff else None
        selector = dict(spec.node_selector) if spec is not None and self.is_lowest_level_node else {}
        for leaf in sorted(self.leaves.values(), key=lambda d: d.level_values):
            stats.total_nodes += 1
            if self.is_lowest_level_node:
                node = leaf.node
                taint = find_matching_untolerated_taint(node.spec.taints, tolerations)
                if taint is not None:
                    k = taint_string(taint)
                    stats.taints[k] = stats.taints.get(k, 0) + 1
                    continue
                labels = node.metadata.labels
                if any(labels.get(k) != v for k, v in selector.items()):
                    stats.node_selector += 1
                    continue
                if required_affinity is not None and not selector_matches(required_affinity, node):
                    stats.affinity += 1
                    continue
            remaining = dict(leaf.free)
            if not simulate_empty:
                add(remaining, leaf.tas_usage, -1)
            if leaf.id in assumed:
                add(remaining, assumed[leaf.id], -1)
            leaf.state, limiting = count_in(requests, remaining)
            if leaf.state == 0 and limiting:
                stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
        for root in self.roots.values():
            self._fill_helper(root, slice_size, slice_idx, 0)

    def _fill_helper(self, dom: Domain, slice_size: int, slice_idx: int, level: int) -> None:
        if not dom.children:
            if level == slice_idx:
                dom.slice_state = dom.state // slice_size
            return
        state = slices = 0
        for c in dom.children:
            self._fill_helper(c, slice_size, slice_idx, level + 1)
            state += c.state
            slices += c.slice_state
        dom.state = state
        dom.slice_state = state // slice_size if level == slice_idx else slices

    def _sorted(self, domains: list[Domain], unconstrained: bool) -> list[Domain]:
        """sortedDomains: slices descending (BestFit) or ascending (LeastFreeCapacity), then pods ascending,
        then level values."""
        sign = 1 if unconstrained else -1
        return sorted(domains, key=lambda d: (sign * d.slice_state, d.state, d.level_values))

    @staticmethod
    def _best_fit(domains: list[Domain], needed: int, slices: bool) -> Domain:
        """findBestFitDomainBy: the first domain with the smallest count ≥ needed; else the first."""
        get = (lambda d: d.slice_state) if slices else (lambda d: d.state)
        best, best_state = domains[0], get(domains[0])
        for d in domains:
            s = get(d)
            if needed <= s < best_state:
                best, best_state = d, s
        return best

    def _find_level_with_fit_domains(self, idx: int, count: int, slice_size: int, required: bool,
                                     unconstrained: bool, stats: ExclusionStats
                                     ) -> tuple[int, list[Domain], str]:
        domains = list(self.per_level[idx].values())
        if not domains:
            return 0, [], f"no topology domains at level: {self.level_keys[idx]}"
        ordered = self._sorted(domains, unconstrained)
        top = ordered[0]
        slice_count = count // slice_size
        best_fit = not unconstrained
        if best_fit and top.slice_state >= slice_count:
            top = self._best_fit(ordered, slice_count, True)
        if unconstrained:
            for cand in ordered:
                if cand.slice_state >= slice_count:
                    return idx, [cand], ""
            if required:
                return 0, [], self._not_fit(ordered[-1].state, slice_count, slice_size, stats)
        if top.slice_state < slice_count:
            if required:
                return 0, [], self._not_fit(top.slice_state, slice_count, slice_size, stats)
            if idx > 0 and not unconstrained:
                return self._find_level_with_fit_domains(idx - 1, count, slice_size, required, unconstrained, stats)
            results: list[Domain] = []
            remaining = slice_count
            ordered = self._sorted(ordered, unconstrained)
            for i, d in enumerate(ordered):
                if remaining <= 0:
                    break
                if best_fit and d.slice_state >= remaining:
                    d = self._best_fit(ordered[i:], remaining, True)
                results.append(d)
                remaining -= d.slice_state
            if remaining > 0:
                return 0, [], self._not_fit(slice_count - remaining, slice_count, slice_size, stats)
            return idx, results, ""
        return idx, [top], ""

    def _update_counts_to_minimum(self, domains: list[Domain], count: int, slice_size: int, unconstrained: bool,
                                  slices: bool) -> list[Domain]:
        """updateCountsToMinimumGeneric (no leaders): take domains in order until ``count`` pods (or
        count/sliceSize slices) are placed, BestFit for the last one; set each domain's state to its share."""
        result: list[Domain] = []
        remaining = count // slice_size if slices else count
        best_fit = not unconstrained
        for i, d in enumerate(domains):
            if slices:
                if best_fit and d.slice_state >= remaining:
                    d = self._best_fit(domains[i:], remaining, True)
                if d.slice_state >= remaining:
                    d.state, d.slice_state = remaining * slice_size, remaining
                    result.append(d)
                    return result
                d.state = d.slice_state * slice_size
                remaining -= d.slice_state
                result.append(d)
                continue
            if best_fit and d.state >= remaining:
                d = self._best_fit(domains[i:], remaining, False)
            if d.state >= remaining:
                d.state = remaining
                result.append(d)
                return result
            remaining -= d.state
            result.append(d)
        return []     # upstream logs errCodeAssumptionsViolated: the counts promised a fit

    def _build_assignment(self, domains: list[Domain]) -> Placement:
        """buildAssignment: leaves by level values; only the hostname when it is the lowest level."""
        start = len(self.level_keys) - 1 if self.is_lowest_level_node else 0
        out = [(list(d.level_values[start:]), d.state) for d in sorted(domains, key=lambda d: d.level_values)
               if d.state != 0]
        return Placement(self.level_keys[start:], out)

    def _not_fit(self, fit: int, total: int, slice_size: int, stats: ExclusionStats) -> str:
        unit = "pod" if slice_size == 1 else "slice"
        if fit == 0:
            msg = f'topology "{self.topology_name}" doesn\'t allow to fit any of {total} {unit}(s)'
        else:
            msg = f'topology "{self.topology_name}" allows to fit only {fit} out of {total} {unit}(s)'
        if stats.has_exclusions():
            msg += f". Total nodes: {stats.total_nodes}; excluded: {stats.format_reasons()}"
        return msg

    def free_capacity_per_domain(self) -> dict[str, tuple[Requests, Requests]]:
        """SerializeFreeCapacityPerDomain's data: leaf → (free capacity, TAS usage)."""
        return {d: (dict(l.free), dict(l.tas_usage)) for d, l in sorted(self.leaves.items())}


def fill_single_compact_slice_values(values: list[str]) -> dict[str, Any]:
    """tas_assignment.go fillSingleCompactSliceValues: ``universalValue`` when all are equal, else the common
    prefix and suffix (not overlapping) and the roots."""
    prefix = suffix = values[0]
    max_len = min_len = len(values[0])
    for s in values[1:]:
        n = len(s)
        min_len, max_len = min(min_len, n), max(max_len, n)
        if n < len(prefix):
            prefix = prefix[:n]
        if n < len(suffix):
            suffix = suffix[len(suffix) - n:]
        for i in range(len(prefix)):
            if s[i] != prefix[i]:
                prefix = prefix[:i]
                break
        for i in range(len(suffix)):
            if s[len(s) - 1 - i] != suffix[len(suffix) - 1 - i]:
                suffix = suffix[len(suffix) - i:]
                break
    if len(prefix) == max_len:
        return {"universal_value": prefix}
    if len(prefix) + len(suffix) > min_len:
        prefix = prefix[:min_len - len(suffix)]
    out: dict[str, Any] = {"roots": [s[len(prefix):len(s) - len(suffix)] for s in values]}
    if prefix:
        out["prefix"] = prefix
    if suffix:
        out["suffix"] = suffix
    return out


def to_v1beta2(p: Placement) -> Any:
    """tas_assignment.go singleCompactSliceEncoding (V1Beta2From): one slice, values per level compacted,
    ``universalPodCount`` when every domain has the same count. (Kueue 0.19's beta
    ``TASAssignmentsEncodingByHostnamePrefix`` may split a hostname assignment into several slices by
    hostname prefix; the domains it decodes to are the same.)"""
    from ..api.kueue_x_k8s_io import TopologyAssignment, TopologyAssignmentSlice, TopologyAssignmentSliceLevelValues
    if not p.domains:
        return TopologyAssignment(list(p.levels), [])
    per_level = [TopologyAssignmentSliceLevelValues(**fill_single_compact_slice_values([d[0][i] for d in p.domains]))
                 for i in range(len(p.levels))]
    counts = [c for _, c in p.domains]
    sl = TopologyAssignmentSlice(len(p.domains), per_level)
    if all(c == counts[0] for c in counts):
        sl.universal_pod_count = counts[0]
    else:
        sl.pod_counts = counts
    return TopologyAssignment(list(p.levels), [sl])
