"""The kubelet Topology Manager (mirrors kubernetes pkg/kubelet/cm/topologymanager, v1.36:
``bitmask/bitmask.go``, ``topology_manager.go``, ``numa_info.go``, ``policy.go``, ``policy_none.go``,
``policy_best_effort.go``, ``policy_restricted.go``, ``policy_single_numa_node.go``,
``policy_options.go``, ``scope.go``, ``scope_container.go``, ``scope_pod.go``, ``scope_none.go``; and
``pkg/kubelet/cm/admission/errors.go`` for the admission result).

Picture a meeting planner: every hint provider (device manager, CPU manager, memory manager) says, per
resource, which combinations of NUMA nodes could serve the request ("hints", a bitmask each, marked
*preferred* when it is one of the narrowest possible). The manager tries every combination of one hint
per resource, ANDs the masks, and keeps the best result: preferred beats not preferred, then the
narrower (or, with ``prefer-closest-numa-nodes``, the closer) mask. The policy then decides:

- ``none``: no merging; providers allocate as they like.
- ``best-effort``: admit always; providers are asked to follow the best hint.
- ``restricted``: admit only if the best hint is preferred.
- ``single-numa-node``: consider only single-NUMA hints (or "don't care"), admit only if preferred.

Scopes: ``container`` aligns each container (init containers first) on its own; ``pod`` aligns the pod's
summed request once and gives every container the same hint. A rejected pod gets reason
``TopologyAffinityError`` and message ``Resources cannot be allocated with Topology locality``; an
allocation error from a provider becomes ``UnexpectedAdmissionError`` ``Allocate failed due to <err>,
which is unexpected``.

The kubelet calls :meth:`Manager.admit` (or :func:`admit`) and gets a :class:`PodAdmitResult`
``(admit, reason, message)``. Providers implement :class:`HintProvider`; ``devicemanager_affinity``
holds the device manager's one.

Determinism: upstream ranges over Go maps (provider hints per resource) in random order; gpusim walks
resources in sorted order. The merge result does not depend on that order in the upstream tests.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Optional, Protocol, Sequence

# --- constants (topology_manager.go, policy_*.go, scope.go, policy_options.go, admission/errors.go) -----
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8          # defaultMaxAllowableNUMANodes
ERROR_TOPOLOGY_AFFINITY = "TopologyAffinityError"
TOPOLOGY_AFFINITY_MESSAGE = "Resources cannot be allocated with Topology locality"
ERROR_REASON_UNEXPECTED = "UnexpectedAdmissionError"
POLICY_NONE, POLICY_BEST_EFFORT = "none", "best-effort"
POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE = "restricted", "single-numa-node"
POLICIES = (POLICY_NONE, POLICY_BEST_EFFORT, POLICY_RESTRICTED, POLICY_SINGLE_NUMA_NODE)
SCOPE_CONTAINER, SCOPE_POD, SCOPE_NONE = "container", "pod", "none"
PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
# Both options are stable (GA) in 1.36: KEP-3545 (prefer-closest-numa-nodes), KEP-4622 (GA in 1.35).
ALPHA_OPTIONS: frozenset[str] = frozenset()
BETA_OPTIONS: frozenset[str] = frozenset()
STABLE_OPTIONS = frozenset({PREFER_CLOSEST_NUMA_NODES, MAX_ALLOWABLE_NUMA_NODES})

# KubeletConfiguration field names (k8s.io/kubelet/config/v1beta1) the topology manager reads.
KUBELET_POLICY_FIELD = "topologyManagerPolicy"
KUBELET_SCOPE_FIELD = "topologyManagerScope"
KUBELET_OPTIONS_FIELD = "topologyManagerPolicyOptions"


class TopologyManagerError(ValueError):
    """An error out of NewManager / NewPolicyOptions (the kubelet would not start)."""


# --- bitmask ----------------------------------------------------------------------------------------
class BitMask:
    """bitmask.BitMask over NUMA node ids 0-63, immutable (upstream's in-place Add/Remove/And/Or return
    new masks here)."""

    __slots__ = ("_v",)

    def __init__(self, value: int = 0):
        self._v = value & ((1 << 64) - 1)

    @staticmethod
    def new(*bits: int) -> "BitMask":
        """NewBitMask; raises for bits outside 0-63 as upstream's ``Add`` does."""
        return BitMask().add(*bits, strict=True)

    def add(self, *bits: int, strict: bool = False) -> "BitMask":
        v = self._v
        for b in bits:
            if b < 0 or b >= 64:
                if strict:
                    raise ValueError("bit number must be in range 0-63")
                return self          # upstream returns the error and leaves the mask unchanged
            v |= 1 << b
        return BitMask(v)

    def remove(self, *bits: int) -> "BitMask":
        v = self._v
        for b in bits:
            if b < 0 or b >= 64:
                return self
            v &= ~(1 << b)
        return BitMask(v)

    def and_(self, *masks: "BitMask") -> "BitMask":
        v = self._v
        for m in masks:
            v &= m._v
        return BitMask(v)

    def or_(self, *masks: "BitMask") -> "BitMask":
        v = self._v
        for m in masks:
            v |= m._v
        return BitMask(v)

    @staticmethod
    def fill() -> "BitMask":
        return BitMask((1 << 64) - 1)

    def is_empty(self) -> bool:
        return self._v == 0

    def is_set(self, bit: int) -> bool:
        return 0 <= bit < 64 and bool(self._v & (1 << bit))

    def any_set(self, bits: Iterable[int]) -> bool:
        return any(self.is_set(b) for b in bits)

    def is_equal(self, other: "BitMask") -> bool:
        return self._v == other._v

    def is_less_than(self, other: "BitMask") -> bool:
        """More lower-numbered bits set (plain integer comparison, as upstream)."""
        return self._v < other._v

    def is_greater_than(self, other: "BitMask") -> bool:
        return self._v > other._v

    def is_narrower_than(self, other: "BitMask") -> bool:
        """Fewer bits set; on equal counts, the one with more lower-numbered bits set."""
        if self.count() == other.count():
            return self.is_less_than(other)
        return self.count() < other.count()

    def count(self) -> int:
        return bin(self._v).count("1")

    def get_bits(self) -> list[int]:
        return [i for i in range(64) if self._v & (1 << i)]

    @property
    def value(self) -> int:
        return self._v

    def __str__(self) -> str:
        """String(): binary, left-padded to an even number of digits (``01``, ``10``, ``0110``)."""
        grouping = 2
        for shift in range(64 - grouping, 0, -grouping):
            if self._v > (1 << shift):
                return format(self._v, f"0{shift + grouping}b")
        return format(self._v, f"0{grouping}b")

    def __repr__(self) -> str:
        return f"BitMask({self.get_bits()})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BitMask) and self._v == other._v

    def __hash__(self) -> int:
        return hash(self._v)


