"""dyncheck.theory.<family> against independent computations (numpy, scipy, mpmath), one family each.
The claims test the theory against the simulation; these tests check that the bindings expose the
same functions faithfully, in double and in 50 digits."""
import itertools

import mpmath
import numpy as np
import pytest
from scipy.integrate import solve_ivp

import dyncheck


def test_every_family_with_theory_is_a_submodule():
    for family in ("joma", "scb", "topic", "kernels", "multihead"):
        assert hasattr(dyncheck.theory, family), family


def test_joma_nonlinear_flow_against_scipy_and_entropy():
    mu = np.array([0.8, 0.3, 1.1])
    v0 = np.array([0.0, 0.1, -0.2])
    x = np.array([0.5, 0.3, 0.2])
    t = [0.0, 0.5, 1.0, 3.0]
    out = dyncheck.theory.joma.nonlinear_flow(mu=mu, v0=v0, t=t, x=x)
    ref = solve_ivp(lambda _, v: (mu - v) * np.exp(v ** 2 / 2), (0, 3), v0, t_eval=t, rtol=1e-12, atol=1e-14,
                    method="DOP853")
    np.testing.assert_allclose(out["v"], ref.y.T, atol=1e-8)
    assert np.all(out["error_estimate"] < 1e-7)
    for row, h in zip(out["v"], out["entropy"]):
        p = x * np.exp(row ** 2 / 2)
        p /= p.sum()
        assert h == pytest.approx(-(p * np.log(p)).sum(), rel=1e-13)
    p_inf = x * np.exp(mu ** 2 / 2)
    p_inf /= p_inf.sum()
    assert out["entropy_limit"] == pytest.approx(-(p_inf * np.log(p_inf)).sum(), rel=1e-13)
    fifty = dyncheck.theory.joma.nonlinear_flow(mu=mu, v0=v0, t=[0.0, 1.0], digits=50)
    mpmath.mp.dps = 40
    for l in range(3):  # each component is its own scalar ODE: mpmath's Taylor integrator, 40 digits
        f = mpmath.odefun(lambda _, v, m=mpmath.mpf(mu[l]): (m - v) * mpmath.exp(v * v / 2), 0, mpmath.mpf(v0[l]))
        assert abs(mpmath.mpf(fifty["v"][1][l]) - f(1)) < mpmath.mpf(10) ** -25
    mpmath.mp.dps = 60
    assert abs(mpmath.mpf(dyncheck.theory.joma.late_time_rate(mu=0.7, digits=50))  # the double 0.7, exactly
               - mpmath.exp(mpmath.mpf(0.7) ** 2 / 2)) < mpmath.mpf(10) ** -45 * 2
    with pytest.raises(ValueError):
        dyncheck.theory.joma.nonlinear_flow(mu=mu, v0=v0[:2], t=t)


def scb_instance():
    # A 3-token chain with stationary law mu (P mu = mu: P's columns are the next-token laws) and T = 4 emissions.
    P = np.array([[0.5, 0.2, 0.3], [0.3, 0.6, 0.1], [0.2, 0.2, 0.6]])
    w, vecs = np.linalg.eig(P)
    mu = np.real(vecs[:, np.argmin(abs(w - 1))])
    mu /= mu.sum()
    q = np.array([[0.7, 0.1, 0.25], [0.1, 0.6, 0.25], [0.1, 0.2, 0.25], [0.1, 0.1, 0.25]])
    return P, mu, q


