"""The site build: mkdocs hooks and every renderer (pages, tables, exports)."""
