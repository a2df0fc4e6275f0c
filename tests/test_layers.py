"""The layer table (gpusim/layers.py) is what import-linter enforces and what the README shows."""
from __future__ import annotations

import pathlib
import pkgutil

import pytest

import gpusim
from gpusim.layers import LAYERS, import_linter_layers, markdown_table

tomllib = pytest.importorskip("tomllib")  # standard library from Python 3.11

ROOT = pathlib.Path(__file__).resolve().parents[1]


def contracts() -> dict[str, dict]:
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return {c["id"]: c for c in cfg["tool"]["importlinter"]["contracts"]}


def test_layers_contract_is_the_table():
    c = contracts()["layers"]
    assert c["containers"] == ["gpusim"]
    assert c["layers"] == import_linter_layers()


def test_components_contract_names_the_components_layer():
    components = next(layer for layer in LAYERS if layer.name == "components")
    assert contracts()["components"]["modules"] == [f"gpusim.{p}" for p in components.packages]


def test_readers_never_import_components_or_wiring():
    c = contracts()["readers"]
    below_readers = {p for layer in LAYERS if layer.name in ("cluster", "components") for p in layer.packages}
    assert {f"gpusim.{p}" for p in below_readers} <= set(c["forbidden_modules"])


@pytest.mark.parametrize("name", sorted(m.name for m in pkgutil.iter_modules(gpusim.__path__)))
def test_every_package_has_one_layer(name):
    if name in ("layers", "__main__"):
        return
    owners = [layer.name for layer in LAYERS if name in layer.packages]
    assert len(owners) == 1, f"gpusim.{name} must belong to exactly one layer of gpusim/layers.py, not {owners}"


def test_readme_shows_the_table():
    assert markdown_table() in (ROOT / "README.md").read_text(encoding="utf-8")
