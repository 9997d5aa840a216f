"""Key switching over the RNS gadget and the automorphisms X -> X^g of ciphertexts."""

from __future__ import annotations

from . import ring


def key_switch(ops, q, special: int, c, ksk, add=None):
    """(c0', c1') (..., 2, L, n) with c0' + c1' s = c * target + small, for c (..., L, n) in coefficient
    form over q and a key-switching key (L, 2, L + 1, n) from target to s: RNS digits [c]_{q_j}, inner
    product over q and P, then the division by P with rounding (mod-down), plus `add` (..., 2, L, n) in
    the same pass if given."""
    return ops.mod_down(_switched(ops, q, special, c, ksk), q, special, add)


def _switched(ops, q, special: int, c, ksk):
    """The key switch of c before its mod-down: (..., 2, L + 1, n) over q and P, coefficient form."""
    qp = tuple(q) + (special,)
    digits = ring.ntt_digits(c, qp)  # (..., L, L + 1, n): digit j on every limb
    return ring.intt(ops.inner_product(digits, ksk, qp), qp)


def key_at_level(xp, ksk, limbs: int):
    """A key-switching key (L, 2, L + 1, n) cut to the first `limbs` limbs of q: its first `limbs` rows
    (digits) and the limbs q_0 .. q_{limbs-1} and P (the RNS gadget is exact limb by limb)."""
    L = ksk.shape[0]
    if limbs == L:
        return ksk
    return xp.ascontiguousarray(xp.concatenate([ksk[:limbs, :, :limbs], ksk[:limbs, :, L:]], axis=2))


def automorphism_switched(ops, q, special: int, c, galois_elt: int, ksk):
    """Data of ct(X^g) switched back to s with key_switch's method and the key of g, for 2-component data c
    (..., 2, L, n) in coefficient form: c1(X^g) switched, c0(X^g) added to the first part in the mod-down's pass
    (RnsOps.mod_down_rotated). The same residues as apply_automorphism with key_switch."""
    c1 = ops.automorphism(c[..., 1, :, :], galois_elt, q, ntt_form=False)
    return ops.mod_down_rotated(_switched(ops, q, special, c1, ksk), q, special, c[..., 0, :, :], galois_elt)


def apply_automorphism(ops, c, galois_elt: int, q, switch):
    """Data of ct(X^g) switched back to s, for 2-component data c (..., 2, L, n) in coefficient form:
    c1(X^g) switched by `switch` (a function of (..., L, n) giving a new (..., 2, L, n) array, the key
    switch with the key of g), then c0(X^g) added into its first part in place."""
    switched = switch(ops.automorphism(c[..., 1, :, :], galois_elt, q, ntt_form=False))
    ops.automorphism_add(c[..., 0, :, :], galois_elt, q, switched[..., 0, :, :])
    return switched


__all__ = ["key_switch", "key_at_level", "apply_automorphism", "automorphism_switched"]
