"""Workload and node controllers (kube-controller-manager's share of the simulation)."""
