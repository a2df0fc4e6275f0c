"""The course in a real browser, as a learner opens it: ``make lab`` from the repository root, headless
Chromium (the OS package) driven by Playwright, one chapter and one lab run with Run All Cells, no cell
showing an error, and a widget that redraws its figure when moved.

JupyterLab's autosave is switched off for the test (a settings override), so running the notebooks in the
browser leaves the committed files untouched; the test checks that too.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytest.importorskip("pytest_playwright", reason="pytest-playwright is not installed")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on PATH (.ci/run installs Debian's chromium)")

CHAPTER = "course/02-1-resource-model.ipynb"   # has filter_score_widget: sliders that rerun a simulation
LAB = "labs/01-inference-oom/solution.ipynb"
TOKEN = "gpusim-browser-test"
# Chromium flags for a closed network, as root (see the machine notes): no sandbox, no background traffic.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def lab_url(tmp_path_factory):
    """``make lab`` (the README's command), serving the repository root, on a free port."""
    port = _free_port()
    settings = tmp_path_factory.mktemp("lab-settings")
    overrides = settings / "overrides.json"
    overrides.write_text(json.dumps({"@jupyterlab/docmanager-extension:plugin": {"autosave": False},
                                     # every cell in the DOM (no virtual scrolling), so the test sees them all
                                     "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"},
                                     "@jupyterlab/apputils-extension:notification": {"fetchNews": "false"}}))
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(settings))
    args = (f"--no-browser --ServerApp.port={port} --ServerApp.port_retries=0 --IdentityProvider.token={TOKEN} "
            f"--LabApp.app_settings_dir={settings}")
    before = {p: _digest(ROOT / p) for p in (CHAPTER, LAB)}
    log = open(settings / "jupyterlab.log", "w+b")   # a file, not a pipe: nobody drains a pipe and the server would block
    proc = subprocess.Popen(["make", "-s", "lab", f"JUPYTER_ARGS={args}"], cwd=ROOT, env=env, start_new_session=True,
                            stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    log.seek(0)
                    pytest.fail("make lab exited: " + log.read().decode(errors="replace")[-2000:])
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 2 minutes")
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
        log.close()
    assert {p: _digest(ROOT / p) for p in before} == before, "running in the browser changed a committed notebook"


# pytest-playwright's own fixtures (browser, page), pointed at the system Chromium: Playwright's browser
# download does not work offline.
@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS, "headless": True}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}


IDLE = "() => [...document.querySelectorAll('.jp-StatusBar-TextItem')].some(e => e.textContent.endsWith('| Idle'))"


def _open(page, lab_url: str, path: str):
    page.goto(f"{lab_url}/lab/tree/{path}?token={TOKEN}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function("document.querySelector('.jp-Notebook') !== null", timeout=60_000)
    page.wait_for_function(IDLE, timeout=120_000)   # the kernel is up
    return page


def _menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).click()


QUEUED = "() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')].some(e => e.textContent.includes('*'))"


def _run_all(page) -> None:
    """Run All Cells: every cell is queued at once (its prompt shows [*]); wait until none is left."""
    _menu(page, "Run", "Run All Cells")
    page.wait_for_function(QUEUED, timeout=60_000)
    page.wait_for_function(f"() => !({QUEUED})()", timeout=600_000)
    page.wait_for_function(IDLE, timeout=120_000)


def _errors(page) -> list[str]:
    texts = page.locator(".jp-OutputArea-output").all_inner_texts()
    return [t[:300] for t in texts if "Traceback (most recent call last)" in t or re.search(r"^\w+Error: ", t, re.M)]


def test_chapter_runs_and_its_widget_redraws(page, lab_url):
    _open(page, lab_url, CHAPTER)
    _run_all(page)
    assert not _errors(page), _errors(page)
    widget = page.locator(".widget-vbox").filter(has=page.locator(".widget-hslider")).first
    widget.scroll_into_view_if_needed()
    image = widget.locator(".jp-OutputArea-output img").first
    image.wait_for(timeout=120_000)
    before = image.get_attribute("src")
    # drag "GPU request" from 4 to its maximum, 8: a100-0 (2 GPUs used) no longer fits, so the explanation and
    # the score bars change
    slider = widget.locator(".widget-hslider").first
    handle, track = slider.locator(".noUi-handle").first, slider.locator(".noUi-base").first
    box, end = handle.bounding_box(), track.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(end["x"] + end["width"] + 20, box["y"] + box["height"] / 2, steps=10)
    page.mouse.up()
    readout = slider.locator(".widget-readout").first
    page.wait_for_function("el => el.textContent.trim() === '8'", arg=readout.element_handle(), timeout=30_000)
    for _ in range(240):   # the widget reruns the scenario and redraws its figure
        page.wait_for_timeout(500)
        after = widget.locator(".jp-OutputArea-output img").first
        if after.count() and after.get_attribute("src") != before and "NodeResourcesFit" in widget.inner_text():
            break
    else:
        pytest.fail("moving the slider did not redraw the figure")
    assert not _errors(page), _errors(page)


def test_lab_solution_runs(page, lab_url):
    _open(page, lab_url, LAB)
    _run_all(page)
    assert not _errors(page), _errors(page)
