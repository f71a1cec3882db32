"""torch._inductor.fx_passes: the graph passes vLLM imports by name (post_grad.view_to_reshape)."""