def iterate_bitmasks(bits: Sequence[int]) -> Iterator[BitMask]:
    """IterateBitMasks: every non-empty subset of ``bits``, by size, then in index order."""
    def iterate(rest: Sequence[int], accum: list[int], size: int) -> Iterator[BitMask]:
        if len(accum) == size:
            yield BitMask.new(*accum)
            return
        for i in range(len(rest)):
            yield from iterate(rest[i + 1:], accum + [rest[i]], size)

    for size in range(1, len(bits) + 1):
        yield from iterate(list(bits), [], size)


# --- hints --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TopologyHint:
    """TopologyHint{NUMANodeAffinity, Preferred}; ``numa_node_affinity is None`` means "any NUMA node"."""

    numa_node_affinity: Optional[BitMask] = None
    preferred: bool = False

    def is_equal(self, other: "TopologyHint") -> bool:
        if self.preferred != other.preferred:
            return False
        if self.numa_node_affinity is None or other.numa_node_affinity is None:
            return self.numa_node_affinity is other.numa_node_affinity
        return self.numa_node_affinity.is_equal(other.numa_node_affinity)

    def less_than(self, other: "TopologyHint") -> bool:
        """LessThan: preferred first, then the narrower mask."""
        if self.preferred != other.preferred:
            return self.preferred
        return self.numa_node_affinity.is_narrower_than(other.numa_node_affinity)  # type: ignore[union-attr]

    def __str__(self) -> str:
        mask = "<nil>" if self.numa_node_affinity is None else str(self.numa_node_affinity)
        return f"{{{mask} {str(self.preferred).lower()}}}"


