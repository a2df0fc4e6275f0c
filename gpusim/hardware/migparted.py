"""mig-parted configuration files: strict parsing, the GPU Operator's default configs, and applying a config.

Format (NVIDIA/mig-parted ``api/spec/v1/spec.go``; reference node-side.md §5.4)::

    version: v1
    mig-configs:
      all-1g.5gb:
        - devices: all                 # "all" or a list of GPU indices
          mig-enabled: true
          mig-devices: {"1g.5gb": 7}
      custom:
        - device-filter: ["0x20B010DE"]  # optional: PCI device ID + vendor, a string or a list
          devices: [0, 1]
          mig-enabled: false

Parse errors reuse mig-parted's wording (``unable to parse with missing 'version' field``, ``unknown version: %v``,
``unexpected field: %v``, ``missing required field: %v``, ``at least one entry in '%v' is required``,
``invalid string input for 'devices': %v``, ``missing required field 'mig-devices' when 'mig-enabled' is true``,
``MIG devices included when 'mig-enabled' is false``), prefixed with where in the file the problem is.

Applying (``cmd/nvidia-mig-parted`` ``WalkSelectedMigConfigForEachGPU``): the entries of the selected config are
walked in order, and each is applied to every GPU whose index is in ``devices`` and whose PCI ID passes
``device-filter``; a later entry that matches the same GPU wins, GPUs no entry matches keep their state, and indices
beyond the GPU count match nothing. An unknown name fails with ``selected mig-config not present: %v``.
Each GPU's instances are placed with :func:`gpusim.hardware.mig.place`; a profile that the model does not have or
that does not fit makes the whole apply fail, which mig-manager reports as ``nvidia.com/mig.config.state=failed``
(a typical reason a new MIG config "does not take effect", §5.5).

Default configs (NVIDIA/gpu-operator ``assets/state-mig-manager/0400_configmap.yaml``, ConfigMap
``default-mig-parted-config``): ``all-disabled``, ``all-enabled`` (MIG on, no instances), one ``all-<profile>``
per profile with its maximum count (``+me`` → ``.me`` in the config name, e.g. ``all-1g.5gb.me``), and
``all-balanced``. The helm default node config is ``all-disabled``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import yaml

from .catalog import CATALOG, GPUModel, gpu_model
from .mig import Layout, MigError, MigPlacementError, geometry, place, profiles, well_formed_profile_name

VERSION = "v1"
DEFAULT_CONFIG = "all-disabled"   # helm migManager.config.default
ENTRY_FIELDS = ("device-filter", "devices", "mig-enabled", "mig-devices")


class MigConfigError(ValueError):
    """A mig-parted config file that mig-parted itself would reject."""


class MigApplyError(MigError):
    """A valid config that cannot be applied to these GPUs (mig-manager: ``mig.config.state=failed``)."""

    def __init__(self, message: str, gpu: Optional[int] = None, profile: Optional[str] = None):
        super().__init__(message)
        self.gpu = gpu
        self.profile = profile


@dataclass
class MigConfigEntry:
    """One item of a named config: which GPUs, MIG mode, and the instances to create on each."""
    devices: Union[str, tuple[int, ...]] = "all"
    mig_enabled: bool = False
    mig_devices: dict[str, int] = field(default_factory=dict)
    device_filter: tuple[str, ...] = ()

    def matches(self, index: int, device_id: str) -> bool:
        if self.device_filter and device_id.lower() not in {f.lower() for f in self.device_filter}:
            return False
        return self.devices == "all" or index in self.devices

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.device_filter:
            d["device-filter"] = list(self.device_filter)
        d["devices"] = self.devices if self.devices == "all" else list(self.devices)
        d["mig-enabled"] = self.mig_enabled
        if self.mig_enabled or self.mig_devices:
            d["mig-devices"] = dict(self.mig_devices)
        return d


@dataclass
class MigPartedConfig:
    """A parsed config file: ``version`` and named configs (each a list of entries)."""
    mig_configs: dict[str, list[MigConfigEntry]] = field(default_factory=dict)
    version: str = VERSION

    def names(self) -> list[str]:
        return list(self.mig_configs)

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version,
                "mig-configs": {n: [e.to_dict() for e in es] for n, es in self.mig_configs.items()}}

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False, default_flow_style=None)


# --- parsing --------------------------------------------------------------------------------------------------

def _fail(where: str, msg: str) -> MigConfigError:
    return MigConfigError(f"{where}: {msg}" if where else msg)


def _parse_entry(raw: Any, where: str) -> MigConfigEntry:
    if not isinstance(raw, Mapping):
        raise _fail(where, f"each entry must be a mapping with {', '.join(ENTRY_FIELDS)}; got {raw!r}")
    for r in ("devices", "mig-enabled"):
        if r not in raw:
            raise _fail(where, f"missing required field: {r}")
    e = MigConfigEntry()
    for k, v in raw.items():
        if k == "device-filter":
            if isinstance(v, str):
                e.device_filter = (v,)
            elif isinstance(v, list) and all(isinstance(x, str) for x in v):
                e.device_filter = tuple(v)
            else:
                raise _fail(where, f"'device-filter' must be a string or a list of strings, got {v!r}")
        elif k == "devices":
            if isinstance(v, str):
                if v != "all":
                    raise _fail(where, f"invalid string input for 'devices': {v}")
                e.devices = "all"
            elif isinstance(v, list) and all(type(x) is int and x >= 0 for x in v):
                e.devices = tuple(v)
            else:
                raise _fail(where, f"'devices' must be \"all\" or a list of GPU indices, got {v!r}")
        elif k == "mig-enabled":
            if not isinstance(v, bool):
                raise _fail(where, f"'mig-enabled' must be true or false, got {v!r}")
            e.mig_enabled = v
        elif k == "mig-devices":
            if v is None:
                continue
            if not isinstance(v, Mapping):
                raise _fail(where, f"'mig-devices' must be a mapping of MIG profile to count, got {v!r}")
            for name, count in v.items():
                if not isinstance(name, str) or not well_formed_profile_name(name):
                    raise _fail(where, f"error validating values in 'mig-devices' field: invalid MIG profile "
                                       f"name {name!r} (expected <g>g.<mem>gb, e.g. \"1g.5gb\" or \"1g.5gb+me\")")
                if type(count) is not int or count < 0:
                    raise _fail(where, f"error validating values in 'mig-devices' field: count for \"{name}\" "
                                       f"must be a non-negative integer, got {count!r}")
            e.mig_devices = dict(v)
        else:
            raise _fail(where, f"unexpected field: {k}")
    if e.mig_enabled and ("mig-devices" not in raw or raw["mig-devices"] is None):
        raise _fail(where, "missing required field 'mig-devices' when 'mig-enabled' is true")
    if not e.mig_enabled and e.mig_devices:
        raise _fail(where, "MIG devices included when 'mig-enabled' is false")
    return e


def parse(source: Union[str, bytes, Mapping[str, Any]]) -> MigPartedConfig:
    """Parse a mig-parted config (YAML text or an already-loaded mapping); MigConfigError on anything
    mig-parted would reject."""
    if isinstance(source, (str, bytes)):
        try:
            doc = yaml.safe_load(source)
        except yaml.YAMLError as e:
            raise MigConfigError(f"unmarshal error: {e}") from None
    else:
        doc = source
    if doc is None:
        doc = {}
    if not isinstance(doc, Mapping):
        raise MigConfigError(f"unmarshal error: a mig-parted config must be a mapping, got {type(doc).__name__}")
    if "version" not in doc and doc:
        raise MigConfigError("unable to parse with missing 'version' field")
    if doc.get("version") != VERSION:
        raise MigConfigError(f"unknown version: {doc.get('version', '')}")
    cfg = MigPartedConfig()
    for k, v in doc.items():
        if k == "version":
            continue
        if k != "mig-configs":
            raise MigConfigError(f"unexpected field: {k}")
        if not isinstance(v, Mapping) or not v:
            raise MigConfigError("at least one entry in 'mig-configs' is required")
        for name, entries in v.items():
            if not isinstance(entries, list) or not entries:
                raise MigConfigError(f"at least one entry in '{name}' is required"
                                     + ("" if isinstance(entries, list) or entries is None
                                        else f" (a list of entries, got {entries!r})"))
            cfg.mig_configs[str(name)] = [_parse_entry(e, f"mig-configs.{name}[{i}]")
                                          for i, e in enumerate(entries)]
    return cfg


# --- default configs ------------------------------------------------------------------------------------------

def config_name(profile_name: str) -> str:
    """The operator's config name for one profile: ``all-`` + name with ``+`` → ``.``."""
    return "all-" + profile_name.replace("+", ".")


