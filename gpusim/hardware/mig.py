"""MIG geometry: GPU-instance profiles, a placement engine, and what a node advertises and labels.

Sources (see ``/work/shared/reference/node-side.md`` §5, §6, §9.3):

- Profile tables: the MIG User Guide "Supported MIG Profiles" page and ``nvidia-smi mig -lgip`` / ``-lgipp`` output
  (IDs, GiB, SMs, placements ``{start indices}:size``). GiB/SM values differ slightly between drivers.
- Profile names ``<g>g.<mem>gb[+me]``: NVIDIA/go-nvlib ``pkg/nvlib/device/mig_profile.go``.
- Balanced layouts and the per-model profile sets: NVIDIA/gpu-operator ``assets/state-mig-manager/0400_configmap.yaml``.
- Strategies → resource names: NVIDIA/k8s-device-plugin README, ``internal/rm/rm.go``, ``internal/rm/device_map.go``.
- GFD labels: NVIDIA/k8s-device-plugin ``internal/lm/mig-strategy.go``, ``internal/lm/resource.go``,
  ``internal/resource/nvml-mig-device.go`` (MIG device name = profile with ``+`` → ``.``).

Geometry: A100, H100 and H200 have 7 compute slices and 8 memory slices; A30 has 4 and 4. A GPU instance occupies
``size`` consecutive memory slices starting at one of its profile's listed start indices; instances may not overlap,
the compute slices of all instances add up to at most the GPU's compute slices, each profile has a maximum count and
at most one media-extension (``+me``) instance can exist per GPU.

Values marked UNVERIFIED in the reference are listed in :attr:`MigProfile.unverified` (H200 IDs/GiB/SMs of
``1g.35gb``, ``3g.71gb``, ``4g.71gb`` and every H200 placement, inferred from H100; the A30 ``2g.12gb+me`` ID and
placement and the ``2g.12gb`` GiB). Profile IDs are driver-reported GI profile IDs (``nvidia-smi mig -lgip``), not
NVML enum constants; prefer names.

Placement rule (a simulator choice, documented here because the driver's is not): ``nvidia-smi mig -cgi`` creates
instances in the order given and the driver picks a free placement; mig-parted (``pkg/mig/config`` ``SetMigConfig``)
retries permutations of the creation order until the driver accepts one (``iteratePermutationsUntilSuccess``).
Which free start index the driver chooses is not documented (UNVERIFIED). :func:`place` therefore sorts the requested
instances largest first (memory slices, then compute slices; plain before ``+me``; then by name), puts each at the
lowest free valid start index and backtracks when a later instance does not fit. The answer is the first valid
assignment in that order, so a request always yields the same layout, and it exists exactly when the hardware rules
admit one. Example: A100-40GB ``all-balanced`` gives ``2g.10gb@0 1g.5gb@2 1g.5gb@3 3g.20gb@4`` (``3g.20gb@0`` would
leave the second ``1g.5gb`` only memory slice 7, which no 1g.5gb placement covers).

GFD engine labels (``*.engines.{copy,decoder,encoder,jpeg,ofa}``) are not produced: the reference does not give the
per-profile engine counts.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Union

from .catalog import GPUModel, gpu_model

STRATEGIES = ("none", "single", "mixed")
GPU_RESOURCE = "nvidia.com/gpu"
MIG_RESOURCE_PREFIX = "nvidia.com/mig-"
INVALID_MIG_CONFIG = "invalid MIG configuration: "   # device plugin prefix (internal/rm/rm.go)


class MigError(ValueError):
    """Base class of MIG errors (a model without MIG, an unknown profile, ...)."""


class MigPlacementError(MigError):
    """The requested GPU instances cannot be created on this GPU. ``profile`` names the culprit where one exists."""

    def __init__(self, message: str, profile: Optional[str] = None):
        super().__init__(message)
        self.profile = profile


class MigStrategyError(MigError):
    """The device plugin refuses the node's MIG layout under this strategy (it then fails to start)."""


