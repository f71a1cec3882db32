"""key_averages().table(): torch's layout (its column names, order, widths and number formats),
plus fake_torch's "Where", "Kernel launches" and "Graph launches" columns.

Columns: Name, Where, Self CPU %, Self CPU, CPU total %, CPU total, CPU time avg, then, when
some kernel ran, Self CUDA, Self CUDA %, CUDA total, CUDA time avg, then # of Calls, then, when
the rows are grouped by input shape and some row has shapes, Input Shapes, then the launch
counts. Percentages are of the summed self times, as torch's are.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fake_torch.profiler._events import FunctionEventAvg

COLUMN_WIDTH = 12  # torch's default column width
SPACING = 2
_EXTRA = ("Kernel launches", "Graph launches")


def build_table(rows: list[FunctionEventAvg], row_limit: int, max_name_column_width: int,
                max_shapes_column_width: int, header: str | None, time_unit: str | None,
                footer: str) -> str:
    """`rows` (already sorted) as text; `footer` is the last line."""
    if not rows:
        return ""  # torch's table of nothing
    self_cpu_sum = sum(r.self_cpu_time_total for r in rows)
    self_device_sum = sum(r.self_device_time_total for r in rows)
    has_device_time = any(r.self_device_time_total > 0 for r in rows)
    has_input_shapes = any(len(r.input_shapes) > 0 for r in rows)
    shown = rows[:row_limit] if row_limit > 0 else rows
    name_w = min(max([len(r.key) for r in rows], default=0) + 4, max_name_column_width)
    where_w = max([len(r.where) for r in rows], default=0) + 4
    shapes_w = min(max(len(str(r.input_shapes)) for r in rows) + 4, max_shapes_column_width)
    headers = ["Name", "Where", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
               "CPU time avg"]
    if has_device_time:
        headers += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    headers += ["# of Calls"]
    widths = [name_w, where_w, *(max(COLUMN_WIDTH, len(h)) for h in headers[2:])]
    if has_input_shapes:  # torch's: after # of Calls, as wide as the widest shapes (capped)
        headers.append("Input Shapes")
        widths.append(shapes_w)
    headers += _EXTRA
    widths += [max(COLUMN_WIDTH, len(h)) for h in _EXTRA]

    def line(cells: list[str]) -> str:
        return "".join(f"{c:>{w}}" + " " * SPACING for c, w in zip(cells, widths, strict=True))

    def t(us: float) -> str:
        return _time(us, time_unit)

    rule = "".join("-" * w + " " * SPACING for w in widths)
    out = [] if header is None else ["=" * (sum(widths) + SPACING * (len(widths) - 1)), header]
    out += [rule, line(headers), rule]
    for r in shown:
        name = r.key
        if len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        cells = [name, r.where, _share(r.self_cpu_time_total, self_cpu_sum),
                 t(r.self_cpu_time_total), _share(r.cpu_time_total, self_cpu_sum),
                 t(r.cpu_time_total), t(r.cpu_time)]
        if has_device_time:
            cells += [t(r.self_device_time_total),
                      _share(r.self_device_time_total, self_device_sum),
                      t(r.device_time_total), t(r.device_time)]
        cells.append(str(r.count))
        if has_input_shapes:
            cells.append(str(r.input_shapes)[:shapes_w])
        cells += [str(r.kernel_launches), str(r.graph_launches)]
        out.append(line(cells))
    out += [rule, f"Self CPU time total: {t(self_cpu_sum)}"]
    if has_device_time:
        out.append(f"Self CUDA time total: {t(self_device_sum)}")
    out.append(footer)
    return "\n".join(out) + "\n"


def _time(us: float, unit: str | None) -> str:
    """torch's formats: a fixed unit when asked ("s", "ms", "us"), else the largest that fits."""
    if unit == "s" or (unit not in ("ms", "us") and us >= 1e6):
        return f"{us / 1e6:.3f}s"
    if unit == "ms" or (unit != "us" and us >= 1e3):
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _share(us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{us * 100.0 / total_us:.2f}%"
