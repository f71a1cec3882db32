"""How often real runner code reaches each torch name: the order `python -m fake_torch api` lists
missing names in (most used first), so the first names it shows are those a port meets first.

`count_torch_names` reads Python source and counts each reference to a torch name, through
whatever it was imported as (`torch.cuda.graph`, `nn.Linear` after `import torch.nn as nn`,
`graph` after `from torch.cuda import graph`). `USAGE` is what it counted, once, over:

  - nano-vllm (GeeeekExplorer/nano-vllm at bb823b3): every file under nanovllm/;
  - vLLM 0.33.0's compilation files: vllm/compilation/*.py, vllm/v1/cudagraph_dispatcher.py and
    vllm/forward_context.py;
  - PyTorch's CUDA-graph tests: the test methods of test/test_cuda.py whose name holds "graph".

Only the counts are kept (a name and a number), never the code they were read from. A path is
kept as the public name it reaches in a module the report compares (`torch.cuda.CUDAGraph.replay`
counts for `torch.cuda.CUDAGraph`); private names and other modules are left out.
"""

from __future__ import annotations

import ast
from collections import Counter


def count_torch_names(source: str, root: str = "torch") -> Counter[str]:
    """Each torch name `source` reaches, by its dotted path (`torch.cuda.graph`), and how often:
    once per reference (an attribute chain counts as its whole path, a name imported from torch
    as the path it was imported from). `root` names the package ("fake_torch": what a test
    reaches through fake_torch)."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> the torch path it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == root or alias.name.startswith(root + "."):
                    # `import torch.cuda` binds `torch`; `import torch.nn as nn` binds `nn`
                    aliases[alias.asname or root] = alias.name if alias.asname else root
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module is not None \
                and (node.module == root or node.module.startswith(root + ".")):
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    inner = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    counts: Counter[str] = Counter()
    for node in ast.walk(tree):
        if id(node) in inner:
            continue  # part of a longer chain, counted there
        path = _dotted(node, aliases)
        if path is not None and path != root:
            counts[path] += 1
    return counts


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """`torch.cuda.graph` for a chain of attributes on a torch alias, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load) \
            or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def usage(module: str, name: str) -> int:
    """How often the counted code uses `module.name` (0: never)."""
    return USAGE.get(f"{module}.{name}", 0)


