#!/usr/bin/python3
"""One training step of the topic family's one-layer model in PyTorch (CPU, one thread), for dyncheck_topic_bench.

The step (the same as bench/topic_bench.cpp's C++ step, sim::topic): one-hot embedding (frozen), W^K, W^Q, W^V trained
(d = V + 1), identity decoder (the first V coordinates are the word logits), key set (C) (a selected position is not a
key), cross-entropy at the selected positions averaged over them, Adam (lr 0.01). Written as a competent PyTorch
user would: batched over documents (padded to the batch's longest document), the one-hot products as embedding
lookups of the columns of W^K, W^Q, W^V, queries only at the selected positions (padded per batch), no Python loop
over tokens. Documents are sampled beforehand by numpy (theta ~ Dir(0.1), MLM masking p_m = 0.15, p_c = p_r = 0.1)
and 4 batches are cycled; only the step is timed, in CPU seconds of this process (time.process_time).

Prints one line per size: "T v N docs_per_second".
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn.functional as F


def sample_batch(rng, T, v, N, B, p_m=0.15, p_c=0.1, p_r=0.1, alpha=0.1):
    V = T * v
    theta = rng.dirichlet(np.full(T, alpha), size=B)                      # (B, T)
    cdf = np.cumsum(theta, axis=1)
    u = rng.random((B, N))
    topics = np.minimum((u[:, :, None] > cdf[:, None, :]).sum(axis=2), T - 1)
    words = topics * v + rng.integers(0, v, size=(B, N))
    selected = rng.random((B, N)) < p_m
    for b in range(B):                                                     # the code redraws an empty mask
        while not selected[b].any():
            selected[b] = rng.random(N) < p_m
    kind = rng.random((B, N))
    inputs = words.copy()
    random_word = selected & (kind >= p_c) & (kind < p_c + p_r)
    inputs[random_word] = rng.integers(0, V, size=random_word.sum())
    inputs[selected & (kind >= p_c + p_r)] = V                             # [MASK]
    # Queries: the selected positions of each document, padded to the batch's largest count.
    counts = selected.sum(axis=1)
    S = counts.max()
    query_pos = np.zeros((B, S), dtype=np.int64)
    query_valid = np.zeros((B, S), dtype=bool)
    for b in range(B):
        pos = np.nonzero(selected[b])[0]
        query_pos[b, :len(pos)] = pos
        query_valid[b, :len(pos)] = True
    return (torch.from_numpy(inputs), torch.from_numpy(selected), torch.from_numpy(words),
            torch.from_numpy(query_pos), torch.from_numpy(query_valid))


def make_step(T, v, seed):
    V = T * v
    d = V + 1
    g = torch.Generator().manual_seed(seed)
    WK = (0.01 * torch.randn(d, d, generator=g, dtype=torch.float64)).requires_grad_()
    WQ = (0.01 * torch.randn(d, d, generator=g, dtype=torch.float64)).requires_grad_()
    WV = (0.01 * torch.randn(d, d, generator=g, dtype=torch.float64)).requires_grad_()
    opt = torch.optim.Adam([WK, WQ, WV], lr=0.01)
    scale = 1.0 / math.sqrt(d)

    def step(batch):
        inputs, selected, words, query_pos, query_valid = batch
        query_ids = torch.gather(inputs, 1, query_pos)                    # (B, S)
        K = F.embedding(inputs, WK.t())                                   # (B, N, d): W^K e_x
        Vv = F.embedding(inputs, WV.t())                                  # (B, N, d): W^V e_x
        Q = F.embedding(query_ids, WQ.t())                                # (B, S, d)
        scores = torch.baddbmm(torch.zeros(()), Q, K.transpose(1, 2), alpha=scale)  # (B, S, N)
        scores = scores.masked_fill(selected[:, None, :], float("-inf"))  # (C): selected positions are no keys
        attention = torch.softmax(scores, dim=-1)
        out = torch.bmm(attention, Vv)[..., :V]                           # identity decoder: the V word logits
        targets = torch.gather(words, 1, query_pos)
        loss = F.cross_entropy(out[query_valid], targets[query_valid])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=40)
    parser.add_argument("--sizes", default="10,10,125;100,10,500")
    parser.add_argument("--seconds", type=float, default=3.0, help="CPU seconds per size (at least 3 steps)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(20261124)
    for size in args.sizes.split(";"):
        T, v, N = (int(x) for x in size.split(","))
        batches = [sample_batch(rng, T, v, N, args.batch) for _ in range(4)]
        step = make_step(T, v, 1)
        step(batches[0])                                                  # warm-up (allocations, Adam state)
        steps = 0
        start = time.process_time()
        while True:
            step(batches[steps % 4])
            steps += 1
            elapsed = time.process_time() - start
            if steps >= 3 and elapsed >= args.seconds:
                break
        print(f"{T} {v} {N} {steps * args.batch / elapsed:.6g}", flush=True)


if __name__ == "__main__":
    main()
