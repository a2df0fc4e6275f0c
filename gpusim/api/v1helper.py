"""Resource-name predicates (mirrors kubernetes pkg/apis/core/v1/helper/helpers.go: IsNativeResource,
IsExtendedResourceName, IsOvercommitAllowed; pkg/scheduler/util/utils.go IsDRAExtendedResourceName)."""
from __future__ import annotations

RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."
# resource.ResourceDeviceClassPrefix: every DeviceClass's implicit extended resource name is this + its name
RESOURCE_DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"


def is_native_resource(name: str) -> bool:
    """Names without a domain, or in kubernetes.io, are native (helper.IsNativeResource)."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """helper.IsExtendedResourceName: fully qualified, outside kubernetes.io, not 'requests.'-prefixed."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return True


def is_dra_extended_resource_name(name: str) -> bool:
    """schedutil.IsDRAExtendedResourceName: an extended resource name, or a DeviceClass's implicit name
    ``deviceclass.resource.kubernetes.io/<class>`` (a kubernetes.io name, so not an extended one)."""
    return is_extended_resource_name(name) or name.startswith(RESOURCE_DEVICE_CLASS_PREFIX)


def is_overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native, non-hugepages resources may be overcommitted."""
    return is_native_resource(name) and not name.startswith("hugepages-")
