"""torch._weights_only_unpickler: the restricted unpickler behind `torch.load(weights_only=True)`.

It runs only the pickle opcodes a state dict needs (the set torch's runs, protocol 2), and
resolves a global only from an allowlist: torch's tensor, storage, dtype and rebuild names
(fake_torch/_serialization_names.py) plus what the user marked safe with
`torch.serialization.add_safe_globals` / `safe_globals`. It calls only allowlisted functions,
builds only Tensors, Parameters, OrderedDicts and allowlisted classes, appends only to lists and
sets items only on dicts. Everything else raises pickle.UnpicklingError with torch's message,
which `torch.load` wraps in its "Weights only load failed" text.
"""

from __future__ import annotations

import _compat_pickle
import collections
import warnings
from collections.abc import Callable
from pickle import UnpicklingError, decode_long
from struct import unpack
from typing import IO, Any

from fake_torch import _serialization_names as names
from fake_torch._tensor import Tensor
from fake_torch.nn.parameter import Parameter

SafeGlobal = Any  # a function or class, or (it, "module.qualname") naming it in checkpoints

# modules never allowed, even when the user marks one of their names safe
_blocklisted_modules = ("sys", "os", "posix", "nt")

_marked_safe_globals: set[Any] = set()


def _add_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals | set(safe_globals)


def _get_safe_globals() -> list[SafeGlobal]:
    return list(_marked_safe_globals)


def _clear_safe_globals() -> None:
    global _marked_safe_globals
    _marked_safe_globals = set()


def _remove_safe_globals(safe_globals: list[SafeGlobal]) -> None:
    global _marked_safe_globals
    _marked_safe_globals = _marked_safe_globals - set(safe_globals)


class _safe_globals:
    """Marks globals safe inside a `with` block (torch.serialization.safe_globals)."""

    def __init__(self, safe_globals: list[SafeGlobal]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        _add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: object) -> None:
        _remove_safe_globals(self.safe_globals)


def _user_allowed_globals() -> dict[str, Any]:
    """Path -> object for the user's safe globals: `module.qualname`, or the path given in an
    (object, path) pair. A fake_torch object is also found under its torch path."""
    found: dict[str, Any] = {}
    for entry in _marked_safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
            found[entry[1]] = entry[0]
            continue
        module, qualname = entry.__module__, entry.__qualname__
        found[f"{module}.{qualname}"] = entry
        if module == names.FAKE or module.startswith(names.FAKE + "."):
            found[f"torch{module[len(names.FAKE):]}.{qualname}"] = entry
    return found


def _read_global(readline: Callable[[], bytes]) -> tuple[str, str]:
    """A GLOBAL opcode's (module, name), Python 2 names mapped to Python 3's (protocol 2)."""
    module = readline()[:-1].decode("utf-8")
    name = readline()[:-1].decode("utf-8")
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return module, name


def _unsupported_global(path: str) -> UnpicklingError:
    if path.startswith("builtins."):  # torch names builtins without their module
        path = path[len("builtins."):]
    return UnpicklingError(
        f"Unsupported global: GLOBAL {path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{path}])` or the "
        f"`torch.serialization.safe_globals([{path}])` context manager to allowlist this "
        "global if you trust this class/function.")


def _tensor_setstate(t: Tensor, state: Any) -> None:
    """Tensor.__setstate__ of torch's legacy pickles: (storage, offset, size, stride) or
    (requires_grad, _, hooks)."""
    if len(state) == 4:
        t.set_(*state)
        return
    if len(state) == 5:
        t.data = state[0]
        state = (state[3], state[4], state[2])
    t.requires_grad = state[0]


