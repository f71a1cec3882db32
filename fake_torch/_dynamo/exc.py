"""torch._dynamo.exc: the exceptions torch.compile raises, with torch's classes and texts."""

from __future__ import annotations

from enum import Enum
from typing import Any

VERBOSE_FOOTER = ("Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this "
                  "especially if you're reporting a bug to PyTorch). For even more developer "
                  "context, set TORCH_LOGS=\"+dynamo\"\n")


class TorchDynamoException(RuntimeError):
    pass


class InternalTorchDynamoError(TorchDynamoException):
    pass


class RecompileError(TorchDynamoException):
    pass


class SkipFrame(TorchDynamoException):
    pass


class TorchRuntimeError(TorchDynamoException):
    pass


class ShortenTraceback(TorchDynamoException):
    pass


class BackendCompilerFailed(ShortenTraceback):
    """The backend raised (or returned something that is not callable) while compiling."""

    def __init__(self, backend_fn: Any, inner_exception: Exception) -> None:
        self.backend_name = getattr(backend_fn, "__name__", "?")
        self.inner_exception = inner_exception
        super().__init__(f"backend={self.backend_name!r} raised:\n"
                         f"{type(inner_exception).__name__}: {inner_exception}\n\n"
                         + VERBOSE_FOOTER)


class Unsupported(TorchDynamoException):
    """A graph break where none is allowed (fullgraph=True): `msg` is the break's text."""

    def __init__(self, msg: str, gb_type: str = "", *, case_name: str | None = None) -> None:
        super().__init__(msg)
        self.msg = msg
        self.gb_type = gb_type
        self.case_name = case_name


class UserErrorType(Enum):
    DYNAMIC_CONTROL_FLOW = 1
    ANTI_PATTERN = 2
    STANDARD_LIBRARY = 3
    CONSTRAINT_VIOLATION = 4
    DYNAMIC_DIM = 5
    INVALID_INPUT = 6
    INVALID_OUTPUT = 7
    UNSUPPORTED_ALIASED_MUTATED_DYNAMIC_INPUTS = 8


class UserError(TorchDynamoException):
    """Code that is fine eagerly but cannot be compiled as asked."""

    def __init__(self, error_type: UserErrorType, msg: str,
                 case_name: str | None = None) -> None:
        super().__init__(msg)
        self.error_type = error_type
        self.msg = msg
        self.message = msg
        self.case_name = case_name


class InvalidBackend(TorchDynamoException):
    def __init__(self, name: str) -> None:
        super().__init__(f"Invalid backend: {name!r}, see `torch._dynamo.list_backends()` for "
                         "available backends.")


class FailOnRecompileLimitHit(Exception):
    pass


__all__ = [
    "BackendCompilerFailed", "FailOnRecompileLimitHit", "InternalTorchDynamoError",
    "InvalidBackend", "RecompileError", "ShortenTraceback", "SkipFrame", "TorchDynamoException",
    "TorchRuntimeError", "Unsupported", "UserError", "UserErrorType",
]