def hint(*bits: int, preferred: bool = True) -> TopologyHint:
    """Shorthand: ``hint(0, 1)`` = TopologyHint{NewBitMask(0, 1), true}; ``hint()`` = "don't care"."""
    return TopologyHint(BitMask.new(*bits) if bits else None, preferred)


ProviderHints = Optional[Mapping[str, Optional[Sequence[TopologyHint]]]]


# --- NUMA info (numa_info.go) -------------------------------------------------------------------------
@dataclass
class NUMAInfo:
    """The machine's NUMA nodes and, for ``prefer-closest-numa-nodes``, their distance rows
    (``distances[node][other]``, as sysfs ``node<N>/distance`` / cAdvisor report them)."""

    nodes: list[int]
    distances: dict[int, list[int]] = field(default_factory=dict)

    def default_affinity_mask(self) -> BitMask:
        return BitMask.new(*self.nodes)

    def narrowest(self, m1: BitMask, m2: BitMask) -> BitMask:
        return m1 if m1.is_narrower_than(m2) else m2

    def closest(self, m1: BitMask, m2: BitMask) -> BitMask:
        """Closest: narrower wins on different counts; else the smaller average distance; else the one
        with more lower-numbered bits."""
        if m1.count() != m2.count():
            return self.narrowest(m1, m2)
        d1, d2 = self.calculate_average_for(m1), self.calculate_average_for(m2)
        if d1 == d2:
            return m1 if m1.is_less_than(m2) else m2
        return m1 if d1 < d2 else m2

    def calculate_average_for(self, bm: BitMask) -> float:
        bits = bm.get_bits()
        if not bits:
            return 0.0
        total = sum(self.distances[a][b] for a in bits for b in bits)
        return total / (len(bits) * len(bits))


def new_numa_info(nodes: Sequence[int], distances: Optional[Mapping[int, Sequence[int]]],
                  opts: "PolicyOptions") -> NUMAInfo:
    """NewNUMAInfo: distances are required only with prefer-closest-numa-nodes."""
    dist: dict[int, list[int]] = {}
    for n in nodes:
        row = (distances or {}).get(n)
        if opts.prefer_closest_numa and row is None:
            raise TopologyManagerError("error getting NUMA distances from cadvisor")
        dist[n] = list(row) if row is not None else []
    return NUMAInfo(list(nodes), dist)


# --- policy options (policy_options.go) ---------------------------------------------------------------
@dataclass(frozen=True)
class PolicyOptions:
    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


def check_policy_option_available(option: str, feature_gates: Optional[Mapping[str, bool]] = None,
                                  alpha: frozenset[str] = ALPHA_OPTIONS,
                                  beta: frozenset[str] = BETA_OPTIONS) -> None:
    """CheckPolicyOptionAvailable. Both options are stable in 1.36; alpha options need the gate
    TopologyManagerPolicyAlphaOptions (default off), beta ones TopologyManagerPolicyBetaOptions (default on)."""
    gates = feature_gates or {}
    if option not in alpha | beta | STABLE_OPTIONS:
        raise TopologyManagerError(f'unknown Topology Manager Policy option: "{option}"')
    if option in alpha and not gates.get("TopologyManagerPolicyAlphaOptions", False):
        raise TopologyManagerError(f'topology manager policy alpha-level options not enabled, but option '
                                   f'"{option}" provided')
    if option in beta and not gates.get("TopologyManagerPolicyBetaOptions", True):
        raise TopologyManagerError(f'topology manager policy beta-level options not enabled, but option '
                                   f'"{option}" provided')


