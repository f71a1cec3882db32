"""mini_vllm: the course's Phase 05 mini-build, CUDA-graph capture & replay on numpy."""
