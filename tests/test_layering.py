"""gpusim.experiments.layering: lint-imports on a temporary copy of the package rejects the imports the
contracts forbid (chapter 07 §1) and leaves the package itself untouched."""
from __future__ import annotations

import pathlib

import pytest

from gpusim.cluster.components import COMPONENTS
from gpusim.experiments import layering

pytest.importorskip("importlinter")
ROOT = pathlib.Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("file, line, broken", [
    ("gpusim/kueue/fit.py", "from ..scheduler.plugins import noderesources", ["components"]),
    ("gpusim/api/shortcut.py", "from ..controlplane import apiserver", ["layers", "acyclic"]),
    ("gpusim/views/shortcut.py", "from ..cluster.components import COMPONENTS", ["readers"]),
    ("gpusim/node/devicemanager.py", "from .deviceplugin import NvidiaDevicePlugin", []),   # same package: allowed
    ("gpusim/volcano/extra.py", "from ..scheduler.plugins import noderesources", []),      # the one allowed edge
])
def test_wrong_imports_break_the_contracts_that_forbid_them(file, line, broken):
    before = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).exists() else None
    run = layering.lint_with_import(file, line)
    assert run.broken == broken
    assert run.returncode == (1 if broken else 0)
    if broken:
        importer = file.removesuffix(".py").replace("/", ".")
        assert f"{importer} -> " in run.report
    after = (ROOT / file).read_text(encoding="utf-8") if (ROOT / file).exists() else None
    assert before == after, "the package itself must not change"


def test_unmodified_copy_keeps_every_contract():
    run = layering.lint_package()
    assert run.returncode == 0 and run.broken == []
    assert run.report.endswith(f"Contracts: {len(layering.contracts())} kept, 0 broken.")


def test_a_module_outside_any_package_is_refused():
    with pytest.raises(FileNotFoundError, match="gpusim/nowhere/x.py"):
        layering.lint_with_import("gpusim/nowhere/x.py", "import os")


def test_component_rows_are_the_components_table():
    rows = layering.component_rows()
    assert [r["name"] for r in rows] == [c.name for c in COMPONENTS]
    assert all((r["check"] == "-") == (c.check is None) and (r["install"] == "-") == (c.install is None)
               for r, c in zip(rows, COMPONENTS))


def test_import_graph_facts_the_chapter_states():
    g = layering.import_graph()
    assert layering.direct_importers("gpusim.api.deviceplugin_v1beta1", g) == ["gpusim.node.devicemanager",
                                                                               "gpusim.node.deviceplugin"]
    assert not layering.imports("gpusim.node.devicemanager", "gpusim.node.deviceplugin", g)
    assert layering.imports("gpusim.volcano", "gpusim.scheduler", g)
    assert layering.layers_match_contract()
    assert not layering.layers_match_contract(["api | hardware"])
