#!/usr/bin/env python3
"""Writes the Kueue v1beta2 CustomResourceDefinitions the contract tests
install in the real apiextensions-apiserver (and the fake reads for its
list types and validation), from capops's own hand-written Kueue v1beta2
schemas in tests/schemas/kueue-v1beta2/ (themselves written from Kueue's
field reference, not copied from Kueue's CRD files).

A CRD schema must be structural: every node typed, no `additionalProperties:
false`, no `const`, quantities as `x-kubernetes-int-or-string`. List types
follow Kueue's markers as documented: resource groups are atomic, flavors
and their resources are maps keyed by `name`.

Run: python3 tests/contract/crds/generate.py  (rewrites the .json files here)
"""
import json
import pathlib

HERE = pathlib.Path(__file__).resolve().parent
SCHEMAS = HERE.parent.parent / "schemas" / "kueue-v1beta2"

KINDS = [
    # file, kind, plural, singular, short names, scope
    ("workloadpriorityclass", "WorkloadPriorityClass", "workloadpriorityclasses", "workloadpriorityclass", ["wpc"], "Cluster"),
    ("resourceflavor", "ResourceFlavor", "resourceflavors", "resourceflavor", ["flavor", "rf"], "Cluster"),
    ("cohort", "Cohort", "cohorts", "cohort", ["co"], "Cluster"),
    ("clusterqueue", "ClusterQueue", "clusterqueues", "clusterqueue", ["cq"], "Cluster"),
    ("localqueue", "LocalQueue", "localqueues", "localqueue", ["queue", "lq"], "Namespaced"),
]

# Lists merged by key under server-side apply: (parent property, key).
MAP_LISTS = {"flavors": ["name"], "resources": ["name"]}


def structural(node, prop=None):
    if not isinstance(node, dict):
        return node
    out = {}
    any_of = node.get("anyOf")
    if any_of and {b.get("type") for b in any_of} == {"integer", "string"}:
        pattern = next((b["pattern"] for b in any_of if b.get("type") == "string" and "pattern" in b), None)
        out = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        if pattern:
            out["pattern"] = pattern
        return out
    for k, v in node.items():
        if k in ("$comment", "$schema", "propertyNames"):
            continue
        if k == "additionalProperties" and v is False:
            continue
        if k == "const":
            out["enum"] = [v]
            continue
        if k == "properties":
            out[k] = {name: structural(child, name) for name, child in v.items()}
        elif k == "items":
            out[k] = structural(v)
        elif k == "additionalProperties":
            out[k] = structural(v)
        else:
            out[k] = v
    if "type" not in out:
        if "enum" in out:
            out["type"] = "string"
        elif "properties" in out or "additionalProperties" in out:
            out["type"] = "object"
    if out.get("type") == "array":
        if prop in MAP_LISTS:
            out["x-kubernetes-list-type"] = "map"
            out["x-kubernetes-list-map-keys"] = MAP_LISTS[prop]
        else:
            out["x-kubernetes-list-type"] = "atomic"
    return out


def crd(file, kind, plural, singular, short, scope):
    schema = json.loads((SCHEMAS / f"{file}.json").read_text())
    props = {}
    for name, child in schema["properties"].items():
        if name == "metadata":
            props[name] = {"type": "object"}
        elif name in ("apiVersion", "kind"):
            props[name] = {"type": "string"}
        else:
            props[name] = structural(child, name)
    props["status"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    root = {"type": "object", "properties": props}
    if schema.get("required"):
        root["required"] = [r for r in schema["required"] if r not in ("apiVersion", "kind", "metadata")]
        if not root["required"]:
            del root["required"]
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.kueue.x-k8s.io", "labels": {"capops.dev/test-fixture": "kueue-v1beta2"}},
        "spec": {
            "group": "kueue.x-k8s.io",
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": singular, "shortNames": short},
            "scope": scope,
            "versions": [{
                "name": "v1beta2",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": root},
                "subresources": {"status": {}},
            }],
        },
    }


if __name__ == "__main__":
    for k in KINDS:
        (HERE / f"{k[2]}.json").write_text(json.dumps(crd(*k), indent=2, sort_keys=True) + "\n")