def test_scb_constants_and_reduced_flow_against_scipy():
    P, mu, q = scb_instance()
    c = dyncheck.theory.scb.constants(P=P, mu=mu, q=q)
    K_P = sum(mu[j] * np.sum((P[:, j] - mu) ** 2) for j in range(3))
    rho = (q ** 2).sum(axis=0) - 1 / q.shape[0]
    assert c["K_P"] == pytest.approx(K_P, rel=1e-12)
    np.testing.assert_allclose(c["rho"], rho, rtol=1e-12)
    assert c["rho_bar"] == pytest.approx(mu @ rho, rel=1e-12)
    eta, eta_A, T, N = 0.5, 0.3, 4, 3

    def rhs(_, x):  # the flow of specs/scb.md §4.2 as written in its documentation
        m, alpha, nu, beta, omega = x[:N], x[N], x[N + 1], x[N + 2:2 * N + 2], x[2 * N + 2:]
        K_VV = alpha ** 2 * K_P + nu
        a_energy = 1 / T + beta ** 2 * rho + omega
        return np.concatenate([eta * (mu - m), [eta * np.sum(mu * (1 / T + beta * rho - alpha * a_energy)),
                                                -2 * eta * np.sum(mu * a_energy) * nu],
                               eta_A * (alpha * K_P - beta * K_VV), -2 * eta_A * K_VV * omega])

    x0 = np.concatenate([np.zeros(N), [0.0, 0.01], np.zeros(N), np.full(N, 0.02)])
    t = [0.0, 2.0, 10.0]
    out = dyncheck.theory.scb.reduced_flow(P=P, mu=mu, q=q, eta=eta, eta_A=eta_A, m0=x0[:N], alpha0=0.0, nu0=0.01,
                                           beta0=np.zeros(N), omega0=np.full(N, 0.02), t=t)
    ref = solve_ivp(rhs, (0, 10), x0, t_eval=t, rtol=1e-12, atol=1e-14, method="DOP853").y.T
    np.testing.assert_allclose(out["alpha"], ref[:, N], atol=1e-8)
    np.testing.assert_allclose(out["beta"], ref[:, N + 2:2 * N + 2], atol=1e-8)
    np.testing.assert_allclose(out["m"], ref[:, :N], atol=1e-8)
    fifty = dyncheck.theory.scb.reduced_flow(P=P, mu=mu, q=q, eta=eta, eta_A=eta_A, m0=x0[:N], alpha0=0.0, nu0=0.01,
                                             beta0=np.zeros(N), omega0=np.full(N, 0.02), t=t, digits=50)
    assert abs(float(fifty["alpha"][2]) - out["alpha"][2]) < 1e-8 and float(fifty["error_estimate"][2]) < 1e-25
    with pytest.raises(ValueError, match="N = 3"):
        dyncheck.theory.scb.reduced_flow(P=P, mu=mu, q=q, eta=eta, eta_A=eta_A, m0=np.zeros(2), alpha0=0.0, nu0=0.0,
                                         beta0=np.zeros(N), omega0=np.zeros(N), t=t)


def test_topic_laws_against_their_formulas_in_mpmath():
    mpmath.mp.dps = 60
    T, p_c, p_r = 10, mpmath.mpf("0.1"), mpmath.mpf("0.1")
    E = mpmath.mpf(dyncheck.theory.topic.prior_free_law(T=T, p_c=0.1, p_r=0.1, digits=50))
    assert abs(E - (1 + T * mpmath.mpf(0.1) / mpmath.mpf(0.1))) < mpmath.mpf(10) ** -45
    # (C), N -> infinity, Dir(alpha): rho_0 = (E th^2 - E th th') / v, g_k = rho_k / (lambda + rho_k), rho_1 = 1/V.
    v, lam, alpha = 10, 1e-3, 0.1
    b = dyncheck.theory.topic.stage1_excluded_keys(T=T, v=v, lambda_=lam, alpha=alpha)
    same2 = (alpha + 1) / (T * (T * alpha + 1))
    cross = alpha / (T * (T * alpha + 1))
    rho0, rho1 = (same2 - cross) / v, 1 / (T * v)
    g0, g1 = rho0 / (lam + rho0), rho1 / (lam + rho1)
    assert b["same"] == pytest.approx((g1 / T + (1 - 1 / T) * g0) / v, rel=1e-13)
    assert b["diff"] == pytest.approx((g1 - g0) / (v * T), rel=1e-13)
    finite = dyncheck.theory.topic.stage1_excluded_keys(T=T, v=v, lambda_=lam, alpha=alpha, N=(100, 150))
    assert finite["same"] < b["same"]  # finite documents shrink the optimum (the eta~ correction)
    with pytest.raises(ValueError, match="exactly one"):
        dyncheck.theory.topic.stage1_excluded_keys(T=T, v=v, lambda_=lam)
    assert dyncheck.theory.topic.subset_law(T=T, v=v, tau=2, p_c=0.1, p_r=0.1, c=0.001) == float("inf")


