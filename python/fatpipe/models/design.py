"""AQM controller design on the linearised fluid model: H2 (HSTCP-H2) and PI (Hollot 2001).

H2 (the seed's §4: de Santi, Fonseca, Lima; HSTCP-H2 of Santi, Fonseca, Lima, SBRC 2007)
-----------------------------------------------------------------------------------------
The paper synthesised a non-rational H2 controller for the delayed plant with Oliveira &
Geromel, "Synthesis of non-rational controllers for linear delay systems", Automatica 40(2),
2004 (Theorem 4-b), where the delay terms cancel and the optimum is rational. That LMI machinery
is not reproduced here. The equivalent, documented method used instead:

1. Plant: :func:`fatpipe.models.linear.linearize` at the operating point (``form="frozen"`` by
   default), x = [δW, δq], input δp(t - R0), measurement y = δq.
2. Delay: the delayed channel A1 x + B_u u (row 0 only) goes through the (n, n) Padé approximant
   of e^{-sR0} (``pade_order``, default 4: phase error < 4e-8 rad up to ωR0 = 1, far above the
   loop crossovers, ω_c R0 <= 0.14 on the grid of docs/models.md; the designs for orders 2..8
   agree). The designed loops are then checked with the exact delay (``closed_loop``).
3. Generalised plant (white noises w = [w_W, w_q, v], unit intensity)::

       x' = A x + B2 u + [σ_W e_W, σ_q e_q, 0] w
       z  = [diag(1, τ_z) C_z x ; ρ u]      C_z = [[0, 1], [N/R0, -1/R0]]   (seed §4.3)
       y  = δq + σ_y v

   - τ_z (``jitter_time``), default **R0**: the paper's C_z mixes units, δq in packets and
     δq' (the TCP rate deviation (N δW - δq)/R0) in packets/s, so the balance between its rows
     depends on the unit of time. The queue equation R0 δq' = N δW - δq gives, along the
     model's trajectories, ∫ (δq² + τ_z² δq'²) dt = ∫ ((τ_z/R0)² (N δW)² + (1 - τ_z²/R0²) δq²) dt
     + const. Read in seconds (τ_z = 1 s, the printed matrix) with R0 < 1 s, the cost *rewards*
     queue deviations: the optimal state feedback's gain on δq is negative (p falls when the
     queue rises) and where it dominates, at small windows and short RTTs (a0/(W0 R0²) beyond
     0.5 to 8 s⁻² on the grid of docs/models.md, depending on the noise), even the full-order
     controller's DC gain is negative. With τ_z = R0 (time in round trips; z2 = N δW - δq, the
     packets the flows add to the queue in one RTT) the queue term vanishes: the state feedback
     acts on the windows only, with p rising with them, and the queue enters through the
     estimate of the windows. It is the largest τ_z that does not reward queue deviations.
   - σ_W: the randomness of the window process. The seed calls Eqs. 3–5 *stochastic*
     differential equations: a flow's window jumps by -b W at the Poisson loss events (rate
     W p/R); the compensated jump process has intensity b0² W0³ p0/R0 = a0 b0 W0/R0 per flow, and
     the average of N independent flows 1/N of it: σ_W = sqrt(a0 b0 W0/(R0 N)) packets/√s.
   - σ_q: the noise ω_q of Eq. 4, default **sqrt(C)**: the packet-level arrival noise of the
     flows themselves (arrivals at rate C as a Poisson stream have intensity C packets²/s, the
     diffusion approximation of the queue). UDP on/off traffic adds to it (the seed's w, "noise
     produced by UDP flows"): :func:`onoff_noise`; the paper's traffic (20 % on/off CBR, periods
     of about 1 s) gives σ_q = 0.1 C (:func:`paper_weights`). Where it dominates the window noise,
     the Kalman filter attributes queue motion to UDP and the controller becomes weak (with
     σ_q = 0.1 C, L(0) falls to a few hundredths at some points of the grid).
   - σ_y: the queue is an integer sampled at f_s: rounding noise of variance 1/12 packet² per
     sample, as a continuous white noise of intensity (1/12)/f_s: σ_y = sqrt(1/(12 f_s))
     packets·√s (3.2e-3 at 8333 Hz). With σ_q it sets the fast pole (σ_q/σ_y rad/s).
   - ρ (the seed's D_zu, not printed): Bryson's normalisation of *relative* deviations, a change
     of p by p0 weighs as much as a change of q by q0: ρ = q0/p0 packets per unit probability.
   - The noise enters the state (Eq. 4: ω_q in q'), not only the measurement as Eq. 6 prints
     (D_yw w): with the plant open-loop stable and noise in y alone, the H2 optimum would be
     K = 0. z excludes the noise (no feedthrough), as in the paper's Eq. 6.
4. H2 synthesis: the two algebraic Riccati equations of the standard H2 (LQG) problem (Doyle,
   Glover, Khargonekar, Francis, IEEE TAC 34(8), 1989; Zhou, Doyle, Glover 1996, Ch. 14) with
   ``scipy.linalg.solve_continuous_are``, in states scaled by (W0, q0), u by p0, y by q0.
5. Reduction of the (2 + pade_order)-state controller to 2 states (Algorithm 1's order) by
   balanced truncation (``match_dc=False``, default): truncation keeps the controller strictly
   proper, so the loop's H2 norm stays finite with white measurement noise (residualisation,
   ``match_dc=True``, adds a feedthrough and makes it infinite). The reduced loop's H2 norm is
   reported beside the full one (:attr:`H2Design.h2_norm_reduced`; within 0.2 % on the grid).
   Truncation may lose some DC gain (2 % at the inferred point, up to half at W0 ≈ 4.6); the
   sign problems of the previous defaults were the full-order optimum's, not the reduction's.
6. Tustin (bilinear) discretisation at ``sample_hz`` (8333 Hz, the seed's §5), giving
   C(z) = (a + b z⁻¹ - c z⁻²)/(1 - d z⁻¹ - e z⁻²), the coefficients of Algorithm 1.

Every weight is a parameter (:class:`H2Weights`); ``None`` means the default above.

PI (Hollot, Misra, Towsley, Gong, "On designing improved controllers for AQM routers
supporting TCP flows", IEEE INFOCOM 2001; IEEE TAC 47(6), 2002, §V)
---------------------------------------------------------------------------------------
C_PI(s) = K (s/z + 1)/s on Hollot's rational plant P(s) = k e^{-sR0}/((s + p_w)(s + 1/R0)):

- z = p_w, the window ("TCP") pole 2 a0 N/(R0² C) (2N/(R0² C) for Reno): the zero cancels it;
- the unity-gain crossover ω_g = β min(p_w, 1/R0) (``crossover_fraction`` β, default 1);
- K from |C_PI(jω_g) P(jω_g)| = 1: K = ω_g |jω_g + 1/R0| p_w / |k| (for Reno,
  K = ω_g |jω_g R0 + 1| (2N)²/(R0 C)³, Hollot's formula).

Hollot's example: N = 60, C = 3750 packets/s, T_p = 0.2 s, q0 = 175 (R0 = 0.2467 s) gives
K = 9.64e-6 and z = 0.53 rad/s with β = 1; Tustin at 160 Hz with z rounded to 0.53 gives ns-2's
defaults a_ = 1.822e-5, b_ = 1.816e-5 (``tcl/lib/ns-default.tcl``; ``queue/pi.cc`` cites the
INFOCOM 2001 paper). Discretisation: a = K (1/z + T/2), b = K (1/z - T/2), T = 1/f_s, for ns-2's
``p = a (q - q_ref) - b (q_old - q_ref) + p_old``.

>>> from fatpipe.models.design import design_h2, design_pi, paper_operating_point
>>> op = paper_operating_point()
>>> h2 = design_h2(op)
>>> h2.controller.kind, h2.controller.sample_hz, h2.controller.dc_gain() > 0
('h2', 8333.0, True)
>>> design_pi(op).to_dict()["kind"]
'pi'
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla  # type: ignore[import-untyped]
from numpy.typing import NDArray

from fatpipe.models.discrete import H2Controller, PIController
from fatpipe.models.errors import DesignError
from fatpipe.models.linear import LinearPlant, OperatingPoint, equilibrium, linearize
from fatpipe.models.lti import balanced_reduction, pade_plant, ss_eval, ss_zpk, tustin_zpk
from fatpipe.models.network import Network, capacity_pkts

Array = NDArray[Any]

__all__ = [
    "GeneralizedPlant",
    "H2Design",
    "H2Weights",
    "PIDesign",
    "design_h2",
    "design_pi",
    "generalized_plant",
    "onoff_noise",
    "paper_comparison",
    "paper_operating_point",
    "paper_weights",
]


@dataclass(frozen=True)
class H2Weights:
    """Every weight of the H2 problem (docs/models.md, "H2 design choices").

    ``None`` means the documented default computed at the operating point.
    """

    sigma_w: float | None = None  # window noise, packets/√s (per-flow average window)
    sigma_q: float | None = None  # noise into q' (arrivals, UDP), packets/s/√Hz = packets/√s
    sigma_y: float | None = None  # queue measurement noise, packets·√s
    rho: float | None = None  # D_zu: weight of δp in z, packets per unit probability
    jitter_time: float | None = None  # τ_z, s: the jitter row of z is τ_z·δq' (packets)
    pade_order: int = 4
    match_dc: bool = False


@dataclass(frozen=True)
class GeneralizedPlant:
    """ẋ = A x + B1 w + B2 u, z = C1 x + D12 u, y = C2 x + D21 w, in scaled units."""

    A: Array
    B1: Array
    B2: Array
    C1: Array
    D12: Array
    C2: Array
    D21: Array
    x_scale: Array  # physical state = x_scale * scaled state (first two: δW, δq)
    u_scale: float  # δp = u_scale * u
    y_scale: float  # δq measured = y_scale * y
    weights: dict[str, float]


def onoff_noise(rate: float, period: float) -> float:
    """σ_q (packets/√s) of on/off traffic into the queue: a source sending ``rate`` packets/s
    while on, on and off for exponential periods of mean ``period`` s each, has a rate of
    variance rate²/4 correlated over period/2 s, hence the low-frequency intensity
    rate·sqrt(period)/2. Independent sources add in quadrature with each other and with the
    default sqrt(C)."""
    if not (rate >= 0 and math.isfinite(rate)) or not (period > 0 and math.isfinite(period)):
        raise DesignError("sigma_q", f"on/off noise needs rate >= 0 and period > 0 (got {rate}, {period})")
    return rate * math.sqrt(period) / 2.0


def _defaults(op: OperatingPoint, w: H2Weights, sample_hz: float) -> dict[str, float]:
    n, c = op.n_flows, op.capacity
    sigma_w = w.sigma_w
    if sigma_w is None:
        sigma_w = math.sqrt(op.a0 * op.b0 * op.W0 / (op.R0 * n))
    sigma_q = math.sqrt(c) if w.sigma_q is None else w.sigma_q
    sigma_y = math.sqrt(1.0 / (12.0 * sample_hz)) if w.sigma_y is None else w.sigma_y
    rho = op.q0 / op.p0 if w.rho is None else w.rho
    tau_z = op.R0 if w.jitter_time is None else w.jitter_time
    for name, v in (
        ("sigma_w", sigma_w), ("sigma_q", sigma_q), ("sigma_y", sigma_y), ("rho", rho),
        ("jitter_time", tau_z),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (v >= 0 and math.isfinite(v)):
            raise DesignError(name, f"must be a finite number >= 0 (got {v!r})")
    if sigma_y <= 0:
        raise DesignError("sigma_y", "must be > 0 (the H2 problem needs measurement noise)")
    if rho <= 0:
        raise DesignError("rho", "must be > 0 (the H2 problem needs a control weight)")
    if sigma_w == 0 and sigma_q == 0:
        raise DesignError("sigma_q", "sigma_w and sigma_q cannot both be 0 (no disturbance)")
    return {
        "sigma_w": float(sigma_w), "sigma_q": float(sigma_q), "sigma_y": float(sigma_y),
        "rho": float(rho), "jitter_time": float(tau_z),
    }


def generalized_plant(plant: LinearPlant, weights: H2Weights, sample_hz: float) -> GeneralizedPlant:
    """The H2 problem of ``plant`` with the delay replaced by its Padé approximant."""
    op = plant.op
    wt = _defaults(op, weights, sample_hz)
    xs = np.array([op.W0, op.q0])
    us, ys = op.p0, op.q0
    T = np.diag(xs)
    A0 = np.linalg.solve(T, plant.A0 @ T)
    A1 = np.linalg.solve(T, plant.A1 @ T)
    Bu = np.linalg.solve(T, plant.B_u) * us
    A, B2 = pade_plant(A0, A1, Bu, plant.delay, weights.pade_order)
    n = A.shape[0]
    B1 = np.zeros((n, 3))
    B1[0, 0] = wt["sigma_w"] / xs[0]
    B1[1, 1] = wt["sigma_q"] / xs[1]
    C1 = np.zeros((3, n))
    C1[:2, :2] = np.diag([1.0, wt["jitter_time"]]) @ plant.C_z @ T
    D12 = np.array([[0.0], [0.0], [wt["rho"] * us]])
    C2 = np.zeros((1, n))
    C2[0, :2] = plant.C_y @ T / ys
    D21 = np.array([[0.0, 0.0, wt["sigma_y"] / ys]])
    return GeneralizedPlant(
        A=A, B1=B1, B2=B2, C1=C1, D12=D12, C2=C2, D21=D21, x_scale=xs, u_scale=us, y_scale=ys,
        weights=wt,
    )


def _h2_synthesis(g: GeneralizedPlant) -> tuple[Array, Array, Array, float]:
    """Standard H2 (LQG) output feedback by two Riccati equations (Doyle, Glover, Khargonekar,
    Francis, IEEE TAC 34(8), 1989, §III; Zhou, Doyle, Glover, "Robust and Optimal Control",
    1996, Ch. 14). C1ᵀD12 = 0 and B1 D21ᵀ = 0 here. Returns the controller (Ak, Bk, Ck) from y
    to u in scaled units and the optimal closed-loop H2 norm."""
    R = g.D12.T @ g.D12
    V = g.D21 @ g.D21.T
    X = sla.solve_continuous_are(g.A, g.B2, g.C1.T @ g.C1, R)
    Y = sla.solve_continuous_are(g.A.T, g.C2.T, g.B1 @ g.B1.T, V)
    F = -np.linalg.solve(R, g.B2.T @ X)
    L = Y @ g.C2.T @ np.linalg.inv(V)
    Ak = g.A + g.B2 @ F - L @ g.C2
    norm2 = float(np.trace(g.B1.T @ X @ g.B1) + np.trace(R @ F @ Y @ F.T))
    return Ak, L, F, math.sqrt(norm2)


def closed_loop_h2(g: GeneralizedPlant, Ak: Array, Bk: Array, Ck: Array, Dk: Array) -> float:
    """H2 norm (scaled units) of the loop of ``g`` with the controller u = K y, or inf if the
    loop is unstable (the controller may have a feedthrough Dk; then D21 must be 0-free)."""
    n, m = g.A.shape[0], Ak.shape[0]
    Dk = np.asarray(Dk).reshape(1, 1)
    Acl = np.block([[g.A + g.B2 @ Dk @ g.C2, g.B2 @ Ck], [Bk @ g.C2, Ak]])
    Bcl = np.vstack([g.B1 + g.B2 @ Dk @ g.D21, Bk @ g.D21])
    Ccl = np.hstack([g.C1 + g.D12 @ Dk @ g.C2, g.D12 @ Ck])
    Dcl = g.D12 @ Dk @ g.D21
    if np.max(np.linalg.eigvals(Acl).real) >= 0 or np.any(np.abs(Dcl) > 0):
        return math.inf
    P = sla.solve_continuous_lyapunov(Acl, -Bcl @ Bcl.T)
    return math.sqrt(float(np.trace(Ccl @ P @ Ccl.T)))


@dataclass(frozen=True)
class H2Design:
    """An H2 design: the full-order controller, its reduction, its discretisation."""

    op: OperatingPoint
    plant: LinearPlant
    weights: dict[str, float]
    pade_order: int
    sample_hz: float
    full: tuple[Array, Array, Array, Array]  # (A, B, C, D), physical units: δq -> δp
    reduced: tuple[Array, Array, Array, Array]
    hsv: Array
    num: Array  # reduced continuous C(s), descending powers of s (for display; use zpk)
    den: Array
    controller: H2Controller
    h2_norm_full: float
    h2_norm_reduced: float

    def continuous_tf(self, s: NDArray[Any], which: str = "reduced") -> NDArray[Any]:
        A, B, C, D = self.reduced if which == "reduced" else self.full
        return ss_eval(A, B, C, D, s)

    def continuous_poles(self) -> NDArray[Any]:
        return ss_zpk(*self.reduced)[1]

    def continuous_zeros(self) -> NDArray[Any]:
        return ss_zpk(*self.reduced)[0]

    def continuous_dc_gain(self, which: str = "reduced") -> float:
        A, B, C, D = self.reduced if which == "reduced" else self.full
        return float((D - C @ np.linalg.solve(A, B))[0, 0])

    def to_dict(self) -> dict[str, Any]:
        return self.controller.to_dict()


def design_h2(
    op: OperatingPoint,
    *,
    sample_hz: float = 8333.0,
    weights: H2Weights = H2Weights(),
    form: str = "frozen",
) -> H2Design:
    """The HSTCP-H2 controller for the operating point ``op`` (module docstring)."""
    if not isinstance(sample_hz, (int, float)) or not sample_hz > 0 or math.isinf(sample_hz):
        raise DesignError("sample_hz", f"must be a finite number > 0 (got {sample_hz!r})")
    if weights.pade_order < 1 or weights.pade_order > 12:
        raise DesignError("pade_order", f"must lie in 1..12 (got {weights.pade_order})")
    plant = linearize(op, form=form)  # type: ignore[arg-type]
    g = generalized_plant(plant, weights, sample_hz)
    Ak, Bk, Ck, norm_full = _h2_synthesis(g)
    # physical units: u = δp = us·ũ, ỹ = δq / ys
    Bk_p, Ck_p = Bk / g.y_scale, Ck * g.u_scale
    full = (Ak, Bk_p, Ck_p, np.zeros((1, 1)))
    if np.max(np.linalg.eigvals(Ak).real) >= 0:
        raise DesignError("weights", "the H2 controller is unstable; reduction needs a stable one")
    Ar, Br, Cr, Dr, hsv = balanced_reduction(Ak, Bk, Ck, np.zeros((1, 1)), 2, weights.match_dc)
    norm_red = closed_loop_h2(g, Ar, Br, Cr, Dr)
    reduced = (Ar, Br / g.y_scale, Cr * g.u_scale, Dr * g.u_scale / g.y_scale)
    zeros, poles, gain = ss_zpk(*reduced)
    num = np.real(gain * np.poly(zeros)) if len(zeros) else np.array([gain])
    den = np.real(np.poly(poles))
    bz, az = tustin_zpk(zeros, poles, gain, sample_hz)
    if len(bz) != 3 or len(az) != 3:
        # A pole-zero cancellation in the reduction leaves a lower order than Algorithm 1's
        # second-order law (seen with sigma_w = 0 at one flow): no controller of its form.
        raise DesignError("weights", f"the reduced controller degenerates to order {len(az) - 1} "
                                     "(a pole-zero cancellation); change the weights")
    ctl = H2Controller(
        sample_hz=float(sample_hz), q0=op.q0, p0=op.p0, a=float(bz[0]), b=float(bz[1]),
        c=float(-bz[2]), d=float(-az[1]), e=float(-az[2]),
    )
    return H2Design(
        op=op, plant=plant, weights=g.weights, pade_order=weights.pade_order, sample_hz=float(sample_hz),
        full=full, reduced=reduced, hsv=hsv, num=num, den=np.asarray(den, dtype=float), controller=ctl,
        h2_norm_full=norm_full, h2_norm_reduced=norm_red,
    )


@dataclass(frozen=True)
class PIDesign:
    """A PI design: C_PI(s) = K (s/z + 1)/s with crossover ``omega_g`` and its discretisation."""

    op: OperatingPoint
    plant: LinearPlant
    K: float
    z: float
    omega_g: float
    controller: PIController

    def continuous_tf(self, s: NDArray[Any]) -> NDArray[Any]:
        s = np.asarray(s, dtype=complex)
        return self.K * (s / self.z + 1.0) / s

    def to_dict(self) -> dict[str, Any]:
        return self.controller.to_dict()


def design_pi(
    op: OperatingPoint,
    *,
    sample_hz: float = 160.0,
    crossover_fraction: float = 1.0,
    form: str = "frozen",
) -> PIDesign:
    """Hollot et al.'s PI design at ``op`` (module docstring)."""
    if not isinstance(sample_hz, (int, float)) or not sample_hz > 0 or math.isinf(sample_hz):
        raise DesignError("sample_hz", f"must be a finite number > 0 (got {sample_hz!r})")
    if not 0 < crossover_fraction <= 1:
        raise DesignError(
            "crossover_fraction", f"must lie in (0, 1] (got {crossover_fraction})"
        )
    plant = linearize(op, form=form)  # type: ignore[arg-type]
    p_w, p_q = plant.hollot_poles()
    if not p_w > 0:
        raise DesignError("form", f"the window pole {p_w:.3g} is not stable; no PI design")
    k = abs(plant.B_u[0, 0] * op.n_flows / op.R0)
    z = p_w
    wg = crossover_fraction * min(p_w, p_q)
    K = wg * abs(1j * wg + p_w) * abs(1j * wg + p_q) / (k * abs(1j * wg / z + 1.0))
    T = 1.0 / sample_hz
    ctl = PIController(
        sample_hz=float(sample_hz), q_ref=op.q0, a=float(K * (1.0 / z + T / 2.0)),
        b=float(K * (1.0 / z - T / 2.0)), p0=op.p0,
    )
    return PIDesign(op=op, plant=plant, K=float(K), z=float(z), omega_g=float(wg), controller=ctl)


