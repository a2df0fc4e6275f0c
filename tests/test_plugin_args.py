"""scheduler-plugins' CoschedulingArgs in a KubeSchedulerConfiguration's pluginConfig: defaults,
upstream's validation messages (apis/config/validation ValidateCoschedulingArgs), and the plugin
honouring them."""
from __future__ import annotations

import pytest

from gpusim.api.errors import InputError
from gpusim.cluster.scenario import load
from gpusim.cluster.simulation import Simulation

POOL = """apiVersion: gpusim.io/v1alpha1
kind: NodePool
metadata: {name: a100}
spec: {count: 1, gpu: {model: A100-SXM4-80GB, count: 2}}
"""


def config(args: str) -> str:
    return f"""apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint: {{enabled: [{{name: Coscheduling}}]}}
    queueSort: {{enabled: [{{name: Coscheduling}}], disabled: [{{name: "*"}}]}}
  pluginConfig:
  - name: Coscheduling
    args: {{{args}}}
"""


@pytest.mark.parametrize("args, path, message", [
    ("permitWaitingTimeSeconds: -1", "profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds",
     "Invalid value: -1: must be greater than 0"),
    ("podGroupBackoffSeconds: -5", "profiles[0].pluginConfig[0].args.podGroupBackoffSeconds",
     "Invalid value: -5: must be greater than 0"),
    ("podGroupRejectPercentage: 101", "profiles[0].pluginConfig[0].args.podGroupRejectPercentage",
     "Invalid value: 101: must be between 0 and 100"),
    ("podGroupRejectPercentage: -1", "profiles[0].pluginConfig[0].args.podGroupRejectPercentage",
     "Invalid value: -1: must be between 0 and 100"),
    ("permitWaitingTimeSeconds: -1, podGroupBackoffSeconds: -1", "",
     "[profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds: Invalid value: -1: must be greater than 0, "
     "profiles[0].pluginConfig[0].args.podGroupBackoffSeconds: Invalid value: -1: must be greater than 0]"),
    ("permitWaitingTime: 5", "", 'unknown field "profiles[0].pluginConfig[0].args.permitWaitingTime"'),
    ("podGroupRejectPercentage: ten", "profiles[0].pluginConfig[0].args.podGroupRejectPercentage",
     "expected integer"),
])
def test_invalid_coscheduling_args(args, path, message):
    with pytest.raises(InputError) as e:
        load(texts=[("<text>", "---\n".join([config(args), POOL]))])
    assert e.value.path == path and message in str(e.value)


@pytest.mark.parametrize("args", ["permitWaitingTimeSeconds: 0", "podGroupBackoffSeconds: 0",
                                  "podGroupRejectPercentage: 0", "podGroupRejectPercentage: 100", ""])
def test_valid_coscheduling_args(args):
    load(texts=[("<text>", "---\n".join([config(args), POOL]))])


def test_permit_waiting_time_is_used_when_the_pod_group_sets_no_timeout():
    """Two of three workers fit: they wait in Permit for permitWaitingTimeSeconds, then the gang fails."""
    group = """apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: g}
spec: {minMember: 3}
"""
    pods = [f"""apiVersion: v1
kind: Pod
metadata: {{name: w{i}, labels: {{scheduling.x-k8s.io/pod-group: g}}, annotations: {{gpusim.io/duration: 1h}}}}
spec:
  containers: [{{name: main, image: cuda, resources: {{limits: {{nvidia.com/gpu: 1}}}}}}]
""" for i in range(3)]
    sim = Simulation(load(texts=[("<text>", "---\n".join([config("permitWaitingTimeSeconds: 7, "
                                                                   "podGroupRejectPercentage: 100"), POOL, group,
                                                            *pods]))]))
    sim.ctx.env.run(until=30)
    timeouts = [(e.time, e.message) for e in sim.ctx.recorder.log if e.reason == "FailedScheduling"
                and "timeout" in e.message]
    assert timeouts and timeouts[0] == (7.0, "0/1 nodes are available: 1 rejected due to timeout after waiting 7s at "
                                             "plugin Coscheduling.")
