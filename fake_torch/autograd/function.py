"""torch.autograd.function: custom operations written as a `Function` subclass (static
`forward(ctx, ...)`, or `forward(...)` plus `setup_context(ctx, inputs, output)`, and
`backward`).

fake_torch emulates no autograd, so `Function.apply` runs what torch runs when no input needs a
gradient: `forward` (and `setup_context`) once, with a fresh context object, and never
`backward`. The context records what forward asks of it (`save_for_backward`, `mark_dirty`, ...)
as torch's does; `needs_input_grad` says, per argument, whether it is a tensor that requires grad
while grad mode is on. Outputs are handled as torch handles them: an output that IS an input
comes back as a view of it (the same object when forward marked it dirty).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from fake_torch._grad_mode import is_grad_enabled, no_grad
from fake_torch._tensor import Tensor

__all__ = ["Function", "FunctionCtx", "once_differentiable"]

_R = TypeVar("_R")


class FunctionCtx:
    """The `ctx` a Function's forward (or setup_context) receives: it keeps what forward says
    backward will need."""

    to_save: tuple[Tensor | None, ...]
    dirty_tensors: tuple[Tensor, ...] | None
    non_differentiable: tuple[Tensor, ...] | None

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors (or None) for backward, as `ctx.to_save`."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for a forward-mode (jvp) rule, as `ctx.saved_for_forward`."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare the inputs forward modified in place (they are returned as themselves)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that get no gradient."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward receives zero tensors (True) or None for undefined gradients."""
        self.materialize_grads = value


class _ApplyCtx(FunctionCtx):
    """The context one `apply` call hands forward (torch's is the Function's backward node)."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self.to_save = ()
        self.dirty_tensors = None
        self.non_differentiable = None

    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """What backward would unpack; torch packs nothing while no graph is kept, so () here
        (forward, run without a graph, reads an empty tuple in torch too)."""
        return ()


class Function(FunctionCtx):
    """Base class of custom autograd operations: subclass it, write static `forward` and
    `backward`, and call `YourFunction.apply(*args)`. (A FunctionCtx, as torch's is.)"""

    generate_vmap_rule = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. "
            "Instantiating an autograd function will raise an "
            "error in a future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """The operation: `forward(ctx, *args)`, or `forward(*args)` with setup_context."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Fill `ctx` from forward's inputs and output (when forward takes no ctx)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """The gradient rule; fake_torch never calls it (it emulates no autograd)."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """The forward-mode gradient rule (not emulated)."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD.")

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """The rule under torch.vmap (not emulated)."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the "
            "vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run the operation: forward once (see the module's docstring)."""
        setup = cls.setup_context is not Function.setup_context  # forward(*args) + setup
        if setup:  # torch binds the defaults in: setup_context sees every input
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        grad = is_grad_enabled()
        ctx = _ApplyCtx(tuple(grad and isinstance(a, Tensor) and a.requires_grad for a in args))
        if setup:
            with no_grad():  # torch runs both without recording, as forward below
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
        else:
            with no_grad():
                output = cls.forward(ctx, *args, **kwargs)
        return _outputs(output, args, ctx)


def _outputs(output: Any, inputs: tuple[Any, ...], ctx: _ApplyCtx) -> Any:
    """torch's output handling: an output that is an input comes back as a view of it, unless
    forward marked that input dirty (then as itself); only a top-level tuple is looked into."""
    dirty = {id(t) for t in ctx.dirty_tensors or ()}
    input_ids = {id(a) for a in inputs if isinstance(a, Tensor)}

    def one(value: Any) -> Any:
        if isinstance(value, Tensor) and id(value) in input_ids and id(value) not in dirty:
            return value.view_as(value)
        return value

    if isinstance(output, tuple):
        return tuple(one(v) for v in output)
    return one(output)


def once_differentiable(fn: Callable[..., _R]) -> Callable[..., _R]:
    """Marks a backward as not differentiable twice: it runs under no_grad. (torch also gives
    its outputs a node that refuses double backward; fake_torch keeps no graph to refuse.)"""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> _R:
        with no_grad():
            return fn(ctx, *args, **kwargs)

    return wrapper