# what count_torch_names counted over the three sources above, most used first
USAGE: dict[str, int] = {
    "torch.Tensor": 100,
    "torch.cuda.CUDAGraph": 45,
    "torch.cuda.stream": 39,
    "torch.cuda.Stream": 36,
    "torch.cuda.current_stream": 26,
    "torch.fx.GraphModule": 26,
    "torch.cuda.empty_cache": 25,
    "torch.cuda.synchronize": 23,
    "torch.randn": 23,
    "torch.cuda.graph": 21,
    "torch.nn.Module": 20,
    "torch.cuda.manual_seed": 18,
    "torch.zeros": 18,
    "torch.ones": 17,
    "torch.tensor": 14,
    "torch.empty": 13,
    "torch.nn.Parameter": 13,
    "torch.empty_like": 12,
    "torch.int32": 11,
    "torch._dynamo.config": 10,
    "torch._dynamo.utils": 9,
    "torch.all": 9,
    "torch.cuda.memory_stats": 8,
    "torch.float": 8,
    "torch.fx.Node": 7,
    "torch.nn.Sequential": 7,
    "torch.rand": 7,
    "torch.rand_like": 7,
    "torch.compile": 6,
    "torch.distributed.get_world_size": 6,
    "torch.full": 6,
    "torch.int64": 6,
    "torch.nn.Linear": 6,
    "torch._dynamo.decorators": 5,
    "torch.cuda.graph_pool_handle": 5,
    "torch.fx.experimental": 5,
    "torch.manual_seed": 5,
    "torch.SymInt": 4,
    "torch.add": 4,
    "torch.amp.autocast": 4,
    "torch.arange": 4,
    "torch.cuda.Event": 4,
    "torch.nn.Dropout": 4,
    "torch.nn.functional.linear": 4,
    "torch.no_grad": 4,
    "torch.accelerator.current_stream": 3,
    "torch.cat": 3,
    "torch.cuda.is_current_stream_capturing": 3,
    "torch.cuda.make_graphed_callables": 3,
    "torch.cuda.mem_get_info": 3,
    "torch.distributed.barrier": 3,
    "torch.fx.node": 3,
    "torch.randn_like": 3,
    "torch.FloatTensor": 2,
    "torch._dynamo.aot_compile": 2,
    "torch._dynamo.mark_dynamic": 2,
    "torch._dynamo.symbolic_convert": 2,
    "torch.autograd.grad": 2,
    "torch.cuda.amp.GradScaler": 2,
    "torch.cuda.caching_allocator_delete": 2,
    "torch.cuda.default_generators": 2,
    "torch.cuda.memory_snapshot": 2,
    "torch.distributed.all_reduce": 2,
    "torch.distributed.get_rank": 2,
    "torch.gather": 2,
    "torch.inference_mode": 2,
    "torch.mm": 2,
    "torch.ones_like": 2,
    "torch.optim.Adam": 2,
    "torch.optim.AdamW": 2,
    "torch.optim.SGD": 2,
    "torch.rsqrt": 2,
    "torch.set_default_device": 2,
    "torch.set_default_dtype": 2,
    "torch.utils": 2,
    "torch.utils._pytree.tree_map_only": 2,
    "torch.utils.checkpoint.checkpoint": 2,
    "torch.Generator": 1,
    "torch.Stream": 1,
    "torch._dynamo.convert_frame": 1,
    "torch._dynamo.eval_frame": 1,
    "torch.accelerator.Graph": 1,
    "torch.accelerator.empty_cache": 1,
    "torch.amp.GradScaler": 1,
    "torch.autograd.backward": 1,
    "torch.backends.cuda.preferred_blas_library": 1,
    "torch.chunk": 1,
    "torch.compiler": 1,
    "torch.compiler.is_compiling": 1,
    "torch.compiler.load_compiled_function": 1,
    "torch.compiler.set_stance": 1,
    "torch.compiler.skip_all_guards_unsafe": 1,
    "torch.cuda.caching_allocator_alloc": 1,
    "torch.cuda.reset_peak_memory_stats": 1,
    "torch.cuda.set_device": 1,
    "torch.cumsum": 1,
    "torch.device": 1,
    "torch.distributed.destroy_process_group": 1,
    "torch.distributed.gather": 1,
    "torch.distributed.init_process_group": 1,
    "torch.einsum": 1,
    "torch.empty_strided": 1,
    "torch.float32": 1,
    "torch.full_like": 1,
    "torch.fx.Interpreter": 1,
    "torch.fx.map_arg": 1,
    "torch.fx.passes": 1,
    "torch.get_default_dtype": 1,
    "torch.multiprocessing.get_context": 1,
    "torch.nn.LSTM": 1,
    "torch.nn.ModuleList": 1,
    "torch.nn.ReLU": 1,
    "torch.nn.functional.dropout": 1,
    "torch.nn.functional.embedding": 1,
    "torch.nn.functional.mse_loss": 1,
    "torch.nn.functional.relu": 1,
    "torch.nn.functional.rrelu": 1,
    "torch.nn.functional.silu": 1,
    "torch.ops": 1,
    "torch.optim.ASGD": 1,
    "torch.optim.Adadelta": 1,
    "torch.optim.Adamax": 1,
    "torch.optim.NAdam": 1,
    "torch.optim.RAdam": 1,
    "torch.optim.RMSprop": 1,
    "torch.optim.Rprop": 1,
    "torch.quantile": 1,
    "torch.sigmoid": 1,
    "torch.softmax": 1,
}
