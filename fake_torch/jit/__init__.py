"""torch.jit: trace (record a function's ops on example inputs, replay them) and what it
returns; TorchScript's markers (Final, ignore, unused, export); script and script_method,
TorchScript's compiler, and load/save of its archives are not emulated."""

from fake_torch.jit._modifiers import Final, export, ignore, unused
from fake_torch.jit._script import (
    ScriptFunction,
    ScriptModule,
    is_scripting,
    load,
    save,
    script,
    script_method,
)
from fake_torch.jit._trace import TopLevelTracedModule, TracerWarning, is_tracing, trace

__all__ = ["Final", "ScriptFunction", "ScriptModule", "TracerWarning", "export", "ignore",
           "is_scripting", "is_tracing", "load", "save", "script", "script_method", "trace",
           "unused"]
_ = TopLevelTracedModule  # torch.jit.TopLevelTracedModule: its constructor is torch's own
