"""A simulated gRPC boundary between the kubelet and a device plugin.

Each call costs ``latency`` simulated seconds, is traced with the upstream function name, and
fails like grpc-go does when the server is gone (``rpc error: code = Unavailable desc = ...``).
"""
from __future__ import annotations

from typing import Any, Callable, Generator

import simpy

from ..controlplane.trace import Trace


class RpcError(Exception):
    """status.Error as grpc-go prints it."""

    def __init__(self, code: str, desc: str):
        super().__init__(f"rpc error: code = {code} desc = {desc}")
        self.code, self.desc = code, desc


class Channel:
    def __init__(self, env: simpy.Environment, latency: float, trace: Trace):
        self.env, self.latency, self.trace = env, latency, trace

    def call(self, component: str, function: str, obj: str, server_up: Callable[[], bool],
             handler: Callable[..., Any], *args: Any) -> Generator[Any, Any, Any]:
        """``yield from channel.call(...)``: the handler's result, or RpcError."""
        if self.latency:
            yield self.env.timeout(self.latency)
        if not server_up():
            err = RpcError("Unavailable", "connection error: desc = \"transport: Error while dialing: dial unix: "
                           "connect: no such file or directory\"")
            self.trace.add(self.env.now, component, function, obj, str(err))
            raise err
        try:
            result = handler(*args)
        except RpcError as e:
            self.trace.add(self.env.now, component, function, obj, str(e))
            raise
        except Exception as e:   # a plugin error becomes codes.Unknown, as grpc-go does
            err = RpcError("Unknown", str(e))
            self.trace.add(self.env.now, component, function, obj, str(err))
            raise err from None
        self.trace.add(self.env.now, component, function, obj, "Success")
        return result
