"""torch._inductor: the compiler behind torch.compile's default backend, in fake form: it fuses
pointwise and reduction ops into one counted launch each and, for mode="reduce-overhead", runs
the compiled graph through CUDA graph trees. Importing it registers the "inductor" and
"cudagraphs" backends."""

from fake_torch._dynamo.backends.registry import register_backend
from fake_torch._dynamo.convert_frame import add_reset_hook
from fake_torch._inductor import config
from fake_torch._inductor.backends import cudagraphs, inductor, list_mode_options
from fake_torch._inductor.cudagraph_trees import reset_cudagraph_trees

register_backend(compiler_fn=inductor, name="inductor")
register_backend(compiler_fn=cudagraphs, name="cudagraphs")
add_reset_hook(reset_cudagraph_trees)  # torch._dynamo.reset() clears the trees


def list_options() -> list[str]:
    """The names `torch.compile(options=...)` accepts."""
    return list(config.get_config_copy())


__all__ = ["config", "list_mode_options", "list_options"]
