"""Per-node components: kubelet (device manager, admission, pod lifecycle), NVIDIA device plugin."""
