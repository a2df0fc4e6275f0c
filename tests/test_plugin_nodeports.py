"""NodePorts: hostPort conflicts as HostPortInfo.CheckConflict decides them, and end to end."""
from __future__ import annotations

import pytest

from gpusim.cluster.simulation import run
from gpusim.scheduler.plugins.nodeports import ERR_REASON, conflicts


@pytest.mark.parametrize("want, used, conflict", [
    ([("0.0.0.0", "TCP", 8080)], [("0.0.0.0", "TCP", 8080)], True),
    ([("10.0.0.1", "TCP", 8080)], [("0.0.0.0", "TCP", 8080)], True),     # 0.0.0.0 overlaps every IP
    ([("0.0.0.0", "TCP", 8080)], [("10.0.0.2", "TCP", 8080)], True),
    ([("10.0.0.1", "TCP", 8080)], [("10.0.0.2", "TCP", 8080)], False),   # different host IPs
    ([("0.0.0.0", "UDP", 8080)], [("0.0.0.0", "TCP", 8080)], False),     # different protocol
    ([("0.0.0.0", "TCP", 8081)], [("0.0.0.0", "TCP", 8080)], False),
    ([], [("0.0.0.0", "TCP", 8080)], False),
])
def test_conflicts(want, used, conflict):
    assert conflicts(want, used) is conflict


def test_second_pod_with_same_host_port_goes_elsewhere_then_waits():
    pod = """apiVersion: v1
kind: Pod
metadata: {{name: {name}, annotations: {{gpusim.io/submit-at: {at}}}}}
spec:
  containers: [{{name: c, image: x, ports: [{{containerPort: 80, hostPort: 8080}}]}}]
"""
    pool = ("apiVersion: gpusim.io/v1alpha1\nkind: NodePool\nmetadata: {name: n}\n"
            "spec: {count: 2, gpu: {model: T4, count: 1}}\n")
    r = run(text="---\n".join([pool] + [pod.format(name=f"p{i}", at=f"{i}s") for i in range(3)]))
    nodes = [r.pod(f"p{i}").spec.node_name for i in range(3)]
    assert sorted(nodes[:2]) == ["n-0", "n-1"] and nodes[2] == ""
    msg = next(e.message for e in r.events.log if e.reason == "FailedScheduling")
    assert msg.startswith(f"0/2 nodes are available: 2 {ERR_REASON}.")