# --- profiles -------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MigProfile:
    """One GPU-instance profile of one GPU model (a row of ``nvidia-smi mig -lgip`` plus its ``-lgipp`` placements)."""
    name: str                      # "1g.5gb", "1g.5gb+me"
    id: int                        # GPU-instance profile ID as nvidia-smi reports it
    compute_slices: int            # the "<g>g" part
    memory_slices: int             # = placement size
    memory_gib: float
    sms: int
    max_count: int
    placements: tuple[int, ...]    # valid start indices (memory slices)
    unverified: tuple[str, ...] = ()   # fields the reference marks UNVERIFIED or inferred

    @property
    def size(self) -> int:
        """Placement size in memory slices (the ``:size`` of ``{0,2,4}:2``)."""
        return self.memory_slices

    @property
    def media_extensions(self) -> bool:
        """``+me``: NVDEC, NVJPG and OFA attached; only one such instance per GPU."""
        return "+me" in self.name

    @property
    def device_name(self) -> str:
        """The name GFD and the device plugin use: ``+`` becomes ``.`` (``1g.5gb+me`` → ``1g.5gb.me``)."""
        return self.name.replace("+", ".")

    @property
    def resource_name(self) -> str:
        """The ``mixed``-strategy extended resource, e.g. ``nvidia.com/mig-1g.5gb``."""
        return MIG_RESOURCE_PREFIX + self.device_name

    @property
    def memory_mb(self) -> int:
        """What NVML reports as the MIG device's ``memorySizeMB`` (GiB × 1024; 1g.5gb → 4864)."""
        return round(self.memory_gib * 1024)

    @property
    def placement_spec(self) -> str:
        """``nvidia-smi mig -lgipp`` notation, e.g. ``{0,2,4}:2``."""
        return "{" + ",".join(map(str, self.placements)) + "}:" + str(self.size)


@dataclass(frozen=True)
class MigGeometry:
    """The MIG geometry of one GPU model."""
    model: str
    compute_slices: int
    memory_slices: int
    profiles: tuple[MigProfile, ...]
    balanced: tuple[tuple[str, int], ...]   # the operator's all-balanced mig-devices

    def profile(self, name: str) -> MigProfile:
        for p in self.profiles:
            if p.name == name:
                return p
        valid = ", ".join(p.name for p in self.profiles)
        hint = ""
        if name.replace(".me", "+me") in {p.name for p in self.profiles}:
            hint = f' (did you mean "{name.replace(".me", "+me")}"? mig-parted and nvidia-smi write "+me")'
        raise MigPlacementError(f'MIG profile "{name}" does not exist on {self.model}{hint}; '
                                f"valid profiles: {valid}", profile=name)


# Shared geometry of A100 / H100 / H200: GI profile ID → (compute slices, memory slices, max count, placements).
_SEVEN: dict[int, tuple[int, int, int, tuple[int, ...]]] = {
    19: (1, 1, 7, (0, 1, 2, 3, 4, 5, 6)),
    20: (1, 1, 1, (0, 1, 2, 3, 4, 5, 6)),
    15: (1, 2, 4, (0, 2, 4, 6)),
    14: (2, 2, 3, (0, 2, 4)),
    9: (3, 4, 2, (0, 4)),
    5: (4, 4, 1, (0,)),
    0: (7, 8, 1, (0,)),
}


def _seven(rows: Sequence[tuple]) -> tuple[MigProfile, ...]:
    """Profiles of a 7-compute/8-memory-slice GPU from rows ``(name, id, GiB, SMs[, unverified fields])``."""
    out = []
    for row in rows:
        name, pid, gib, sms = row[:4]
        unverified = row[4] if len(row) > 4 else ()
        c, m, mx, pl = _SEVEN[pid]
        out.append(MigProfile(name, pid, c, m, gib, sms, mx, pl, tuple(unverified)))
    return tuple(out)


_H200_INFERRED = ("placements",)   # every H200 placement is inferred from H100 (same die)

