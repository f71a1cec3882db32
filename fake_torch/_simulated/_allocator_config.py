"""The caching allocator's settings: `PYTORCH_CUDA_ALLOC_CONF` / `PYTORCH_ALLOC_CONF` and
`torch._C._accelerator_setAllocatorSettings`, parsed as c10's ConfigTokenizer parses them.

A setting string is `key:value` pairs separated by commas (spaces are dropped; `[`, `]`, `:`
and `,` are tokens of their own). c10 parses it twice: the device-generic keys
(AcceleratorAllocatorConfig) and then the CUDA keys, which also rejects a key neither knows.
Each parse starts from the defaults of max_split_size, roundup_power2_divisions and
garbage_collection_threshold; the other options keep their last value, as in c10.

What the simulated allocator does with each option (fake_torch/_simulated/_allocator.py):
  max_split_size_mb, max_non_split_rounding_mb, roundup_power2_divisions,
  large_segment_size_mb          emulated: they change block sizes, splits and reuse, and so
                                 every figure of memory_stats()
  per_process_memory_fraction,
  garbage_collection_threshold   emulated: the cap makes allocations fail early, and past the
                                 threshold cached segments are given back (c10 collects only
                                 while a fraction is set)
  graph_capture_record_stream_reuse
                                 emulated: a block freed during a capture with other streams'
                                 uses is reused once the capture joined them all back
                                 (fake_torch/_simulated/_allocator_capture.py)
  pinned_use_background_threads,
  pinned_reserve_segment_size_mb emulated by the pinned host allocator (_host_allocator.py)
  release_lock_on_cudamalloc,
  pinned_use_cuda_host_register,
  pinned_num_register_threads,
  pinned_max_*                   accepted: they tune locking and how pinned pages are
                                 registered, which no figure fake_torch keeps shows
  expandable_segments:True,
  backend:cudaMallocAsync        NotImplementedError: a different allocator whose figures
                                 fake_torch does not simulate
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

MB = 1024**2
LARGE_BUFFER = 20 * MB  # kLargeBuffer: the default large_segment_size
MIN_LARGE_ALLOC = 10 * MB  # kMinLargeAlloc
NUM_INTERVALS = 16  # kRoundUpPowerOfTwoIntervals: 1 MiB .. 64 GiB, one per power of two
SIZE_MAX = 2**64 - 1
# c10 reads the first of these that is set
ENV_VARS = ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF")
_GENERIC_KEYS = frozenset({
    "large_segment_size_mb", "max_split_size_mb", "max_non_split_rounding_mb",
    "garbage_collection_threshold", "roundup_power2_divisions", "expandable_segments",
    "pinned_use_background_threads", "pinned_max_round_threshold_mb",
    "pinned_max_cached_size_mb"})
_ASSERT = ('i < config_.size() INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/c10/core/'
           'AllocatorConfig.h":{line}, please report a bug to PyTorch. Index out of bounds in '
           'ConfigTokenizer')


@dataclass
class AllocatorConfig:
    """The options the allocator reads (c10's AcceleratorAllocatorConfig + CUDAAllocatorConfig)."""

    max_split_size: int = SIZE_MAX  # blocks this large or larger are never split
    max_non_split_rounding_size: int = LARGE_BUFFER
    large_segment_size: int = LARGE_BUFFER  # the segment for requests in (1 MiB, 10 MiB)
    garbage_collection_threshold: float = 0.0
    roundup_power2_divisions: list[int] = field(default_factory=lambda: [0] * NUM_INTERVALS)
    per_process_memory_fraction: float = 1.0
    expandable_segments: bool = False
    release_lock_on_cudamalloc: bool = False
    pinned_use_cuda_host_register: bool = False
    pinned_num_register_threads: int = 1
    pinned_use_background_threads: bool = False
    pinned_reserve_segment_size_mb: int = 0
    graph_capture_record_stream_reuse: bool = False
    last_settings: str = ""
    rounds_up: bool = False  # any roundup_power2_divisions set (checked at every allocation)

    def divisions(self, size: int) -> int:
        """How many steps each power-of-two interval of sizes rounds to (0: none)."""
        index = max(size.bit_length() - 1 - 20, 0)  # 2**20: the intervals start at 1 MiB
        return self.roundup_power2_divisions[min(index, NUM_INTERVALS - 1)]


class _Tokens:
    """c10's ConfigTokenizer: ',', ':', '[' and ']' are tokens; spaces vanish. As in c10,
    `expect` only reports (a missing ':' or ',' is passed over); reading past the end is an
    internal assert, which torch raises as a RuntimeError naming the header's line."""

    def __init__(self, env: str) -> None:
        self.items: list[str] = []
        buf = ""
        for ch in env:
            if ch in ",:[]":
                if buf:
                    self.items.append(buf)
                    buf = ""
                self.items.append(ch)
            elif ch != " ":
                buf += ch
        if buf:
            self.items.append(buf)

    def __len__(self) -> int:
        return len(self.items)

    def _check(self, i: int, line: int = 124) -> None:
        if i >= len(self.items):
            raise RuntimeError(_ASSERT.format(line=line))

    def at(self, i: int) -> str:
        self._check(i, line=55)
        return self.items[i]

    def expect(self, i: int, token: str) -> bool:
        self._check(i)
        return self.items[i] == token

    def size_t(self, i: int) -> int:
        self._check(i)
        return _stoull(self.items[i])

    def double(self, i: int) -> float:
        self._check(i)
        try:
            return float(_number_prefix(self.items[i], floating=True))
        except ValueError:
            raise ValueError("stod") from None

    def boolean(self, i: int) -> bool:
        self._check(i)
        text = self.items[i]
        if text not in ("True", "False"):
            raise ValueError(f"Expected 'True' or 'False' at index {i} in ConfigTokenizer but got "
                             f"'{text}'")
        return text == "True"

    def skip_key(self, i: int) -> int:
        """Past an unknown key: the index of its value (of the ']' closing a list value)."""
        self.expect(i + 1, ":")
        i += 2
        self._check(i)
        if self.items[i] != "[":
            return i
        i += 1
        while i < len(self.items) and self.items[i] != "]":
            i += 1
        if i >= len(self.items):
            raise RuntimeError(_ASSERT.format(line=115).replace(
                "Index out of bounds", "Expected closing bracket ']'") + " but reached end of "
                "config")
        return i


def _number_prefix(text: str, floating: bool) -> str:
    """The leading number std::stoull / std::stod read (they ignore what follows it)."""
    end, seen_digit = 0, False
    if end < len(text) and text[end] in "+-":
        end += 1
    while end < len(text) and (text[end].isdigit() or (floating and text[end] in ".eE")):
        seen_digit = seen_digit or text[end].isdigit()
        end += 1
    if not seen_digit:
        raise ValueError(text)
    return text[:end]


def _stoull(text: str) -> int:
    try:
        value = int(_number_prefix(text, floating=False))
    except ValueError:
        raise ValueError("stoull") from None
    return value % (SIZE_MAX + 1)  # "-5" wraps around, as std::stoull does


def _power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def parse(env: str, config: AllocatorConfig) -> None:
    """Apply the setting string `env` to `config`, in place as c10 does: an error leaves what
    was parsed before it applied (and `env` as the last settings). Raises c10's errors, and
    NotImplementedError for what fake_torch does not simulate."""
    config.max_split_size = SIZE_MAX  # c10 resets these three at every parse
    config.roundup_power2_divisions = [0] * NUM_INTERVALS
    config.garbage_collection_threshold = 0.0
    config.last_settings = env
    tokens = _Tokens(env)
    try:
        _parse_generic(tokens, config)
        if config.max_split_size != SIZE_MAX and config.max_split_size < (
                config.large_segment_size):
            raise ValueError("CachingAllocator option max_split_size_mb too small, must be >= "
                             f"{config.large_segment_size // MB}")
        _parse_cuda(tokens, config)
    finally:
        config.rounds_up = any(d > 1 for d in config.roundup_power2_divisions)
    if config.expandable_segments:
        config.expandable_segments = False
        raise NotImplementedError(
            "PYTORCH_CUDA_ALLOC_CONF expandable_segments:True is not emulated by fake_torch: "
            "its segments grow page by page in one virtual range, which the simulated "
            "allocator does not model (use expandable_segments:False, the default)")


def _parse_generic(tokens: _Tokens, config: AllocatorConfig) -> None:
    i = 0
    while i < len(tokens):
        key = tokens.at(i)
        if key == "large_segment_size_mb":
            tokens.expect(i + 1, ":")
            i += 2
            value = tokens.size_t(i)
            if value <= MIN_LARGE_ALLOC // MB:
                raise ValueError("CachingAllocator option large_segment_size_mb must be > "
                                 f"{MIN_LARGE_ALLOC // MB} MB")
            config.large_segment_size = min(value, SIZE_MAX // MB) * MB
        elif key in ("max_split_size_mb", "max_non_split_rounding_mb"):
            tokens.expect(i + 1, ":")
            i += 2
            value = tokens.size_t(i)
            if value < config.large_segment_size // MB:
                raise ValueError(f"CachingAllocator option {key} too small, must be >= "
                                 f"{config.large_segment_size // MB}")
            size = min(value, SIZE_MAX // MB) * MB
            if key == "max_split_size_mb":
                config.max_split_size = size
            else:
                config.max_non_split_rounding_size = size
        elif key == "garbage_collection_threshold":
            tokens.expect(i + 1, ":")
            i += 2
            threshold = tokens.double(i)
            if not 0 < threshold < 1.0:
                raise ValueError("garbage_collect_threshold is invalid, set it in (0.0, 1.0)")
            config.garbage_collection_threshold = threshold
        elif key == "roundup_power2_divisions":
            i = _parse_divisions(tokens, i, config)
        elif key == "expandable_segments":
            tokens.expect(i + 1, ":")
            i += 2
            config.expandable_segments = tokens.boolean(i)
        elif key == "pinned_use_background_threads":
            tokens.expect(i + 1, ":")
            i += 2
            config.pinned_use_background_threads = tokens.boolean(i)
        else:
            i = tokens.skip_key(i)
        if i + 1 < len(tokens):
            tokens.expect(i + 1, ",")
            i += 1
        i += 1


def _parse_divisions(tokens: _Tokens, i: int, config: AllocatorConfig) -> int:
    tokens.expect(i + 1, ":")
    i += 2
    table = config.roundup_power2_divisions
    if tokens.at(i) != "[":  # one value for every interval
        value = tokens.size_t(i)
        if not _power_of_two(value):
            raise ValueError("For roundups, the divisions has to be power of 2 ")
        table[:] = [value] * NUM_INTERVALS
        return i
    first, last_index = True, 0
    i += 1
    while i < len(tokens) and tokens.at(i) != "]":
        bound = i
        tokens.expect(i + 1, ":")
        i += 2
        value = tokens.size_t(i)
        if value != 0 and not _power_of_two(value):
            raise ValueError("For roundups, the divisions has to be power of 2 or 0 to disable "
                             "roundup ")
        if tokens.at(bound) == ">":
            table[last_index + 1:] = [value] * (NUM_INTERVALS - last_index - 1)
        else:
            mb = tokens.size_t(bound)
            if not _power_of_two(mb):
                raise ValueError("For roundups, the intervals have to be power of 2 ")
            index = min(mb.bit_length() - 1, NUM_INTERVALS - 1)
            if first:
                table[:index] = [value] * index
                first = False
            table[index] = value
            last_index = index
        if tokens.at(i + 1) != "]":
            tokens.expect(i + 1, ",")
            i += 1
        i += 1
    return i


def _parse_cuda(tokens: _Tokens, config: AllocatorConfig) -> None:
    i = 0
    while i < len(tokens):
        key = tokens.at(i)
        if key == "backend":
            tokens.expect(i + 1, ":")
            i += 2
            backend = tokens.at(i)
            if backend not in ("native", "cudaMallocAsync"):
                raise ValueError("Unknown allocator backend, options are native and "
                                 "cudaMallocAsync")
            if backend == "cudaMallocAsync":
                raise NotImplementedError("PYTORCH_CUDA_ALLOC_CONF backend:cudaMallocAsync is "
                                          "not emulated by fake_torch: it simulates the native "
                                          "caching allocator only")
        elif key in ("release_lock_on_cudamalloc", "release_lock_on_hipmalloc",
                     "pinned_use_cuda_host_register", "pinned_use_hip_host_register",
                     "graph_capture_record_stream_reuse"):
            tokens.expect(i + 1, ":")
            i += 2
            flag = tokens.boolean(i)
            if key.startswith("release_lock"):
                config.release_lock_on_cudamalloc = flag
            elif key.startswith("pinned"):
                config.pinned_use_cuda_host_register = flag
            else:
                config.graph_capture_record_stream_reuse = flag
        elif key == "pinned_num_register_threads":
            tokens.expect(i + 1, ":")
            i += 2
            threads = tokens.size_t(i)
            if not _power_of_two(threads):
                raise ValueError(f"Number of register threads has to be power of 2, got "
                                 f"{threads}")
            if threads > 128:
                raise ValueError("Number of register threads should be less than or equal to "
                                 f"128, got {threads}")
            config.pinned_num_register_threads = threads
        elif key == "pinned_reserve_segment_size_mb":
            tokens.expect(i + 1, ":")
            i += 2
            size_mb = tokens.size_t(i)
            if size_mb == 0:
                raise ValueError("Pinned reserve segment size has to be greater than 0")
            config.pinned_reserve_segment_size_mb = size_mb
        elif key == "per_process_memory_fraction":
            tokens.expect(i + 1, ":")
            i += 2
            fraction = tokens.double(i)
            if not 0.0 <= fraction <= 1.0:
                raise ValueError("per_process_memory_fraction is invalid, set it in [0.0, 1.0]")
            config.per_process_memory_fraction = fraction
        else:
            if key not in _GENERIC_KEYS:
                raise ValueError(f"Unrecognized key '{key}' in CUDA allocator config.")
            i = tokens.skip_key(i)
        if i + 1 < len(tokens):
            tokens.expect(i + 1, ",")
            i += 1
        i += 1


def from_environment() -> AllocatorConfig:
    """The settings a new process starts with: the first of c10's variables that is set."""
    config = AllocatorConfig()
    for name in ENV_VARS:
        env = os.environ.get(name)
        if env is not None:
            parse(env, config)
            break
    return config
