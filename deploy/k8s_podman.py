#!/usr/bin/env python3
"""Renders deploy/k8s (its kustomization) as YAML that `podman kube play` of podman 4.3
(Debian 12) runs, one file per workload, and says what it had to change. Used by
deploy/podman_cluster.sh (KILN_CLUSTER_MODE=kube); deploy/README.md explains each change.

  deploy/k8s_podman.py --out DIR [--k8s deploy/k8s] [--front 127.0.0.1:50051]
                       [--replicas N] [--server-args "--flag=value ..."]

Writes DIR/configmap-<name>.yaml (the kustomization's configMapGenerator, one a file: podman 4.3
reads only a --configmap file's first document), DIR/<workload>.yaml for each
Deployment (a StatefulSet becomes one), DIR/plan (one line per workload: its name, its file,
then the Services that select it, which become network aliases), DIR/volumes (the volumes that
`podman kube down` leaves) and DIR/notes (every change, one a line).

What kustomize would do and this does: the generated ConfigMaps (without the hash suffix), the
`images` overrides, the labels (on the workloads' metadata). What podman 4.3 cannot take, and
this changes:
  - StatefulSet is not a kind it plays: a Deployment of one pod with one PersistentVolumeClaim
    per volumeClaimTemplate (named <template>-<statefulset>-0, as Kubernetes names them);
  - Service, HorizontalPodAutoscaler and PodDisruptionBudget are not played; a Service's name
    becomes a DNS alias of the pods it selects (the caller passes --network NET:alias=NAME), so
    a headless Service's name resolves to every replica, as on Kubernetes;
  - every containerPort is published on the host, on every interface, at the same number
    (podman issue #17028), so that replicas collide and everything would be exposed: ports are
    dropped, and the front (the workload whose Service is named like it, kiln-front) is
    published on --front only, with one replica (two pods cannot hold one host port).
"""
import argparse
import copy
import os
import shlex
import sys

import yaml

FRONT = "kiln-front"
KIND_NOT_PLAYED = ("Service", "HorizontalPodAutoscaler", "PodDisruptionBudget")


def load_all(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def config_maps(k8s, kustomization):
    out = []
    for gen in kustomization.get("configMapGenerator", []):
        data = {}
        for literal in gen.get("literals", []):
            key, value = literal.split("=", 1)
            data[key] = value
        for name in gen.get("files", []):
            key, _, path = name.partition("=")
            with open(os.path.join(k8s, path or key)) as f:
                data[key] = f.read()
        out.append({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": gen["name"]}, "data": data})
    return out


def apply_images(spec, images):
    for c in spec.get("containers", []) + spec.get("initContainers", []):
        name, _, tag = c["image"].partition(":")
        for rule in images:
            if rule["name"] == name:
                name = rule.get("newName", name)
                tag = rule.get("newTag", tag)
        c["image"] = name + (":" + tag if tag else "")


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--k8s", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  "k8s"))
    ap.add_argument("--out", required=True)
    ap.add_argument("--front", default="127.0.0.1:50051")
    ap.add_argument("--replicas", type=int, default=None)
    ap.add_argument("--server-args", default="")
    args = ap.parse_args()

    with open(os.path.join(args.k8s, "kustomization.yaml")) as f:
        kustomization = yaml.safe_load(f)
    labels = {}
    for entry in kustomization.get("labels", []):
        labels.update(entry.get("pairs", {}))
    docs = []
    for res in kustomization["resources"]:
        docs += load_all(os.path.join(args.k8s, res))
    notes = []
    services = [d for d in docs if d["kind"] == "Service"]
    for d in docs:
        if d["kind"] in KIND_NOT_PLAYED:
            notes.append("%s/%s: not played by podman 4.3" % (d["kind"], d["metadata"]["name"]))

    workloads = []
    for d in docs:
        if d["kind"] not in ("Deployment", "StatefulSet"):
            if d["kind"] not in KIND_NOT_PLAYED:
                sys.exit("k8s_podman: kind %s is not handled" % d["kind"])
            continue
        d = copy.deepcopy(d)
        name = d["metadata"]["name"]
        extra = []
        if d["kind"] == "StatefulSet":
            d["kind"] = "Deployment"
            spec = d["spec"]
            spec.pop("serviceName", None)
            volumes = spec["template"]["spec"].setdefault("volumes", [])
            for tmpl in spec.pop("volumeClaimTemplates", []):
                claim = "%s-%s-0" % (tmpl["metadata"]["name"], name)
                extra.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                              "metadata": {"name": claim}, "spec": tmpl["spec"]})
                volumes.append({"name": tmpl["metadata"]["name"],
                                "persistentVolumeClaim": {"claimName": claim}})
                notes.append("StatefulSet/%s: a Deployment and PersistentVolumeClaim %s"
                             % (name, claim))
        d["metadata"].setdefault("labels", {}).update(labels)
        pod = d["spec"]["template"]
        apply_images(pod["spec"], kustomization.get("images", []))
        aliases = [s["metadata"]["name"] for s in services
                   if selects(s["spec"].get("selector"), pod["metadata"]["labels"])]
        for c in pod["spec"]["containers"]:
            ports = c.pop("ports", [])
            if name == FRONT:
                host, port = args.front.rsplit(":", 1)
                c["ports"] = [{"containerPort": p["containerPort"], "hostPort": int(port),
                               "hostIP": host} for p in ports][:1]
                notes.append("%s/%s: published on %s only" % (name, c["name"], args.front))
            elif ports:
                notes.append("%s/%s: containerPorts %s not published" % (
                    name, c["name"], ",".join(str(p["containerPort"]) for p in ports)))
        if name == FRONT and d["spec"].get("replicas", 1) != 1:
            notes.append("%s: 1 replica, not %d (one host port)" % (name, d["spec"]["replicas"]))
            d["spec"]["replicas"] = 1
        if name == "kiln":
            if args.replicas is not None:
                d["spec"]["replicas"] = args.replicas
            if args.server_args:
                c = pod["spec"]["containers"][0]
                c["args"] = c.get("args", []) + shlex.split(args.server_args)
        workloads.append((name, [d] + extra, aliases))

    os.makedirs(args.out, exist_ok=True)
    # One ConfigMap a file: podman 4.3 reads only the first document of a --configmap file.
    for cm in config_maps(args.k8s, kustomization):
        with open(os.path.join(args.out, "configmap-%s.yaml" % cm["metadata"]["name"]), "w") as f:
            yaml.safe_dump(cm, f, sort_keys=False)
    with open(os.path.join(args.out, "plan"), "w") as plan:
        for name, ds, aliases in workloads:
            path = os.path.join(args.out, name + ".yaml")
            with open(path, "w") as f:
                yaml.safe_dump_all(ds, f, sort_keys=False)
            plan.write(" ".join([name, path] + aliases) + "\n")
    # The volumes `podman kube down` leaves: a mounted ConfigMap's, a claim's.
    volumes = set()
    for _, ds, _ in workloads:
        for d in ds:
            if d["kind"] == "PersistentVolumeClaim":
                volumes.add(d["metadata"]["name"])
            else:
                for v in d["spec"]["template"]["spec"].get("volumes", []):
                    if "configMap" in v:
                        volumes.add(v["configMap"]["name"])
    with open(os.path.join(args.out, "volumes"), "w") as f:
        f.write("".join(v + "\n" for v in sorted(volumes)))
    with open(os.path.join(args.out, "notes"), "w") as f:
        f.write("\n".join(notes) + "\n")
    print(" ".join(w[0] for w in workloads))


if __name__ == "__main__":
    main()