#: The inferred operating point of the paper (docs/models.md, "Operating point"): 1 Gb/s with
#: 1500-byte packets (C = 83 333 packets/s; 8333 Hz = C/10), T_p = 0.2 s (BDP 16 667 packets,
#: buffer 3333 = 20 % of it, as the paper states), HSTCP (RFC 3649). Not printed: N0 and q0.
PAPER_LINK_BPS = 1e9
PAPER_PACKET_BYTES = 1500.0
PAPER_PROP_DELAY = 0.2
PAPER_BUFFER = 3333.0
PAPER_SAMPLE_HZ = 8333.0


def paper_operating_point(n_flows: float = 10.0, q0: float | None = None, response: str = "hstcp") -> OperatingPoint:
    """The inferred operating point: N0 = ``n_flows`` (default 10), q0 default B/2 = 1666.5."""
    net = Network(
        n_flows=n_flows, capacity=capacity_pkts(PAPER_LINK_BPS, PAPER_PACKET_BYTES),
        prop_delay=PAPER_PROP_DELAY, buffer=PAPER_BUFFER, response=response,
    )
    return equilibrium(net, PAPER_BUFFER / 2.0 if q0 is None else q0)


#: The paper's UDP traffic (seed §5): 20 % of the load is CBR over UDP, "started and stopped at
#: different time intervals" (no schedule printed; periods of about 1 s assumed).
PAPER_UDP_SHARE = 0.2
PAPER_UDP_PERIOD = 1.0


