"""The cluster as a scenario installs it: loading the YAML (files → typed objects → NodePool expansion →
cross-object references → each component's configuration check) and wiring every component onto one
simpy clock (what kubeadm, the Helm charts and the GPU Operator do to a real cluster).

This layer sits above the components: it is the only place that knows all of them, through the table in
``gpusim.cluster.components``.
"""
