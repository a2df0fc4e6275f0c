"""The DCGM exporter's metrics of a run (NVIDIA/dcgm-exporter): the Prometheus text exposition one scrape
of ``:9400/metrics`` returns (``gpusim metrics -f FILE --at 10m``), the reference's alert rules evaluated on
the scraped series as Prometheus would, and a per-GPU plot. The samples come from the run's record
(gpusim.records.dcgm_samples); GPU_TEMP and POWER_USAGE are illustrative there.

Alert rules (reference sheet dra-and-operations.md §4.5; evaluated at the scrape instants, every 30 s):

| alert | expression | for |
|---|---|---|
| GPUIdleWhileAllocated | ``avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[1h]) < 5`` | 0 |
| GPUXidErrorSeen | ``changes(DCGM_FI_DEV_XID_ERRORS[10m]) > 0`` | 0 |
| GPUMemoryPressure | ``DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0.95`` | 5m |
| GPUTemperatureHigh | ``DCGM_FI_DEV_GPU_TEMP > 85`` | 5m |
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..records import DCGM_COUNTERS, DCGM_ILLUSTRATIVE, DCGM_INTERVAL, dcgm_samples, dcgm_series

LABEL_ORDER = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION",
               "container", "namespace", "pod")


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _value(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def exposition(result: Any, at: float) -> str:
    """``curl http://<node>:9400/metrics`` of every exporter at ``at``, in the Prometheus text format 0.0.4."""
    samples = dcgm_samples(result, at)
    lines = [f"# gpusim: scrape at t={at:g}s; {', '.join(DCGM_ILLUSTRATIVE)} are illustrative (a linear model of "
             "GPU_UTIL), the other values come from the simulation"]
    for metric, kind, help_text in DCGM_COUNTERS:
        rows = [(labels, value) for m, labels, value in samples if m == metric]
        if not rows:
            continue
        lines += [f"# HELP {metric} {help_text}", f"# TYPE {metric} {kind}"]
        for labels, value in rows:
            keys = [k for k in LABEL_ORDER if k in labels]
            body = ",".join(f'{k}="{_escape(str(labels[k]))}"' for k in keys)
            lines.append(f"{metric}{{{body}}} {_value(value)}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Rule:
    name: str
    expr: str
    for_seconds: float
    severity: str
    check: Callable[[dict, tuple, float], Optional[float]]   # (series, key, t) → value when the condition holds


@dataclass
class Alert:
    name: str
    state: str            # pending | firing
    active_at: float      # when the condition became true (Prometheus ALERTS' activeAt)
    labels: dict[str, str]
    value: float
    expr: str


def _window(points: list, t: float, span: float) -> list:
    return [(x, v) for x, v in points if t - span < x <= t]


def _idle(series: dict, key: tuple, t: float) -> Optional[float]:
    metric, labels = key
    if metric != "DCGM_FI_DEV_GPU_UTIL" or not dict(labels).get("pod"):
        return None
    w = _window(series[key], t, 3600.0)
    if not w or w[-1][0] != t:
        return None
    avg = sum(v for _, v in w) / len(w)
    return avg if avg < 5 else None


def _xid(series: dict, key: tuple, t: float) -> Optional[float]:
    if key[0] != "DCGM_FI_DEV_XID_ERRORS":
        return None
    w = _window(series[key], t, 600.0)
    if not w or w[-1][0] != t:
        return None
    changes = sum(1 for (_, a), (_, b) in zip(w, w[1:]) if a != b)
    return float(changes) if changes > 0 else None


def _memory(series: dict, key: tuple, t: float) -> Optional[float]:
    if key[0] != "DCGM_FI_DEV_FB_USED":
        return None
    used = dict(series[key]).get(t)
    free = dict(series.get(("DCGM_FI_DEV_FB_FREE", key[1]), [])).get(t)
    if used is None or free is None or used + free == 0:
        return None
    ratio = used / (used + free)
    return ratio if ratio > 0.95 else None


def _thermal(series: dict, key: tuple, t: float) -> Optional[float]:
    if key[0] != "DCGM_FI_DEV_GPU_TEMP":
        return None
    v = dict(series[key]).get(t)
    return v if v is not None and v > 85 else None


RULES: tuple[Rule, ...] = (
    Rule("GPUIdleWhileAllocated", 'avg_over_time(DCGM_FI_DEV_GPU_UTIL{pod!=""}[1h]) < 5', 0, "warning", _idle),
    Rule("GPUXidErrorSeen", "changes(DCGM_FI_DEV_XID_ERRORS[10m]) > 0", 0, "critical", _xid),
    Rule("GPUMemoryPressure", "DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE) > 0.95", 300,
         "warning", _memory),
    Rule("GPUTemperatureHigh", "DCGM_FI_DEV_GPU_TEMP > 85", 300, "warning", _thermal),
)


def alerts(result: Any, at: float, interval: float = DCGM_INTERVAL) -> list[Alert]:
    """The alerts pending or firing at ``at`` (the last evaluation at or before it), as Prometheus' rule
    manager keeps them: a condition true at consecutive evaluations since ``active_at``; firing once it has
    held for the rule's ``for``."""
    series = dcgm_series(result, interval)
    out = []
    steps = [k * interval for k in range(int(min(at, result.end) // interval) + 1)]
    for rule in RULES:
        for key in sorted(series, key=lambda k: (k[0], k[1])):
            since, value = None, None
            for t in steps:
                v = rule.check(series, key, t)
                if v is None:
                    since = None
                    continue
                since = t if since is None else since
                value = v
            if since is None:
                continue
            labels = dict(key[1])
            labels["alertname"] = rule.name
            labels["severity"] = rule.severity
            state = "firing" if steps[-1] - since >= rule.for_seconds else "pending"
            out.append(Alert(rule.name, state, since, labels, value, rule.expr))
    return out


def alerts_table(result: Any, at: float) -> str:
    """The alerts at ``at`` as the Prometheus UI lists them: name, state, since, the GPU and the pod."""
    rows = [["ALERT", "STATE", "ACTIVE SINCE", "NODE", "GPU", "POD", "VALUE"]]
    for a in alerts(result, at):
        pod = f"{a.labels['namespace']}/{a.labels['pod']}" if a.labels.get("pod") else "<none>"
        rows.append([a.name, a.state, f"t={a.active_at:g}s", a.labels.get("Hostname", ""), a.labels.get("gpu", ""),
                     pod, _value(round(a.value, 3))])
    if len(rows) == 1:
        return "No alerts pending or firing."
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows)


def plot_gpu_metric(result: Any, metric: str = "DCGM_FI_DEV_GPU_UTIL", node: Optional[str] = None, ax: Any = None):
    """One line per GPU (summed over the pods mapped to it is not done: the GPU's own value) of ``metric``."""
    import matplotlib.pyplot as plt
    series = dcgm_series(result)
    if ax is None:
        _, ax = plt.subplots(figsize=(8, 3))
    seen = set()
    for (m, labels), points in sorted(series.items()):
        lab = dict(labels)
        key = (lab["Hostname"], lab["gpu"])
        if m != metric or (node is not None and lab["Hostname"] != node) or key in seen:
            continue
        seen.add(key)
        ax.step([t / 60 for t, _ in points], [v for _, v in points], where="post", label=f"{key[0]} gpu {key[1]}")
    ax.set_xlabel("simulated time (min)")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} per GPU (dcgm-exporter scrapes every {DCGM_INTERVAL:g}s)")
    if seen and len(seen) <= 16:
        ax.legend(fontsize=7, ncol=2)
    return ax


dcgm_exposition = exposition   # the façade's names (gpusim.dcgm_exposition, gpusim.dcgm_alerts)
dcgm_alerts = alerts
