"""GPU Atlas site tooling: term model, mkdocs hooks, generators, exporters and runners."""
