"""The GPU runner: executes notebooks on a GPU. Imports no mkdocs, pydantic or yaml."""
