#!/usr/bin/python3
# Independent reference values for tests/theory/multihead/identities_test.cpp (numpy, double;
# mpmath at 40 digits for the crude estimates). Instance: k = 3, d = 2, m = 2,
#   Theta_1 = [[0.3, -0.7], [0.5, 0.2]], Theta_2 = [[-0.4, 0.1], [0.6, -0.8]],
#   W_1 = [[1.0, 0.5], [-0.3, 0.8]],   W_2 = [[0.2, -1.1], [0.7, 0.4]],  W_s = [[0.9, 0.1], [-0.2, 1.3]].
# X enumerates {+-1}^{k x d}; the index bit a*d+b set means X[a,b] = -1.
import itertools
import numpy as np
import mpmath as mp

k, d = 3, 2
Th = [np.array([[0.3, -0.7], [0.5, 0.2]]), np.array([[-0.4, 0.1], [0.6, -0.8]])]
W = [np.array([[1.0, 0.5], [-0.3, 0.8]]), np.array([[0.2, -1.1], [0.7, 0.4]])]
Ws = np.array([[0.9, 0.1], [-0.2, 1.3]])
J = np.ones((k, k)); P = np.eye(k) - J / k

def inputs():
    for i in range(2 ** (k * d)):
        yield np.array([[-1.0 if (i >> (a * d + b)) & 1 else 1.0 for b in range(d)] for a in range(k)])

def softmax(Z):
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)

def F(X):
    return sum(softmax(X @ t @ X.T) @ X @ w for t, w in zip(Th, W))

N = 2 ** (k * d)
C1 = sum(X.T @ F(X) for X in inputs()) / N
C2 = sum(X.T @ J @ F(X) for X in inputs()) / (k * N)
grad = sum(X.T @ ((J / k) @ X @ Ws - F(X)) @ Ws.T @ X.T @ P @ X for X in inputs()) / (k * N)
lin = sum(sum((X.T @ X) @ t @ (X.T @ P @ X) @ w @ Ws.T @ (X.T @ P @ X) for t, w in zip(Th, W)) for X in inputs()) / (k * k * N)
print("C1 =", repr(C1.tolist()))
print("C2 =", repr(C2.tolist()))
print("grad =", repr(grad.tolist()))
print("linear_response =", repr(lin.tolist()))

mp.mp.dps = 40
def mpF(X):
    out = mp.zeros(k, d)
    for t, w in zip(Th, W):
        Tm = mp.matrix(t.tolist()); Wm = mp.matrix(w.tolist())
        Z = X * Tm * X.T
        S = mp.zeros(k, k)
        for a in range(k):
            e = [mp.exp(Z[a, b]) for b in range(k)]
            s = mp.fsum(e)
            for b in range(k):
                S[a, b] = e[b] / s
        out += S * X * Wm
    return out
acc = mp.zeros(d, d)
for X in inputs():
    Xm = mp.matrix(X.tolist())
    acc += Xm.T * mpF(Xm)
acc /= N
print("C1 (mpmath, 40 digits) [0,0] =", mp.nstr(acc[0, 0], 35), " [1,1] =", mp.nstr(acc[1, 1], 35))
