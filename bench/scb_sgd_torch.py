#!/usr/bin/python3
"""One stage-1 SGD step of the SCB linear-attention model in PyTorch (CPU, one thread).

The same step as dyncheck::sim::scb::stage1_sgd_step (specs/scb.md §3): per-sample loss
1/2 ||e_o - V X a_k||^2, gradients by autograd, V <- V - eta grad_V D^-1,
A <- A - eta_A (Pi_T grad_A) diag(mu)^-1. The context enters through indices (gather and
scatter_add), never as T x N one-hot matrices. Batches are sampled beforehand with numpy and
cycled, so only the step is timed (CPU time of the process, time.process_time) (the C++ side reports its presampled step for the same
comparison, and its full step with sampling separately).

Prints one JSON object per (N, T): {"N", "T", "B", "steps", "seconds_per_step", "samples_per_second"}.
Usage: scb_sgd_torch.py --configs 3x100,20x5000,500x10000 --batch 128 [--min-time 1.0]
"""
import argparse
import json
import time

import numpy as np
import torch


def make_instance(N, T, Q, rng):
    P = rng.dirichlet(np.ones(N), size=N).T  # column-stochastic
    w, v = np.linalg.eig(P)
    mu = np.real(v[:, np.argmin(np.abs(w - 1))])
    mu = mu / mu.sum()
    support = [np.sort(rng.choice(T, size=Q, replace=False)) for _ in range(N)]
    return P, mu, support


def sample_batch(P, mu, support, T, B, rng):
    N = len(mu)
    tokens = rng.choice(N, size=(B, T), p=mu)
    query = rng.choice(N, size=B, p=mu)
    position = np.array([rng.choice(support[k]) for k in query])
    source = tokens[np.arange(B), position]
    output = np.array([rng.choice(N, p=P[:, j]) for j in source])
    return (torch.from_numpy(tokens).long(), torch.from_numpy(query).long(), torch.from_numpy(output).long())


def stage1_step(V, A, mu, batch, eta, eta_A):
    tokens, query, output = batch
    B = tokens.shape[0]
    N = V.shape[0]
    a = A[:, query].T  # B x T: attention of each sample's query
    h = torch.zeros(B, N, dtype=V.dtype).scatter_add_(1, tokens, a)  # X a_k
    pred = h @ V.T
    r = -pred
    r[torch.arange(B), output] += 1.0
    loss = 0.5 * (r * r).sum() / B
    loss.backward()
    with torch.no_grad():
        V -= eta * V.grad / mu[None, :]
        g = A.grad
        g -= g.mean(dim=0, keepdim=True)
        A -= eta_A * g / mu[None, :]
        V.grad = None
        A.grad = None
    return loss


def run(N, T, B, min_time, seed=1):
    rng = np.random.default_rng(seed)
    P, mu_np, support = make_instance(N, T, min(4, T), rng)
    batches = [sample_batch(P, mu_np, support, T, B, rng) for _ in range(4)]
    mu = torch.from_numpy(mu_np)
    V = (mu[:, None] * torch.ones(1, N, dtype=torch.float64)).clone().requires_grad_(True)
    A = torch.full((T, N), 1.0 / T, dtype=torch.float64).requires_grad_(True)
    for i in range(3):  # warm-up
        stage1_step(V, A, mu, batches[i % 4], 0.1, 0.1)
    steps = 0
    start = time.process_time()
    while True:
        stage1_step(V, A, mu, batches[steps % 4], 0.1, 0.1)
        steps += 1
        elapsed = time.process_time() - start
        if elapsed >= min_time and steps >= 5:
            break
    per_step = elapsed / steps
    return {"N": N, "T": T, "B": B, "steps": steps, "seconds_per_step": per_step, "samples_per_second": B / per_step}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", default="3x100,20x5000,500x10000")
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--min-time", type=float, default=1.0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for config in args.configs.split(","):
        N, T = (int(x) for x in config.split("x"))
        print(json.dumps(run(N, T, args.batch, args.min_time)), flush=True)


if __name__ == "__main__":
    main()
