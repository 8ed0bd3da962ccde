"""Small linear-systems helpers for the designs (numpy + scipy, imported by ``design`` only).

- :func:`pade` — the (n, n) Padé approximant of e^{-sτ}: numerator and denominator coefficients
  c_k = (2n - k)! n! / ((2n)! k! (n - k)!), N(s) = Σ c_k (-sτ)^k, D(s) = Σ c_k (sτ)^k
  (G. A. Baker, P. Graves-Morris, "Padé Approximants", 2nd ed., CUP 1996, §1.2; the standard
  delay approximant, e.g. G. F. Franklin, J. D. Powell, A. Emami-Naeini, "Feedback Control of
  Dynamic Systems", §5.6).
- :func:`balanced_reduction` — square-root balanced truncation (A. J. Laub, M. T. Heath,
  C. C. Paige, R. C. Ward, IEEE TAC 32(2), 1987; B. C. Moore, IEEE TAC 26(1), 1981) and its
  singular-perturbation variant that keeps the DC gain (K. V. Fernando, H. Nicholson, IEEE TAC
  27(2), 1982; Y. Liu, B. D. O. Anderson, Int. J. Control 50(4), 1989).
- :func:`ss_zpk` — zeros, poles and gain of a single-input single-output state space without
  forming polynomials (the controllers here mix time scales of 1e-1 and 1e6 rad/s, where
  ``scipy.signal.ss2tf``'s polynomial coefficients lose the small ones): poles are eig(A), zeros
  the finite generalised eigenvalues of the Rosenbrock pencil ([[A, B], [C, D]], diag(I, 0)),
  gain D or the first non-zero Markov parameter C A^{r-1} B.
- :func:`tustin_zpk` — the bilinear transform s = (2/T)(z - 1)/(z + 1) on zeros, poles and gain:
  s - r -> (2/T)(1 - rT/2)(z - ρ)/(z + 1), ρ = (1 + rT/2)/(1 - rT/2), and a zero at z = -1 per
  excess pole. Multiplying first-order factors loses only the digits of 1 - ρ (about 4 for
  the slowest root here), never those of a polynomial in s.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla  # type: ignore[import-untyped]
import scipy.signal as sig  # type: ignore[import-untyped]
from typing import Any

from numpy.typing import NDArray

__all__ = ["balanced_reduction", "pade", "pade_plant", "ss_eval", "ss_zpk", "tustin_zpk"]

Array = NDArray[Any]


def pade(order: int, tau: float) -> tuple[Array, Array, Array, Array]:
    """State space (A, B, C, D) of the (order, order) Padé approximant of e^{-s tau}.

    Realised for tau = 1 (coefficients of order 1), balanced (``scipy.linalg.matrix_balance``),
    then scaled in time (A/tau, B/tau): G(s tau) = C (sI - A/tau)^{-1} B/tau + D.
    """
    n = int(order)
    c = [
        math.factorial(2 * n - k) * math.factorial(n)
        / (math.factorial(2 * n) * math.factorial(k) * math.factorial(n - k))
        for k in range(n + 1)
    ]
    num = [c[k] * (-1.0) ** k for k in range(n + 1)][::-1]
    den = c[::-1]
    A, B, C, D = sig.tf2ss(num, den)
    _, (sca, _perm) = sla.matrix_balance(A, permute=False, separate=True)
    A = A * sca[None, :] / sca[:, None]
    B = B / sca[:, None]
    C = C * sca[None, :]
    return A / tau, B / tau, C, D


def pade_plant(A0: Array, A1: Array, B: Array, delay: float, order: int) -> tuple[Array, Array]:
    """(A, B) of x' = A0 x + A1 x(t - delay) + B u(t - delay) with the delay replaced by its
    Padé approximant: each row i with a delayed term carries v_i = A1[i] x + B[i] u through its
    own Padé block (states appended after x), whose output replaces the delayed terms of row i."""
    Ap, Bp, Cp, Dp = pade(order, delay)
    k = Ap.shape[0]
    nx = A0.shape[0]
    rows = [i for i in range(nx) if np.any(A1[i] != 0) or np.any(B[i] != 0)]
    n = nx + k * len(rows)
    A = np.zeros((n, n))
    Bo = np.zeros((n, B.shape[1]))
    A[:nx, :nx] = A0
    for j, i in enumerate(rows):
        sl = slice(nx + j * k, nx + (j + 1) * k)
        A[i, :nx] += Dp[0, 0] * A1[i]
        A[i, sl] += Cp[0]
        Bo[i] += Dp[0, 0] * B[i]
        A[sl, :nx] += Bp @ A1[i : i + 1]
        A[sl, sl] = Ap
        Bo[sl] += Bp @ B[i : i + 1]
    return A, Bo


def ss_eval(A: Array, B: Array, C: Array, D: Array | float, s: NDArray[Any]) -> NDArray[Any]:
    """C (sI - A)^{-1} B + D of a single-input single-output system at each ``s``."""
    s = np.atleast_1d(np.asarray(s, dtype=complex))
    eye = np.eye(A.shape[0])
    d = float(np.asarray(D).reshape(-1)[0]) if np.size(D) else 0.0
    return np.array([(C @ np.linalg.solve(si * eye - A, B))[0, 0] + d for si in s])


def _psd_factor(M: Array) -> Array:
    """L with L Lᵀ = M for a symmetric positive semidefinite M (eigen-decomposition)."""
    M = 0.5 * (M + M.T)
    w, V = np.linalg.eigh(M)
    return V * np.sqrt(np.clip(w, 0.0, None))


def balanced_reduction(
    A: Array, B: Array, C: Array, D: Array, order: int, match_dc: bool = True
) -> tuple[Array, Array, Array, Array, Array]:
    """Reduce a stable (A, B, C, D) to ``order`` states by balancing.

    Returns (Ar, Br, Cr, Dr, hsv) with hsv the Hankel singular values (descending). With
    ``match_dc`` the weak states are residualised (singular perturbation: their derivatives set
    to zero), which keeps the DC gain exactly; otherwise they are truncated (which keeps the
    behaviour at high frequency instead).
    """
    if np.max(np.linalg.eigvals(A).real) >= 0:
        raise ValueError("balanced_reduction needs a stable system")
    P = sla.solve_continuous_lyapunov(A, -B @ B.T)
    Q = sla.solve_continuous_lyapunov(A.T, -C.T @ C)
    Lp, Lq = _psd_factor(P), _psd_factor(Q)
    U, hsv, Vt = np.linalg.svd(Lq.T @ Lp)
    keep = hsv > hsv[0] * 1e-14
    U, hsv_k, Vt = U[:, keep], hsv[keep], Vt[keep]
    S = np.diag(hsv_k**-0.5)
    T = Lp @ Vt.T @ S
    Ti = S @ U.T @ Lq.T
    Ab, Bb, Cb = Ti @ A @ T, Ti @ B, C @ T
    r = order
    if not match_dc or Ab.shape[0] <= r:
        return Ab[:r, :r], Bb[:r], Cb[:, :r], np.array(D, dtype=float).reshape(1, 1), hsv
    A11, A12, A21, A22 = Ab[:r, :r], Ab[:r, r:], Ab[r:, :r], Ab[r:, r:]
    B1, B2 = Bb[:r], Bb[r:]
    C1, C2 = Cb[:, :r], Cb[:, r:]
    A22i = np.linalg.inv(A22)
    Ar = A11 - A12 @ A22i @ A21
    Br = B1 - A12 @ A22i @ B2
    Cr = C1 - C2 @ A22i @ A21
    Dr = np.array(D, dtype=float).reshape(1, 1) - C2 @ A22i @ B2
    return Ar, Br, Cr, Dr, hsv


def ss_zpk(A: Array, B: Array, C: Array, D: Array | float) -> tuple[NDArray[Any], NDArray[Any], float]:
    """(zeros, poles, gain) of a SISO (A, B, C, D), K(s) = gain Π(s - z)/Π(s - p)."""
    n = A.shape[0]
    d = float(np.asarray(D).reshape(-1)[0]) if np.size(D) else 0.0
    M = np.block([[A, B], [C, np.array([[d]])]])
    N = np.zeros((n + 1, n + 1))
    N[:n, :n] = np.eye(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        gen = sla.eigvals(M, N)
    zeros = gen[np.isfinite(gen)]
    zeros = zeros[np.abs(zeros) < 1e15]
    poles = np.linalg.eigvals(A)
    if d != 0.0:
        gain = d
    else:
        gain, v = 0.0, B
        for _ in range(n):
            gain = float((C @ v)[0, 0])
            if gain != 0.0:
                break
            v = A @ v
    return zeros.astype(complex), poles.astype(complex), gain


def _tustin_root(r: complex, T: float) -> complex:
    """ρ, the image of the root r under s = (2/T)(z - 1)/(z + 1)."""
    return (1.0 + r * T / 2.0) / (1.0 - r * T / 2.0)


def tustin_zpk(
    zeros: NDArray[Any], poles: NDArray[Any], gain: float, sample_hz: float
) -> tuple[Array, Array]:
    """Tustin discretisation of a proper K(s) = gain Π(s - z)/Π(s - p): (num, den) in powers of
    z⁻¹ with den[0] = 1, real, built as a product of first-order factors (z - ρ)."""
    T = 1.0 / sample_hz
    m, n = len(zeros), len(poles)
    if m > n:
        raise ValueError("improper transfer function")
    k = gain * (2.0 / T) ** (m - n)
    num = np.array([1.0 + 0j])
    den = np.array([1.0 + 0j])
    for r in zeros:
        rho = _tustin_root(r, T)
        k *= 1.0 - r * T / 2.0
        num = np.convolve(num, [1.0, -rho])
    for _ in range(n - m):
        num = np.convolve(num, [1.0, 1.0])
    for r in poles:
        rho = _tustin_root(r, T)
        k /= 1.0 - r * T / 2.0
        den = np.convolve(den, [1.0, -rho])
    return np.real(k * num), np.real(den)
