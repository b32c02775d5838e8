"""The time loops of RNN, GRU and LSTM on resolved arrays (rnn.py reads the node and arranges its inputs).

Everything is time-major and direction-stacked: x_proj [D, T, B, G*H] is X @ W^T (+ the biases that can be
added up front) for every step at once, one GEMM; the loop then does one batched h @ R^T per step for all
directions together (the reverse direction walks t = T-1 .. 0 in the same step). A batch entry past its
sequence length keeps its state and writes zeros to Y, which also makes the reverse direction start at
each sequence's own last step. The time loop itself is inherent: step t needs the state of step t - 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Activation = Callable[[np.ndarray], np.ndarray]


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-x)) as 0.5 * tanh(x / 2) + 0.5: never overflows, and one transcendental per element."""
    y = np.tanh(x * 0.5)
    y *= 0.5
    y += 0.5
    return y


def _make(name: str, alpha: float, beta: float) -> Activation:
    table: dict[str, Activation] = {
        "relu": lambda x: np.maximum(x, 0),
        "tanh": np.tanh,
        "sigmoid": _sigmoid,
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "elu": lambda x: np.where(x >= 0, x, alpha * np.expm1(np.minimum(x, 0))),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.logaddexp(0, x),
    }
    return table[name]


# (alpha, beta) each activation reads from activation_alpha/beta, with the defaults of the ONNX operator
ACTIVATION_ARGS: dict[str, tuple[float | None, float | None]] = {
    "relu": (None, None), "tanh": (None, None), "sigmoid": (None, None), "softsign": (None, None),
    "softplus": (None, None), "affine": (1.0, 0.0), "leakyrelu": (0.01, None), "thresholdedrelu": (1.0, None),
    "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, None),
}


@dataclass(frozen=True)
class ActivationSpec:
    name: str  # lower case, a key of ACTIVATION_ARGS
    alpha: float = 0.0
    beta: float = 0.0

    def fn(self) -> Activation:
        return _make(self.name, self.alpha, self.beta)


class Acts:
    """One activation slot (f, g or h) for every direction: applied once to the direction-stacked array
    when all directions agree, else direction by direction."""

    def __init__(self, specs: Sequence[ActivationSpec]) -> None:
        self.same = len(set(specs)) == 1
        self.fns = [s.fn() for s in specs]

    def __call__(self, x: np.ndarray) -> np.ndarray:
        if self.same:
            return self.fns[0](x)
        return np.stack([fn(x[d]) for d, fn in enumerate(self.fns)])


@dataclass
class Sequences:
    """The resolved inputs of one call, direction-stacked and in *step order*: a reverse direction's time
    axis is flipped once up front, so loop step s reads x_proj[:, s] for every direction (a view)."""

    x_proj: np.ndarray  # [D, T, B, G*H]: X @ W^T plus the biases that can be added before the loop
    r_t: np.ndarray  # [D, H, G*H]: R transposed (contiguous, so matmul runs on BLAS) for h @ R^T
    reverse: np.ndarray  # [D] bool: this direction walks time backwards
    clip: float | None
    valid: np.ndarray | None = None  # [T, D, B, 1] in step order: within its sequence; None: always

    def __post_init__(self) -> None:
        self._partial = [] if self.valid is None else [not bool(v.all()) for v in self.valid]

    @classmethod
    def build(cls, x_proj: np.ndarray, r_t: np.ndarray, lens: np.ndarray | None, reverse: np.ndarray,
              clip: float | None) -> Sequences:
        """From x_proj in time order and the valid length of each batch entry (None: the whole sequence)."""
        steps = x_proj.shape[1]
        stepped = np.stack([x_proj[d, ::-1] if rev else x_proj[d] for d, rev in enumerate(reverse)])
        valid = None
        if lens is not None and bool((lens < steps).any()):
            s = np.arange(steps)[:, None]
            t = np.where(reverse[None, :], steps - 1 - s, s)  # [T, D]: the time index of step s
            valid = (t[..., None] < lens[None, None, :])[..., None]
        return cls(stepped, r_t, reverse, clip, valid)

    @property
    def steps(self) -> int:
        return self.x_proj.shape[1]

    def mask(self, s: int) -> np.ndarray | None:
        """[D, B, 1] where step s is inside each sequence; None when it is inside all of them."""
        return self.valid[s] if self.valid is not None and self._partial[s] else None

    def clipped(self, x: np.ndarray) -> np.ndarray:
        return x if self.clip is None else np.clip(x, -self.clip, self.clip)

    def in_time_order(self, y: np.ndarray) -> np.ndarray:
        """Y [T, D, B, H] written in step order, with the reverse directions' steps put back in time order."""
        for d, rev in enumerate(self.reverse):
            if rev:
                y[:, d] = y[::-1, d].copy()
        return y


def _keep(mask: np.ndarray | None, new: np.ndarray, old: np.ndarray) -> np.ndarray:
    """The new state inside the sequence, the old one past its end."""
    return new if mask is None else np.where(mask, new, old)


