"""A model of the few PTX integer instructions that the kernels use in inline asm (add/sub/mad with the carry
flag, mul, setp/selp), to run their asm text on the CPU: the asm strings and operand lists are read from the source,
so a wrong operand number or instruction in a kernel shows up here without a GPU. Registers declared in the
block ({ .reg ... }) are modelled by name."""

import re

MASKS = {"u32": (1 << 32) - 1, "u64": (1 << 64) - 1}


STRING = r'"((?:[^"\\]|\\.)*)"'


def string_macros(text: str) -> dict[str, str]:
    """The #define NAME "..." "..." macros of a C++ source (string literals only, continued lines joined):
    NAME -> their text."""
    macros = {}
    for m in re.finditer(r"#define\s+(\w+)((?:\s*\\\n)*(?:\s*" + STRING + r"(?:\s*\\\n)*)+)", text):
        macros[m.group(1)] = "".join(re.findall(STRING, m.group(2)))
    return macros


def asm_blocks(text: str) -> list[tuple[list[str], list[str]]]:
    """Every asm(...) statement of a C++ source: (instructions, operand expressions in %-number order), the string
    macros it names expanded."""
    macros = string_macros(text)
    blocks = []
    for m in re.finditer(r"\basm\(", text):
        depth, i = 1, m.end()
        while depth:  # the matching parenthesis
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        body = text[m.end() : i - 1].replace("\\\n", "\n")
        template, _, rest = body.partition(":")
        for name, value in macros.items():  # a macro's literal joins the template's at its place
            template = re.sub(rf"\b{name}\b", lambda _, literal='"' + value + '"': literal, template)
        code = "".join(re.findall(STRING, template))
        instructions = [s.strip() for s in code.replace("\\n", "").replace("\\t", "").split(";") if s.strip()]
        operands = []
        for expr in re.finditer(r'"[=+]?&?[rln]"\(', rest):  # operand expressions, parentheses balanced
            depth, j = 1, expr.end()
            while depth:
                depth += {"(": 1, ")": -1}.get(rest[j], 0)
                j += 1
            operands.append(rest[expr.end() : j - 1].strip())
        blocks.append((instructions, operands))
    return blocks


def run(instructions, values: list[int]) -> list[int]:
    """Execute instructions on the operand values (%0, %1, ...); returns the updated operand values."""
    regs = list(values)
    local: dict[str, int] = {}
    cf, cf_from = 0, None

    def get(tok):
        if tok.startswith("%"):
            return regs[int(tok[1:])]
        return local[tok] if tok in local else int(tok, 0)

    def put(tok, value):
        if tok.startswith("%"):
            regs[int(tok[1:])] = value
        else:
            local[tok] = value

    for ins in instructions:
        ins = ins.strip("{} \n\t")
        if not ins or ins.startswith(".reg"):
            continue
        op, args = ins.split(None, 1)
        args = [a.strip() for a in args.split(",")]
        parts = op.split(".")
        if parts[0] == "setp":  # setp.ne.TYPE p, a, b (the only comparison the kernels use)
            if parts[1] != "ne":
                raise ValueError(f"instruction not modelled: {ins}")
            put(args[0], int(get(args[1]) != get(args[2])))
            continue
        if parts[0] == "selp":  # selp.TYPE d, a, b, p
            put(args[0], get(args[1]) if get(args[3]) else get(args[2]))
            continue
        if parts[0] in ("mul", "mad", "madc") and parts[1] not in ("lo", "hi"):  # .wide: results of twice the width
            raise ValueError(f"instruction not modelled: {ins}")
        mask = MASKS[parts[-1]]
        bits = mask.bit_length()
        sets_cc = "cc" in parts
        base = parts[0]
        uses_cf = base in ("addc", "subc", "madc")
        kind = "sub" if base.startswith("sub") else "add"
        if uses_cf and cf_from != kind:
            # ptxas lowers a flag set by an add and read by a subtract (or the reverse) differently from this
            # model (on sm_90 it passes the native carry, read as "no borrow"): such chains are not allowed
            raise ValueError(f"{ins}: reads a carry flag set by {cf_from or 'nothing'}")
        cin = cf if uses_cf else 0
        if base in ("add", "addc"):
            full = get(args[1]) + get(args[2]) + cin
            out, carry = full & mask, full >> bits
        elif base in ("sub", "subc"):
            full = get(args[1]) - get(args[2]) - cin
            out, carry = full & mask, 1 if full < 0 else 0
        elif base == "mul":
            prod = get(args[1]) * get(args[2])
            out, carry = (prod & mask if parts[1] == "lo" else prod >> bits), 0
        elif base in ("mad", "madc"):
            prod = get(args[1]) * get(args[2])
            half = prod & mask if parts[1] == "lo" else prod >> bits
            full = half + get(args[3]) + cin
            out, carry = full & mask, full >> bits
        else:
            raise ValueError(f"instruction not modelled: {ins}")
        put(args[0], out)
        if sets_cc:
            cf, cf_from = carry, kind
    return regs