def default_configs(model: Union[str, GPUModel]) -> MigPartedConfig:
    """The operator's default configs that apply to one model (no ``device-filter``: they are per model).
    A model without MIG gets only ``all-disabled``."""
    m = model if isinstance(model, GPUModel) else gpu_model(model)
    cfg = MigPartedConfig({"all-disabled": [MigConfigEntry("all", False)]})
    if not m.mig_capable:
        return cfg
    cfg.mig_configs["all-enabled"] = [MigConfigEntry("all", True, {})]
    for p in profiles(m):
        cfg.mig_configs[config_name(p.name)] = [MigConfigEntry("all", True, {p.name: p.max_count})]
    cfg.mig_configs["all-balanced"] = [MigConfigEntry("all", True, dict(geometry(m).balanced))]
    return cfg


def operator_default_config(models: Optional[Iterable[Union[str, GPUModel]]] = None) -> MigPartedConfig:
    """One ConfigMap for several models, built like the operator's: a config whose content is the same on every
    model that has it gets one entry without ``device-filter``; otherwise one entry per distinct content, with
    the models' PCI IDs as ``device-filter`` (as the operator does for ``all-1g.10gb`` and ``all-balanced``).
    Default: every MIG-capable catalog model."""
    ms = [m if isinstance(m, GPUModel) else gpu_model(m) for m in (models or CATALOG.values())]
    ms = [m for m in ms if m.mig_capable]
    per_name: dict[str, list[tuple[GPUModel, MigConfigEntry]]] = {}
    for m in ms:
        for name, (entry,) in default_configs(m).mig_configs.items():
            per_name.setdefault(name, []).append((m, entry))
    out = MigPartedConfig()
    for name, pairs in per_name.items():
        groups: list[tuple[MigConfigEntry, list[str]]] = []
        for m, e in pairs:
            for ge, ids in groups:
                if ge.mig_enabled == e.mig_enabled and ge.mig_devices == e.mig_devices:
                    ids.append(m.pci_device_id)
                    break
            else:
                groups.append((e, [m.pci_device_id]))
        if len(groups) == 1:
            out.mig_configs[name] = [groups[0][0]]
        else:
            out.mig_configs[name] = [MigConfigEntry("all", e.mig_enabled, dict(e.mig_devices), tuple(ids))
                                     for e, ids in groups]
    return out