def test_topic_stage2_landscape_minimum_at_the_prior_free_law():
    # (C), tau = 2, c = 1, squared loss: the N -> infinity landscape's minimiser over a fine grid sits at the
    # general-c subset law E* = 1 + p_c tau / (c v (p_c + tau p_r / T) - p_c), and the finite-N sum differs
    # from the N -> infinity value by a few percent at N ~ U{100..150}.
    T, v, tau, p_m, p_c, p_r, c = 10, 10, 2, 0.15, 0.1, 0.1, 1.0
    E = np.exp(np.linspace(np.log(1.0), np.log(60.0), 400))
    L = dyncheck.theory.topic.stage2_landscape(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r, c=c, E=E)
    law = dyncheck.theory.topic.subset_law(T=T, v=v, tau=tau, p_c=p_c, p_r=p_r, c=c)
    assert abs(np.log(E[np.argmin(L)]) - np.log(law)) <= np.log(E[1] / E[0])
    finite = dyncheck.theory.topic.stage2_landscape(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r, c=c, E=[law],
                                                    N=(100, 150))
    assert 0 < abs(finite[0] - L[np.argmin(L)]) < 0.05 * L[np.argmin(L)]
    with pytest.raises(ValueError, match="loss must be"):
        dyncheck.theory.topic.stage2_landscape(T=T, v=v, tau=tau, p_m=p_m, p_c=p_c, p_r=p_r, c=c, E=[1.0], loss="l1")


def test_kernels_softmax_loss_floor_against_numpy():
    rng = np.random.default_rng(5)
    u = [rng.normal(size=4) for _ in range(3)]
    t = [rng.normal(size=4) * 2 for _ in range(3)]
    lb = 0.5 * sum(np.sum((ti - np.clip(ti, ui.min(), ui.max())) ** 2) for ui, ti in zip(u, t))
    assert dyncheck.theory.kernels.softmax_loss_floor(u=u, t=t) == pytest.approx(lb, rel=1e-14)


def test_kernels_value_only_against_gradient_descent():
    rng = np.random.default_rng(7)
    Nn, d, d_out = 6, 4, 2  # d < Nn: lambda_min = 0, a floor
    B, W0, O, Y = rng.normal(size=(Nn, d)), rng.normal(size=(d, d)) * 0.3, rng.normal(size=(d, d_out)), rng.normal(size=(Nn, d_out))
    eta = 0.5 / (np.linalg.eigvalsh(B @ B.T).max() * np.linalg.eigvalsh(O.T @ O).max())
    steps = [0, 1, 5, 40]
    out = dyncheck.theory.kernels.value_only(B=B, W0=W0, O=O, Y=Y, eta=eta, t=steps)
    W, losses = W0.copy(), []
    for s in range(max(steps) + 1):
        R = B @ W @ O - Y
        if s in steps:
            losses.append(0.5 * np.sum(R ** 2))
        W -= eta * B.T @ R @ O.T
    np.testing.assert_allclose(out["loss"], losses, rtol=1e-10)
    assert out["lambda_min"] == pytest.approx(0, abs=1e-10)
    floor = 0.5 * np.sum((B @ np.linalg.lstsq(B, Y @ np.linalg.pinv(O), rcond=None)[0] @ O - Y) ** 2)
    assert out["floor"] == pytest.approx(floor, rel=1e-8)
    # The double evaluation (the zero-mode threshold follows the scalar) against the 50-digit one.
    fifty = dyncheck.theory.kernels.value_only(B=B, W0=W0, O=O, Y=Y, eta=eta, t=steps, digits=50)
    assert out["floor"] == pytest.approx(float(fifty["floor"]), rel=1e-12)
    assert out["slowest_rho"] == pytest.approx(float(fifty["slowest_rho"]), rel=1e-12)
    np.testing.assert_allclose(out["loss"], [float(x) for x in fifty["loss"]], rtol=1e-12)


