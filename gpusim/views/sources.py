"""A table of gpusim's modules and the upstream code each one follows, read from the module docstrings,
for chapter 11's map from gpusim to the source trees.

Every module's docstring names the upstream package, file or function it follows, as a clause after the
verb "mirror" (the device manager's names kubernetes pkg/kubelet/cm/devicemanager/manager.go) or, in the
scheduler plugins' short form, as a path in brackets after the plugin's name (TaintToleration's names
plugins/tainttoleration, under pkg/scheduler/framework/). :func:`upstream_sources` parses the source files with :mod:`ast` (it
imports none of them, so it reads every layer without depending on one) and returns one row per module:
the upstream text, the project it belongs to and where to browse it. Like any view it only reads.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Optional

# project → (how to recognise it in a docstring, where its source lives)
PROJECTS: list[tuple[str, tuple[str, ...], str]] = [
    ("Volcano", ("volcano",), "https://github.com/volcano-sh/volcano"),
    ("Kueue", ("kueue",), "https://github.com/kubernetes-sigs/kueue"),
    ("scheduler-plugins", ("scheduler-plugins",), "https://github.com/kubernetes-sigs/scheduler-plugins"),
    ("NVIDIA k8s-device-plugin", ("k8s-device-plugin",), "https://github.com/NVIDIA/k8s-device-plugin"),
    ("NVIDIA GPU Operator", ("gpu-operator",), "https://github.com/NVIDIA/gpu-operator"),
    ("NVIDIA mig-parted", ("mig-parted", "mig-manager"), "https://github.com/NVIDIA/mig-parted"),
    ("HAMi", ("hami",), "https://github.com/Project-HAMi/HAMi"),
    ("FGD simulator (ATC '23)", ("hkust-adsl", "kubernetes-scheduler-simulator"),
     "https://github.com/hkust-adsl/kubernetes-scheduler-simulator"),
    ("Kubernetes", ("k8s.io/", "kubernetes", "pkg/", "plugins/", "client-go", "plugin/pkg", "kubectl", "app.withplugin"),
     "https://github.com/kubernetes/kubernetes"),
]
SCHEDULER_PLUGINS_PREFIX = "pkg/scheduler/framework/"   # what "plugins/x" means in gpusim/scheduler/plugins
_MIRRORS = re.compile(r"[Mm]irror(?:s|ing)?\s+(.*?)(?:\)(?=[:.,;]|\s|$)|: |\. |\.$|; |, (?=as |which |for ))")
_PAREN = re.compile(r"\(([^()]*?/[^()]*?)\)")


def _clean(text: str) -> str:
    return " ".join(text.replace("``", "").replace(":class:", "").split()).strip(" ,;(")


def upstream_of(doc: str, module: str) -> Optional[str]:
    """The upstream code a module docstring names: the clause after "mirrors", else the first
    parenthesised path of its first sentence; None when the module mirrors nothing upstream."""
    flat = " ".join(doc.split())
    m = _MIRRORS.search(flat)
    if m:
        text = _clean(m.group(1))
        return None if text.startswith("no ") else text
    first = re.split(r"(?<=\.)\s", flat, maxsplit=1)[0]
    p = _PAREN.search(first)
    if p is None:
        return None
    text = _clean(p.group(1).split(": ")[0])
    if module.startswith("gpusim.scheduler.plugins.") and text.startswith("plugins/"):
        text = SCHEDULER_PLUGINS_PREFIX + text
    return text if project_of(text)[0] != "other" else None   # a path of gpusim's own, not upstream


def project_of(upstream: str, context: str = "") -> tuple[str, str]:
    """(project, source URL) of an upstream text; ("other", "") when no known project matches. A text that
    starts with the Kubernetes repository is Kubernetes'; one that names only a path (``pkg/…``) takes the
    project its module's first sentence (``context``) names, if that is not Kubernetes."""
    low = upstream.lower()
    if low.startswith(("kubernetes ", "k8s.io/")):
        return PROJECTS[-1][0], PROJECTS[-1][2]
    found = next(((name, url) for name, keys, url in PROJECTS if any(k in low for k in keys)), ("other", ""))
    explicit = "kubernetes" in low or "k8s.io" in low
    if found[0] == PROJECTS[-1][0] and not explicit and context:
        ctx = project_of(context)
        if ctx[0] not in (PROJECTS[-1][0], "other"):
            return ctx
    return found


def upstream_sources(root: Optional[Path] = None) -> list[dict]:
    """One row per module of the gpusim package (``root``: its folder): ``module``, ``upstream`` (None if it
    mirrors nothing), ``project``, ``url``, and ``summary`` (the docstring's first sentence)."""
    root = Path(__file__).resolve().parents[1] if root is None else Path(root)
    rows = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[-1] == "__main__":
            continue
        module = ".".join(parts)
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        upstream = upstream_of(doc, module)
        summary = re.split(r"(?<=\.)\s", " ".join(doc.split()), maxsplit=1)[0]
        project, url = project_of(upstream, summary) if upstream else ("gpusim", "")
        rows.append({"module": module, "upstream": upstream, "project": project, "url": url,
                     "summary": _clean(summary)})
    return rows


def format_upstream_sources(rows: list[dict], projects: Optional[tuple[str, ...]] = None) -> str:
    """A Markdown table of the rows that mirror upstream code (optionally only ``projects``), grouped by project."""
    order = [p for p, _k, _u in PROJECTS] + ["other"]
    keep = [r for r in rows if r["upstream"] and (projects is None or r["project"] in projects)]
    keep.sort(key=lambda r: (order.index(r["project"]) if r["project"] in order else len(order), r["module"]))
    lines = ["| gpusim module | upstream project | mirrors |", "|---|---|---|"]
    for r in keep:
        project = f"[{r['project']}]({r['url']})" if r["url"] else r["project"]
        lines.append(f"| `{r['module']}` | {project} | {r['upstream'].replace('|', '/')} |")
    return "\n".join(lines)
