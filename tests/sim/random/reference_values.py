#!/usr/bin/env python3
"""Independent reference values for tests/sim/random (run: python3 reference_values.py).

Written from the published algorithms, not from the C++ sources, in plain Python (no NumPy):
  * splitmix64 and xoshiro256++ 1.0 (prng.di.unimi.it reference C code),
  * FNV-1a 64 bit,
  * the jump constants checked against A^(2^128) and A^(2^192), with A the 256x256 GF(2)
    matrix of one xoshiro256++ state transition, computed by repeated squaring,
  * dyncheck's derive_seed (documented in derive_stream.hpp),
  * uniform01 / uniform_open01 / Lemire's uniform_index,
  * Marsaglia polar normals and Marsaglia-Tsang gamma (math.log/math.sqrt/math.exp call the
    same libm as the C++ code, so values match bit for bit on one platform).
The printed values are pasted into the *_test.cpp files as golden values.
"""
import math

MASK = (1 << 64) - 1


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK


def splitmix64_mix(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


GAMMA = 0x9E3779B97F4A7C15


class SplitMix64:
    def __init__(self, seed):
        self.x = seed & MASK

    def next(self):
        self.x = (self.x + GAMMA) & MASK
        return splitmix64_mix(self.x)


class Xoshiro256pp:
    def __init__(self, seed=None, state=None):
        if state is not None:
            self.s = list(state)
        else:
            sm = SplitMix64(seed)
            self.s = [sm.next() for _ in range(4)]

    def next(self):
        s = self.s
        result = (rotl((s[0] + s[3]) & MASK, 23) + s[0]) & MASK
        t = (s[1] << 17) & MASK
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        return result


def fnv1a64(data: bytes):
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & MASK
    return h


def derive_seed(master, name, replicate):
    h1 = splitmix64_mix((master + GAMMA) & MASK)
    h2 = splitmix64_mix(((h1 ^ fnv1a64(name.encode())) + GAMMA) & MASK)
    return splitmix64_mix(((h2 ^ replicate) + GAMMA) & MASK)


# ---- GF(2) matrix of the state transition -------------------------------------------------
# State as a 256-bit integer: bit 64*i + b is bit b of s[i].
def to_int(s):
    return s[0] | (s[1] << 64) | (s[2] << 128) | (s[3] << 192)


def from_int(v):
    return [(v >> (64 * i)) & MASK for i in range(4)]


def step_state(v):
    g = Xoshiro256pp(state=from_int(v))
    g.next()
    return to_int(g.s)


def matrix_columns_of_step():
    # Column j = image of basis vector e_j (the map is linear over GF(2)).
    return [step_state(1 << j) for j in range(256)]


def apply(cols, v):
    out = 0
    j = 0
    while v:
        if v & 1:
            out ^= cols[j]
        v >>= 1
        j += 1
    return out


def compose(a, b):  # (a o b): columns a applied to columns of b
    return [apply(a, c) for c in b]


def power_of_two_power(cols, k):
    m = cols
    for _ in range(k):
        m = compose(m, m)
    return m


def jump_by_polynomial(state, poly):
    g = Xoshiro256pp(state=state)
    acc = [0, 0, 0, 0]
    for word in poly:
        for b in range(64):
            if (word >> b) & 1:
                acc = [a ^ x for a, x in zip(acc, g.s)]
            g.next()
    return acc


# ---- samplers -----------------------------------------------------------------------------
def uniform01(g):
    return (g.next() >> 11) * 2.0**-53


def uniform_open01(g):
    return (((g.next() >> 12) << 1) | 1) * 2.0**-53


def uniform_index(g, n):
    m = g.next() * n
    lo = m & MASK
    if lo < n:
        t = ((1 << 64) - n) % n
        while lo < t:
            m = g.next() * n
            lo = m & MASK
    return m >> 64


def normal_pair(g):
    while True:
        u = 2.0 * uniform01(g) - 1.0
        v = 2.0 * uniform01(g) - 1.0
        s = u * u + v * v
        if 0.0 < s < 1.0:
            break
    f = math.sqrt(-2.0 * math.log(s) / s)
    return u * f, v * f


def marsaglia_tsang(g, a):
    d = a - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        while True:
            z = normal_pair(g)[0]
            v = 1.0 + c * z
            if v > 0.0:
                break
        v = v * v * v
        u = uniform_open01(g)
        z2 = z * z
        if u < 1.0 - 0.0331 * (z2 * z2):
            return d * v
        if math.log(u) < 0.5 * z2 + d * (1.0 - v + math.log(v)):
            return d * v


def gamma(g, a):
    if a >= 1.0:
        return marsaglia_tsang(g, a)
    y = marsaglia_tsang(g, a + 1.0)
    u = uniform_open01(g)
    return y * math.exp(math.log(u) / a)


def vose_table(weights):
    # Categorical's documented construction: q_i = K (p_i / sum), stacks filled in index
    # order, pop from the back, residual (q_g + q_l) - 1.
    k = len(weights)
    total = 0.0
    for w in weights:
        total += w
    q = [(w / total) * float(k) for w in weights]
    prob = [1.0] * k
    alias = list(range(k))
    small = [i for i in range(k) if q[i] < 1.0]
    large = [i for i in range(k) if not q[i] < 1.0]
    while small and large:
        l = small.pop()
        g = large.pop()
        prob[l] = q[l]
        alias[l] = g
        q[g] = (q[g] + q[l]) - 1.0
        (small if q[g] < 1.0 else large).append(g)
    return prob, alias


def categorical(g, table):
    prob, alias = table
    c = uniform_index(g, len(prob))
    return c if uniform01(g) < prob[c] else alias[c]


def main():
    sm = SplitMix64(0)
    print("splitmix64(0) first outputs:", [hex(sm.next()) for _ in range(3)])
    g = Xoshiro256pp(state=[1, 2, 3, 4])
    print("xoshiro state {1,2,3,4}:", [hex(g.next()) for _ in range(6)])
    for seed in (0, 12345):
        g = Xoshiro256pp(seed)
        print(f"seed {seed} state:", [hex(x) for x in g.s])
        print(f"seed {seed} outputs:", [hex(g.next()) for _ in range(6)])
    for name in ("", "a", "foobar", "calib.sgd_mean_matches_gradient_flow/eta=0.05"):
        print(f"fnv1a64({name!r}) =", hex(fnv1a64(name.encode())))
    cases = ((0, "", 0), (42, "calib.x", 0), (42, "calib.x", 1), (42, "calib.y", 0),
             (43, "calib.x", 0))
    for args in cases:
        print("derive_seed", args, hex(derive_seed(*args)))
    g = Xoshiro256pp(derive_seed(42, "calib.x", 0))
    print("derive_stream(42,'calib.x',0) outputs:", [hex(g.next()) for _ in range(3)])

    cols = matrix_columns_of_step()
    jump = [0x180EC6D33CFD0ABA, 0xD5A61266F0C9392C, 0xA9582618E03FC9AA, 0x39ABDC4529B1661C]
    long_jump = [0x76E15D3EFEFDCBBF, 0xC5004E441C522FB3, 0x77710069854EE241, 0x39109BB02ACBE635]
    a128 = power_of_two_power(cols, 128)
    a192 = power_of_two_power(a128, 64)
    start = Xoshiro256pp(7).s
    j1 = from_int(apply(a128, to_int(start)))
    j2 = from_int(apply(a192, to_int(start)))
    assert j1 == jump_by_polynomial(start, jump), "jump constants are not A^(2^128)"
    assert j2 == jump_by_polynomial(start, long_jump), "long-jump constants are not A^(2^192)"
    print("seed 7 after jump (A^2^128):", [hex(x) for x in j1])
    print("seed 7 after long_jump (A^2^192):", [hex(x) for x in j2])

    g = Xoshiro256pp(2024)
    print("uniform01 seed 2024:", [uniform01(g).hex() for _ in range(3)])
    g = Xoshiro256pp(2024)
    print("uniform_open01 seed 2024:", [uniform_open01(g).hex() for _ in range(3)])
    g = Xoshiro256pp(2024)
    print("uniform_index(n=10) seed 2024:", [uniform_index(g, 10) for _ in range(8)])
    g = Xoshiro256pp(2024)
    print("uniform_index(n=3*2^62) seed 2024:", [uniform_index(g, 3 << 62) for _ in range(4)])
    g = Xoshiro256pp(2024)
    pairs = [normal_pair(g) for _ in range(3)]
    print("normal pairs seed 2024:", [(a.hex(), b.hex()) for a, b in pairs])
    table = vose_table([0.1, 0.2, 0.3, 0.4])
    print("Categorical({0.1,0.2,0.3,0.4}) table:", [x.hex() for x in table[0]], table[1])
    g = Xoshiro256pp(2024)
    print("Categorical({0.1,0.2,0.3,0.4}) seed 2024:",
          [categorical(g, table) for _ in range(12)])
    table = vose_table([3.0, 0.0, 1.0, 0.5, 0.0, 2.5])
    print("Categorical({3,0,1,0.5,0,2.5}) table:", [x.hex() for x in table[0]], table[1])
    for a in (0.25, 1.0, 2.5, 100.0):
        g = Xoshiro256pp(2024)
        print(f"gamma({a}) seed 2024:", [gamma(g, a).hex() for _ in range(3)])


if __name__ == "__main__":
    main()
