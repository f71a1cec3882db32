"""torch.torch_version: TorchVersion, the str that `torch.__version__` is.

It compares as a version (PEP 440) with strings and with tuples of numbers, and as a plain str
when the other side is not a version:

    torch.__version__ >= "2.6"       # True: 2.13.0 is later (a str would say "2.1" < "2.6")
    torch.__version__ >= (2, 13)     # True
    torch.__version__ == "2.13.0+fake"
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from fake_torch.version import __version__ as internal_version

__all__ = ["TorchVersion"]

_PATTERN = re.compile(
    r"v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)"
    r"(?:[-_.]?(?P<pre_l>alpha|beta|preview|pre|rc|a|b|c)[-_.]?(?P<pre_n>\d+)?)?"
    r"(?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?"
    r"(?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?"
    r"(?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?",
    re.IGNORECASE)
_PRE = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc",
        "rc": "rc"}


class InvalidVersion(ValueError):
    """A string that is not a PEP 440 version."""


def _key(text: str) -> tuple[Any, ...]:
    """The order PEP 440 gives versions: epoch, release (trailing zeros dropped), pre-release
    (a dev-only release before any pre), post, dev, local (none before any; a number segment
    after a name)."""
    m = _PATTERN.fullmatch(text.strip())
    if m is None:
        raise InvalidVersion(f"Invalid version: {text!r}")
    release = [int(p) for p in m["release"].split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    post = m["post_n1"] or m["post_n2"] or ("0" if m["post_l"] else None)
    dev = m["dev_n"] or ("0" if m["dev_l"] else None)
    if m["pre_l"]:
        pre: tuple[int, str, int] = (0, _PRE[m["pre_l"].lower()], int(m["pre_n"] or 0))
    else:
        pre = (-1, "", 0) if post is None and dev is not None else (1, "", 0)
    local = tuple((1, int(s), "") if s.isdigit() else (0, 0, s.lower())
                  for s in re.split(r"[-_.]", m["local"])) if m["local"] else None
    return (int(m["epoch"] or 0), tuple(release), pre,
            (-1, 0) if post is None else (0, int(post)),
            (1, 0) if dev is None else (0, int(dev)),
            (0, ()) if local is None else (1, local))


class TorchVersion(str):
    """A version string that compares as a version with str and tuples (`(2, 13)` is
    "2.13"), and as a str with anything that is not a version."""

    __slots__ = ()

    def _compare(self, other: object, method: str) -> Any:
        if isinstance(other, str):
            text = str(other)
        elif isinstance(other, Iterable):
            text = ".".join(str(item) for item in other)
        else:
            return getattr(str, method)(self, other)
        try:
            mine, theirs = _key(self), _key(text)
        except InvalidVersion:
            return getattr(str, method)(self, other)
        return getattr(mine, method)(theirs)

    def __gt__(self, other: object) -> Any:
        return self._compare(other, "__gt__")

    def __lt__(self, other: object) -> Any:
        return self._compare(other, "__lt__")

    def __ge__(self, other: object) -> Any:
        return self._compare(other, "__ge__")

    def __le__(self, other: object) -> Any:
        return self._compare(other, "__le__")

    def __eq__(self, other: object) -> Any:
        return self._compare(other, "__eq__")

    __hash__ = str.__hash__  # `!=` stays str's, as torch's


__version__ = TorchVersion(internal_version)
