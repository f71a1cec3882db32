"""A vLLM-style model runner on `import torch`: CUDA graph modes, dispatcher, piecewise backend."""
