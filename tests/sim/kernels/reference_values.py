#!/usr/bin/python3
"""Independent numpy reference for tests/sim/kernels/attention_test.cpp (spec kernels.md A.2).

A fixed deterministic instance (no random numbers, so C++ rebuilds it exactly) and the loss and
gradient of the one-layer attention model, computed with numpy autodiff-free formulas *and*
checked here against numpy central differences in float64. Prints C++ initialisers.
Run: /usr/bin/python3 tests/sim/kernels/reference_values.py
"""
import numpy as np

N, n, d, H = 2, 3, 4, 2


def instance(d_out):
    X = [np.array([[np.sin(1.0 + 7 * i + 3 * a + j) for j in range(d)] for a in range(n)]) for i in range(N)]
    Q = [np.array([[0.3 * np.cos(2 * j + k + 0.5 * h) for k in range(d)] for j in range(d)]) for h in range(H)]
    K = [np.array([[0.4 * np.sin(j - 2 * k + 0.25 * h) for k in range(d)] for j in range(d)]) for h in range(H)]
    V = [np.array([[0.5 * np.cos(j * k + 1.0 + h) for k in range(d)] for j in range(d)]) for h in range(H)]
    O = [np.array([[np.cos(0.3 * j + 0.7 * k + h) for k in range(d_out)] for j in range(d)]) for h in range(H)]
    Y = [np.array([[np.cos(1.0 + i + 2 * a + 3 * k) for k in range(d_out)] for a in range(n)]) for i in range(N)]
    return X, Q, K, V, O, Y


def attention(kernel, rownorm, X, Wq, Wk):
    q, k = X @ Wq, X @ Wk
    if kernel == "softmax":
        z = q @ k.T / np.sqrt(d)
    else:
        D = ((q[:, None, :] - k[None, :, :]) ** 2).sum(-1)
        z = -D / (2 * np.sqrt(d))
        if not rownorm:
            return np.exp(z)
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def loss(kernel, rownorm, X, Q, K, V, O, Y):
    f = 0.0
    for i in range(N):
        T = sum(attention(kernel, rownorm, X[i], Q[h], K[h]) @ X[i] @ V[h] @ O[h] for h in range(H))
        f += 0.5 * ((T - Y[i]) ** 2).sum()
    return f


def central(kernel, rownorm, X, Q, K, V, O, Y, block, h, j, k, step=1e-5):
    def at(delta):
        blocks = {"Q": [m.copy() for m in Q], "K": [m.copy() for m in K], "V": [m.copy() for m in V]}
        blocks[block][h][j, k] += delta
        return loss(kernel, rownorm, X, blocks["Q"], blocks["K"], blocks["V"], O, Y)
    # Richardson extrapolation of two central differences: error O(step^4)
    d1 = (at(step) - at(-step)) / (2 * step)
    d2 = (at(2 * step) - at(-2 * step)) / (4 * step)
    return (4 * d1 - d2) / 3


for kernel, rownorm in [("softmax", False), ("gaussian", False), ("gaussian", True)]:
    for d_out in (1, d):
        X, Q, K, V, O, Y = instance(d_out)
        f = loss(kernel, rownorm, X, Q, K, V, O, Y)
        grads = [central(kernel, rownorm, X, Q, K, V, O, Y, b, 1, 2, 1) for b in ("Q", "K", "V")]
        print(f'  {{"{kernel}", {str(rownorm).lower()}, {d_out}, {f!r}, {grads[0]!r}, {grads[1]!r}, {grads[2]!r}}},')
