"""gpusim's own architecture, read from the package itself (chapter 07 §1): the layer table
(``gpusim/layers.py``) beside the import-linter contracts of ``pyproject.toml`` that enforce it, who
imports whom (grimp's import graph, the one import-linter builds), the component table the loader and
the simulation walk (``gpusim/cluster/components.py``), and ``lint-imports`` run on a temporary copy of
the package with one deliberately wrong import — so a learner sees the exact report CI would print,
without touching the package.

Mirrors no upstream code: it is tooling for the simulator (import-linter's ``lint-imports`` and grimp are
the tools; the contracts are this project's)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
PACKAGE = Path(__file__).resolve().parents[1]          # …/gpusim
PYPROJECT = PACKAGE.parent / "pyproject.toml"            # the repository's (editable install, Binder, make lab)


def _pyproject() -> Path:
    if not PYPROJECT.exists():
        raise FileNotFoundError(f"{PYPROJECT}: the import-linter contracts live in the repository's pyproject.toml; "
                                "run this from a checkout of gpusim (make lab, or pip install -e .)")
    return PYPROJECT


def contracts() -> list[dict]:
    """The ``[[tool.importlinter.contracts]]`` tables of pyproject.toml, in order."""
    try:
        import tomllib
    except ModuleNotFoundError:          # Python 3.10
        import tomli as tomllib          # type: ignore[no-redef]
    cfg = tomllib.loads(_pyproject().read_text(encoding="utf-8"))
    return cfg["tool"]["importlinter"]["contracts"]


def format_contracts() -> str:
    """One row per contract: id, import-linter type, and its name (the sentence lint-imports prints)."""
    from ..views.kubectl import _table
    return _table([["ID", "TYPE", "CONTRACT"]] + [[c["id"], c["type"], c["name"]] for c in contracts()])


def import_graph():
    """grimp's import graph of the installed gpusim (what lint-imports analyses)."""
    import grimp
    return grimp.build_graph("gpusim")


def direct_importers(module: str, graph=None) -> list[str]:
    """The modules of gpusim that import ``module`` directly, sorted."""
    g = graph if graph is not None else import_graph()
    return sorted(g.find_modules_that_directly_import(module))


def imports(importer: str, imported: str, graph=None) -> bool:
    """Whether ``importer`` (a module or package) imports ``imported`` (module or package), directly or
    through a chain of imports."""
    g = graph if graph is not None else import_graph()
    return g.chain_exists(importer, imported, as_packages=True)


def _qualname(fn) -> str:
    if fn is None:
        return "-"
    return f"{fn.__module__.removeprefix('gpusim.')}.{fn.__name__}"


def component_rows() -> list[dict]:
    """The component table of ``gpusim/cluster/components.py``: name, its configuration check (run by the
    loader), its add-on ``install`` (run by the simulation) and the namespace its installation creates."""
    from ..cluster.components import COMPONENTS
    return [{"name": c.name, "check": _qualname(c.check), "install": _qualname(c.install),
             "namespace": c.namespace or "-"} for c in COMPONENTS]


def format_components() -> str:
    from ..views.kubectl import _table
    rows = [["COMPONENT", "CHECK (loader)", "INSTALL (simulation)", "NAMESPACE"]]
    return _table(rows + [[r["name"], r["check"], r["install"], r["namespace"]] for r in component_rows()])


@dataclass(frozen=True)
class LintRun:
    """One ``lint-imports`` run on a temporary copy of the package: its exit code and report."""

    returncode: int
    report: str            # from the "Contracts" heading on (the banner is left out)
    file: str              # the file the wrong import was added to, relative to the repository
    line: str              # the import that was added

    @property
    def broken(self) -> list[str]:
        """The names of the broken contracts, as the report's summary lists them."""
        names = {c["name"]: c["id"] for c in contracts()}
        flat = " ".join(self.report.split())
        return [cid for name, cid in names.items() if f"{name} BROKEN" in flat]


def lint_with_import(file: str, line: str, timeout: float = 120.0) -> LintRun:
    """Copy the package's Python sources and pyproject.toml to a temporary directory, append ``line`` to
    ``file`` (a path such as ``gpusim/kueue/scheduler.py``; a new module of an existing package is created)
    and run ``lint-imports`` there. The package itself is not modified."""
    with tempfile.TemporaryDirectory(prefix="gpusim-lint-") as tmp:
        root = Path(tmp)
        shutil.copytree(PACKAGE, root / "gpusim",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "data", "*.gz", "*.csv"))
        shutil.copy(_pyproject(), root / "pyproject.toml")
        target = root / file
        if not (target.is_file() or (target.suffix == ".py" and (target.parent / "__init__.py").is_file())):
            raise FileNotFoundError(f"{file}: neither a module of gpusim nor a new module of one of its packages")
        existed = target.is_file()
        with target.open("a", encoding="utf-8") as f:
            f.write(("\n" if existed else "") + line.rstrip("\n") + "\n")
        env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
        env.pop("FORCE_COLOR", None)
        proc = subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import "
                               "lint_imports_command; sys.exit(lint_imports_command())", "--no-cache"],
                              cwd=root, env=env, capture_output=True, text=True, timeout=timeout)
    out = _ANSI.sub("", proc.stdout + proc.stderr)
    start = out.find("Contracts\n")
    report = out[out.rfind("\n", 0, max(start - 1, 0)) + 1:] if start > 0 else out
    return LintRun(proc.returncode, report.strip("\n"), file, line)


def lint_package(timeout: float = 120.0) -> LintRun:
    """``lint-imports`` on an unmodified copy of the package (what ``make test`` runs)."""
    return lint_with_import("gpusim/layers.py", "", timeout)


def layers_match_contract(layers: Optional[list[str]] = None) -> bool:
    """Whether the ``layers`` contract of pyproject.toml lists gpusim/layers.py's table, top to bottom."""
    from ..layers import import_linter_layers
    c = next(c for c in contracts() if c["type"] == "layers")
    return c["layers"] == (layers if layers is not None else import_linter_layers())
