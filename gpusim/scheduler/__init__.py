"""kube-scheduler: framework, scheduling queue, scheduling and binding cycles, plugins."""
