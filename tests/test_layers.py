"""Layers import only downward (ARCHITECTURE.md): each package under ``sparseflow/_src`` may import
the packages listed for it here, and nothing else of sparseflow."""

import ast
import os

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "sparseflow", "_src")

# layer -> the layers it may import (besides itself and the version module)
ALLOWED = {
    "framework": set(),
    "ops": {"framework"},
    "grad": {"framework", "ops"},
    "passes": {"framework"},
    "kernels": {"framework"},
    "runtime": {"framework", "passes", "kernels"},
    "distributed": {"framework", "runtime", "kernels"},
    "embedding": {"framework", "ops", "grad", "kernels"},
    "training": {"framework", "ops", "grad", "runtime", "distributed", "embedding", "kernels"},
    "layers": {"framework", "ops", "grad"},
    "data": {"framework", "ops", "grad", "kernels", "runtime"},
    "feature_column": {"framework", "ops", "grad", "embedding", "training", "layers", "data"},
    "models": {"framework", "ops", "grad", "kernels", "embedding", "training", "layers", "data", "feature_column",
               "runtime",
               "distributed"},
    "apps": {"models", "data", "training", "distributed"},
}

# Known upward imports, each with its reason; a new one fails the test.
EXCEPTIONS = {
    # tf.test.compute_gradient runs the graph it checks: the checker needs a Session (lazy import).
    ("grad/grad_check.py", "runtime"),
    # A table's Saver entry and its serving-export hook implement the training library's interfaces.
    ("embedding/checkpoint.py", "training"),
}


def _imports(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
        elif isinstance(node, ast.Import):
            yield from (a.name for a in node.names)


def _modules():
    for dirpath, _, files in os.walk(SRC):
        for f in files:
            if f.endswith(".py") and not f.endswith("_pb2.py"):
                path = os.path.join(dirpath, f)
                yield os.path.relpath(path, SRC), path


def test_every_layer_has_a_rule():
    layers = {rel.split(os.sep)[0] for rel, _ in _modules() if os.sep in rel}
    assert layers <= set(ALLOWED), f"layers without a rule: {sorted(layers - set(ALLOWED))}"


def test_imports_go_only_downward():
    bad = []
    for rel, path in sorted(_modules()):
        if os.sep not in rel:
            continue  # _src/__init__.py, version.py
        layer = rel.split(os.sep)[0]
        for mod in _imports(path):
            if mod.startswith("sparseflow._src."):
                target = mod.split(".")[2]
                if target in (layer, "version") or target in ALLOWED[layer]:
                    continue
                if (rel.replace(os.sep, "/"), target) in EXCEPTIONS:
                    continue
                bad.append(f"{rel} ({layer}) imports {mod}")
            elif (mod == "sparseflow" or mod.startswith("sparseflow.")) and layer not in ("models", "apps"):
                bad.append(f"{rel} ({layer}) imports the public {mod}: the public API is for users, models and apps")
    assert not bad, "\n".join(bad)
