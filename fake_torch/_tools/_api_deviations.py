"""The one table of deliberate differences from torch's API, each with its reason.

tests/test_api_conformance.py fails on any exported name whose signature differs from torch's, or
that torch lacks, unless it is listed here; and on any entry here that no longer differs.
"""

EXTENSION = "fake_torch extension: "  # names torch lacks, a reason starting with this

DEVIATIONS: dict[str, str] = {
    "torch.jit.trace": "_compilation_unit defaults to None: fake_torch has no TorchScript "
                       "CompilationUnit",
    # fake_torch extensions
    "torch.LaunchCounter": EXTENSION + "counts the kernel launches a GPU would see",
    "torch.install": EXTENSION + "makes `import torch` mean fake_torch",
    "torch.installed": EXTENSION + "install() as a context manager",
    "torch.is_installed": EXTENSION + "whether install() is in effect",
    "torch.uninstall": EXTENSION + "undoes install()",
    "torch.cuda.set_simulated_device_memory": EXTENSION + "sizes the simulated GPU's memory",
    "torch.cuda.set_simulated_gpu": EXTENSION + "names the simulated GPU (H200, H100, A100, L4)",
    "torch.cuda.fresh_simulated_device": EXTENSION + "a new simulated GPU for a block (tests)",
    "torch.cuda.set_simulated_devices": EXTENSION + "the number of simulated GPUs (a new machine)",
    "torch.profiler.FunctionEvent": EXTENSION + "torch keeps it in torch.autograd.profiler_util",
    "torch.profiler.FunctionEventAvg": EXTENSION + "torch keeps it in torch.autograd.profiler_util",
    "torch.profiler.KeyAverages": EXTENSION + "the type of key_averages(); unnamed in torch",
    # signatures
    "torch.dtype": "constructed from numpy dtypes internally; torch's cannot be constructed",
    "torch.nn.functional.max_pool2d": "spells out the parameters torch's boolean_dispatch "
                                       "wrapper, (*args, **kwargs), forwards to "
                                       "max_pool2d_with_indices or _max_pool2d",
    "torch.einsum": "(equation, *operands) is torch's documented form; torch's Python wrapper "
                    "takes *args to accept the sublist format too, which fake_torch lacks",
    "torch.is_tensor": "obj may be passed by keyword (torch's is positional-only)",
    "torch.set_default_dtype": "d may be passed by keyword (torch's is positional-only)",
    "torch.layout": "a class whose __new__ refuses every call (torch's C type has no "
                    "constructor, so inspect shows ()); the same TypeError text either way",
    "torch.no_grad": "also a bare decorator (@no_grad without parentheses) via orig_func",
    "torch.autograd.no_grad": "torch.no_grad itself (see there)",
    "torch.utils.checkpoint.checkpoint": "same parameters; the context_fn default is "
                                         "fake_torch's own noop_context_fn, whose repr differs",
    "torch.nn.attention.flex_attention.BlockMask": "same parameters; the mask_mod default is "
                                                   "fake_torch's own noop_mask, whose repr "
                                                   "differs",
    "torch._dynamo.OptimizedModule": "built around a frame of our tracer, not a dynamo context",
    "torch._dynamo.disable": "no `wrapping` flag: disabled functions are always wrapped",
    "torch._dynamo.graph_break": "takes no message: the break reason names the call site",
    "torch._dynamo.mark_dynamic": "accepts and ignores torch's keyword-only bounds and hints",
    "torch._dynamo.optimize": "spells out the keywords torch forwards through *args, **kwargs",
    "torch.utils._pytree.LeafSpec": "takes no arguments, as torch's; torch's signature reads "
                                    "(*args, **kwargs) through its deprecation wrapper",
}
