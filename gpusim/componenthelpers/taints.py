"""Taints and tolerations (mirrors k8s.io/api/core/v1 toleration.go ``ToleratesTaint``, taint.go ``ToString``,
Go's ``%v`` of a ``corev1.Taint`` value, and k8s.io/component-helpers/scheduling/corev1/helpers.go ``FindMatchingUntoleratedTaint``)."""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable, Optional

from ..api.validation import is_decimal_integer

SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")     # kueue pkg/util/taints IsSchedulingTaint


def tolerates(tol: Any, taint: Any) -> bool:
    """Toleration.ToleratesTaint: effect (empty = any), key (empty = any, only with Exists), then Exists,
    Equal (the default operator) on the value, or Lt/Gt (TaintTolerationComparisonOperators; validation admits
    them only with the gate on): the taint's value compared as a decimal integer with the toleration's
    (``Lt``: taint < toleration, ``Gt``: taint > toleration; a value that is not one never matches)."""
    if tol.effect and tol.effect != taint.effect:
        return False
    if tol.key and tol.key != taint.key:
        return False
    op = tol.operator or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (tol.value or "") == (taint.value or "")
    if op in ("Lt", "Gt") and is_decimal_integer(tol.value) and is_decimal_integer(taint.value):
        return int(taint.value) < int(tol.value) if op == "Lt" else int(taint.value) > int(tol.value)
    return False


def taint_string(taint: Any) -> str:
    """Taint.ToString: ``key=value:effect``, or ``key:effect`` without a value."""
    return f"{taint.key}={taint.value}:{taint.effect}" if taint.value else f"{taint.key}:{taint.effect}"


def taint_value_string(taint: Any) -> str:
    """A ``corev1.Taint`` value printed with Go's ``%s``/``%v`` (what kueue's flavorassigner.go writes in
    ``untolerated taint %s in flavor %s`` with the value FindMatchingUntoleratedTaint returns): the fields in
    order, ``{key value effect <nil>}``; a set ``timeAdded`` prints as Go's ``time.Time.String`` in UTC."""
    added = "<nil>"
    if taint.time_added:
        try:
            t = datetime.fromisoformat(str(taint.time_added).replace("Z", "+00:00")).astimezone(timezone.utc)
            added = t.strftime("%Y-%m-%d %H:%M:%S +0000 UTC")
        except ValueError:
            added = str(taint.time_added)
    return f"{{{taint.key} {taint.value} {taint.effect} {added}}}"


def find_matching_untolerated_taint(taints: Iterable[Any], tolerations: list[Any],
                                    effects: tuple[str, ...] = SCHEDULING_EFFECTS) -> Optional[Any]:
    """The first taint with one of ``effects`` that no toleration tolerates, or None."""
    for t in taints:
        if t.effect not in effects:
            continue
        if not any(tolerates(tol, t) for tol in tolerations):
            return t
    return None
