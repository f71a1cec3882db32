"""ModelRunner: persistent input buffers, capture of every size, and one step at a time.

    runner = ModelRunner(model, config)
    runner.capture_model()              # warm up, then every key largest first, one shared pool
    sampled = runner.execute_model(batch)

A step's tokens are laid out flat ([num_tokens], decodes first) in buffers allocated once, so a
graph captured for N tokens reads the same addresses at every replay: the step copies its rows
in, fills the padding rows up to the dispatched size, runs the model under the dispatcher's
runtime mode, and samples greedily from the rows that end a request's query (outside the graph).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import torch

from vllm_runner.backend import CompiledModel
from vllm_runner.config import AttentionCGSupport, CompilationConfig, CUDAGraphMode, resolve_mode
from vllm_runner.counter import compilation_counter
from vllm_runner.dispatcher import CudagraphDispatcher
from vllm_runner.forward_context import BatchDescriptor, capture_phase, set_forward_context
from vllm_runner.model import FlatLlama
from vllm_runner.scheduler import ScheduledBatch


def _launches() -> int:
    """Kernel launches so far (fake_torch counts them; real torch does not: 0)."""
    counter: Any = getattr(torch, "LaunchCounter", None)
    return 0 if counter is None else int(counter.n)


@dataclass
class StepRecord:
    """What one step asked for and what it ran: padding waste is padded - num_tokens."""

    step: int
    num_tokens: int
    num_reqs: int
    uniform_decode: bool
    runtime_mode: CUDAGraphMode
    padded_tokens: int  # the graph's size; num_tokens when the step ran eagerly
    launches: int


class ModelRunner:
    def __init__(self, model: FlatLlama, config: CompilationConfig, *, compile: bool = True,
                 max_num_batched_tokens: int = 64,
                 attention_support: AttentionCGSupport = AttentionCGSupport.ALWAYS) -> None:
        mode = resolve_mode(config.cudagraph_mode, attention_support)
        self.config = dataclasses.replace(config, cudagraph_mode=mode)
        self.model = model
        self.max_seq_len = model.cfg.max_seq_len
        self.pad_row = self.config.max_num_seqs  # the cache row padding tokens write into
        model.allocate_kv_cache(self.config.max_num_seqs + 1)
        self.pool = torch.cuda.graph_pool_handle()  # every graph of this runner shares it
        self.compiled = CompiledModel(model, self.config, self.pool, compile)
        self.dispatcher = CudagraphDispatcher(self.config)
        size = max(max_num_batched_tokens, *self.config.capture_sizes)
        device = model.embed_tokens.weight.device
        # persistent inputs [size]: a graph's input is a prefix of each, the same at every replay
        self.input_ids = torch.zeros(size, dtype=torch.long, device=device)
        self.positions = torch.zeros(size, dtype=torch.long, device=device)
        self.slot_mapping = torch.zeros(size, dtype=torch.long, device=device)
        self.seq_idx = torch.zeros(size, dtype=torch.long, device=device)
        self.records: list[StepRecord] = []
        self.num_graphs = 0  # graphs captured by capture_model
        self.graph_pool_bytes = 0  # memory the captures reserved (memory_reserved's growth)
        self.graph_peak_bytes = 0  # the most the captures had allocated at once

    # --- inputs ------------------------------------------------------------------------------

    def _prepare_inputs(self, batch: ScheduledBatch | None, padded: int) -> None:
        """Copy the step's rows into the persistent buffers, padding rows up to `padded`:
        padding tokens are token 0 at position 0 of the padding row."""
        ids, pos, slots, rows = [], [], [], []
        for r in batch.reqs if batch is not None else []:
            row = r.request.row
            for i, token in enumerate(r.token_ids):
                ids.append(token)
                pos.append(r.start_pos + i)
                slots.append(row * self.max_seq_len + r.start_pos + i)
                rows.append(row)
        pad = padded - len(ids)
        ids += [0] * pad
        pos += [0] * pad
        slots += [self.pad_row * self.max_seq_len] * pad
        rows += [self.pad_row] * pad
        for buf, values in ((self.input_ids, ids), (self.positions, pos),
                            (self.slot_mapping, slots), (self.seq_idx, rows)):
            buf[:padded].copy_(torch.tensor(values, dtype=torch.long), non_blocking=True)

    def _forward(self, num_tokens: int) -> torch.Tensor:
        out: torch.Tensor = self.compiled(self.input_ids[:num_tokens], self.positions[:num_tokens],
                                          self.slot_mapping[:num_tokens],
                                          self.seq_idx[:num_tokens])
        return out

    # --- capture -----------------------------------------------------------------------------

    def capture_model(self) -> None:
        """Compile with a warm-up run, then capture every key the dispatcher can hand out,
        mixed-batch keys before decode keys, each largest first, all into one pool."""
        largest = max(self.config.capture_sizes)
        self._prepare_inputs(None, largest)
        with set_forward_context(CUDAGraphMode.NONE):
            self._forward(largest)  # warm-up: compiles
        if self.config.cudagraph_mode is CUDAGraphMode.NONE:
            return
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        reserved, allocated = torch.cuda.memory_reserved(), torch.cuda.memory_allocated()
        captured = compilation_counter.num_cudagraph_captured
        mixed, decode = self.config.cudagraph_mode.mixed_mode(), \
            self.config.cudagraph_mode.decode_mode()
        with capture_phase():
            for mode in dict.fromkeys((mixed, decode)):  # FULL twice is captured once
                if mode is CUDAGraphMode.NONE:
                    continue
                keys = sorted(self.dispatcher.keys[mode], key=lambda k: k.num_tokens,
                              reverse=True)
                for key in keys:
                    with set_forward_context(mode, key):
                        self._forward(key.num_tokens)
        self.graph_peak_bytes = torch.cuda.max_memory_allocated() - allocated
        torch.cuda.empty_cache()  # what stays reserved is held by the graphs' pool
        self.graph_pool_bytes = torch.cuda.memory_reserved() - reserved
        self.num_graphs = compilation_counter.num_cudagraph_captured - captured

    # --- one step ----------------------------------------------------------------------------

    def execute_model(self, batch: ScheduledBatch) -> tuple[list[int], torch.Tensor]:
        """Run one step: (the token sampled for each request, its logits [num_reqs, V])."""
        launches = _launches()
        wanted = BatchDescriptor(batch.num_tokens, batch.num_reqs, batch.uniform_decode)
        mode, key = self.dispatcher.dispatch(wanted)
        if self.config.cudagraph_mode is not CUDAGraphMode.NONE and \
                self.dispatcher.pad(wanted) is None:
            compilation_counter.num_eager_steps += 1  # no captured size holds it
        self._prepare_inputs(batch, key.num_tokens)
        with set_forward_context(mode, key if mode is not CUDAGraphMode.NONE else None):
            hidden = self._forward(key.num_tokens)
        # the last query row of each request samples (its prompt's last token, or its decode)
        ends, total = [], 0
        for r in batch.reqs:
            total += len(r.token_ids)
            ends.append(total - 1)
        logits_indices = torch.tensor(ends, device=hidden.device)
        logits = self.model.compute_logits(hidden[logits_indices])
        sampled: list[int] = logits.argmax(dim=-1).tolist()  # the step's one host sync
        self.records.append(StepRecord(batch.step, batch.num_tokens, batch.num_reqs,
                                       batch.uniform_decode, mode, key.num_tokens,
                                       _launches() - launches))
        return sampled, logits
