"""Resource-name predicates (mirrors kubernetes pkg/apis/core/v1/helper/helpers.go: IsNativeResource,
IsExtendedResourceName, IsOvercommitAllowed)."""
from __future__ import annotations

RESOURCE_DEFAULT_NAMESPACE_PREFIX = "kubernetes.io/"
REQUESTS_PREFIX = "requests."


def is_native_resource(name: str) -> bool:
    """Names without a domain, or in kubernetes.io, are native (helper.IsNativeResource)."""
    return "/" not in name or RESOURCE_DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """helper.IsExtendedResourceName: fully qualified, outside kubernetes.io, not 'requests.'-prefixed."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return True


def is_overcommit_allowed(name: str) -> bool:
    """helper.IsOvercommitAllowed: native, non-hugepages resources may be overcommitted."""
    return is_native_resource(name) and not name.startswith("hugepages-")
