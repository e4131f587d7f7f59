"""Saved fused models are valid ONNX for Python's onnx (which has no schemas for the fusor
domain): each model written by fused_model_tool (one per fusor op, loaded and saved by fusor)
must pass onnx.checker.check_model with its `fusor` opset import, keep that import and the
node's domain, and carry the output shape fusor inferred. The same model without the fusor
opset import must be rejected: the import is what makes it valid.

usage: python_fused_checker.py TOOL
"""
import glob
import os
import subprocess
import sys
import tempfile

import onnx


def main():
    tool = sys.argv[1]
    failures = []
    checked = 0
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([tool, tmp], capture_output=True, text=True)
        if r.returncode != 0:
            failures.append("tool: " + r.stdout + r.stderr)
        for path in sorted(glob.glob(os.path.join(tmp, "*.onnx"))):
            if path.endswith(".src.onnx"):
                continue
            op = os.path.basename(path)[:-len(".onnx")]
            try:
                m = onnx.load(path)
                onnx.checker.check_model(m)
                onnx.checker.check_model(path)
                onnx.checker.check_model(m, full_check=True)  # python's inference skips the unknown ops
                imports = {o.domain: o.version for o in m.opset_import}
                if imports.get("fusor") != 1:
                    raise RuntimeError("fusor opset import lost: %s" % imports)
                node = m.graph.node[0]
                if node.domain != "fusor" or node.op_type != op:
                    raise RuntimeError("node is %s.%s" % (node.domain, node.op_type))
                dims = [d.dim_value if d.HasField("dim_value") else "?" for d in
                        m.graph.output[0].type.tensor_type.shape.dim]
                want = open(os.path.join(tmp, op + ".shape")).read().strip()
                if "x".join(str(d) for d in dims) != want or want == "?":
                    raise RuntimeError("output shape %s, fusor inferred %s" % (dims, want))
                # Without the import the checker must refuse the node's domain.
                del m.opset_import[:]
                m.opset_import.add(domain="", version=17)
                try:
                    onnx.checker.check_model(m)
                    raise RuntimeError("accepted without the fusor opset import")
                except onnx.checker.ValidationError:
                    pass
                checked += 1
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failures.append("%s: %s" % (op, str(e).splitlines()[0] if str(e) else type(e).__name__))
    print("fused models passing onnx.checker (onnx %s): %d" % (onnx.__version__, checked))
    for f in failures:
        print("FAIL", f)
    return 1 if failures or checked < 17 else 0


if __name__ == "__main__":
    sys.exit(main())