def _parse_bool(value: str) -> bool:
    """strconv.ParseBool."""
    if value in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if value in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise ValueError(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def new_policy_options(options: Optional[Mapping[str, str]] = None,
                       feature_gates: Optional[Mapping[str, bool]] = None) -> PolicyOptions:
    """NewPolicyOptions (options in sorted order; upstream ranges over a map)."""
    prefer, max_nodes = False, DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name in sorted(options or {}):
        value = str((options or {})[name])
        check_policy_option_available(name, feature_gates)
        if name == PREFER_CLOSEST_NUMA_NODES:
            try:
                prefer = _parse_bool(value)
            except ValueError as e:
                raise TopologyManagerError(f'bad value for option "{name}": {e}') from None
        elif name == MAX_ALLOWABLE_NUMA_NODES:
            try:
                n = int(value, 10)
            except ValueError:
                raise TopologyManagerError(f'unable to convert policy option to integer "{name}": '
                                           f'strconv.Atoi: parsing "{value}": invalid syntax') from None
            if n < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise TopologyManagerError(f'the minimum value of "{name}" should not be less than '
                                           f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}")
            max_nodes = n
    return PolicyOptions(prefer, max_nodes)


# --- merging (policy.go) ------------------------------------------------------------------------------
def merge_permutation(default_affinity: BitMask, permutation: Sequence[TopologyHint]) -> TopologyHint:
    """mergePermutation: AND of the masks (nil = all NUMA nodes); preferred only if every hint is
    preferred and every non-nil mask is equal."""
    preferred = True
    affinities: list[BitMask] = []
    for h in permutation:
        if h.numa_node_affinity is not None:
            affinities.append(h.numa_node_affinity)
            if not h.numa_node_affinity.is_equal(affinities[0]):
                preferred = False
        if not h.preferred:
            preferred = False
    return TopologyHint(default_affinity.and_(*affinities), preferred)


def filter_providers_hints(providers_hints: Sequence[ProviderHints]) -> list[list[TopologyHint]]:
    """filterProvidersHints: a provider with no hints → [{nil, true}]; a resource with nil hints →
    [{nil, true}] ("don't care"); an empty hint list → [{nil, false}] ("impossible")."""
    out: list[list[TopologyHint]] = []
    for hints in providers_hints:
        if not hints:
            out.append([TopologyHint(None, True)])
            continue
        for resource in sorted(hints):
            h = hints[resource]
            if h is None:
                out.append([TopologyHint(None, True)])
            elif len(h) == 0:
                out.append([TopologyHint(None, False)])
            else:
                out.append(list(h))
    return out


def narrowest_hint(hints: Sequence[TopologyHint]) -> Optional[TopologyHint]:
    best: Optional[TopologyHint] = None
    for h in hints:
        if h.numa_node_affinity is None:
            continue
        if best is None or h.numa_node_affinity.is_narrower_than(best.numa_node_affinity):  # type: ignore[arg-type]
            best = h
    return best


def max_of_min_affinity_counts(filtered_hints: Sequence[Sequence[TopologyHint]]) -> int:
    """maxOfMinAffinityCounts: the largest, over providers, of their narrowest mask's bit count."""
    best = 0
    for resource_hints in filtered_hints:
        n = narrowest_hint(resource_hints)
        if n is not None and n.numa_node_affinity.count() > best:  # type: ignore[union-attr]
            best = n.numa_node_affinity.count()  # type: ignore[union-attr]
    return best


def iterate_all_provider_topology_hints(all_hints: Sequence[Sequence[TopologyHint]]) -> Iterator[list[TopologyHint]]:
    """iterateAllProviderTopologyHints: the cross product, first provider outermost."""
    def iterate(i: int, accum: list[TopologyHint]) -> Iterator[list[TopologyHint]]:
        if i == len(all_hints):
            yield accum
            return
        for h in all_hints[i]:
            yield from iterate(i + 1, accum + [h])
    yield from iterate(0, [])


class HintMerger:
    """policy.go HintMerger: picks the best merged hint over every permutation."""

    def __init__(self, numa_info: NUMAInfo, hints: Sequence[Sequence[TopologyHint]], policy_name: str,
                 opts: PolicyOptions):
        self.numa_info = numa_info
        self.hints = hints
        self.best_non_preferred_affinity_count = max_of_min_affinity_counts(hints)
        self._closest = policy_name != POLICY_SINGLE_NUMA_NODE and opts.prefer_closest_numa

    def compare_numa_affinity_masks(self, current: TopologyHint, candidate: TopologyHint) -> TopologyHint:
        if candidate.numa_node_affinity.is_equal(current.numa_node_affinity):  # type: ignore[union-attr,arg-type]
            return current
        pick = self.numa_info.closest if self._closest else self.numa_info.narrowest
        best = pick(current.numa_node_affinity, candidate.numa_node_affinity)  # type: ignore[arg-type]
        return current if best.is_equal(current.numa_node_affinity) else candidate  # type: ignore[arg-type]

    def compare(self, current: Optional[TopologyHint], candidate: TopologyHint) -> Optional[TopologyHint]:
        """HintMerger.compare, cases 1-3cc of upstream's comment."""
        if candidate.numa_node_affinity.count() == 0:  # type: ignore[union-attr]
            return current
        if current is None:
            return candidate
        if not current.preferred and candidate.preferred:
            return candidate
        if current.preferred and not candidate.preferred:
            return current
        if current.preferred and candidate.preferred:
            return self.compare_numa_affinity_masks(current, candidate)
        best = self.best_non_preferred_affinity_count
        cur_n = current.numa_node_affinity.count()  # type: ignore[union-attr]
        cand_n = candidate.numa_node_affinity.count()  # type: ignore[union-attr]
        if cur_n > best:                                   # case 1
            return self.compare_numa_affinity_masks(current, candidate)
        if cur_n == best:                                  # case 2
            if cand_n != best:
                return current
            return self.compare_numa_affinity_masks(current, candidate)
        if cand_n > best:                                  # case 3a
            return current
        if cand_n == best:                                 # case 3b
            return candidate
        if cand_n > cur_n:                                 # case 3ca
            return candidate
        if cand_n < cur_n:                                 # case 3cb
            return current
        return self.compare_numa_affinity_masks(current, candidate)   # case 3cc

    def merge(self) -> TopologyHint:
        default = self.numa_info.default_affinity_mask()
        best: Optional[TopologyHint] = None
        for permutation in iterate_all_provider_topology_hints(self.hints):
            best = self.compare(best, merge_permutation(default, permutation))
        return best if best is not None else TopologyHint(default, False)


# --- policies -----------------------------------------------------------------------------------------
class Policy(Protocol):
    def name(self) -> str: ...
    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]: ...


