"""The nbval kernel-start retry used by `make test` (tests/nbval_kernel_retry.py)."""
from __future__ import annotations

import pytest

from tests import nbval_kernel_retry as retry


def test_a_kernel_that_dies_once_is_started_again(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []

    def flaky(*args: object, **kwargs: object) -> str:
        calls.append(kwargs["stderr"])
        if len(calls) == 1:
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km, kc"

    monkeypatch.setattr(retry, "_start_new_kernel", flaky)
    monkeypatch.setattr(retry.time, "sleep", lambda s: None)
    assert retry.start_new_kernel_with_retry(kernel_name="python3") == "km, kc"
    assert len(calls) == 2


def test_a_kernel_that_always_dies_fails_with_its_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    def dead(*args: object, **kwargs: object) -> str:
        kwargs["stderr"].write("ModuleNotFoundError: No module named 'ipykernel'\n")  # type: ignore[attr-defined]
        kwargs["stderr"].flush()  # type: ignore[attr-defined]
        raise RuntimeError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(retry, "_start_new_kernel", dead)
    monkeypatch.setattr(retry.time, "sleep", lambda s: None)
    with pytest.raises(RuntimeError, match=r"after 3 attempts\); kernel stderr:\nModuleNotFoundError"):
        retry.start_new_kernel_with_retry(kernel_name="python3")


def test_nbval_calls_the_wrapper() -> None:
    import nbval.kernel

    assert nbval.kernel.start_new_kernel is retry.start_new_kernel_with_retry
