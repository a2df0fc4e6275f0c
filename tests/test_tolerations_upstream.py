"""Tolerations against upstream's own table, and the Lt/Gt comparison operators (KEP-5471, feature gate
TaintTolerationComparisonOperators, alpha since 1.35, off by default).

Rows: kubernetes/kubernetes staging/src/k8s.io/api/core/v1/toleration_test.go, TestTolerationToleratesTaint
(master @ 19c6083b, the 1.36 line), all 14, in order; ``expectError`` rows expect "not tolerated" as upstream does.
"""
from __future__ import annotations

import pytest

import gpusim as gs
from gpusim.api.core_v1 import Taint, Toleration
from gpusim.componenthelpers.taints import tolerates

NS, SLA = "NoSchedule", "node.kubernetes.io/sla"
ROWS = [
    ("Exists, taint has no value", Toleration(key="foo", operator="Exists", effect=NS), Taint("foo", "", NS), True),
    ("Exists, taint has some value", Toleration(key="foo", operator="Exists", effect=NS), Taint("foo", "bar", NS), True),
    ("empty key and Exists match all taints", Toleration(key="", operator="Exists", effect=NS), Taint("foo", "bar", NS),
     True),
    ("Equal, same key, effect and value", Toleration(key="foo", operator="Equal", value="bar", effect=NS),
     Taint("foo", "bar", NS), True),
    ("Equal, different values", Toleration(key="foo", operator="Equal", value="value1", effect=NS),
     Taint("foo", "value2", NS), False),
    ("Equal, different effects", Toleration(key="foo", operator="Equal", value="bar", effect=NS),
     Taint("foo", "bar", "NoExecute"), False),
    ("Gt, taint value less", Toleration(key=SLA, operator="Gt", value="950", effect=NS), Taint(SLA, "800", NS), False),
    ("Gt, taint value greater", Toleration(key=SLA, operator="Gt", value="750", effect=NS), Taint(SLA, "950", NS), True),
    ("Lt, taint value greater", Toleration(key=SLA, operator="Lt", value="800", effect=NS), Taint(SLA, "950", NS), False),
    ("Lt, taint value less", Toleration(key=SLA, operator="Lt", value="950", effect=NS), Taint(SLA, "800", NS), True),
    ("Gt, equal values", Toleration(key=SLA, operator="Gt", value="950", effect=NS), Taint(SLA, "950", NS), False),
    ("Gt, non-numeric taint value", Toleration(key=SLA, operator="Gt", value="950", effect=NS), Taint(SLA, "high", NS),
     False),
    ("Gt, negative values", Toleration(key="test-key", operator="Gt", value="-100", effect=NS),
     Taint("test-key", "-200", NS), False),
    ("Gt, large int64 threshold", Toleration(key="test-key", operator="Gt", value="9223372036854775806", effect=NS),
     Taint("test-key", "100", NS), False),
]


@pytest.mark.parametrize("tol, taint, want", [r[1:] for r in ROWS], ids=[r[0] for r in ROWS])
def test_toleration_tolerates_taint(tol, taint, want):
    assert tolerates(tol, taint) is want


def scenario(op: str, value: str, gate: bool | None = True) -> str:
    gates = "" if gate is None else f"featureGates: {{TaintTolerationComparisonOperators: {str(gate).lower()}}}"
    return f"""apiVersion: gpusim.io/v1alpha1
kind: Simulation
metadata: {{name: s}}
spec: {{{gates}}}
---
apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {{name: a100}}
spec: {{count: 1, gpu: {{model: A100-SXM4-80GB, count: 1}}, taints: [{{key: {SLA}, value: "950", effect: NoSchedule}}]}}
---
apiVersion: v1
kind: Pod
metadata: {{name: p}}
spec:
  tolerations: [{{key: {SLA}, operator: {op}, value: "{value}", effect: NoSchedule}}]
  containers: [{{name: c, image: x, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
"""


@pytest.mark.parametrize("op, value, bound", [("Gt", "900", True), ("Gt", "990", False), ("Lt", "990", True),
                                              ("Lt", "950", False)])
def test_a_threshold_toleration_places_the_pod_only_when_the_taint_value_compares(op, value, bound):
    r = gs.run(text=scenario(op, value), until="1m")
    assert bool(r.pod("p").spec.node_name) is bound
    if not bound:
        assert "1 node(s) had untolerated taint(s)" in gs.describe_pod(r, "p")


@pytest.mark.parametrize("gate", [None, False])
def test_lt_and_gt_need_the_feature_gate(gate):
    with pytest.raises(gs.InputError, match=r'spec.tolerations\[0\].operator: Unsupported value: "Gt": supported '
                                            r'values: "Equal", "Exists"'):
        gs.load(texts=[("s.yaml", scenario("Gt", "900", gate))])


@pytest.mark.parametrize("value", ["0900", "+900", "9.5", "high", "", "9223372036854775808"])
def test_a_comparison_value_must_be_a_canonical_decimal_integer(value):
    with pytest.raises(gs.InputError, match=r"spec.tolerations\[0\].value: Invalid value: .*must be a valid decimal "
                                            "integer in canonical form"):
        gs.load(texts=[("s.yaml", scenario("Lt", value))])
