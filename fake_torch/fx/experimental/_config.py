"""torch.fx.experimental._config: the symbolic-shapes knobs, with torch 2.13's defaults.
fake_torch's tracer keeps no ShapeEnv, so they change nothing; they are kept and read back
(vLLM patches backed_size_oblivious around its compiles)."""

from __future__ import annotations

from typing import Any

from fake_torch import _config_module

no_data_dependent_graph_break = False
translation_validation = False
translation_validation_timeout = 600000
translation_validation_no_bisect = False
check_shape_env_recorded_events = False
extended_debug_guard_added: str | None = None
extended_debug_create_symbol: str | None = None
extended_debug_cpp = False
extended_debug_current_loc = False
print_specializations = False
inject_EVALUATE_EXPR_flip_equality_TESTING_ONLY = False
validate_shape_env_version_key = False
symbol_guard_limit_before_specialize: int | None = None
use_duck_shape = True
meta_nonzero_assume_all_nonzero = False
backed_size_oblivious = False
unify_view_symbols_bso_meta = False
skip_dtype_check_in_meta_registrations = False
enrich_profiler_metadata = False
soft_pending_unbacked_not_found_error = False
aggressive_guard_free_semantics = 0


def get_config_copy() -> dict[str, Any]:
    """Every setting with its current value."""
    return _config_module.portable(__name__)


def save_config_portable(*, ignore_private_configs: bool = True,
                         readonly_values: bool = False) -> dict[str, Any]:
    """The settings as a plain dict (a cache key's part)."""
    return _config_module.portable(__name__)


def patch(arg1: str | dict[str, Any] | None = None, arg2: Any = None,
          **kwargs: Any) -> _config_module.ConfigPatch:
    """patch(name, value), patch({name: value}) or patch(name=value)."""
    return _config_module.ConfigPatch(__name__, "torch.fx.experimental._config",
                                      _config_module.changes_of(arg1, arg2, kwargs))
