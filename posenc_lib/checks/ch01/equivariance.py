"""Chapter 1's exercises: q3, the equivariance gap of any layer; q4, breaking the symmetry with a
position signal."""

from __future__ import annotations

from contextvars import ContextVar

import torch

from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, TENSOR, as_number, as_tensor, close, same_number
from posenc_lib.checks.ch01.setting import NOTEBOOK, _layer, _random_order
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q3: the equivariance gap -------------------------------------------------------------------------


def _gap(f, x, order, out_order=None, reduce="max"):
    """max |f(X[order]) - f(X)[out_order]| and the usual wrong variants of it."""
    diff = f(x[order]) - f(x)[order if out_order is None else out_order]
    if reduce == "signed":
        return float(diff.max())
    if reduce == "signed reversed":  # P f(X) - f(PX), without the absolute value
        return float((-diff).max())
    if reduce == "norm":
        return float(diff.norm())
    if reduce == "row norm":
        return float(diff.norm(dim=-1).max())
    return float(diff.abs().mean() if reduce == "mean" else diff.abs().max())


class EquivarianceGap(Question):
    name, function, points, notebook = "q3", "equivariance_gap", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "f(x[order]) - f(x)[order]",
        "f(x)[order]",
        "(a - b).abs().max()",
    )
    returns, references = FLOAT, ()  # the library has no gap of an arbitrary layer
    title = N_("Measure the equivariance gap of any layer")
    hints = (
        N_(
            "Compute f on the reordered input, x[order], and reorder f's output on the original "
            "input the same way."
        ),
        N_(
            "The gap is the largest absolute difference between the two tensors: "
            "(a - b).abs().max(), returned as a float."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 3)
        cases = []
        for positions, causal in ((False, False), (True, False), (False, True)):
            n_pos, dim, d_out = (
                (5, 6, 3)
                if seed == 0
                else (
                    draws.randint(6, 10, generator),
                    draws.randint(3, 9, generator),
                    draws.randint(2, 10, generator),
                )
            )
            while d_out in (dim, n_pos):  # the causal layer's D' differs from D and from T
                d_out = draws.randint(2, 10, generator)
            f = _layer(dim, seed, positions, causal, d_out if causal else None)
            # The two layers that see order get inputs on which a signed max differs from the
            # absolute one either way: with positions, the largest difference is positive and
            # the most negative one larger still in size (so max(d) fails); with the causal mask,
            # the reverse (so max(-d), the signed max of P f(X) - f(PX), fails).
            sign = {(True, False): 1.0, (False, True): -1.0}.get((positions, causal))
            while True:
                x = torch.randn(n_pos, dim, generator=generator)  # float32, like other inputs
                order = _random_order(n_pos, generator)
                diff = sign * (f(x[order]) - f(x)[order]) if sign else None  # (T, D')
                if sign is None or -float(diff.min()) > 1.1 * float(diff.max()) > 0:
                    break
            kind = _("with positions") if positions else (_("with a causal mask") if causal else _("plain"))  # fmt: skip
            width = f", f: (T, {dim}) -> (T, {d_out})" if causal else ""
            cases.append(Case((f, x, order), tr("f = an attention layer ({kind}){width}, x {shape}, order = {order}", kind=kind, width=width, shape=tuple(x.shape), order=order)))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        f, x, order = case.args
        got, problem = as_number(value, N_("The gap"))
        if problem:
            return problem
        want = _gap(f, x, order)
        if same_number(got, want):
            return None
        inverse = sorted(range(len(order)), key=order.__getitem__)
        mistakes = [
            (_gap(f, x, order, out_order=list(range(len(order)))), N_("you compared f(PX) with f(X) as it stands; the claim compares f(PX) with P f(X): reorder f(X)'s rows with the same order.")),
            (_gap(f, x, order, out_order=inverse), N_("you reordered f(X) with the inverse permutation; use the same `order` on both sides.")),
            (_gap(f, x, order, reduce="mean"), N_("the gap is the largest absolute difference, not the mean.")),
            (_gap(f, x, order, reduce="signed"), N_("take the absolute value before the max: a difference of -0.3 counts as much as +0.3.")),
            (_gap(f, x, order, reduce="signed reversed"), N_("take the absolute value before the max: a difference of -0.3 counts as much as +0.3 (whichever side you subtract from the other).")),
            (_gap(f, x, inverse), N_("you reordered both sides with the inverse permutation: PX is x[order], whose row i is row order[i] of x.")),
            (_gap(f, x, order, reduce="norm"), N_("the gap is the largest absolute entry, not the norm of the whole difference.")),
            (_gap(f, x, order, reduce="row norm"), N_("the gap is the largest absolute entry, not the largest row norm.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: same_number(got, wrong))
        if named:
            return named
        if got < 0:
            return _("A gap is a size: it cannot be negative.")
        return _(
            "Your gap differs from the largest |f(PX) - P f(X)|; check both sides of the difference."
        )


# -- q4: break the symmetry ---------------------------------------------------------------------------

# Each input's partner (the other input of its shape) and what the learner returned for it, for the
# one judgement under way in this thread: the grader judges several submissions at once in threads
# with the same question object, so the pairing must not live on the object.
_PARTNERS: ContextVar[dict | None] = ContextVar("q4_partners", default=None)


class AddPositions(Question):
    name, function, points, notebook = "q4", "add_positions", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "10000 ** (torch.arange(0, dim, 2",
        "0.1 * t in every column",
        "torch.stack((angles.sin(), angles.cos())",
    )
    returns = TENSOR
    references = (
        "posenc_lib.analysis.ch01_order.slot_vectors",
        "posenc_lib.absolute.sinusoidal_encoding",
    )
    title = N_("Break the symmetry with a position signal")
    hints = (
        N_(
            "Return x plus a (T, D) tensor whose row t depends only on t (and D), never on x's values."
        ),
        N_(
            "The same vector added to every row changes nothing about the order: each row must differ."
        ),
        N_(
            "Anything that grows or waves with t works here, e.g. 0.1 * t in every column, or "
            "chapter 3's sin and cos; keep the values around the size of the embeddings (0.1 to 1)."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 4)
        # One table longer than the others (12, then 13-24 rows), so a signal read from a table
        # of fixed length fails where the learner can see it.
        sizes = [(5, 8), (3, 6), (12, 4)] if seed == 0 else []
        for low, high in ((6, 11), (13, 25)) if seed else ():
            n_pos = draws.randint(low, high, generator)
            half = draws.randint(2, 9, generator)
            sizes.append((n_pos, 2 * half))
        cases = []
        for n_pos, dim in sizes:
            for _repeat in range(2):  # two inputs of the same shape: the signal must not change
                x = torch.randn(n_pos, dim, generator=generator)
                cases.append(Case((x,), tr("x of shape {shape}", shape=tuple(x.shape))))
        return cases

    def diagnose(self, case, value):
        (x,) = case.args
        got, problem = as_tensor(value, N_("The result"), tuple(x.shape))
        if problem:
            return problem
        signal = got - x.double()  # (T, D): what was added
        size = float(signal.abs().max())
        if size < 1e-12:
            return _(
                "Your function returns x unchanged: add a vector that depends on the position."
            )
        if size < 1e-4:
            return tr(
                "Your position vectors are too small for the check to see (largest entry {size:.0e}): it needs entries of at least 1e-4, next to word vectors whose entries are about 1.",
                size=size,
            )
        ratio = got / x.double()  # (T, D): constant along each row if x was only scaled
        if bool((ratio - ratio[:, :1]).abs().max() < 1e-4):
            return _(
                "Your function scales x instead of adding to it: add a position vector, x + signal."
            )
        if float((signal - signal[0]).abs().max()) < 1e-5 * (1 + size):  # float32 rounding of x + c
            if self._moves_with_the_words(case, signal):
                return _(
                    "What you add is one vector for every row, and it changes when the words change: two inputs of the same shape get different vectors, so it is read from x (or drawn at random), not from the position. A position signal depends only on the row t (and D)."
                )
            return _(
                "You add the same vector at every position, so every word gets the same nudge and attention is still order-blind. Make the vector depend on the position."
            )
        gap = _gap(_shifted_layer(signal, x.shape[1]), x.double(), _random_order(x.shape[0], draws.seeded(0, 5)))  # fmt: skip
        if gap < 1e-4:
            return tr(
                "Your position vectors barely change attention: reordering the words moves its outputs by {gap:.1e}, and the check needs at least 1e-4.",
                gap=gap,
            )
        return None

    def _judge(self, cases, outcomes):
        # diagnose() compares an input's signal with its partner's (the other input of its shape)
        values = [o.value if o.kind == "returned" else None for o in outcomes]
        partners = {}
        for first in range(0, len(values) - 1, 2):
            partners[id(cases[first])] = (cases[first + 1], values[first + 1])
            partners[id(cases[first + 1])] = (cases[first], values[first])
        token = _PARTNERS.set(partners)
        try:
            return super()._judge(cases, outcomes)
        finally:
            _PARTNERS.reset(token)  # nothing kept between checks

    def _moves_with_the_words(self, case, signal):
        """True when the partner input (same shape, other words) got a different signal."""
        other, value = (_PARTNERS.get() or {}).get(id(case), (None, None))
        try:
            added = torch.as_tensor(value).double() - other.args[0].double()
        except Exception:  # the partner failed or returned no tensor: its own verdict says so
            return False
        return added.shape == signal.shape and not close(added, signal)

    def diagnose_all(self, cases, values):
        for first, second in zip(range(0, len(cases), 2), range(1, len(cases), 2), strict=True):
            added = [
                torch.as_tensor(values[i]).double() - cases[i].args[0].double()
                for i in (first, second)
            ]
            if not close(added[0], added[1]):
                return _(
                    "What your function adds differs between two inputs of the same shape: a position signal must depend only on the position (no randomness, no dependence on the words)."
                )
        return None


def _shifted_layer(signal, dim):
    layer = _layer(dim, 0)
    return lambda x: layer(x + signal)
