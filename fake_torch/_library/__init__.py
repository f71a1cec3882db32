"""torch._library: the machinery behind torch.library (operator schemas, the registry of
operators defined with torch.library.Library, opaque types)."""