def paper_weights(op: OperatingPoint, **kw: Any) -> H2Weights:
    """The default weights with the paper's UDP noise, σ_q = onoff_noise(0.2 C, 1 s) = 0.1 C
    (instead of the default sqrt(C)): the weights for comparing with the printed controller.
    Other :class:`H2Weights` fields may be given as keywords."""
    return H2Weights(sigma_q=onoff_noise(PAPER_UDP_SHARE * op.capacity, PAPER_UDP_PERIOD), **kw)


def _real(v: complex) -> float | complex:
    return float(v.real) if abs(v.imag) < 1e-12 else complex(v)


def paper_comparison(ctl: H2Controller) -> list[dict[str, Any]]:
    """Rows ``{"quantity", "ours", "paper"}`` comparing ``ctl`` with the printed coefficients
    (seed §4.5, +e reading): a..e, the poles and zeros in z, the DC gain."""
    from fatpipe.models.discrete import PAPER_H2

    rows: list[dict[str, Any]] = []
    for name in ("a", "b", "c", "d", "e"):
        rows.append({"quantity": name, "ours": getattr(ctl, name), "paper": getattr(PAPER_H2, name)})
    for label, f in (("pole", H2Controller.poles), ("zero", H2Controller.zeros)):
        ours = sorted(f(ctl), key=lambda v: -v.real)
        paper = sorted(f(PAPER_H2), key=lambda v: -v.real)
        for i, (o, p) in enumerate(zip(ours, paper)):
            rows.append({"quantity": f"{label} {i + 1}", "ours": _real(o), "paper": _real(p)})
    rows.append({"quantity": "DC gain", "ours": ctl.dc_gain(), "paper": PAPER_H2.dc_gain()})
    return rows
