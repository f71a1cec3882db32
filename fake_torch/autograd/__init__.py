"""torch.autograd: fake_torch runs forward only (it emulates no autograd). What is here is what
forward-only code reads: the grad modes, `Function` (custom ops, run forward only),
`graph.save_on_cpu` (a context manager with nothing to save), `profiler.record_function`
(torch.profiler's) and the legacy `Variable`."""

from fake_torch._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled
from fake_torch.autograd import function as function
from fake_torch.autograd import graph as graph
from fake_torch.autograd import profiler as profiler
from fake_torch.autograd.function import Function
from fake_torch.autograd.variable import Variable

__all__ = ["Function", "Variable", "enable_grad", "inference_mode", "no_grad",
           "set_grad_enabled"]
