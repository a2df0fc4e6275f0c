"""In-tree scheduler plugins, one module per plugin (pkg/scheduler/framework/plugins/...)."""
