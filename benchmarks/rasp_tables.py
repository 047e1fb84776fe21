"""The tables and summary sentences of ``bench_rasp.py``'s JSON, as the docs quote them
(``python benchmarks/bench_rasp.py --markdown FILE.json``)."""

from __future__ import annotations


def markdown(result: dict) -> str:
    """The comparison as a markdown table."""
    lines = [
        "| program | N | rasplab compile CPU s | Tracr compile CPU s | speedup | layers (r/T) "
        "| width (r/T) | params (r/T) | rasplab = evaluator | Tracr = evaluator |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        ours, theirs = r["rasplab"], r.get("tracr", {})
        if "error" in theirs:
            t = ["refused"] * 2
            tl = tw = tp = "-"
            tagree = f"refused: {theirs['error'][:40]}"
        elif theirs:
            t = [f"{theirs['compile_cpu_s']:.2f}", f"{r['compile_speedup_cpu']:.0f}x"]
            tl, tw, tp = theirs["layers"], theirs["residual_width"], theirs["params"]
            tagree = f"{theirs['agree_with_evaluator']}/{r['inputs']}"
        else:
            t, tl, tw, tp, tagree = ["-", "-"], "-", "-", "-", "-"
        dtype = "" if ours["dtype"] == "float32" else " (f64)"
        lines.append(
            f"| {r['program']} | {r['max_seq_len']} | {ours['compile_cpu_s']:.3f} | {t[0]} | {t[1]} "
            f"| {ours['layers']}/{tl} | {ours['residual_width']}/{tw} | {ours['params']}/{tp} "
            f"| {ours['agree_with_evaluator']}/{r['inputs']}{dtype} | {tagree} |"
        )
    return "\n".join(lines) + "\n\n" + markdown_largest(result)


def summary_text(result: dict) -> str:
    """The summary as the sentences the docs quote."""
    s = result["summary"]
    lengths = sorted({r["max_seq_len"] for r in result["rows"]})
    programs = len({r["program"] for r in result["rows"]})
    text = (
        f"{s['settings']} settings ({programs} programs x max_seq_len {lengths}); rasplab "
        f"compiled {s['rasplab_compiled']} and equals the evaluator on every input in "
        f"{s['rasplab_all_agree']}; Tracr compiled {s['tracr_compiled']} and equals it on every "
        f"input in {s['tracr_all_agree']}. Compile speedup (Tracr CPU seconds / rasplab CPU "
        f"seconds): min {s['compile_speedup_cpu_min']:.0f}x, median "
        f"{s['compile_speedup_cpu_median']:.0f}x (wall clock: min "
        f"{s['compile_speedup_min']:.0f}x, median {s['compile_speedup_median']:.0f}x). "
        f"Residual width larger than Tracr's: {', '.join(s['wider_than_tracr']) or 'none'}. "
        f"Tracr padded vs unpadded: {s['tracr_pad_check']['equal']} of "
        f"{s['tracr_pad_check']['inputs']} inputs equal."
    )
    if "largest_within_60s" in s:
        largest = s["largest_within_60s"]
        text += (
            " Largest N Tracr compiled within 60 CPU seconds: "
            + ", ".join(
                f"{k} {'>= ' if k in s['largest_is_a_lower_bound'] else ''}{v}"
                for k, v in largest.items()
            )
            + f"; rasplab compiled {s['largest_rasplab_compiled']} of them there and equals the "
            f"evaluator on every input checked in {s['largest_rasplab_all_agree']}; residual "
            f"width larger than Tracr's: {', '.join(s['largest_wider_than_tracr']) or 'none'}."
        )
    return text


def markdown_largest(result: dict) -> str:
    """The largest-N section as a markdown table."""
    lines = [
        "| program | largest N | Tracr compile CPU s (wall) | next N tried | rasplab compile CPU s "
        "| layers (r/T) | width (r/T) | params (r/T) | rasplab = evaluator |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in result.get("largest_within_60s", []):
        nxt = e.get("next")
        shown = (
            "none tried: N is a lower bound"
            if nxt is None
            else f"{nxt['N']}: "
            + (f"{nxt['compile_cpu_s']:.0f} s" if "compile_cpu_s" in nxt else nxt["status"][:40])
        )
        if "N" not in e:
            lines.append(f"| {e['program']} | - | - | {shown} | - | - | - | - | - |")
            continue
        t, ours = e["tracr"], e["rasplab"]
        head = f"| {e['program']} | {e['N']} | {t['compile_cpu_s']:.1f} ({t['compile_s']:.0f}) "
        if "error" in ours or not ours:
            why = ours.get("error", "not run")[:60]
            lines.append(head + f"| {shown} | refused: {why} | - | - | - | - |")
            continue
        dtype = "" if ours["dtype"] == "float32" else " (f64)"
        lines.append(
            head + f"| {shown} | {ours['compile_cpu_s']:.3f} | {ours['layers']}/{t['layers']} "
            f"| {ours['residual_width']}/{t['residual_width']} | {ours['params']}/{t['params']} "
            f"| {ours['agree_with_evaluator']}/{ours['inputs']}{dtype} |"
        )
    return "\n".join(lines)


def compact(result: dict) -> str:
    """One row per program over every max_seq_len: the README's table."""
    by: dict[str, list[dict]] = {}
    for r in result["rows"]:
        by.setdefault(r["program"], []).append(r)
    lines = [
        "| program | N | compile speedup (CPU s) | layers (rasplab/Tracr) | residual width (rasplab/Tracr) "
        "| rasplab = evaluator | Tracr = evaluator |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rows in by.items():
        ns = "/".join(str(r["max_seq_len"]) for r in rows)
        speed = "/".join(
            f"{r['compile_speedup_cpu']:.0f}x" if "compile_speedup_cpu" in r else "-" for r in rows
        )
        layers = "/".join(
            f"{r['rasplab']['layers']}:{r.get('tracr', {}).get('layers', '-')}" for r in rows
        )
        width = "/".join(
            f"{r['rasplab']['residual_width']}:{r.get('tracr', {}).get('residual_width', '-')}"
            for r in rows
        )
        ours = "/".join(
            f"{100 * r['rasplab']['agree_with_evaluator'] / r['inputs']:.0f}%" for r in rows
        )
        theirs = "/".join(
            f"{100 * r['tracr']['agree_with_evaluator'] / r['inputs']:.0f}%"
            if "agree_with_evaluator" in r.get("tracr", {})
            else "fails"
            for r in rows
        )
        lines.append(f"| {name} | {ns} | {speed} | {layers} | {width} | {ours} | {theirs} |")
    return "\n".join(lines)