# --- applying -------------------------------------------------------------------------------------------------

def _select(config: MigPartedConfig, name: str) -> list[MigConfigEntry]:
    if name not in config.mig_configs:
        raise MigApplyError(f"selected mig-config not present: {name} (the config defines: "
                            f"{', '.join(config.names()) or 'nothing'})")
    return config.mig_configs[name]


def selected_gpus(config: MigPartedConfig, name: str, model: Union[str, GPUModel], gpu_count: int) -> list[int]:
    """Indices of the GPUs that some entry of config ``name`` matches (empty: applying changes nothing)."""
    m = model if isinstance(model, GPUModel) else gpu_model(model)
    entries = _select(config, name)
    return [i for i in range(gpu_count) if any(e.matches(i, m.pci_device_id) for e in entries)]


def apply(config: MigPartedConfig, name: str, model: Union[str, GPUModel], gpu_count: int,
          current: Optional[Sequence[Layout]] = None) -> list[Layout]:
    """Apply config ``name`` to ``gpu_count`` GPUs of one model; returns one Layout per GPU index.

    GPUs no entry matches keep ``current`` (default: MIG disabled). Raises MigApplyError naming the GPU, the
    entry and the reason when an entry enables MIG on a model without MIG or asks for instances the model
    cannot hold (unknown profile, too many, overlapping)."""
    m = model if isinstance(model, GPUModel) else gpu_model(model)
    entries = _select(config, name)
    if current is not None and len(current) != gpu_count:
        raise ValueError(f"current has {len(current)} layouts for {gpu_count} GPUs")
    layouts = list(current) if current is not None else [Layout.disabled(m) for _ in range(gpu_count)]
    for k, e in enumerate(entries):
        for i in range(gpu_count):
            if not e.matches(i, m.pci_device_id):
                continue
            where = f'mig-config "{name}" entry {k} on GPU {i} ({m.name})'
            if not e.mig_enabled:
                layouts[i] = Layout.disabled(m)
                continue
            if not m.mig_capable:
                raise MigApplyError(f"{where}: MIG not supported", gpu=i)
            try:
                layouts[i] = place(m, e.mig_devices)
            except MigPlacementError as err:
                raise MigApplyError(f"{where}: {err}", gpu=i, profile=err.profile) from None
    return layouts


def is_applied(config: MigPartedConfig, name: str, model: Union[str, GPUModel],
               layouts: Sequence[Layout]) -> bool:
    """``nvidia-mig-parted assert``: whether every matched GPU already has the config's MIG mode and instance
    counts (placements are not compared). False means mig-manager has work to do."""
    m = model if isinstance(model, GPUModel) else gpu_model(model)
    want: dict[int, MigConfigEntry] = {}
    for e in _select(config, name):
        for i in range(len(layouts)):
            if e.matches(i, m.pci_device_id):
                want[i] = e
    for i, e in want.items():
        have = layouts[i]
        if have.mig_enabled != e.mig_enabled:
            return False
        if e.mig_enabled and have.counts() != {n: c for n, c in sorted(e.mig_devices.items()) if c}:
            return False
    return True