GEOMETRIES: dict[str, MigGeometry] = {g.model: g for g in [
    # A100-SXM4-40GB: MIG User Guide table, -lgip/-lgipp output. 7g.40gb is 39.38–39.50 GiB by driver.
    MigGeometry("A100-SXM4-40GB", 7, 8, _seven([
        ("1g.5gb", 19, 4.75, 14),
        ("1g.5gb+me", 20, 4.75, 14),
        ("1g.10gb", 15, 9.75, 14),
        ("2g.10gb", 14, 9.75, 28),
        ("3g.20gb", 9, 19.62, 42),
        ("4g.20gb", 5, 19.62, 56),
        ("7g.40gb", 0, 39.50, 98),
    ]), (("1g.5gb", 2), ("2g.10gb", 1), ("3g.20gb", 1))),
    # A100-SXM4-80GB: same IDs and placements; names scale with the memory ([MIGUG]).
    MigGeometry("A100-SXM4-80GB", 7, 8, _seven([
        ("1g.10gb", 19, 9.50, 14),
        ("1g.10gb+me", 20, 9.50, 14),
        ("1g.20gb", 15, 19.50, 14),
        ("2g.20gb", 14, 19.50, 28),
        ("3g.40gb", 9, 39.25, 42),
        ("4g.40gb", 5, 39.25, 56),
        ("7g.80gb", 0, 79.00, 98),
    ]), (("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1))),
    # H100-80GB SXM5 (132 SMs): IDs and placements identical to A100.
    MigGeometry("H100-SXM5-80GB", 7, 8, _seven([
        ("1g.10gb", 19, 9.75, 16),
        ("1g.10gb+me", 20, 9.75, 16),
        ("1g.20gb", 15, 19.62, 26),
        ("2g.20gb", 14, 19.62, 32),
        ("3g.40gb", 9, 39.50, 60),
        ("4g.40gb", 5, 39.50, 64),
        ("7g.80gb", 0, 79.25, 132),
    ]), (("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1))),
    # H200-141GB: names and max counts verified from the operator's ConfigMap; IDs 19/20/14/0 and their GiB/SMs
    # from one -lgip fixture; the rest UNVERIFIED (inferred from H100).
    MigGeometry("H200-141GB", 7, 8, _seven([
        ("1g.18gb", 19, 16.00, 16, _H200_INFERRED),
        ("1g.18gb+me", 20, 16.00, 16, _H200_INFERRED),
        ("1g.35gb", 15, 32.50, 26, ("id", "memory_gib", "sms") + _H200_INFERRED),
        ("2g.35gb", 14, 32.50, 32, _H200_INFERRED),
        ("3g.71gb", 9, 70.00, 60, ("id", "memory_gib", "sms") + _H200_INFERRED),
        ("4g.71gb", 5, 70.00, 64, ("id", "memory_gib", "sms") + _H200_INFERRED),
        ("7g.141gb", 0, 140.00, 132, _H200_INFERRED),
    ]), (("1g.18gb", 2), ("2g.35gb", 1), ("3g.71gb", 1))),
    # A30-24GB: 4 compute and 4 memory slices. 1g.6gb+me needs driver ≥ R470, 2g.12gb+me driver ≥ R525.
    MigGeometry("A30-24GB", 4, 4, (
        MigProfile("1g.6gb", 14, 1, 1, 5.81, 14, 4, (0, 1, 2, 3)),
        MigProfile("1g.6gb+me", 21, 1, 1, 5.81, 14, 1, (0, 1, 2, 3)),
        MigProfile("2g.12gb", 5, 2, 2, 11.7, 28, 2, (0, 2), ("memory_gib",)),
        MigProfile("2g.12gb+me", 6, 2, 2, 11.7, 28, 1, (0, 2), ("id", "memory_gib", "placements")),
        MigProfile("4g.24gb", 0, 4, 4, 23.50, 56, 1, (0,)),
    ), (("1g.6gb", 2), ("2g.12gb", 1))),
]}


def _model(model: Union[str, GPUModel]) -> GPUModel:
    return model if isinstance(model, GPUModel) else gpu_model(model)


def geometry(model: Union[str, GPUModel]) -> MigGeometry:
    """The MIG geometry of a catalog model; MigError if the model has no MIG (KeyError if it is unknown)."""
    m = _model(model)
    if not m.mig_capable:
        raise MigError(f'GPU model "{m.name}" does not support MIG (MIG needs compute capability ≥ 8.0 and a '
                       f"MIG-capable part); MIG-capable models: {', '.join(GEOMETRIES)}")
    try:
        return GEOMETRIES[m.name]
    except KeyError:
        raise MigError(f'no MIG profile table for GPU model "{m.name}"') from None


def profiles(model_name: Union[str, GPUModel]) -> tuple[MigProfile, ...]:
    """All GPU-instance profiles of a model, in ``nvidia-smi mig -lgip`` order."""
    return geometry(model_name).profiles


def profile(model_name: Union[str, GPUModel], name: str) -> MigProfile:
    """One profile by name (``"3g.20gb"``, ``"1g.5gb+me"``); MigPlacementError lists the valid names."""
    return geometry(model_name).profile(name)


# --- layouts --------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class GpuInstance:
    """One GPU instance: a profile placed at a start memory slice (with its default full-size compute instance)."""
    profile: MigProfile
    start: int

    @property
    def end(self) -> int:
        """One past the last memory slice."""
        return self.start + self.profile.size

    @property
    def memory_range(self) -> range:
        return range(self.start, self.end)

    def __str__(self) -> str:
        return f"{self.profile.name}@{self.start}:{self.profile.size}"


@dataclass(frozen=True)
class Layout:
    """The MIG state of one GPU: MIG mode and its GPU instances (sorted by start)."""
    model: str
    instances: tuple[GpuInstance, ...] = ()
    mig_enabled: bool = True

    @classmethod
    def disabled(cls, model: Union[str, GPUModel]) -> "Layout":
        """A GPU with MIG mode off (a whole GPU)."""
        return cls(_model(model).name, (), False)

    @classmethod
    def of(cls, model: Union[str, GPUModel], instances: Iterable[tuple[str, int]]) -> "Layout":
        """A MIG-enabled layout from ``(profile name, start)`` pairs; not checked (see :func:`valid`)."""
        geo = geometry(model)
        gis = [GpuInstance(geo.profile(n), s) for n, s in instances]
        return cls(geo.model, tuple(sorted(gis, key=lambda g: (g.start, g.profile.name))), True)

    def counts(self) -> dict[str, int]:
        """Profile name → number of instances (mig-parted's view of a GPU)."""
        return dict(sorted(Counter(g.profile.name for g in self.instances).items()))

    @property
    def profile_names(self) -> list[str]:
        return [g.profile.name for g in self.instances]

    @property
    def compute_slices_used(self) -> int:
        return sum(g.profile.compute_slices for g in self.instances)

    @property
    def memory_slices_used(self) -> int:
        return sum(g.profile.size for g in self.instances)

    def diagram(self) -> str:
        """Memory slices left to right, e.g. ``[0-1 2g.10gb][2 1g.5gb][3 1g.5gb][4-7 3g.20gb]``; ``-`` is free."""
        if not self.mig_enabled:
            return "[MIG disabled]"
        total = geometry(self.model).memory_slices
        by_start = {g.start: g for g in self.instances}
        out, i = [], 0
        while i < total:
            g = by_start.get(i)
            if g is None:
                out.append(f"[{i} -]")
                i += 1
                continue
            span = str(g.start) if g.profile.size == 1 else f"{g.start}-{g.end - 1}"
            out.append(f"[{span} {g.profile.name}]")
            i = max(g.end, i + 1)
        return "".join(out)

    def __str__(self) -> str:
        if not self.mig_enabled:
            return f"{self.model}: MIG disabled"
        return f"{self.model}: " + (" ".join(map(str, self.instances)) or "MIG enabled, no instances")


def _expand(requested: Union[Sequence[str], Mapping[str, int]]) -> list[str]:
    if isinstance(requested, Mapping):
        names = []
        for n, c in requested.items():
            if not isinstance(c, int) or isinstance(c, bool) or c < 0:
                raise MigPlacementError(f'count for MIG profile "{n}" must be a non-negative integer, got {c!r}', n)
            names += [n] * c
        return names
    if isinstance(requested, str):
        return [requested]
    return list(requested)


def _check_budget(geo: MigGeometry, profs: Sequence[MigProfile]) -> None:
    """Rules that need no placement search: per-profile max counts, one +me, compute and memory totals."""
    counts = Counter(p.name for p in profs)
    by_name = {p.name: p for p in profs}
    for name, n in counts.items():
        p = by_name[name]
        if n > p.max_count:
            raise MigPlacementError(f"{n} × {name} requested but {geo.model} allows at most {p.max_count} "
                                    f"× {name} (placements {p.placement_spec})", name)
    me = [p.name for p in profs if p.media_extensions]
    if len(me) > 1:
        raise MigPlacementError(f"only one media-extension (+me) instance can exist per GPU; requested {len(me)} "
                                f"({', '.join(me)})", me[1])
    compute = sum(p.compute_slices for p in profs)
    if compute > geo.compute_slices:
        raise MigPlacementError(f"requested instances need {compute} compute slices but {geo.model} has "
                                f"{geo.compute_slices} ({' + '.join(p.name for p in profs)})")
    memory = sum(p.size for p in profs)
    if memory > geo.memory_slices:
        raise MigPlacementError(f"requested instances need {memory} memory slices but {geo.model} has "
                                f"{geo.memory_slices} ({' + '.join(p.name for p in profs)})")


def _order_key(p: MigProfile) -> tuple:
    return (-p.size, -p.compute_slices, p.media_extensions, p.name)


def place(model_name: Union[str, GPUModel], requested: Union[Sequence[str], Mapping[str, int]]) -> Layout:
    """Place GPU instances on one GPU the way the hardware allows, or raise MigPlacementError saying which
    profile does not fit and why. ``requested`` is a list of profile names (repeat a name for several
    instances) or a mig-parted style ``{name: count}`` mapping. See the module docstring for the rule."""
    return place_on(geometry(model_name), requested)


def place_on(geo: MigGeometry, requested: Union[Sequence[str], Mapping[str, int]]) -> Layout:
    """:func:`place` on an explicit geometry (lets tests and lessons use a made-up GPU)."""
    profs = [geo.profile(n) for n in _expand(requested)]
    _check_budget(geo, profs)
    order = sorted(profs, key=_order_key)
    chosen: list[int] = []
    # The deepest dead end, preferring one where every start of the profile overlaps placed instances.
    dead_end: dict[bool, tuple] = {}

    def search(i: int, used: int) -> bool:
        if i == len(order):
            return True
        p = order[i]
        lowest = chosen[i - 1] + 1 if i and order[i - 1] == p else 0   # identical instances: ascending starts
        no_room = True
        for s in p.placements:
            mask = ((1 << p.size) - 1) << s
            if used & mask:
                continue
            no_room = False
            if s < lowest:
                continue
            chosen.append(s)
            if search(i + 1, used | mask):
                return True
            chosen.pop()
        if i > dead_end.get(no_room, (-1,))[0]:
            dead_end[no_room] = (i, [GpuInstance(order[k], chosen[k]) for k in range(i)], p)
        return False

    if not search(0, 0):
        no_room = True in dead_end
        _, placed, p = dead_end[no_room]
        after = ("after placing " + ", ".join(map(str, placed))) if placed else "on an empty GPU"
        if no_room:
            taken = sorted(s for g in placed for s in g.memory_range)
            why = (f"every start in {p.placement_spec} overlaps memory slices already in use "
                   f"({','.join(map(str, taken))})")
        else:
            why = "no arrangement of the remaining instances fits"
        raise MigPlacementError(f"no valid MIG placement on {geo.model} for "
                                f"{' + '.join(q.name for q in order)}: {after}, {p.name} cannot be placed: {why}",
                                p.name)
    gis = sorted((GpuInstance(p, s) for p, s in zip(order, chosen)), key=lambda g: g.start)
    return Layout(geo.model, tuple(gis), True)


def violations(model: Union[str, GPUModel], layout: Union[Layout, Iterable[tuple[str, int]]]) -> list[str]:
    """Every hardware rule a layout breaks (empty if it is valid). ``layout`` may be ``(name, start)`` pairs."""
    m = _model(model)
    if isinstance(layout, Layout):
        if layout.model != m.name:
            return [f"layout is for {layout.model}, not {m.name}"]
        if not layout.mig_enabled:
            return [] if not layout.instances else ["MIG is disabled but the layout has GPU instances"]
        pairs = [(g.profile.name, g.start) for g in layout.instances]
    else:
        pairs = list(layout)
    try:
        geo = geometry(m)
    except MigError as e:
        return [str(e)] if pairs or not isinstance(layout, Layout) else []
    out, gis = [], []
    for name, start in pairs:
        try:
            p = geo.profile(name)
        except MigPlacementError as e:
            out.append(str(e))
            continue
        if start not in p.placements:
            out.append(f"{name} cannot start at memory slice {start}; valid placements {p.placement_spec}")
        gis.append(GpuInstance(p, start))
    for i, a in enumerate(gis):
        for b in gis[i + 1:]:
            if a.start < b.end and b.start < a.end:
                out.append(f"{a} and {b} overlap in memory slices")
    try:
        _check_budget(geo, [g.profile for g in gis])
    except MigPlacementError as e:
        out.append(str(e))
    return out


def valid(model: Union[str, GPUModel], layout: Union[Layout, Iterable[tuple[str, int]]]) -> bool:
    """Whether the hardware accepts this layout (start indices, overlaps, compute total, max counts, one +me)."""
    return not violations(model, layout)


# --- strategies: device-plugin resources and GFD labels ------------------------------------------------------

Node = Union[Layout, Sequence[Layout]]


def _gpus(model: GPUModel, layout: Node) -> list[Layout]:
    gpus = [layout] if isinstance(layout, Layout) else list(layout)
    for i, g in enumerate(gpus):
        if g.model != model.name:
            raise MigError(f"GPU {i} has a layout for {g.model}, not {model.name}")
    return gpus


def _strategy(strategy: str) -> str:
    if strategy not in STRATEGIES:
        raise MigError(f'unknown MIG strategy "{strategy}"; supported values: {", ".join(STRATEGIES)}')
    return strategy


def resource_names(strategy: str, model: Union[str, GPUModel], layout: Node) -> dict[str, int]:
    """Extended resources the NVIDIA device plugin advertises for a node's GPUs (one Layout per GPU).

    - ``none``: every GPU as one ``nvidia.com/gpu``, MIG-enabled or not (MIG devices are ignored).
    - ``single``: every MIG device as ``nvidia.com/gpu``; all GPUs must share the MIG mode, each MIG-enabled GPU
      needs a MIG device, and all MIG devices one profile, else MigStrategyError with the plugin's message (the
      plugin then fails to start and the node's GPU resources disappear). No MIG-enabled GPU → like ``none``.
    - ``mixed``: MIG-disabled GPUs as ``nvidia.com/gpu``, each MIG type as ``nvidia.com/mig-<profile>`` with ``+``
      → ``.``; a MIG-enabled GPU without MIG devices contributes nothing.
    """
    m = _model(model)
    gpus = _gpus(m, layout)
    _strategy(strategy)
    if strategy == "none":
        return {GPU_RESOURCE: len(gpus)} if gpus else {}
    if strategy == "single":
        modes = {g.mig_enabled for g in gpus}
        if len(modes) > 1:
            raise MigStrategyError(INVALID_MIG_CONFIG
                                   + "all devices on the node must be configured with the same migEnabled value")
        if modes != {True}:
            return {GPU_RESOURCE: len(gpus)} if gpus else {}
        for i, g in enumerate(gpus):
            if not g.instances:
                raise MigStrategyError(INVALID_MIG_CONFIG + f"device {i} has no MIG devices configured")
        if len({gi.profile.name for g in gpus for gi in g.instances}) > 1:
            raise MigStrategyError(INVALID_MIG_CONFIG + "more than one MIG device type present on node")
        return {GPU_RESOURCE: sum(len(g.instances) for g in gpus)}
    out: Counter = Counter()
    full = sum(1 for g in gpus if not g.mig_enabled)
    if full:
        out[GPU_RESOURCE] = full
    for g in gpus:
        if g.mig_enabled:
            out.update(gi.profile.resource_name for gi in g.instances)
    return dict(sorted(out.items()))


def full_gpu_labels(m: GPUModel, count: int) -> dict[str, str]:
    """GFD's labels for whole GPUs with no sharing and MIG strategy none (NVIDIA/k8s-device-plugin
    internal/lm/resource.go); gpusim.node.labels.gfd_labels is this function."""
    return {
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": m.product,
        "nvidia.com/gpu.count": str(count),
        "nvidia.com/gpu.memory": str(m.memory_mib),
        "nvidia.com/gpu.family": m.family,
        "nvidia.com/gpu.compute.major": str(m.compute[0]),
        "nvidia.com/gpu.compute.minor": str(m.compute[1]),
        "nvidia.com/gpu.replicas": "1",
        "nvidia.com/gpu.sharing-strategy": "none",
        "nvidia.com/gpu.mode": "compute",
        "nvidia.com/mig.capable": str(m.mig_capable).lower(),
        "nvidia.com/mps.capable": "false",
    }


def _mig_labels(prefix: str, m: GPUModel, p: MigProfile, count: int) -> dict[str, str]:
    return {
        f"{prefix}.product": f"{m.product}-MIG-{p.device_name}",
        f"{prefix}.count": str(count),
        f"{prefix}.replicas": "1",
        f"{prefix}.sharing-strategy": "none",
        f"{prefix}.memory": str(p.memory_mb),
        f"{prefix}.multiprocessors": str(p.sms),
        f"{prefix}.slices.gi": str(p.compute_slices),
        f"{prefix}.slices.ci": str(p.compute_slices),   # one default full-size compute instance per GI
    }


def single_strategy_problem(gpus: Sequence[Layout]) -> Optional[str]:
    """Why GFD labels a ``single`` node ``-MIG-INVALID`` (internal/lm/mig-strategy.go order), or None."""
    enabled = [g for g in gpus if g.mig_enabled]
    if not enabled:
        return None
    if any(not g.instances for g in enabled):
        return "at least one MIG device is enabled but empty"
    if len(enabled) != len(gpus):
        return "devices with MIG enabled and disable detected"
    if len({gi.profile.name for g in gpus for gi in g.instances}) != 1:
        return "more than one MIG device type present on node"
    return None


def gfd_labels(strategy: str, model: Union[str, GPUModel], layout: Node) -> dict[str, str]:
    """Labels GPU Feature Discovery writes for a node's GPUs (one Layout per GPU), no sharing.

    Full-GPU labels always (count = physical GPUs), plus ``nvidia.com/mig.strategy`` for ``single``/``mixed``.
    ``single`` overrides ``nvidia.com/gpu.{product,count,replicas,memory}`` with the MIG device's values
    (product ``<product>-MIG-<profile>``, memory in MB) and adds ``multiprocessors``/``slices.gi``/``slices.ci``;
    an invalid single layout gives product ``<product>-MIG-INVALID`` with count, replicas and memory 0 (GFD does
    not fail, the device plugin does). ``mixed`` adds ``nvidia.com/mig-<profile>.{count,product,replicas,
    sharing-strategy,memory,multiprocessors,slices.gi,slices.ci}`` per MIG type.
    """
    m = _model(model)
    gpus = _gpus(m, layout)
    _strategy(strategy)
    if not gpus:
        return {}
    labels = full_gpu_labels(m, len(gpus))
    if strategy == "none":
        return labels
    labels["nvidia.com/mig.strategy"] = strategy
    types = Counter(gi.profile.name for g in gpus if g.mig_enabled for gi in g.instances)
    by_name = {gi.profile.name: gi.profile for g in gpus for gi in g.instances}
    if strategy == "single":
        if not any(g.mig_enabled for g in gpus):
            return labels
        if single_strategy_problem(gpus):
            labels.update({"nvidia.com/gpu.product": f"{m.product}-MIG-INVALID", "nvidia.com/gpu.count": "0",
                           "nvidia.com/gpu.replicas": "0", "nvidia.com/gpu.memory": "0"})
            return labels
        (name, count), = types.items()
        labels.update(_mig_labels("nvidia.com/gpu", m, by_name[name], count))
        return dict(sorted(labels.items()))
    for name, count in sorted(types.items()):
        p = by_name[name]
        labels.update(_mig_labels(f"nvidia.com/mig-{p.device_name}", m, p, count))
    return dict(sorted(labels.items()))


_PROFILE_NAME = re.compile(r"^(?:\d+c\.)?\d+g\.\d+gb(?:[+-][a-z]+(?:\.[a-z]+)?)*$")


def well_formed_profile_name(name: str) -> bool:
    """``[<c>c.]<g>g.<mem>gb[+me|+me.all|+gfx|-me]`` (go-nvlib mig_profile.go naming); not model-specific."""
    return bool(_PROFILE_NAME.match(name))
