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
playwright = pytest.importorskip("playwright.sync_api", reason="pytest-playwright is not installed")
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
    proc = subprocess.Popen(["make", "-s", "lab", f"JUPYTER_ARGS={args}"], cwd=ROOT, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                urllib.request.urlopen(f"{base}/api/status?token={TOKEN}", timeout=2)
                break
            except OSError:
                if proc.poll() is not None:
                    pytest.fail("make lab exited: " + proc.stdout.read().decode(errors="replace")[-2000:])
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 2 minutes")
        yield base
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert {p: _digest(ROOT / p) for p in before} == before, "running in the browser changed a committed notebook"


@pytest.fixture(scope="module")
def chromium_browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


def _open(browser, lab_url: str, path: str):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{lab_url}/lab/tree/{path}?token={TOKEN}", timeout=120_000)
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
    page.wait_for_function("document.querySelector('.jp-Notebook') !== null", timeout=60_000)
    page.get_by_text("Kernel status: Idle").first.wait_for(state="attached", timeout=120_000)   # the kernel is up
    return page


def _menu(page, menu: str, item: str) -> None:
    page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(f"^{menu}$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(f"^{item}$")).click()


ALL_RUN = ("() => { const p = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];"
           " return p.length > 0 && p.every(e => /^\\[\\d+\\]:$/.test(e.textContent.trim())); }")


def _run_all(page) -> None:
    """Clear every output (the prompts become [ ]), Run All Cells, wait until every code cell has run."""
    _menu(page, "Edit", "Clear Outputs of All Cells")
    page.wait_for_function("() => document.querySelectorAll('.jp-OutputArea-output').length === 0", timeout=60_000)
    _menu(page, "Run", "Run All Cells")
    page.wait_for_function(ALL_RUN, timeout=600_000)
    page.get_by_text("Kernel status: Idle").first.wait_for(state="attached", timeout=120_000)


def _errors(page) -> list[str]:
    texts = page.locator(".jp-OutputArea-output").all_inner_texts()
    return [t[:300] for t in texts if "Traceback (most recent call last)" in t or re.search(r"^\w+Error: ", t, re.M)]


def test_chapter_runs_and_its_widget_redraws(chromium_browser, lab_url):
    page = _open(chromium_browser, lab_url, CHAPTER)
    _run_all(page)
    assert not _errors(page), _errors(page)
    widget = page.locator(".widget-vbox").filter(has=page.locator(".widget-hslider")).first
    try:
        widget.scroll_into_view_if_needed()
    except Exception:
        page.screenshot(path="/tmp/browser-fail.png", full_page=True)
        print(page.locator(".jp-CodeCell .jp-InputPrompt").all_inner_texts())
        raise
    image = widget.locator(".jp-OutputArea-output img").first
    image.wait_for(timeout=120_000)
    before = image.get_attribute("src")
    handle = widget.locator(".widget-hslider .noUi-handle, .widget-hslider [role=slider]").first
    handle.focus()
    handle.press("ArrowLeft")
    page.wait_for_function("([box, old]) => { const i = box.querySelector('.jp-OutputArea-output img');"
                           " return i && i.getAttribute('src') !== old; }", arg=[widget.element_handle(), before],
                           timeout=120_000)
    assert not _errors(page), _errors(page)
    page.close()


def test_lab_solution_runs(chromium_browser, lab_url):
    page = _open(chromium_browser, lab_url, LAB)
    _run_all(page)
    assert not _errors(page), _errors(page)
    page.close()
