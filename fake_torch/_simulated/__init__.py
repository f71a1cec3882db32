"""The simulated machine: what stands in for the GPUs and the host memory they work with.

_machine.py holds it as one object (`MACHINE`: per device its allocator, stream captures,
current streams, graphs and generator; the host allocator, the clock and the tally), swapped
whole for a fresh one. The caching allocator of device memory and its parts (_allocator*.py),
the caching host allocator and pinned memory (_host_allocator.py, _pinned.py), the clock
(_timeline.py) and cost model (_cost.py) with the GPU table it reads (_gpus.py), the launch
counter (_counter.py), and the kernel door every would-be launch passes (_dispatch.py).

The lowest layer (fake_torch/_tools/_layers.py): nothing here imports anything of fake_torch
outside this package. What it needs from above (a device's default generator, which device a
stream belongs to) is registered into it by the layers above.
"""
