"""The scheduler's share of Dynamic Resource Allocation, as kube-scheduler takes it from
k8s.io/dynamic-resource-allocation: CEL device selectors (``cel``) and the structured allocator
(``allocator``). The DynamicResources plugin itself is gpusim/scheduler/plugins/dynamicresources.py."""