class NonePolicy:
    """policy_none.go: no merge, always admit."""

    def name(self) -> str:
        return POLICY_NONE

    def can_admit_pod_result(self, h: TopologyHint) -> bool:
        return True

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        return TopologyHint(), self.can_admit_pod_result(TopologyHint())


class BestEffortPolicy:
    """policy_best_effort.go: merge every hint, always admit."""

    NAME = POLICY_BEST_EFFORT

    def __init__(self, numa_info: NUMAInfo, opts: PolicyOptions = PolicyOptions()):
        self.numa_info, self.opts = numa_info, opts

    def name(self) -> str:
        return self.NAME

    def can_admit_pod_result(self, h: TopologyHint) -> bool:
        return True

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        filtered = filter_providers_hints(providers_hints)
        best = HintMerger(self.numa_info, filtered, self.name(), self.opts).merge()
        return best, self.can_admit_pod_result(best)


class RestrictedPolicy(BestEffortPolicy):
    """policy_restricted.go: as best-effort, but admit only a preferred hint."""

    NAME = POLICY_RESTRICTED

    def can_admit_pod_result(self, h: TopologyHint) -> bool:
        return h.preferred


def filter_single_numa_hints(all_hints: Sequence[Sequence[TopologyHint]]) -> list[list[TopologyHint]]:
    """filterSingleNumaHints: keep {nil, preferred} and preferred single-NUMA hints."""
    out = []
    for resource_hints in all_hints:
        out.append([h for h in resource_hints if h.preferred and
                    (h.numa_node_affinity is None or h.numa_node_affinity.count() == 1)])
    return out


