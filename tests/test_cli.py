"""The command line as a user meets it: --version, option help, python -m, and a reader that stops early."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import gpusim
from gpusim.cli import OUTPUTS, main

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
EXAMPLE = str(EXAMPLES / "lifecycle.yaml")
BIG = str(EXAMPLES / "volcano-queues.yaml")   # its trace is far larger than a pipe's 64 KiB buffer


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.strip() == f"gpusim {gpusim.__version__}"


@pytest.mark.parametrize("command", ["run", "describe", "explain"])
def test_every_option_has_help(command, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = capsys.readouterr().out
    for option in ("--seed N", "--until DURATION"):
        line = next(line for line in out.splitlines() if line.strip().startswith(option))
        assert len(line.strip()) > len(option) + 5, f"{command} {option} has no help text"


def test_run_help_lists_every_output_format(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    out = capsys.readouterr().out
    assert all(f"  {k}" in out and v[:20] in " ".join(out.split()) for k, v in OUTPUTS.items())


def test_python_dash_m_is_the_cli():
    proc = subprocess.run([sys.executable, "-m", "gpusim", "run", EXAMPLE], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.startswith("NAME ")


def test_closed_pipe_is_not_an_error():
    """``gpusim run … -o json | head -1``: the reader goes away after one line; no traceback, exit 0."""
    run = subprocess.Popen([sys.executable, "-m", "gpusim", "run", BIG, "-o", "trace"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
    first = run.stdout.readline()
    run.stdout.close()
    err = run.stderr.read().decode()
    assert run.wait(timeout=120) == 0 and first.split()[:2] == [b"TIME", b"COMPONENT"]
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_setup_puts_gpusim_on_the_kernels_path():
    """A notebook kernel started by JupyterLab need not have the venv on PATH; gs.setup() adds it."""
    script = ("import os, shutil; os.environ['PATH'] = '/usr/bin:/bin'; import gpusim as gs; gs.setup(); "
              "print(shutil.which('gpusim'))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).stdout.strip()
    assert out and Path(out).parent == Path(sys.executable).parent