def _attention_output(X, Q, K, V, O, kernel):
    """T_i = sum_h S_h X_i V_h O_h in numpy (specs/kernels.md A.2), c = sqrt(d): independent of the C++."""
    d = X[0].shape[1]
    T = []
    for x in X:
        t = 0
        for q, k, v, o in zip(Q, K, V, O):
            qs, ks = x @ q, x @ k
            if kernel == "softmax":
                z = qs @ ks.T / np.sqrt(d)
                s = np.exp(z - z.max(axis=1, keepdims=True))
                s /= s.sum(axis=1, keepdims=True)
            else:
                s = np.exp(-((qs[:, None, :] - ks[None, :, :]) ** 2).sum(axis=2) / (2 * np.sqrt(d)))
            t = t + s @ x @ v @ o
        T.append(t)
    return np.concatenate([t.ravel() for t in T])


def _jacobian_by_differences(X, Q, K, V, O, kernel, block):
    """d vec(T) / d vec(block) by central differences (step 1e-6): the columns' order does not matter for
    the eigenvalues of J J'."""
    weights = {"Q": Q, "K": K, "V": V}
    columns = []
    for h, w in enumerate(weights[block]):
        for index in np.ndindex(w.shape):
            plus = [m.copy() for m in weights[block]]
            minus = [m.copy() for m in weights[block]]
            plus[h][index] += 1e-6
            minus[h][index] -= 1e-6
            args = dict(weights, O=O)
            args[block] = plus
            tp = _attention_output(X, args["Q"], args["K"], args["V"], O, kernel)
            args[block] = minus
            tm = _attention_output(X, args["Q"], args["K"], args["V"], O, kernel)
            columns.append((tp - tm) / 2e-6)
    return np.array(columns).T


@pytest.mark.parametrize("kernel", ["softmax", "gaussian"])
@pytest.mark.parametrize("N,n,d,d_out,H", [(2, 3, 8, 1, 1), (2, 2, 4, 2, 2), (3, 3, 4, 1, 1)])
def test_kernels_conditions_against_finite_differences(kernel, N, n, d, d_out, H):
    rng = np.random.default_rng(11 + N + 10 * d + 100 * H)
    X = [rng.normal(size=(n, d)) for _ in range(N)]
    Q, K, V = ([rng.normal(size=(d, d)) * 0.7 / np.sqrt(d) for _ in range(H)] for _ in range(3))
    O = [rng.normal(size=(d, d_out)) for _ in range(H)]
    out = dyncheck.theory.kernels.conditions(X=X, Q=Q, K=K, V=V, O=O, kernel=kernel)
    assert out["d_at_least_Nn"] == (d >= N * n)
    # W^V enters linearly: its difference quotient is exact up to rounding; W^Q's up to O(1e-12) truncation
    for block, key in (("V", "V"), ("Q", "Q")):
        J = _jacobian_by_differences(X, Q, K, V, O, kernel, block)
        lam = np.linalg.eigvalsh(J @ J.T)
        zero_by_shape = J.shape[0] > J.shape[1]
        assert out[f"zero_{key}_by_shape"] == zero_by_shape
        scale = lam.max()
        if zero_by_shape:
            assert out[f"lambda_{key}"] == 0.0
        else:
            assert out[f"lambda_{key}"] == pytest.approx(lam.min(), abs=1e-7 * scale)
        if key == "V":
            assert out["lambda_V_max"] == pytest.approx(scale, rel=1e-7)
            assert out["eta_max_value_only"] == pytest.approx(1 / scale, rel=1e-7)
        assert 0 < out[f"rounding_{key}"] < 1e-10 * scale