class SingleNumaNodePolicy(BestEffortPolicy):
    """policy_single_numa_node.go: single-NUMA hints only; a result covering every NUMA node is
    reported as nil; admit only a preferred hint."""

    NAME = POLICY_SINGLE_NUMA_NODE

    def can_admit_pod_result(self, h: TopologyHint) -> bool:
        return h.preferred

    def merge(self, providers_hints: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        filtered = filter_single_numa_hints(filter_providers_hints(providers_hints))
        best = HintMerger(self.numa_info, filtered, self.name(), self.opts).merge()
        if best.numa_node_affinity is not None and best.numa_node_affinity.is_equal(
                self.numa_info.default_affinity_mask()):
            best = TopologyHint(None, best.preferred)
        return best, self.can_admit_pod_result(best)


# --- hint providers and admission ---------------------------------------------------------------------
class HintProvider(Protocol):
    """topology_manager.go HintProvider: per resource, the NUMA hints for a container or a whole pod;
    ``allocate`` then takes resources following the stored affinity and raises on failure (an exception
    with ``type`` and ``message`` attributes is an admission error of that type; anything else becomes
    UnexpectedAdmissionError)."""

    def get_topology_hints(self, pod: Any, container: Any) -> ProviderHints: ...
    def get_pod_topology_hints(self, pod: Any) -> ProviderHints: ...
    def allocate(self, pod: Any, container: Any) -> None: ...


@dataclass(frozen=True)
class PodAdmitResult:
    """lifecycle.PodAdmitResult; unpacks as ``(admit, reason, message)``."""

    admit: bool
    reason: str = ""
    message: str = ""

    def __iter__(self) -> Iterator[Any]:
        return iter((self.admit, self.reason, self.message))


class TopologyAffinityError(Exception):
    """TopologyAffinityError: Error() and Type() as upstream."""

    type = ERROR_TOPOLOGY_AFFINITY

    def __str__(self) -> str:
        return TOPOLOGY_AFFINITY_MESSAGE


def get_pod_admit_result(err: Optional[BaseException]) -> PodAdmitResult:
    """admission.GetPodAdmitResult."""
    if err is None:
        return PodAdmitResult(True)
    reason = getattr(err, "type", None)
    if isinstance(reason, str) and reason:
        return PodAdmitResult(False, reason, str(err))
    return PodAdmitResult(False, ERROR_REASON_UNEXPECTED, f"Allocate failed due to {err}, which is unexpected")


def _uid(pod: Any) -> str:
    return pod.metadata.uid


def _containers(pod: Any) -> list[Any]:
    """append(pod.Spec.InitContainers, pod.Spec.Containers...)."""
    return list(pod.spec.init_containers) + list(pod.spec.containers)


class Scope:
    """scope.go: hint providers, the policy, and the affinity chosen per (pod UID, container name).
    Concrete scopes (none, container, pod) add ``admit(pod) -> PodAdmitResult``."""

    name = ""

    def __init__(self, policy: Any):
        self.policy = policy
        self.hint_providers: list[HintProvider] = []
        self.pod_topology_hints: dict[str, dict[str, TopologyHint]] = {}

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        """Store.GetAffinity (a zero TopologyHint when nothing was stored)."""
        return self.pod_topology_hints.get(pod_uid, {}).get(container_name, TopologyHint())

    def set_topology_hints(self, pod_uid: str, container_name: str, th: TopologyHint) -> None:
        self.pod_topology_hints.setdefault(pod_uid, {})[container_name] = th

    def add_hint_provider(self, h: HintProvider) -> None:
        self.hint_providers.append(h)

    def remove_pod(self, pod_uid: str) -> None:
        """What RemoveContainer does once a pod's last container is gone."""
        self.pod_topology_hints.pop(pod_uid, None)

    def allocate_aligned_resources(self, pod: Any, container: Any) -> None:
        for provider in self.hint_providers:
            provider.allocate(pod, container)

    def admit_policy_none(self, pod: Any) -> PodAdmitResult:
        for container in _containers(pod):
            try:
                self.allocate_aligned_resources(pod, container)
            except Exception as e:          # noqa: BLE001  the kubelet turns any error into a result
                return get_pod_admit_result(e)
        return get_pod_admit_result(None)


class NoneScope(Scope):
    """scope_none.go: policy none; providers allocate without a stored affinity."""

    name = SCOPE_NONE

    def admit(self, pod: Any) -> PodAdmitResult:
        return self.admit_policy_none(pod)


class ContainerScope(Scope):
    """scope_container.go: one merge per container, init containers first."""

    name = SCOPE_CONTAINER

    def accumulate_providers_hints(self, pod: Any, container: Any) -> list[ProviderHints]:
        return [p.get_topology_hints(pod, container) for p in self.hint_providers]

    def calculate_affinity(self, pod: Any, container: Any) -> tuple[TopologyHint, bool]:
        return self.policy.merge(self.accumulate_providers_hints(pod, container))

    def admit(self, pod: Any) -> PodAdmitResult:
        for container in _containers(pod):
            best, ok = self.calculate_affinity(pod, container)
            if not ok:
                return get_pod_admit_result(TopologyAffinityError())
            self.set_topology_hints(_uid(pod), container.name, best)
            try:
                self.allocate_aligned_resources(pod, container)
            except Exception as e:          # noqa: BLE001
                return get_pod_admit_result(e)
        return get_pod_admit_result(None)


class PodScope(Scope):
    """scope_pod.go: one merge for the whole pod; every container gets the same hint."""

    name = SCOPE_POD

    def accumulate_providers_hints(self, pod: Any) -> list[ProviderHints]:
        return [p.get_pod_topology_hints(pod) for p in self.hint_providers]

    def calculate_affinity(self, pod: Any) -> tuple[TopologyHint, bool]:
        return self.policy.merge(self.accumulate_providers_hints(pod))

    def admit(self, pod: Any) -> PodAdmitResult:
        best, ok = self.calculate_affinity(pod)
        if not ok:
            return get_pod_admit_result(TopologyAffinityError())
        for container in _containers(pod):
            self.set_topology_hints(_uid(pod), container.name, best)
            try:
                self.allocate_aligned_resources(pod, container)
            except Exception as e:          # noqa: BLE001
                return get_pod_admit_result(e)
        return get_pod_admit_result(None)


class Manager:
    """topology_manager.go manager: the PodAdmitHandler the kubelet runs (``admit``) and the Store its
    hint providers read (``get_affinity``)."""

    def __init__(self, scope: Scope):
        self.scope = scope

    @property
    def policy(self) -> Any:
        return self.scope.policy

    def add_hint_provider(self, h: HintProvider) -> None:
        self.scope.add_hint_provider(h)

    def get_affinity(self, pod_uid: str, container_name: str) -> TopologyHint:
        return self.scope.get_affinity(pod_uid, container_name)

    def remove_pod(self, pod_uid: str) -> None:
        self.scope.remove_pod(pod_uid)

    def admit(self, pod: Any) -> PodAdmitResult:
        return self.scope.admit(pod)


def new_manager(numa_nodes: Sequence[int], policy_name: str = POLICY_NONE, scope_name: str = SCOPE_CONTAINER,
                policy_options: Optional[Mapping[str, str]] = None,
                distances: Optional[Mapping[int, Sequence[int]]] = None,
                feature_gates: Optional[Mapping[str, bool]] = None) -> Manager:
    """NewManager: policy none short-circuits (NoneScope); otherwise options, NUMA info, the NUMA-node
    limit, the policy and the scope, with upstream's error texts."""
    if policy_name == POLICY_NONE:
        return Manager(NoneScope(NonePolicy()))
    opts = new_policy_options(policy_options, feature_gates)
    try:
        numa_info = new_numa_info(numa_nodes, distances, opts)
    except TopologyManagerError as e:
        raise TopologyManagerError(f"cannot discover NUMA topology: {e}") from None
    if len(numa_info.nodes) > opts.max_allowable_numa_nodes:
        raise TopologyManagerError(f"unsupported on machines with more than {opts.max_allowable_numa_nodes} "
                                   "NUMA Nodes")
    policies = {POLICY_BEST_EFFORT: BestEffortPolicy, POLICY_RESTRICTED: RestrictedPolicy,
                POLICY_SINGLE_NUMA_NODE: SingleNumaNodePolicy}
    if policy_name not in policies:
        raise TopologyManagerError(f'unknown policy: "{policy_name}"')
    policy = policies[policy_name](numa_info, opts)
    scopes = {SCOPE_CONTAINER: ContainerScope, SCOPE_POD: PodScope}
    if scope_name not in scopes:
        raise TopologyManagerError(f'unknown scope: "{scope_name}"')
    return Manager(scopes[scope_name](policy))


def validate_kubelet_config(config: Mapping[str, Any]) -> list[str]:
    """pkg/kubelet/apis/config/validation ValidateKubeletConfiguration, for the topology fields."""
    errs = []
    policy = config.get(KUBELET_POLICY_FIELD, POLICY_NONE)
    scope = config.get(KUBELET_SCOPE_FIELD, SCOPE_CONTAINER)
    if policy not in POLICIES:
        listed = " ".join(f'"{p}"' for p in POLICIES)
        errs.append(f'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "{policy}" must be '
                    f"one of: [{listed}]")
    if scope not in (SCOPE_CONTAINER, SCOPE_POD):
        errs.append(f'invalid configuration: topologyManagerScope (--topology-manager-scope) "{scope}" must be '
                    f'one of: "{SCOPE_CONTAINER}", or "{SCOPE_POD}"')
    return errs


def manager_from_kubelet_config(config: Mapping[str, Any], numa_nodes: Sequence[int],
                                distances: Optional[Mapping[int, Sequence[int]]] = None) -> Manager:
    """A manager from KubeletConfiguration fields (``topologyManagerPolicy`` default ``none``,
    ``topologyManagerScope`` default ``container``, ``topologyManagerPolicyOptions``)."""
    errs = validate_kubelet_config(config)
    if errs:
        raise TopologyManagerError(errs[0])
    return new_manager(numa_nodes, config.get(KUBELET_POLICY_FIELD, POLICY_NONE),
                       config.get(KUBELET_SCOPE_FIELD, SCOPE_CONTAINER),
                       config.get(KUBELET_OPTIONS_FIELD), distances)


def admit(pod: Any, providers: Sequence[HintProvider], numa_nodes: Sequence[int] = (0,),
          policy: str = POLICY_NONE, scope: str = SCOPE_CONTAINER,
          policy_options: Optional[Mapping[str, str]] = None,
          distances: Optional[Mapping[int, Sequence[int]]] = None) -> tuple[bool, str, str]:
    """One-shot admission: a fresh manager with ``providers`` admits ``pod`` → (ok, reason, message).
    A kubelet keeps one :class:`Manager` instead, so providers can read the stored affinity."""
    m = new_manager(numa_nodes, policy, scope, policy_options, distances)
    for p in providers:
        m.add_hint_provider(p)
    r = m.admit(pod)
    return r.admit, r.reason, r.message
