"""torch.jit: trace (record a function's ops on example inputs, replay them) and what it
returns; script, TorchScript's compiler, is not emulated."""

from fake_torch.jit._script import ScriptFunction, ScriptModule, is_scripting, script
from fake_torch.jit._trace import TopLevelTracedModule, TracerWarning, is_tracing, trace

__all__ = ["ScriptFunction", "ScriptModule", "TracerWarning", "is_scripting", "is_tracing",
           "script", "trace"]
_ = TopLevelTracedModule  # torch.jit.TopLevelTracedModule: its constructor is torch's own