def test_kernels_conditions_lambda_V_is_zero_below_Nn_and_positive_above():
    # A-T1: rank B <= d, so lambda_V = lambda_min(BB') = 0 for d < Nn (scalar output: up to rounding), > 0 above
    rng = np.random.default_rng(3)
    for d, positive in ((5, False), (12, True)):
        X = [rng.normal(size=(3, d)) for _ in range(3)]  # Nn = 9
        Q, K, V = (rng.normal(size=(d, d)) * 0.5 / np.sqrt(d) for _ in range(3))
        out = dyncheck.theory.kernels.conditions(X=X, Q=Q, K=K, V=V, O=rng.normal(size=(d, 1)), kernel="gaussian_rownorm")
        assert out["d_at_least_Nn"] == positive
        if positive:
            assert out["lambda_V"] > 1e3 * out["rounding_V"]
        else:
            assert abs(out["lambda_V"]) <= out["rounding_V"]


def test_kernels_conditions_rejects_bad_input():
    rng = np.random.default_rng(4)
    X = [rng.normal(size=(3, 4)) for _ in range(2)]
    M = rng.normal(size=(4, 4))
    with pytest.raises(ValueError, match="kernel must be"):
        dyncheck.theory.kernels.conditions(X=X, Q=M, K=M, V=M, O=M, kernel="laplace")
    with pytest.raises(ValueError, match="W\\^K of head 0 must be d x d"):
        dyncheck.theory.kernels.conditions(X=X, Q=M, K=M[:3], V=M, O=M)
    with pytest.raises(ValueError, match="one matrix per head"):
        dyncheck.theory.kernels.conditions(X=X, Q=[M, M], K=M, V=M, O=M)
    with pytest.raises(ValueError, match="X\\[1\\]"):
        dyncheck.theory.kernels.conditions(X=[X[0], X[1][:, :3]], Q=M, K=M, V=M, O=M)
    with pytest.raises(ValueError, match="NaN or infinite"):
        dyncheck.theory.kernels.conditions(X=X, Q=M, K=M, V=np.full((4, 4), np.nan), O=M)
    with pytest.raises(ValueError, match="2-D array"):
        dyncheck.theory.kernels.conditions(X=X, Q=np.ones(4), K=M, V=M, O=M)


def enumerate_crude(theta, w, k):
    d = theta[0].shape[0]
    c1, c2 = np.zeros((d, d)), np.zeros((d, d))
    for bits in itertools.product([-1.0, 1.0], repeat=k * d):
        X = np.array(bits).reshape(k, d)
        F = np.zeros((k, d))
        for th, wi in zip(theta, w):
            Z = X @ th @ X.T
            S = np.exp(Z - Z.max(axis=1, keepdims=True))
            F += (S / S.sum(axis=1, keepdims=True)) @ X @ wi
        c1 += X.T @ F
        c2 += X.T @ np.ones((k, k)) @ F / k
    n = 2.0 ** (k * d)
    return c1 / n, c2 / n


def test_multihead_crude_estimates_and_moments_against_numpy_enumeration():
    rng = np.random.default_rng(3)
    k, d = 3, 3
    theta = [rng.normal(size=(d, d)) * 0.2 for _ in range(2)]
    w = [rng.normal(size=(d, d)) for _ in range(2)]
    out = dyncheck.theory.multihead.crude_estimates(theta=theta, w=w, k=k)
    c1, c2 = enumerate_crude(theta, w, k)
    np.testing.assert_allclose(out["c1"], c1, atol=1e-13)
    np.testing.assert_allclose(out["c2"], c2, atol=1e-13)
    assert out["relative_error_c2"] == pytest.approx(np.linalg.norm(c2 - sum(w)) / np.linalg.norm(sum(w)), rel=1e-12)
    threaded = dyncheck.theory.multihead.crude_estimates(theta=theta, w=w, k=k, threads=2)
    assert np.array_equal(threaded["c1"], out["c1"])  # independent of the thread count, to the bit
    m = dyncheck.theory.multihead.boolean_moments(k=k, d=d)
    np.testing.assert_allclose(m["gram"], k * np.eye(d), atol=1e-14)  # E[X'X] = k I
    np.testing.assert_allclose(m["uniform"], np.eye(d), atol=1e-14)  # E[X'(J/k)X] = I
    with pytest.raises(ValueError, match="k\\*d <= 20"):
        dyncheck.theory.multihead.boolean_moments(k=5, d=5)
