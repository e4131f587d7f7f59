#!/usr/bin/python3
"""Inspect a model fusor optimized, with nothing but python3-onnx.

    fusor optimize model.onnx -o model.opt.onnx --level extended
    python3 examples/python/inspect_optimized.py model.opt.onnx [model.onnx]

Prints what fusor recorded in the model's metadata (provider, level, rule-set hash), the node
counts before and after (before: from the original model when given, else reconstructed from the
provenance records, which cannot count nodes removed outright, such as folded constants), the op
histogram of the fused model, and every fused node with the rule that
made it and the original nodes it replaced. fusor writes that provenance into each new node's
doc_string as one line of JSON: {"fusor_rule": ..., "replaced": [...], "via": [...]}.

The saved model is checked with onnx.checker: fused ops are in the `fusor` domain, whose opset
import the model declares. Exit status 0, or 1 when the model fails the checker.
This is the workflow ONNX Runtime users know from SessionOptions.optimized_model_filepath.
"""
import collections
import json
import sys

import onnx


def provenance(node):
    """The fusor provenance record of a node, or None."""
    if not node.doc_string.startswith("{"):
        return None
    try:
        record = json.loads(node.doc_string)
    except ValueError:
        return None
    return record if isinstance(record, dict) and "fusor_rule" in record else None


def op_name(node):
    return node.op_type if node.domain in ("", "ai.onnx") else node.domain + "." + node.op_type


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[0])
        print("usage: inspect_optimized.py OPTIMIZED.onnx [ORIGINAL.onnx]")
        return 2
    model = onnx.load(argv[1])
    try:
        onnx.checker.check_model(model)
        checker = "passes onnx.checker"
    except onnx.checker.ValidationError as e:
        checker = "FAILS onnx.checker: " + str(e).splitlines()[0]

    meta = {p.key: p.value for p in model.metadata_props}
    opsets = ", ".join("%s %d" % (o.domain or "ai.onnx", o.version) for o in model.opset_import)
    print("model:     %s (onnx %s; %s)" % (argv[1], onnx.__version__, checker))
    print("opsets:    %s" % opsets)
    if "fusor.provider" in meta:
        print("optimized: by fusor %s for %s at level %s, rule set %s" % (
            meta.get("fusor.version", "?"), meta["fusor.provider"], meta.get("fusor.level", "?"),
            meta.get("fusor.rule_set_hash", "?")))
    else:
        print("optimized: no fusor metadata (not saved by fusor?)")

    nodes = list(model.graph.node)
    fused = [(n, provenance(n)) for n in nodes]
    fused = [(n, p) for n, p in fused if p is not None]
    if len(argv) > 2:
        before = len(onnx.load(argv[2]).graph.node)
        how = "original model"
    else:
        before = len(nodes) - len(fused) + sum(len(p.get("replaced", [])) for _, p in fused)
        how = "reconstructed from provenance"
    print("nodes:     %d before (%s), %d after" % (before, how, len(nodes)))

    histogram = collections.Counter(op_name(n) for n in nodes)
    print("ops after: " + ", ".join("%s %d" % kv for kv in sorted(histogram.items())))

    print("fused nodes: %d" % len(fused))
    for node, p in fused:
        via = " (after %s)" % ", ".join(p["via"]) if p.get("via") else ""
        print("  %-28s %-18s rule %s%s <- %s" % (node.name, op_name(node), p["fusor_rule"], via,
                                                 ", ".join(p.get("replaced", []))))
    return 0 if checker == "passes onnx.checker" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
