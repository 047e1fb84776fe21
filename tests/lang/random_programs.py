"""Random programs over every language feature, for differential tests of the interpreters."""

from __future__ import annotations

from rasplab.lang import (
    Rule,
    input_var,
    numeric_var,
    position_var,
    program,
    qkv,
    set_var,
    v_relative,
    var,
)

POOL = (-2.0, -1.5, -1.0, -0.5, 0.0, 1 / 3, 0.5, 1.0, 2.0)


def _choice(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _random_var(rng, kind):
    """A random variable of ``kind`` with a random initialisation (token, position or constant)."""
    init = _choice(rng, ("token", "position", "default"))
    if kind == "categorical":
        r = int(rng.integers(1, 4))
        a, c = int(rng.integers(1, 4)), int(rng.integers(0, 3))
        if init == "token":
            return input_var(r, lambda t: (a * t + c) % r)
        if init == "position":
            return position_var(r, lambda p: (a * p + c) % r)
        return var(r, default=c % r)
    if kind == "numerical":
        values = tuple(
            sorted(rng.choice(POOL, size=int(rng.integers(2, 5)), replace=False).tolist())
        )
        table = rng.choice(POOL, size=16).tolist()  # may lie off the centres (bucket matching)
        if init == "token":
            return numeric_var(values, input_init_fn=lambda t: table[t])
        if init == "position":
            return numeric_var(values, position_init_fn=lambda p: table[p % 16])
        return numeric_var(values, default=table[0])
    r = int(rng.integers(1, 4))
    subsets = [frozenset(m for m in range(r) if (bits >> m) & 1) for bits in range(2**r)]
    allowed = tuple(subsets[i] for i in sorted(set(rng.integers(0, len(subsets), 3).tolist())))
    chosen = [subsets[int(i)] for i in rng.integers(0, len(subsets), 16)]  # may be outside `values`
    if init == "token":
        return set_var(r, allowed, input_init_fn=lambda t: chosen[t])
    if init == "position":
        return set_var(r, allowed, position_init_fn=lambda p: chosen[p % 16])
    return set_var(r, allowed, default=allowed[0])


def _random_rules(rng, variables, head_outputs, conflict_free):
    """Rules per written variable keyed on (selector value, old value): conflict-free by design."""
    readable = {**variables, **head_outputs}
    rules = []
    targets = [n for n in variables if rng.random() < 0.7]
    for x in targets:
        selectors = [n for n in readable if n != x]
        if not selectors:
            continue
        c = _choice(rng, selectors)
        for cv in readable[c].possible_values():
            for old in variables[x].possible_values():
                if rng.random() < 0.4:
                    continue
                lhs = [(c, cv), (x, old)]
                extra = [n for n in readable if n not in (c, x)]
                if extra and rng.random() < 0.3:
                    d = _choice(rng, extra)
                    lhs.append((d, _choice(rng, readable[d].possible_values())))
                new = _choice(rng, variables[x].possible_values())
                if variables[x].kind == "numerical" and rng.random() < 0.3:
                    new = float(_choice(rng, POOL))
                rules.append(Rule(tuple(sorted(lhs)), x, old, new))
    if not conflict_free and rules:
        r = _choice(rng, rules)
        news = [v for v in variables[r.var].possible_values() if v != r.new]
        if news:
            rules.append(Rule(r.lhs, r.var, r.old, news[0]))
    return rules


def random_program(rng):
    """A random program over every feature: kinds, inits, heads, masks, causal, halting."""
    input_range = int(rng.integers(2, 4))
    variables = {"tok": input_var(input_range)}
    for i in range(int(rng.integers(1, 5))):
        kind = _choice(rng, ("categorical", "categorical", "numerical", "numerical", "set", "set"))
        variables[f"v{i}"] = _random_var(rng, kind)
    heads = {}
    halting = rng.random() < 0.3
    if halting:  # a chain that halts after length-1 layers (and sometimes never: error case)
        variables["done"] = position_var(2, lambda p: int(p == 0))
        heads["done_left"] = v_relative("done", -1)
    cat = [n for n, v in variables.items() if v.kind == "categorical"]
    for h in range(int(rng.integers(0, 4))):
        key = _choice(rng, cat)
        queries = [
            n
            for n, v in variables.items()
            if v.kind != "numerical" and v.range == variables[key].range
        ]
        sets = [n for n in queries if variables[n].kind == "set"]
        query = _choice(rng, sets if sets and rng.random() < 0.6 else queries)
        value = _choice(rng, [n for n, v in variables.items() if v.kind != "set"])
        mask = None
        if rng.random() < 0.5:
            mask = set(rng.integers(-3, 4, int(rng.integers(1, 4))).tolist())
        heads[f"h{h}"] = qkv(query, key, value, relative=mask)
    if rng.random() < 0.2:
        heads["nb"] = v_relative(
            _choice(rng, [n for n in variables if variables[n].kind != "set"]),
            int(rng.integers(-2, 3)),
        )
    probe = program(variables, heads, [], output="tok", input_range=input_range)
    rules = _random_rules(
        rng, probe.variables, probe.head_outputs, conflict_free=rng.random() < 0.85
    )
    if halting:
        rules = [r for r in rules if r.var != "done"]
        if rng.random() < 0.9:
            rules.append(Rule((("done", 0), ("done_left", 1)), "done", 0, 1))
    output = _choice(rng, [n for n in cat if n in variables])
    return program(
        variables,
        heads,
        rules,
        output=output,
        input_range=input_range,
        halt=("done", 1) if halting else None,
        max_layers=int(rng.integers(1, 5)) + 3 * halting,
        causal=bool(rng.random() < 0.3),
        name="random",
        undefined=str(rng.choice(["raise", "no_match"])),
    )
