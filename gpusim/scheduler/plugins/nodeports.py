"""NodePorts (plugins/nodeports/node_ports.go): a pod asking for container hostPorts fits only where
no pod already uses the same protocol/port on an overlapping host IP (0.0.0.0 overlaps every IP)."""
from __future__ import annotations

from typing import Any

from ..framework import Code, Status

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
EVENTS = {"Pod/Delete", "Node/Add"}
DEFAULT_HOST_IP = "0.0.0.0"
PRE_FILTER_KEY = "PreFilter" + NAME


def host_ports(pod: Any) -> list[tuple[str, str, int]]:
    """getContainerPorts: (hostIP, protocol, hostPort) of every container port with a hostPort."""
    out = []
    for c in [*pod.spec.init_containers, *pod.spec.containers]:
        for p in c.ports or ():
            hp = p.get("hostPort") if isinstance(p, dict) else None
            if hp:
                out.append((p.get("hostIP") or DEFAULT_HOST_IP, p.get("protocol") or "TCP", int(hp)))
    return out


def conflicts(want: list[tuple[str, str, int]], used: list[tuple[str, str, int]]) -> bool:
    """HostPortInfo.CheckConflict."""
    for ip, proto, port in want:
        for uip, uproto, uport in used:
            if port == uport and proto == uproto and DEFAULT_HOST_IP in (ip, uip) or (ip, proto, port) == (uip, uproto, uport):
                return True
    return False


class NodePorts:
    name = NAME
    events = EVENTS

    def pre_filter(self, state, pi, nodes):
        want = host_ports(pi.pod)
        state[PRE_FILTER_KEY] = want
        return None, Status.new(Code.Skip) if not want else Status()

    def filter(self, state, pi, ni) -> Status:
        want = state.get(PRE_FILTER_KEY)
        if want is None:
            want = host_ports(pi.pod)
        if not want:
            return Status()
        used = [p for other in ni.pods.values() for p in host_ports(other.pod)]
        if conflicts(want, used):
            return Status.new(Code.Unschedulable, ERR_REASON)
        return Status()


def new(args=None, handle=None) -> NodePorts:
    return NodePorts()
