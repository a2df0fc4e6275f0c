"""Per-node components: kubelet (device manager, admission, pod lifecycle), NVIDIA device plugin; the kubelet
Topology Manager (``topologymanager``), the device manager's topology rules (``devicemanager_affinity``),
go-gpuallocator's best-effort policy (``gpuallocator``, fed from board graphs by ``gpuboard``) and the NRT object
an NFD topology-updater publishes (``nfdtopologyupdater``)."""
