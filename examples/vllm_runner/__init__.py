"""A vLLM-style model runner on `import torch`: CUDA graph modes, dispatcher, piecewise backend.

Read each file beside the vLLM file it shrinks (written from their behaviour, not their code):

    config.py           modes, capture sizes, padding     vllm/config/compilation.py
    forward_context.py  BatchDescriptor, runtime mode     vllm/forward_context.py
    dispatcher.py       descriptor -> (mode, key)         vllm/v1/cudagraph_dispatcher.py
    cuda_graph.py       CUDAGraphWrapper                  vllm/compilation/cuda_graph.py
    backend.py          compile backend, split at attn    vllm/compilation/backends.py
    counter.py          compilation_counter               vllm/compilation/counter.py
    utils.py            weak_ref_tensors                  vllm/utils (a C++ op there)
    model.py            example Llama, flat tokens        vllm/model_executor/models/
    scheduler.py        mixed prefill/decode stream       vllm/v1/core/sched/
    runner.py           inputs, capture_model, a step     vllm/v1/worker/gpu_model_runner.py
    serve.py            every mode, one stream, a table   (examples/vllm_serve.py runs it)

Simplifications, said once: no chunked prefill or preemption; attention is a per-token op over
each request's KV-cache row, so every mode can capture it; the backend runs fx pieces as traced
(no inductor), and traced sizes stay concrete, so models write the token dimension as -1.
"""
