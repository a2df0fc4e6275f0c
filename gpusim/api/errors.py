"""Input errors that name the file, the document, the object and the field."""
from __future__ import annotations

from dataclasses import dataclass


def cut(text: str, limit: int = 80) -> str:
    """Long values are shortened in messages (a 50 MB name must not become a 100 MB error)."""
    return text if len(text) <= limit else text[:limit] + f"…({len(text)} characters)"


class FieldError(ValueError):
    """A problem at one field path inside one object (no file context yet)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


@dataclass
class Source:
    """Where an object came from: file and 1-based document index."""

    file: str = "<input>"
    document: int = 1

    def __str__(self) -> str:
        return f"{self.file}, document {self.document}"


class InputError(ValueError):
    """Invalid scenario input. ``str()`` is one paragraph that a user can act on."""

    def __init__(self, message: str, source: Source | None = None, kind: str = "",
                 namespace: str = "", name: str = "", path: str = ""):
        self.source, self.kind, self.namespace, self.name, self.path = source, kind, namespace, name, path
        self.message = message
        super().__init__(self.render())

    def render(self) -> str:
        where = f"{self.source}: " if self.source else ""
        obj = ""
        if self.kind:
            ref = cut(f"{self.namespace}/{self.name}" if self.namespace else self.name)
            obj = f'{self.kind} "{ref}" is invalid: ' if ref else f"{self.kind} is invalid: "
        field = f"{self.path}: " if self.path else ""
        return f"error: {where}{obj}{field}{self.message}"
