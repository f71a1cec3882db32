"""TorchScript's objects as fake_torch has them: ScriptFunction and ScriptModule (what
torch.jit.trace returns), and torch.jit.script, which is not emulated: TorchScript compiles
Python source into its own IR and runs it in its own interpreter."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch.nn.modules.module import Module

_NO_IR = ("is not emulated by fake_torch: it has no TorchScript IR (a trace replays recorded "
          "fake_torch ops)")


class ScriptFunction:
    """A traced function (torch.jit.ScriptFunction): calling it replays the trace."""

    def __init__(self, run: Callable[..., Any], name: str) -> None:
        self._run = run
        self.name = name
        self.qualified_name = f"__torch__.{name}"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(args, kwargs)

    def __repr__(self) -> str:
        return f"<torch.jit.ScriptFunction object at {hex(id(self))}>"

    @property
    def graph(self) -> Any:
        raise NotImplementedError(f"torch.jit.ScriptFunction.graph {_NO_IR}")

    @property
    def code(self) -> str:
        raise NotImplementedError(f"torch.jit.ScriptFunction.code {_NO_IR}")

    def save(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"torch.jit.ScriptFunction.save {_NO_IR}")


class ScriptModule(Module):
    """The base of traced modules (torch.jit.ScriptModule)."""

    def __init__(self) -> None:
        super().__init__()

    @property
    def graph(self) -> Any:
        raise NotImplementedError(f"torch.jit.ScriptModule.graph {_NO_IR}")

    @property
    def code(self) -> str:
        raise NotImplementedError(f"torch.jit.ScriptModule.code {_NO_IR}")

    def save(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"torch.jit.ScriptModule.save {_NO_IR}")


def script(obj: Any, optimize: None = None, _frames_up: int = 0,
           _rcb: Callable[[str], Any] | None = None,
           example_inputs: list[tuple[Any, ...]] | dict[Callable[..., Any], list[tuple[Any, ...]]]
           | None = None) -> Any:
    """Raises: TorchScript compiles Python source into its own IR, which fake_torch does not
    emulate (torch.jit.trace records and replays ops; torch.compile traces into FX)."""
    raise NotImplementedError("torch.jit.script is not emulated by fake_torch: TorchScript "
                              "compiles Python source into its own IR; use torch.jit.trace, "
                              "torch.fx.symbolic_trace or torch.compile")


def script_method(fn: Any) -> Any:
    """Raises, as torch.jit.script does: a ScriptModule's script_method is compiled to
    TorchScript's IR when its class is created."""
    raise NotImplementedError("torch.jit.script_method is not emulated by fake_torch: "
                              "TorchScript compiles Python source into its own IR; use "
                              "torch.jit.trace, torch.fx.symbolic_trace or torch.compile")


def load(f: Any, map_location: Any = None, _extra_files: Any = None,
         _restore_shapes: bool = False) -> Any:
    """Raises: a TorchScript archive holds TorchScript IR (CLIP's jit=True checkpoints), which
    fake_torch cannot run."""
    raise NotImplementedError("torch.jit.load is not emulated by fake_torch: a TorchScript "
                              "archive holds TorchScript IR, which it cannot run; load the "
                              "eager model's state_dict instead")


def save(m: Any, f: Any, _extra_files: Any = None) -> None:
    """Raises: saving writes TorchScript IR, which fake_torch does not have."""
    raise NotImplementedError(f"torch.jit.save {_NO_IR}")


def is_scripting() -> bool:
    """False: nothing runs as TorchScript under fake_torch."""
    return False


__all__ = ["ScriptFunction", "ScriptModule", "is_scripting", "load", "save", "script",
           "script_method"]