class Unpickler:
    """Reads one pickle from `file` under the weights_only rules (see the module docstring).
    `persistent_load` is set by the caller (torch.load's storage loader)."""

    def __init__(self, file: IO[bytes], *, encoding: str = "bytes") -> None:
        self.encoding = encoding
        self.readline = file.readline
        self.read = file.read
        self.memo: dict[int, Any] = {}
        self.proto = -1

    def persistent_load(self, pid: Any) -> Any:
        raise UnpicklingError("unsupported persistent id encountered")

    def load(self) -> Any:
        """The object the pickle describes."""
        self.metastack: list[list[Any]] = []
        self.stack: list[Any] = []
        allowed = names.torch_globals()
        allowed_ids = {id(v) for v in allowed.values()}
        read = self.read
        while True:
            key = read(1)
            if not key:
                raise EOFError
            op = key[0]
            handler = _OPS.get(op)
            if handler is not None:
                handler(self)
                continue
            if op == _GLOBAL:
                self._global(allowed)
            elif op in (_REDUCE, _NEWOBJ, _BUILD):
                self._call(op, allowed_ids)
            elif op == _STOP:
                return self.stack.pop()
            else:
                raise UnpicklingError(f"Unsupported operand {op}")

    # --- the risky opcodes ---------------------------------------------------------------------

    def _global(self, allowed: dict[str, Any]) -> None:
        module, name = _read_global(self.readline)
        path = f"{module}.{name}"
        if module in _blocklisted_modules:
            raise UnpicklingError(f"Trying to load unsupported GLOBAL {path} whose module "
                                  f"{module} is blocked.")
        if path in allowed:
            self.stack.append(allowed[path])
            return
        user = _user_allowed_globals()
        if path in user:
            self.stack.append(user[path])
            return
        if path in names.NOT_EMULATED:
            raise names.not_emulated(path)
        raise _unsupported_global(path)

    def _call(self, op: int, allowed_ids: set[int]) -> None:
        user_ids = {id(v) for v in _user_allowed_globals().values()}
        if op == _REDUCE:
            args = self.stack.pop()
            func = self.stack[-1]
            if id(func) not in allowed_ids and id(func) not in user_ids:
                msg = f"Trying to call reduce for unrecognized function {func}"
                if hasattr(func, "__self__"):
                    msg += f" which belongs to {func.__self__}"
                raise UnpicklingError(msg)
            self.stack[-1] = func(*args)
        elif op == _NEWOBJ:
            args = self.stack.pop()
            cls = self.stack.pop()
            if cls is Parameter:
                self.stack.append(Parameter(*args))
            elif id(cls) in allowed_ids or id(cls) in user_ids:
                self.stack.append(cls.__new__(cls, *args))
            else:
                raise UnpicklingError("Can only create new object for nn.Parameter or classes "
                                      f"allowlisted via `add_safe_globals` but got {cls}")
        else:  # BUILD
            state = self.stack.pop()
            inst = self.stack[-1]
            kind = type(inst)
            if kind is Tensor or kind is Parameter:
                _tensor_setstate(inst, state)
            elif kind is collections.OrderedDict:
                inst.__dict__.update(state)
            elif id(kind) in allowed_ids or id(kind) in user_ids:
                _build(inst, state)
            else:
                raise UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                      f"allowlisted via `add_safe_globals`, but got {kind}")

    # --- containers ----------------------------------------------------------------------------

    def _pop_mark(self) -> list[Any]:
        items = self.stack
        self.stack = self.metastack.pop()
        return items

    def _check_set_item_target(self, opcode: str) -> None:
        if type(self.stack[-1]) not in (dict, collections.OrderedDict, collections.Counter):
            raise UnpicklingError(f"Can only {opcode} for dict, collections.OrderedDict, "
                                  f"collections.Counter, but got {type(self.stack[-1])}")

    def _append(self) -> None:
        item = self.stack.pop()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only append to lists, but got {type(self.stack[-1])}")
        self.stack[-1].append(item)

    def _appends(self) -> None:
        items = self._pop_mark()
        if type(self.stack[-1]) is not list:
            raise UnpicklingError(f"Can only extend lists, but got {type(self.stack[-1])}")
        self.stack[-1].extend(items)

    def _setitem(self) -> None:
        value, key = self.stack.pop(), self.stack.pop()
        self._check_set_item_target("SETITEM")
        self.stack[-1][key] = value

    def _setitems(self) -> None:
        items = self._pop_mark()
        self._check_set_item_target("SETITEMS")
        target = self.stack[-1]
        for i in range(0, len(items), 2):
            target[items[i]] = items[i + 1]

    def _mark(self) -> None:
        self.metastack.append(self.stack)
        self.stack = []

    def _tuple(self) -> None:
        items = tuple(self._pop_mark())  # (before reading self.stack: the pop rebinds it)
        self.stack.append(items)

    def _tuple_n(self, n: int) -> None:
        items = tuple(self.stack[-n:])
        del self.stack[-n:]
        self.stack.append(items)

    # --- values ----------------------------------------------------------------------------

    def _unicode(self) -> None:
        (n,) = unpack("<I", self.read(4))
        self.stack.append(str(self.read(n), "utf-8", "surrogatepass"))

    def _short_binstring(self) -> None:
        data = self.read(self.read(1)[0])
        self.stack.append(data if self.encoding == "bytes" else
                          data.decode(self.encoding, "strict"))

    def _persid(self) -> None:
        pid = self.stack.pop()
        if type(pid) is not tuple and type(pid) is not int:
            raise UnpicklingError(f"persistent_load id must be tuple or int, but got {type(pid)}")
        if type(pid) is tuple and len(pid) > 0:
            tag = pid[0].decode("ascii") if isinstance(pid[0], bytes) else pid[0]
            if tag != "storage":
                raise UnpicklingError("Only persistent_load of storage is allowed, but got "
                                      f"{type(pid[0])}")
        self.stack.append(self.persistent_load(pid))

    def _get(self, idx: int) -> None:
        self.stack.append(self.memo[idx])

    def _put(self, idx: int) -> None:
        self.memo[idx] = self.stack[-1]

    def _proto(self) -> None:
        self.proto = self.read(1)[0]
        if self.proto != 2:
            warnings.warn(
                f"Detected pickle protocol {self.proto} in the checkpoint, which was not the "
                "default pickle protocol used by `torch.load` (2). The weights_only Unpickler "
                "might not support all instructions implemented by this protocol, please file "
                "an issue for adding support if you encounter this.", stacklevel=4)


