"""A kube-scheduler built with out-of-tree plugins (mirrors kubernetes ``cmd/kube-scheduler/app/server.go``
``Option`` / ``WithPlugin`` and how scheduler-plugins' ``cmd/scheduler/main.go`` uses them).

Upstream, an out-of-tree plugin is compiled into a scheduler binary: ``main`` calls
``app.NewSchedulerCommand(app.WithPlugin(name, factory), ...)``, each option registers one factory in an
out-of-tree registry, that registry is merged into the in-tree one (a duplicate name is an error), and
the binary's ``--config`` file (a KubeSchedulerConfiguration) may then name the plugin in its profiles.
Here :func:`build` does the same: ``build(config_text, with_plugin(NAME, new))`` returns a
:class:`SchedulerBuild` whose :meth:`~SchedulerBuild.run` simulates a scenario with that scheduler.

The scheduler's configuration is given to the build, not written into the scenario, just as
``kube-scheduler --config`` is a file of the scheduler and not an object anyone ``kubectl apply``-s;
a scenario that carries its own KubeSchedulerConfiguration is refused.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

from ..api.errors import FieldError, InputError
from ..api.kubescheduler_config_v1 import KubeSchedulerConfiguration
from ..cluster.scenario import decode_document, read_documents
from ..scheduler.profile import ProfileSpec, build_profiles
from ..scheduler.registry import Registry, in_tree_registry

CONFIG_LABEL = "--config"   # how errors in the scheduler's configuration name their file

Factory = Callable[[Any, Any], Any]


@dataclass(frozen=True)
class Option:
    """``app.Option``: one out-of-tree plugin to register (``app.WithPlugin(name, factory)``)."""

    name: str
    factory: Factory


def with_plugin(name: str, factory: Factory) -> Option:
    """``app.WithPlugin``: register ``factory`` (``factory(args, handle) -> plugin``) under ``name``."""
    return Option(name, factory)


@dataclass
class SchedulerBuild:
    """The registry (in-tree plus out-of-tree plugins) and the validated ``--config`` of one scheduler."""

    registry: Registry
    config: Optional[KubeSchedulerConfiguration]
    profiles: list[ProfileSpec]
    out_of_tree: tuple[str, ...]

    def profile(self, scheduler_name: str = "default-scheduler") -> ProfileSpec:
        """The resolved profile ``scheduler_name``: which plugin runs at which extension point, with weights."""
        for p in self.profiles:
            if p.scheduler_name == scheduler_name:
                return p
        raise KeyError(f"no profile {scheduler_name!r}; profiles: {', '.join(p.scheduler_name for p in self.profiles)}")

    def run(self, *paths: str, text: Optional[str] = None, seed: Optional[int] = None,
            until: Optional[float] = None):
        """Load the scenario (files and/or YAML ``text``) and simulate it with this scheduler."""
        from ..cluster.scenario import load
        from ..cluster.simulation import Simulation
        sc = load(paths, [("<text>", text)] if text else [])
        if sc.scheduler_config is not None:
            raise InputError("the scenario has its own KubeSchedulerConfiguration; a scheduler built with "
                             "out-of-tree plugins takes its configuration from build(config, ...) "
                             "(kube-scheduler --config)", sc.source(sc.scheduler_config), "KubeSchedulerConfiguration")
        sc.scheduler_config = self.config
        return Simulation(sc, seed=seed, until=until, registry=self.registry).run()


def parse_config(text: Optional[str], registry: Registry,
                 feature_gates: Optional[dict[str, bool]] = None) -> tuple[Optional[KubeSchedulerConfiguration],
                                                                            list[ProfileSpec]]:
    """Decode and validate a KubeSchedulerConfiguration against ``registry`` (as kube-scheduler does on
    start-up); errors name ``--config``, the object and the field."""
    if not text or not text.strip():
        return None, build_profiles(None, registry, feature_gates)[0]
    docs = read_documents(CONFIG_LABEL, text)
    if len(docs) != 1:
        raise InputError(f"expected one KubeSchedulerConfiguration document, found {len(docs)}", None)
    doc, source = docs[0]
    cfg = decode_document(doc, source)
    if not isinstance(cfg, KubeSchedulerConfiguration):
        raise InputError(f"expected a KubeSchedulerConfiguration, got {cfg.kind}", source, cfg.kind)
    try:
        profiles = build_profiles(cfg, registry, feature_gates)[0]
    except FieldError as e:
        raise InputError(e.message, source, "KubeSchedulerConfiguration", "", "", e.path) from None
    return cfg, profiles


def build(config: Optional[str] = None, *options: Option) -> SchedulerBuild:
    """``app.NewSchedulerCommand(options...)`` with ``--config``: the in-tree registry merged with the
    out-of-tree plugins of ``options`` (``Registry.merge``: a name registered twice is an error), and
    ``config`` validated against it. ``config=None`` runs the default profile."""
    out = Registry()
    for opt in options:
        out.register(opt.name, opt.factory)
    registry = in_tree_registry()
    registry.merge(out)
    cfg, profiles = parse_config(config, registry)
    return SchedulerBuild(registry, cfg, profiles, tuple(out))
