"""pytest plugin for `make test`'s nbval run: start each notebook's kernel again when it dies on startup.

With pytest-xdist several kernels start at the same moment; jupyter_client picks each kernel's five TCP ports
by binding and releasing them, so two kernels can race for one port, and the loser exits before it answers
``kernel_info`` ("Kernel died before replying to kernel_info", jupyter/jupyter_client#487). That is a property
of the harness, not of the notebook, so the kernel is started again (at most ``ATTEMPTS`` times); a notebook
whose kernel dies for its own reasons still fails, with the kernel's stderr of the last attempt in the error.

Loaded with ``-p tests.nbval_kernel_retry`` (Makefile ``test``); it wraps ``nbval.kernel.start_new_kernel``,
the function nbval's ``RunningKernel`` calls.
"""
from __future__ import annotations

import tempfile
import time
from typing import Any

import nbval.kernel

ATTEMPTS = 3
_start_new_kernel = nbval.kernel.start_new_kernel


def start_new_kernel_with_retry(*args: Any, **kwargs: Any) -> Any:
    """Call nbval's ``start_new_kernel`` up to ``ATTEMPTS`` times; keep the kernel's stderr of each attempt."""
    for attempt in range(1, ATTEMPTS + 1):
        with tempfile.TemporaryFile(mode="w+") as stderr:
            kwargs["stderr"] = stderr
            try:
                return _start_new_kernel(*args, **kwargs)
            except RuntimeError as err:
                stderr.seek(0)
                log = stderr.read()[-2000:]
                if attempt == ATTEMPTS:
                    raise RuntimeError(f"{err} (after {ATTEMPTS} attempts); kernel stderr:\n{log}") from err
        time.sleep(0.5 * attempt)
    raise AssertionError("unreachable")


nbval.kernel.start_new_kernel = start_new_kernel_with_retry
