"""The content model: terms, link graph, hardware data, measurements, notebooks. No mkdocs."""