def _build(inst: Any, state: Any) -> None:
    """pickle's BUILD for an allowlisted class: its __setstate__, else dict and slot state."""
    setstate = getattr(inst, "__setstate__", None)
    if setstate is not None:
        setstate(state)
        return
    slots = None
    if isinstance(state, tuple) and len(state) == 2:
        state, slots = state
    if state:
        inst.__dict__.update(state)
    for k, v in (slots or {}).items():
        setattr(inst, k, v)


_GLOBAL, _REDUCE, _NEWOBJ, _BUILD, _STOP = b"c"[0], b"R"[0], b"\x81"[0], b"b"[0], b"."[0]
_OPS: dict[int, Callable[[Unpickler], None]] = {
    b"a"[0]: Unpickler._append,
    b"e"[0]: Unpickler._appends,
    b"s"[0]: Unpickler._setitem,
    b"u"[0]: Unpickler._setitems,
    b"("[0]: Unpickler._mark,
    b"t"[0]: Unpickler._tuple,
    b"\x85"[0]: lambda u: u._tuple_n(1),
    b"\x86"[0]: lambda u: u._tuple_n(2),
    b"\x87"[0]: lambda u: u._tuple_n(3),
    b"N"[0]: lambda u: u.stack.append(None),
    b"\x89"[0]: lambda u: u.stack.append(False),
    b"\x88"[0]: lambda u: u.stack.append(True),
    b")"[0]: lambda u: u.stack.append(()),
    b"]"[0]: lambda u: u.stack.append([]),
    b"}"[0]: lambda u: u.stack.append({}),
    b"\x8f"[0]: lambda u: u.stack.append(set()),
    b"J"[0]: lambda u: u.stack.append(unpack("<i", u.read(4))[0]),
    b"K"[0]: lambda u: u.stack.append(u.read(1)[0]),
    b"M"[0]: lambda u: u.stack.append(unpack("<H", u.read(2))[0]),
    b"G"[0]: lambda u: u.stack.append(unpack(">d", u.read(8))[0]),
    b"X"[0]: Unpickler._unicode,
    b"U"[0]: Unpickler._short_binstring,
    b"Q"[0]: Unpickler._persid,
    b"h"[0]: lambda u: u._get(u.read(1)[0]),
    b"j"[0]: lambda u: u._get(unpack("<I", u.read(4))[0]),
    b"q"[0]: lambda u: u._put(u.read(1)[0]),
    b"r"[0]: lambda u: u._put(unpack("<I", u.read(4))[0]),
    b"\x8a"[0]: lambda u: u.stack.append(decode_long(u.read(u.read(1)[0]))),
    b"\x80"[0]: Unpickler._proto,
}


def load(file: IO[bytes], *, encoding: str = "ASCII") -> Any:
    """One object from `file` under the weights_only rules."""
    return Unpickler(file, encoding=encoding).load()
