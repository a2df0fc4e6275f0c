"""Helpers shared by several components, as upstream shares them (mirrors k8s.io/component-helpers and
kubernetes pkg/api/v1/pod): node-affinity matching, pod conditions, pod resource requests.

The scheduler, the kubelet, Volcano and Kueue import these instead of one another, the way
kube-scheduler and the kubelet both import ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``.
"""
