"""Serve one mixed prefill/decode token stream in all five of vLLM's CUDA graph modes.

    python -m fake_torch run examples/vllm_serve.py [--max-num-seqs 8] [--requests 12]

See examples/vllm_runner/serve.py for what the tables say.
"""

from vllm_runner.serve import main

if __name__ == "__main__":
    main()
