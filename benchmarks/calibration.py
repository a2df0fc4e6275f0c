"""The machine's speed, printed beside every benchmark's figures (issue 17): a fixed pure-Python loop whose
wall time scales with the interpreter's speed on this machine at this moment, so figures from different
machines, or from one shared machine under different load, compare as ratios (figure × calibration time).

    python benchmarks/calibration.py
"""
from __future__ import annotations

import time

CALIBRATION_ITERATIONS = 2_000_000


def calibration_loop(n: int = CALIBRATION_ITERATIONS) -> int:
    """Dict, list and integer work in the proportions an interpreter-bound simulator does it."""
    d: dict[int, int] = {}
    acc = 0
    for i in range(n):
        k = i & 1023
        d[k] = d.get(k, 0) + i
        acc ^= (i * 31) % 97
    return acc + len(d)


def calibrate(repeats: int = 3) -> float:
    """Best-of-`repeats` seconds of the fixed loop (the best is the least disturbed by other processes)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        calibration_loop()
        best = min(best, time.perf_counter() - t0)
    return best


def calibration_line(seconds: float) -> str:
    return f"calibration: {seconds:.3f} s for the fixed pure-Python loop ({CALIBRATION_ITERATIONS:,} iterations)"


if __name__ == "__main__":
    print(calibration_line(calibrate()))
