"""Key switching over the RNS gadget and the automorphisms X -> X^g of ciphertexts."""

from __future__ import annotations

from . import ring


def key_switch(ops, q, special: int, c, ksk, add=None, digit_limbs: int = 1):
    """(c0', c1') (..., 2, L, n) with c0' + c1' s = c * target + small, for c (..., L, n) in coefficient
    form over q and a key-switching key (D, 2, L + 1, n) from target to s (D = digit_count(L, digit_limbs)):
    RNS digits of `digit_limbs` limbs of q each, inner product over q and P, then the division by P with
    rounding (mod-down), plus `add` (..., 2, L, n) in the same pass if given."""
    return ops.mod_down(_switched(ops, q, special, c, ksk, digit_limbs), q, special, add)


def digit_count(limbs: int, digit_limbs: int) -> int:
    """Key-switching digits of `digit_limbs` limbs over `limbs` limbs of q (the last may have fewer)."""
    return -(-limbs // digit_limbs)


def _switched(ops, q, special: int, c, ksk, digit_limbs: int = 1):
    """The key switch of c before its mod-down: (..., 2, L + 1, n) over q and P, coefficient form. Digit k
    holds c mod Q_k, the product of its limbs of q, plus a multiple of Q_k below digit_limbs Q_k (the fast
    base conversion's), which the key's gadget element (0 mod Q / Q_k) takes away."""
    qp = tuple(q) + (special,)
    digit_limbs = min(digit_limbs, len(qp) - 1)  # a level below one digit's limbs leaves one digit
    if digit_limbs == 1:
        digits = ring.ntt_digits(c, qp)  # (..., L, L + 1, n): limb j of c, already its digit, on every limb
    else:
        digits = ring.ntt(ops.digit_convert(c, q, qp, digit_limbs), qp)
    return ring.intt(ops.inner_product(digits, ksk, qp), qp)


def key_at_level(xp, ksk, limbs: int, digit_limbs: int = 1):
    """A key-switching key (D, 2, L + 1, n) cut to the first `limbs` limbs of q: the rows (digits) that hold
    them and the limbs q_0 .. q_{limbs-1} and P. The gadget element of digit k is 1 mod its limbs and 0 mod
    the others, so a digit cut short by the level still meets its rows exactly."""
    L = ksk.shape[-2] - 1
    if limbs == L:
        return ksk
    rows = digit_count(limbs, digit_limbs)
    return xp.ascontiguousarray(xp.concatenate([ksk[:rows, :, :limbs], ksk[:rows, :, L:]], axis=2))


def automorphism_switched(ops, q, special: int, c, galois_elt: int, ksk, digit_limbs: int = 1):
    """Data of ct(X^g) switched back to s with key_switch's method and the key of g, for 2-component data c
    (..., 2, L, n) in coefficient form: c1(X^g) switched, c0(X^g) added to the first part in the mod-down's pass
    (RnsOps.mod_down_rotated). The same residues as apply_automorphism with key_switch."""
    c1 = ops.automorphism(c[..., 1, :, :], galois_elt, q, ntt_form=False)
    switched = _switched(ops, q, special, c1, ksk, digit_limbs)
    return ops.mod_down_rotated(switched, q, special, c[..., 0, :, :], galois_elt)


def apply_automorphism(ops, c, galois_elt: int, q, switch):
    """Data of ct(X^g) switched back to s, for 2-component data c (..., 2, L, n) in coefficient form:
    c1(X^g) switched by `switch` (a function of (..., L, n) giving a new (..., 2, L, n) array, the key
    switch with the key of g), then c0(X^g) added into its first part in place."""
    switched = switch(ops.automorphism(c[..., 1, :, :], galois_elt, q, ntt_form=False))
    ops.automorphism_add(c[..., 0, :, :], galois_elt, q, switched[..., 0, :, :])
    return switched


__all__ = ["key_switch", "digit_count", "key_at_level", "apply_automorphism", "automorphism_switched"]
