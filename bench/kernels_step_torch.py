#!/usr/bin/python3
"""One full-batch GD step of the one-layer attention model of specs/kernels.md A.2 in PyTorch (CPU, one thread).

The same step as dyncheck::sim::kernels::loss_and_gradient + step (H = 1, all of W^Q, W^K, W^V trained, W^O = I_d
fixed, vector output): batched over the N samples as (N, n, d) tensors,
  Q = X W^Q, K = X W^K, U = X W^V W^O,
  softmax:  S = softmax(Q K' / sqrt d) over the last axis;
  Gaussian: S = exp(-|q_a - k_b|^2 / (2 sqrt d)), the squared distance as a direct difference (broadcast
            (N, n, 1, d) - (N, 1, n, d), as the C++ does; the norm expansion cancels, specs/kernels.md A.2),
  f = 1/2 sum |S U - Y|^2, gradients by autograd, W <- W - eta grad (eta = 1e-3) under no_grad.
Timed: the step alone, on data made beforehand (time.process_time: CPU seconds of this process, as the C++
side's Google Benchmark CPU time), after 3 warm-up steps, for at least --min-time seconds.

"gaussian_cdist" is the Gaussian step with torch.cdist(Q, K)^2 for the squared distances (what a PyTorch user may
write: fewer operations, but it expands the norm and cancels).
Prints one JSON object per (kernel, N, n, d): {"kernel", "N", "n", "d", "steps", "seconds_per_step"}.
With --matmul, also the throughput of torch.matmul (OpenBLAS) on the step's dominant product shape, batch x (m x k)
times (k x n), and on one 256^3 product: {"matmul": "BxMxKxN", "gflops"} (2 B m k n flops per product).
Usage: kernels_step_torch.py [--configs 4x4x16,64x32x64] [--min-time 1.0] [--matmul 64x32x64x64,1x256x256x256]
"""
import argparse
import json
import math
import time

import torch


def step(X, Y, W, O, kernel, eta):
    WQ, WK, WV = W
    d = X.shape[-1]
    Q = X @ WQ
    K = X @ WK
    U = X @ WV @ O
    if kernel == "softmax":
        S = torch.softmax(Q @ K.transpose(1, 2) / math.sqrt(d), dim=-1)
    elif kernel == "gaussian_cdist":
        S = torch.exp(-torch.cdist(Q, K) ** 2 / (2 * math.sqrt(d)))
    else:
        diff = Q.unsqueeze(2) - K.unsqueeze(1)
        S = torch.exp(-(diff * diff).sum(-1) / (2 * math.sqrt(d)))
    R = S @ U - Y
    loss = 0.5 * (R * R).sum()
    loss.backward()
    with torch.no_grad():
        for M in W:
            M -= eta * M.grad
            M.grad = None
    return loss


def run(kernel, N, n, d, min_time, seed=1):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(N, n, d, generator=g, dtype=torch.float64)
    Y = torch.randn(N, n, d, generator=g, dtype=torch.float64)
    W = [(torch.randn(d, d, generator=g, dtype=torch.float64) / math.sqrt(d)).requires_grad_(True) for _ in range(3)]
    O = torch.eye(d, dtype=torch.float64)
    for _ in range(3):
        step(X, Y, W, O, kernel, 1e-3)
    steps = 0
    start = time.process_time()
    while True:
        step(X, Y, W, O, kernel, 1e-3)
        steps += 1
        elapsed = time.process_time() - start
        if elapsed >= min_time and steps >= 5:
            break
    return {"kernel": kernel, "N": N, "n": n, "d": d, "steps": steps, "seconds_per_step": elapsed / steps}


def matmul_rate(B, m, k, n, min_time):
    g = torch.Generator().manual_seed(2)
    A = torch.randn(B, m, k, generator=g, dtype=torch.float64)
    W = torch.randn(k, n, generator=g, dtype=torch.float64)
    for _ in range(3):
        torch.matmul(A, W)
    calls = 0
    start = time.process_time()
    while True:
        torch.matmul(A, W)
        calls += 1
        elapsed = time.process_time() - start
        if elapsed >= min_time and calls >= 5:
            break
    return {"matmul": f"{B}x{m}x{k}x{n}", "gflops": 2.0 * B * m * k * n * calls / elapsed / 1e9}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--configs", default="4x4x16,64x32x64")
    parser.add_argument("--min-time", type=float, default=1.0)
    parser.add_argument("--matmul", default="")
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    for config in args.configs.split(","):
        N, n, d = (int(v) for v in config.split("x"))
        for kernel in ("softmax", "gaussian", "gaussian_cdist"):
            print(json.dumps(run(kernel, N, n, d, args.min_time)), flush=True)
    for shape in filter(None, args.matmul.split(",")):
        B, m, k, n = (int(v) for v in shape.split("x"))
        print(json.dumps(matmul_rate(B, m, k, n, args.min_time)), flush=True)


if __name__ == "__main__":
    main()
