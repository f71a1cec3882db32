"""The simulated machine: what stands in for the GPU and the host memory it works with.

The caching allocator of device memory and its parts (_allocator*.py), the caching host allocator
and pinned memory (_host_allocator.py, _pinned.py), the device's clock (_timeline.py) and cost
model (_cost.py) with the GPU table it reads (_gpus.py), the launch counter (_counter.py), and the
kernel door every would-be launch passes (_dispatch.py).

The lowest layer (fake_torch/_layers.py): nothing here imports anything of fake_torch outside
this package. What it needs from above (the current stream, a tensor's storage) is registered
into it by the layers above.
"""
