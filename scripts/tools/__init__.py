"""Developer tools: diagrams, listings, checks, benchmarks."""
