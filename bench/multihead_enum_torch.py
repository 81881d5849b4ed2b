#!/usr/bin/python3
"""E[X^T F(X)] over the Boolean cube {+-1}^(k x d) by enumeration, in PyTorch or numpy (CPU, one thread).

F(X) = sum_i softmax(X Theta_i X^T) X W_i (specs/multihead.md B.1, no 1/sqrt(d)), the quantity C1 of D2, batched
over all 2^(kd) inputs at once: X is the (2^(kd), k, d) tensor of every input (index i: X[a, b] = -1 when bit
a*d + b of i is set), built once and not timed; the timed part is the batched computation and the mean.
Rates are per CPU second of the process (time.process_time), like the C++ side, because the machine is shared.

Prints one JSON object per configuration and implementation:
{"impl", "k", "d", "m", "inputs", "repeats", "seconds", "inputs_per_second", "result": [d*d entries, column-major]}.
Usage: multihead_enum_torch.py --impl torch|numpy|both --config k,d,m:theta_1;w_1;theta_2;... [--config ...]
       [--min-time 1.0]   (each matrix d*d numbers, column-major, separated by spaces or commas)
"""
import argparse
import json
import time

import numpy as np


def cube(k, d):
    n = k * d
    index = np.arange(2 ** n, dtype=np.int64)
    bits = (index[:, None] >> np.arange(n, dtype=np.int64)) & 1
    return np.where(bits == 1, -1.0, 1.0).reshape(-1, k, d)


def parse(config):
    shape, _, matrices = config.partition(":")
    k, d, m = (int(v) for v in shape.split(","))
    values = [float(v) for v in matrices.replace(";", " ").replace(",", " ").split()]
    if len(values) != 2 * m * d * d:
        raise SystemExit(f"config {shape}: need {2 * m * d * d} numbers, got {len(values)}")
    mats = [np.array(values[j * d * d:(j + 1) * d * d]).reshape(d, d, order="F") for j in range(2 * m)]
    return k, d, m, mats[0::2], mats[1::2]


def numpy_run(X, thetas, ws):
    F = np.zeros_like(X)
    Xt = X.transpose(0, 2, 1)
    for theta, w in zip(thetas, ws):
        Z = (X @ theta) @ Xt
        Z -= Z.max(axis=-1, keepdims=True)
        S = np.exp(Z)
        S /= S.sum(axis=-1, keepdims=True)
        F += S @ (X @ w)
    return (Xt @ F).sum(axis=0) / X.shape[0]


def torch_run(torch, X, thetas, ws):
    F = torch.zeros_like(X)
    Xt = X.transpose(1, 2)
    for theta, w in zip(thetas, ws):
        S = torch.softmax(torch.matmul(torch.matmul(X, theta), Xt), dim=-1)
        F += torch.matmul(S, torch.matmul(X, w))
    return torch.matmul(Xt, F).sum(dim=0) / X.shape[0]


def timed(run, min_time):
    repeats, start = 0, time.process_time()
    while True:
        result = run()
        repeats += 1
        elapsed = time.process_time() - start
        if elapsed >= min_time and repeats >= 2:
            return result, repeats, elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--impl", default="both", choices=["torch", "numpy", "both"])
    parser.add_argument("--config", action="append", required=True)
    parser.add_argument("--min-time", type=float, default=1.0)
    args = parser.parse_args()
    for config in args.config:
        k, d, m, thetas, ws = parse(config)
        X = cube(k, d)
        impls = ["numpy", "torch"] if args.impl == "both" else [args.impl]
        for impl in impls:
            if impl == "numpy":
                result, repeats, seconds = timed(lambda: numpy_run(X, thetas, ws), args.min_time)
            else:
                import torch
                torch.set_num_threads(1)
                Xt = torch.from_numpy(X)
                th = [torch.from_numpy(t) for t in thetas]
                wt = [torch.from_numpy(w) for w in ws]
                with torch.no_grad():
                    result, repeats, seconds = timed(lambda: torch_run(torch, Xt, th, wt), args.min_time)
                result = result.numpy()
            print(json.dumps({"impl": impl, "k": k, "d": d, "m": m, "inputs": X.shape[0], "repeats": repeats,
                              "seconds": seconds, "inputs_per_second": repeats * X.shape[0] / seconds,
                              "result": [float(v) for v in np.asarray(result).flatten(order="F")]}), flush=True)


if __name__ == "__main__":
    main()
