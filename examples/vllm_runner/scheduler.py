"""A token stream of mixed prefill/decode steps: requests arrive, prefill whole, decode, finish.

vLLM v1's scheduling in small, without chunked prefill or preemption: each step first gives every
running request its one decode token, then admits arrived requests (whole prompts) while a KV
cache row is free and the step's token budget holds them. The schedule depends on lengths and
arrival steps only, never on the tokens sampled, so every mode serves the same steps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class Request:
    req_id: int
    prompt: list[int]
    max_new_tokens: int
    arrival_step: int
    output: list[int] = field(default_factory=list)  # sampled tokens, one per step it ran
    row: int = -1  # its KV cache row while running

    @property
    def finished(self) -> bool:
        return len(self.output) >= self.max_new_tokens


@dataclass
class ScheduledRequest:
    request: Request
    token_ids: list[int]  # this step's query tokens: the prompt, or the last sampled token
    start_pos: int  # position of token_ids[0]


@dataclass
class ScheduledBatch:
    step: int
    reqs: list[ScheduledRequest]

    @property
    def num_tokens(self) -> int:
        return sum(len(r.token_ids) for r in self.reqs)

    @property
    def num_reqs(self) -> int:
        return len(self.reqs)

    @property
    def uniform_decode(self) -> bool:
        """Every request decodes exactly one token (the batches FULL_DECODE_ONLY captures)."""
        return all(len(r.token_ids) == 1 for r in self.reqs)


def make_requests(num_requests: int, vocab_size: int, seed: int = 0, max_prompt: int = 12,
                  max_new: int = 8, arrival_every: int = 2) -> list[Request]:
    """Requests with random prompts of 2..max_prompt tokens wanting 2..max_new tokens, arriving
    a few at a time (about one every `arrival_every` steps)."""
    rng = random.Random(seed)
    requests = []
    for i in range(num_requests):
        prompt = [rng.randrange(vocab_size) for _ in range(rng.randint(2, max_prompt))]
        arrival = i * arrival_every // 2 + rng.randint(0, arrival_every)
        requests.append(Request(i, prompt, rng.randint(2, max_new), arrival))
    return requests


class Scheduler:
    def __init__(self, requests: list[Request], max_num_seqs: int,
                 max_num_batched_tokens: int, max_seq_len: int | None = None) -> None:
        for r in requests:  # a request that can never run would keep serve() waiting forever
            if len(r.prompt) > max_num_batched_tokens:
                raise ValueError(f"request {r.req_id}: its prompt of {len(r.prompt)} tokens "
                                 f"exceeds max_num_batched_tokens={max_num_batched_tokens} "
                                 "(no chunked prefill here)")
            positions = len(r.prompt) + r.max_new_tokens - 1  # the last sample is never fed
            if max_seq_len is not None and positions > max_seq_len:
                raise ValueError(f"request {r.req_id}: {len(r.prompt)} prompt + "
                                 f"{r.max_new_tokens} new tokens need {positions} positions, "
                                 f"over the model's max_seq_len={max_seq_len}")
        self.waiting = sorted(requests, key=lambda r: (r.arrival_step, r.req_id))
        self.running: list[Request] = []
        self.free_rows = list(range(max_num_seqs))
        self.max_num_batched_tokens = max_num_batched_tokens
        self.step = 0

    def has_work(self) -> bool:
        return bool(self.waiting or self.running)

    def schedule(self) -> ScheduledBatch:
        """The next step's batch (possibly empty, when nothing has arrived yet)."""
        self.step += 1
        reqs = [ScheduledRequest(r, [r.output[-1]], len(r.prompt) + len(r.output) - 1)
                for r in self.running]
        budget = self.max_num_batched_tokens - len(reqs)
        while (self.waiting and self.free_rows and self.waiting[0].arrival_step <= self.step
               and len(self.waiting[0].prompt) <= budget):
            new = self.waiting.pop(0)
            new.row = self.free_rows.pop(0)
            self.running.append(new)
            reqs.append(ScheduledRequest(new, list(new.prompt), 0))
            budget -= len(new.prompt)
        return ScheduledBatch(self.step, reqs)

    def update(self, batch: ScheduledBatch, sampled: list[int]) -> None:
        """Append each request's sampled token; finished requests give their row back."""
        for scheduled, token in zip(batch.reqs, sampled, strict=True):
            scheduled.request.output.append(token)
        for r in [r for r in self.running if r.finished]:
            self.running.remove(r)
            self.free_rows.append(r.row)
