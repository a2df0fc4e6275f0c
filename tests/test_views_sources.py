"""gpusim.views.sources: the module → upstream table of chapter 11, read from the module docstrings."""
from __future__ import annotations

from pathlib import Path

import pytest

from gpusim.views.sources import format_upstream_sources, project_of, upstream_of, upstream_sources

ROOT = Path(__file__).resolve().parents[1] / "gpusim"


@pytest.fixture(scope="module")
def rows():
    return {r["module"]: r for r in upstream_sources()}


def test_one_row_per_module(rows):
    modules = {".".join(p.relative_to(ROOT.parent).with_suffix("").parts).removesuffix(".__init__")
               for p in ROOT.rglob("*.py") if p.name != "__main__.py"}
    assert set(rows) == modules


@pytest.mark.parametrize("module, project, upstream", [
    ("gpusim.node.devicemanager", "Kubernetes", "kubernetes pkg/kubelet/cm/devicemanager/manager.go"),
    ("gpusim.scheduler.plugins.tainttoleration", "Kubernetes", "pkg/scheduler/framework/plugins/tainttoleration"),
    ("gpusim.scheduler.plugins.coscheduling", "scheduler-plugins", None),
    ("gpusim.volcano.plugins.proportion", "Volcano", "volcano-sh/volcano pkg/scheduler/plugins/proportion/proportion.go"),
    ("gpusim.kueue.flavorassigner", "Kueue", "kueue pkg/scheduler/flavorassigner/flavorassigner.go, v0.19"),
    ("gpusim.node.deviceplugin", "NVIDIA k8s-device-plugin", "NVIDIA/k8s-device-plugin v0.20"),
    ("gpusim.labs.gpuclustering", "FGD simulator (ATC '23)", None),
    ("gpusim.labs.outoftree", "Kubernetes", None),
    ("gpusim.views.plots", "gpusim", None),              # gpusim's own: no upstream
    ("gpusim.labs.plugincheck", "gpusim", None),         # "(labs/08-write-a-plugin)" is not upstream code
])
def test_rows(rows, module, project, upstream):
    r = rows[module]
    assert r["project"] == project
    if upstream is not None:
        assert r["upstream"] == upstream
    assert (r["upstream"] is None) == (project == "gpusim")


@pytest.mark.parametrize("doc, expected", [
    ("Thing (mirrors kubernetes pkg/a/b.go): more.", "kubernetes pkg/a/b.go"),
    ("Mirrors ``k8s.io/api/core/v1/types.go``. Rest.", "k8s.io/api/core/v1/types.go"),
    ("Views; mirrors no single upstream package.", None),
    ("A plain helper. (see labs/x)", None),
])
def test_upstream_of(doc, expected):
    assert upstream_of(doc, "gpusim.x") == expected


def test_path_only_text_takes_the_project_of_its_context():
    assert project_of("pkg/coscheduling/core/core.go", "scheduler-plugins' Coscheduling")[0] == "scheduler-plugins"
    assert project_of("pkg/scheduler/framework/runtime/framework.go")[0] == "Kubernetes"


def test_markdown_table_lists_only_modules_with_upstream(rows):
    text = format_upstream_sources(list(rows.values()), projects=("Volcano",))
    lines = text.splitlines()
    assert lines[0] == "| gpusim module | upstream project | mirrors |"
    assert len(lines) - 2 == sum(r["project"] == "Volcano" for r in rows.values())
    assert "[Volcano](https://github.com/volcano-sh/volcano)" in lines[2]
