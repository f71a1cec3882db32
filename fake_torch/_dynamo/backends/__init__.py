"""torch._dynamo.backends: the registry of compiler backends and the built-in debug ones."""