def _emit(mask: np.ndarray | None, new: np.ndarray) -> np.ndarray:
    """What Y records: the new state inside the sequence, zeros past its end."""
    return new if mask is None else np.where(mask, new, 0)


def run_rnn(seq: Sequences, h0: np.ndarray, f: Acts) -> tuple[np.ndarray, np.ndarray]:
    """H_t = f(X_t W^T + H_{t-1} R^T + Wb + Rb). Returns Y [T, D, B, H] and the last H [D, B, H]."""
    h = h0
    y = np.empty((seq.steps, *h0.shape), dtype=h0.dtype)
    for s in range(seq.steps):
        mask = seq.mask(s)
        h_new = f(seq.clipped(seq.x_proj[:, s] + np.matmul(h, seq.r_t)))
        y[s] = _emit(mask, h_new)
        h = _keep(mask, h_new, h)
    return seq.in_time_order(y), h


def run_gru(seq: Sequences, h0: np.ndarray, f: Acts, g: Acts, r_bias_h: np.ndarray | None,
            linear_before_reset: bool) -> tuple[np.ndarray, np.ndarray]:
    """Gates z, r, h. Default: h~ = g(X Wh + (r * H) Rh + Rbh + Wbh); with linear_before_reset:
    h~ = g(X Wh + r * (H Rh + Rbh) + Wbh) (then Rbh is r_bias_h, not folded into x_proj)."""
    h = h0
    n = h0.shape[-1]
    y = np.empty((seq.steps, *h0.shape), dtype=h0.dtype)
    r_zr, r_h = np.ascontiguousarray(seq.r_t[..., :2 * n]), np.ascontiguousarray(seq.r_t[..., 2 * n:])
    for s in range(seq.steps):
        mask, xp = seq.mask(s), seq.x_proj[:, s]
        if linear_before_reset:  # one GEMM for all three gates
            hr = np.matmul(h, seq.r_t)
            zr = f(seq.clipped(xp[..., :2 * n] + hr[..., :2 * n]))
            rec = hr[..., 2 * n:] if r_bias_h is None else hr[..., 2 * n:] + r_bias_h
            cand = g(seq.clipped(xp[..., 2 * n:] + zr[..., n:] * rec))
        else:
            zr = f(seq.clipped(xp[..., :2 * n] + np.matmul(h, r_zr)))
            cand = g(seq.clipped(xp[..., 2 * n:] + np.matmul(zr[..., n:] * h, r_h)))
        z = zr[..., :n]
        h_new = cand + z * (h - cand)  # (1 - z) * h~ + z * H
        y[s] = _emit(mask, h_new)
        h = _keep(mask, h_new, h)
    return seq.in_time_order(y), h


def run_lstm(seq: Sequences, h0: np.ndarray, c0: np.ndarray, peep: np.ndarray | None, acts: tuple[Acts, Acts, Acts],
             input_forget: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gates i, o, f, c (ONNX's order) with optional peepholes peep [D, 3H] (i, o, f):
    i = f(. + Pi * C), f = f(. + Pf * C), C' = f * C + i * g(.), o = f(. + Po * C'), H' = o * h(C').
    input_forget couples the gates: f = 1 - i. Returns Y [T, D, B, H], the last H and the last C."""
    f, g, act_h = acts
    h, c = h0, c0
    n = h0.shape[-1]
    y = np.empty((seq.steps, *h0.shape), dtype=h0.dtype)
    for s in range(seq.steps):
        mask = seq.mask(s)
        gates = seq.x_proj[:, s] + np.matmul(h, seq.r_t)
        if peep is None and not input_forget:  # i, o, f side by side: one activation call for the three
            iof = f(seq.clipped(gates[..., :3 * n]))
            i, o, forget = iof[..., :n], iof[..., n:2 * n], iof[..., 2 * n:]
            c_new = forget * c + i * g(seq.clipped(gates[..., 3 * n:]))
        else:
            i, forget, c_new = _peephole_cell(seq, gates, c, peep, f, g, input_forget)
            po = 0 if peep is None else peep[:, None, n:2 * n] * c_new
            o = f(seq.clipped(gates[..., n:2 * n] + po))
        h_new = o * act_h(c_new)
        y[s] = _emit(mask, h_new)
        h, c = _keep(mask, h_new, h), _keep(mask, c_new, c)
    return seq.in_time_order(y), h, c


def _peephole_cell(seq: Sequences, gates: np.ndarray, c: np.ndarray, peep: np.ndarray | None, f: Acts, g: Acts,
                   input_forget: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(i, f, C') when the gates read the cell state (peepholes) or are coupled (input_forget)."""
    n = c.shape[-1]
    pi = 0 if peep is None else peep[:, None, :n] * c
    i = f(seq.clipped(gates[..., :n] + pi))
    if input_forget:
        forget = 1 - i
    else:
        pf = 0 if peep is None else peep[:, None, 2 * n:] * c
        forget = f(seq.clipped(gates[..., 2 * n:3 * n] + pf))
    return i, forget, forget * c + i * g(seq.clipped(gates[..., 3 * n:]))
