"""Pod discovery for Prometheus's http_sd_configs, from the real test apiserver.

Debian's Prometheus (2.42) is built without kubernetes_sd_configs (promtool: "field
kubernetes_sd_configs not found"). This serves what that mechanism would give for role "pod": one
target per running pod of NAMESPACE, with the same __meta_kubernetes_pod_* labels (name, ip,
container name, labels, annotations), read with kubectl at every refresh. Prometheus then keeps,
rewrites and scrapes them with the same relabel_configs a kubernetes_sd_configs job would use.

  python3 pod_sd.py NAMESPACE PORT_FILE     (KUBECONFIG from the environment)

It binds a free loopback port and writes it to PORT_FILE.
"""

import http.server
import json
import re
import subprocess
import sys


def sanitize(name):
    return re.sub(r"[^a-zA-Z0-9_]", "_", name)


def targets(namespace):
    out = subprocess.run(
        ["kubectl", "--request-timeout=10s", "-n", namespace, "get", "pods", "-o", "json"],
        check=True, capture_output=True, text=True).stdout
    groups = []
    for pod in json.loads(out)["items"]:
        meta, status = pod["metadata"], pod.get("status", {})
        ip = status.get("podIP")
        if not ip or status.get("phase") != "Running":
            continue
        labels = {
            "__meta_kubernetes_namespace": meta["namespace"],
            "__meta_kubernetes_pod_name": meta["name"],
            "__meta_kubernetes_pod_ip": ip,
            "__meta_kubernetes_pod_container_name": pod["spec"]["containers"][0]["name"],
        }
        for key, value in meta.get("labels", {}).items():
            labels["__meta_kubernetes_pod_label_" + sanitize(key)] = value
        for key, value in meta.get("annotations", {}).items():
            labels["__meta_kubernetes_pod_annotation_" + sanitize(key)] = value
        groups.append({"targets": [ip], "labels": labels})
    return groups


class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps(targets(sys.argv[1])).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[2], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
