"""environment.yml (Binder) must install what pyproject.toml declares.

Binder reads environment.yml and ignores pyproject.toml, so the two lists drift apart
silently unless a test compares them: same package names (runtime dependencies plus the
``lab`` and ``test`` extras), same lower bounds, and a pip section that installs gpusim.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")  # standard library from Python 3.11

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("lab", "test")
NOT_PACKAGES = {"python", "pip"}

# A name, then whatever specifier follows (pip: "simpy>=4.1"; conda: "simpy>=4.1", "simpy 4.1.*").
_SPEC = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(.*)$")


def split(spec: str) -> tuple[str, str]:
    """``"PyYAML >= 6.0"`` -> ``("pyyaml", ">=6.0")``: normalised name, specifier without spaces."""
    m = _SPEC.match(spec.split(";")[0])
    assert m, f"cannot parse requirement {spec!r}"
    name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
    return name, re.sub(r"\s+", "", m.group(2))


def lower_bound(specifier: str) -> str | None:
    m = re.search(r">=([^,|]+)", specifier)
    return m.group(1) if m else None


@pytest.fixture(scope="module")
def pyproject() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


@pytest.fixture(scope="module")
def environment() -> dict:
    return yaml.safe_load((ROOT / "environment.yml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def pip_requirements(pyproject) -> dict[str, str]:
    project = pyproject["project"]
    specs = list(project["dependencies"])
    for extra in EXTRAS:
        specs += project["optional-dependencies"][extra]
    reqs = dict(split(s) for s in specs)
    assert len(reqs) == len(specs), "a package is listed twice in pyproject.toml"
    return reqs


@pytest.fixture(scope="module")
def conda_dependencies(environment) -> dict[str, str]:
    return dict(split(d) for d in environment["dependencies"] if isinstance(d, str))


def pip_section(environment) -> list[str]:
    sections = [d["pip"] for d in environment["dependencies"] if isinstance(d, dict) and "pip" in d]
    assert len(sections) == 1, "environment.yml needs exactly one `- pip:` section"
    return [str(x).strip() for x in sections[0]]


def test_environment_basics(environment, conda_dependencies):
    assert environment["name"] == "gpusim"
    assert "conda-forge" in environment["channels"]
    assert "python" in conda_dependencies
    assert "pip" in conda_dependencies, "a pip section needs pip itself in the conda dependencies"


def test_same_packages(pip_requirements, conda_dependencies):
    conda = set(conda_dependencies) - NOT_PACKAGES
    pip = set(pip_requirements)
    assert conda == pip, (f"only in environment.yml: {sorted(conda - pip)}; "
                          f"only in pyproject.toml: {sorted(pip - conda)}")


def test_same_lower_bounds(pip_requirements, conda_dependencies):
    for name, spec in pip_requirements.items():
        want = lower_bound(spec)
        got = lower_bound(conda_dependencies.get(name, ""))
        assert got == want, f"{name}: pyproject.toml has >={want}, environment.yml has >={got}"


def test_python_lower_bound(pyproject, conda_dependencies):
    assert lower_bound(conda_dependencies["python"]) == lower_bound(pyproject["project"]["requires-python"])


def test_pip_installs_the_project(environment):
    assert {"-e .", "."} & set(pip_section(environment)), "the pip section must install gpusim: `- -e .`"


def test_binder_opens_what_exists(environment):
    """Binder (repo2docker) installs environment.yml, then opens labpath: the guide must exist and the
    pip section must install gpusim itself and JupyterLab must be in the environment."""
    import subprocess
    import tempfile
    pip = next(d["pip"] for d in environment["dependencies"] if isinstance(d, dict) and "pip" in d)
    assert "-e ." in pip
    assert any(str(d).startswith("jupyterlab") for d in environment["dependencies"])
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(["git", "init", "-q", tmp], check=True)
        for remote in ("git@github.com:acme/gpusim.git", "https://github.com/acme/gpusim"):
            subprocess.run(["git", "-C", tmp, "remote", "remove", "origin"], capture_output=True)
            subprocess.run(["git", "-C", tmp, "remote", "add", "origin", remote], check=True)
            url = subprocess.run(["make", "-s", "-f", str(ROOT / "Makefile"), "binder-url"], cwd=tmp,
                                 capture_output=True, text=True, check=True).stdout.strip()
            assert url == "https://mybinder.org/v2/gh/acme/gpusim/HEAD?labpath=course%2F00-guide.ipynb"
    labpath = url.split("labpath=", 1)[1].replace("%2F", "/")
    assert (ROOT / labpath).is_file()
    assert "make binder-url" in (ROOT / "README.md").read_text(encoding="utf-8")
