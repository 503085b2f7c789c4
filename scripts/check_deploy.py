#!/usr/bin/env python3
"""Static checks of Marquee's deployment files, with no Docker engine and no cluster.

Run through scripts/check-deploy.sh, which also finds the optional tools. Needs python3 and PyYAML only; each of
these tools, when found, adds its own checks (and is named as skipped otherwise):
  kubectl (kustomize build), docker compose or docker-compose (config), kubernetes-validate (schemas of the
  built-in kinds), promtool (PromQL of the alert rules and the dashboard), hadolint (Dockerfile), yamllint,
  shellcheck.

What it checks, against the sources rather than against copies of their facts:
  - every YAML file parses; the dashboard is valid JSON;
  - every variable a Marquee container is given is one the executables read (README's configuration table,
    Sources, docs), and every variable the compose file interpolates is listed in .env.example;
  - metrics addresses, probe ports, Service ports and health checks agree with each worker's default port
    (read from Sources) and bind 0.0.0.0;
  - every worker announces an address on that port (MARQUEE_METRICS_ADVERTISED_ADDRESS; in Kubernetes the pod IP
    from the downward API), for `marquee dashboard`, which finds the workers in their groups;
  - `marquee dashboard` runs in the compose file (published on 127.0.0.1 only) and in a Deployment with a Service,
    listening on 0.0.0.0 at the port its probes, health check and Service use (/healthz);
  - every ScaledObject targets an existing Deployment, with the worker's consumer group, its stage's main topic
    (MARQUEE_TOPIC_PREFIX + stage) and the brokers of marquee-config, at most MARQUEE_TOPIC_PARTITIONS replicas;
  - every worker Deployment has a ScaledObject, a PodDisruptionBudget, a metrics Service the ServiceMonitor selects;
  - every metric name in the alert rules and the dashboard is one Sources define (or a Prometheus built-in);
  - the offline profile's base URLs match the emulator's path prefixes (Sources/MarqueeEmulator/UpstreamURLs.swift)
    and its --host/--port;
  - the Dockerfile builds every marquee* product of Package.swift, the same librdkafka version as setup.sh,
    runs as uid 10001 under tini; .dockerignore keeps the build folders out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import yaml
except ImportError:  # pragma: no cover
    print("check-deploy: PyYAML is missing (pip install PyYAML)", file=sys.stderr)
    sys.exit(2)

ROOT = Path(__file__).resolve().parent.parent
TOOLS = [ROOT / ".deps" / "deploy-tools" / "bin"]

# Executable → stage; its consumer group is <prefix><stage>. The indexer's stage is `records`.
WORKERS = {
    "marquee-fetch": "fetch",
    "marquee-images": "images",
    "marquee-index": "records",
}
LONG_RUNNING = [*WORKERS, "marquee-producer"]
# `marquee dashboard`: long-running too, its port given by --address; /healthz, no /metrics or /readyz.
DASHBOARD = ["marquee", "dashboard"]
# Variables of the upstreams and S3, besides MARQUEE_*.
OTHER_VARIABLE = re.compile(r"^(TMDB|KOFIC|KAKAO|OPENLIBRARY|AWS)_[A-Z0-9_]+$")
# Names another branch is adding (they are accepted with a warning until Sources or docs carry them).
PENDING_VARIABLES = {"MARQUEE_SCHEDULE": "marquee-producer (branch producer)"}
PROMETHEUS_BUILTINS = {"up"}


class Report:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0
        self.skipped: list[str] = []

    def ok(self, what: str) -> None:
        self.passed += 1
        print(f"ok    {what}")

    def fail(self, what: str) -> None:
        self.failed += 1
        print(f"FAIL  {what}")

    def check(self, condition: bool, what: str) -> bool:
        (self.ok if condition else self.fail)(what)
        return condition

    def skip(self, what: str) -> None:
        self.skipped.append(what)
        print(f"skip  {what}")

    def warn(self, what: str) -> None:
        print(f"warn  {what}")


def tool(name: str) -> str | None:
    for folder in TOOLS:
        candidate = folder / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, **kwargs)


def read(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


# --- What the sources say ----------------------------------------------------------------------------------------

def known_variables() -> set[str]:
    """Every MARQUEE_* (and upstream/AWS) name the executables or their docs mention."""
    names: set[str] = set()
    pattern = re.compile(r"\b((?:MARQUEE|TMDB|KOFIC|KAKAO|OPENLIBRARY|AWS)_[A-Z0-9_]*[A-Z0-9])\b")
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "Sources").rglob("*.swift"))]:
        if path.name == "deploy.md":
            continue  # our own doc proves nothing
        names.update(pattern.findall(path.read_text(encoding="utf-8")))
    # A key's *_FILE form is read for every key variable (SourceConfiguration+Environment, S3Credentials).
    for name in list(names):
        if name.endswith(("_API_KEY", "_REST_API_KEY")) or name in {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}:
            names.add(name + "_FILE")
    return names


def default_ports() -> dict[str, int]:
    """Each long-running executable's default observability port, from its wiring in Sources."""
    ports: dict[str, int] = {}
    folders = {"marquee-fetch": "MarqueeFetch", "marquee-images": "MarqueeImages", "marquee-index": "MarqueeIndex",
               "marquee-producer": "MarqueeProducer"}
    for executable, folder in folders.items():
        for path in sorted((ROOT / "Sources" / folder).glob("*.swift")):
            text = path.read_text(encoding="utf-8")
            found = re.search(r"defaultPort:\s*(\d+)", text) or re.search(
                r'MARQUEE_METRICS_ADDRESS"\]\s*\?\?\s*"[^"]*:(\d+)"', text)
            if found:
                ports[executable] = int(found.group(1))
                break
    return ports


def defined_metrics() -> set[str]:
    """Metric names Sources define: MetricNameDescriptor(namespace:subsystem:) plus descriptor("name", "unit")."""
    names: set[str] = set()
    for path in sorted((ROOT / "Sources").rglob("*.swift")):
        text = path.read_text(encoding="utf-8")
        # A descriptor written out whole: namespace, subsystem, metricName and unitName in one call.
        whole = re.findall(
            r'MetricNameDescriptor\(\s*namespace:\s*"(\w+)",\s*subsystem:\s*"(\w+)",\s*metricName:\s*"(\w+)",\s*unitName:\s*"(\w*)"',
            text,
        )
        for parts in whole:
            names.add("_".join(part for part in parts if part))
        # A helper that fixes namespace and subsystem, called as descriptor("name", "unit").
        prefixes = re.findall(r'MetricNameDescriptor\(\s*namespace:\s*"(\w+)",\s*subsystem:\s*"(\w+)",\s*metricName:\s*name', text)
        for namespace, subsystem in prefixes:
            for name, unit in re.findall(r'descriptor\(\s*"(\w+)",\s*"(\w*)"', text):
                names.add("_".join(part for part in (namespace, subsystem, name, unit) if part))
        # Names written out whole (a label in a string literal of code, not a comment).
        for line in text.splitlines():
            if line.lstrip().startswith("//"):
                continue
            names.update(re.findall(r'"(marquee_[a-z0-9_]+)"', line))
    return names


def emulator_prefixes() -> dict[str, str]:
    text = read("Sources/MarqueeEmulator/UpstreamURLs.swift")
    found = dict(re.findall(r'var (\w+): String \{ self\.base \+ "([^"]+)" \}', text))
    variables = {"tmdb": "TMDB_BASE_URL", "tmdbImages": "TMDB_IMAGE_BASE_URL", "kofic": "KOFIC_BASE_URL",
                 "kakao": "KAKAO_BASE_URL", "openLibrary": "OPENLIBRARY_BASE_URL",
                 "openLibraryCovers": "OPENLIBRARY_COVERS_BASE_URL"}
    return {variables[key]: prefix for key, prefix in found.items() if key in variables}


def env_file(path: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for number, line in enumerate(read(path).splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{number}: expected NAME=value")
        name, value = line.split("=", 1)
        values[name.strip()] = value.strip()
    return values


# --- Checks ------------------------------------------------------------------------------------------------------

def check_yaml(report: Report) -> dict[str, list]:
    documents: dict[str, list] = {}
    files = [ROOT / "docker-compose.yml", *sorted((ROOT / "deploy").rglob("*.yaml")), *sorted((ROOT / "deploy").rglob("*.yml"))]
    for path in files:
        relative = str(path.relative_to(ROOT))
        try:
            documents[relative] = [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
            report.ok(f"YAML parses: {relative}")
        except yaml.YAMLError as error:
            report.fail(f"YAML parses: {relative}: {error}")
    for path in [".env.example", "deploy/compose/offline.env", "deploy/base/config.env", *[
            str(p.relative_to(ROOT)) for p in sorted((ROOT / "deploy" / "overlays").rglob("config.env"))]]:
        try:
            env_file(path)
            report.ok(f"env file parses: {path}")
        except ValueError as error:
            report.fail(str(error))
    return documents


def check_variables(report: Report, where: str, names: list[str], known: set[str]) -> None:
    unknown = []
    for name in names:
        if name in known:
            continue
        if name in PENDING_VARIABLES:
            report.warn(f"{where}: {name} is not in Sources or docs yet ({PENDING_VARIABLES[name]})")
            continue
        if name.startswith("MARQUEE_") or OTHER_VARIABLE.match(name):
            unknown.append(name)
    report.check(not unknown, f"{where}: every variable is one the executables read" + (f" — unknown: {', '.join(unknown)}" if unknown else ""))


def is_dashboard(command) -> bool:
    if isinstance(command, str):
        command = command.split()
    return list(command or [])[:2] == DASHBOARD


def is_lag_exporter(command) -> bool:
    command = list(command.split() if isinstance(command, str) else command or [])
    return command[:2] == ["marquee", "lag"] and any(str(a) == "--serve" or str(a).startswith("--serve=") for a in command)


def dashboard_address(command, flag: str = "--address") -> tuple[str, int] | None:
    """The host and port of `marquee dashboard --address host:port` (or `--address=host:port`; `flag` for others)."""
    command = list(command.split() if isinstance(command, str) else command or [])
    for index, argument in enumerate(command):
        value = None
        if argument == flag and index + 1 < len(command):
            value = str(command[index + 1])
        elif str(argument).startswith(flag + "="):
            value = str(argument).split("=", 1)[1]
        if value and ":" in value and value.rsplit(":", 1)[1].isdigit():
            host, port = value.rsplit(":", 1)
            return host, int(port)
    return None


def executable_of(command) -> str | None:
    if isinstance(command, str):
        command = command.split()
    if not command:
        return None
    return command[0]


def check_compose(report: Report, documents: dict[str, list], known: set[str], ports: dict[str, int]) -> None:
    compose = documents.get("docker-compose.yml", [None])[0]
    if not compose:
        report.fail("docker-compose.yml has services")
        return
    services = compose.get("services", {})
    for required in ["kafka", "postgres", "minio", "minio-bucket", "topics", "marquee-producer", *WORKERS, "upstream",
                     "marquee-dashboard"]:
        report.check(required in services, f"compose: service {required}")

    for name, service in services.items():
        executable = executable_of(service.get("command"))
        if not executable or not executable.startswith("marquee"):
            continue
        environment = service.get("environment", {})
        if isinstance(environment, list):
            environment = dict(item.split("=", 1) if "=" in item else (item, "") for item in environment)
        check_variables(report, f"compose {name}", list(environment), known)
        if executable in LONG_RUNNING:
            port = ports.get(executable)
            address = str(environment.get("MARQUEE_METRICS_ADDRESS", ""))
            report.check(port is not None and address == f"0.0.0.0:{port}",
                         f"compose {name}: MARQUEE_METRICS_ADDRESS {address!r} is 0.0.0.0 and {executable}'s port {port}")
            test = " ".join(map(str, service.get("healthcheck", {}).get("test", [])))
            report.check(f"127.0.0.1:{port}/readyz" in test, f"compose {name}: health check asks /readyz on {port}")
            report.check(service.get("restart") in ("unless-stopped", "always", "on-failure"), f"compose {name}: restart policy")
            grace = str(service.get("stop_grace_period", "10s"))
            seconds = int(grace.rstrip("s")) if grace.rstrip("s").isdigit() else 0
            report.check(seconds > 30, f"compose {name}: stop_grace_period {grace} outlasts the 30 s shutdown timeout")
            report.check("ports" not in service, f"compose {name}: publishes no host port (so --scale works)")
            advertised = str(environment.get("MARQUEE_METRICS_ADVERTISED_ADDRESS", ""))
            report.check(port is not None and advertised.endswith(f":{port}") and len(advertised) > len(f":{port}"),
                         f"compose {name}: MARQUEE_METRICS_ADVERTISED_ADDRESS {advertised!r} announces port {port}")
        if is_dashboard(service.get("command")):
            check_compose_dashboard(report, name, service)
        if executable in WORKERS or executable == "marquee-producer":
            depends = service.get("depends_on", {})
            report.check(isinstance(depends, dict) and depends.get("topics", {}).get("condition") == "service_completed_successfully",
                         f"compose {name}: starts after the topics exist")

    dashboards = [name for name, service in services.items() if is_dashboard(service.get("command"))]
    report.check(bool(dashboards), "compose: a service runs marquee dashboard")

    # The emulator listens on every interface of its container, and the offline URLs point at it.
    upstream = services.get("upstream", {})
    command = " ".join(map(str, upstream.get("command", [])))
    report.check("--host=0.0.0.0" in command, "compose upstream: binds 0.0.0.0 inside the network")
    report.check(upstream.get("profiles") == ["offline"], "compose upstream: under profile offline")
    port = re.search(r"--port=(\d+)", command)
    offline = env_file("deploy/compose/offline.env")
    report.check(offline.get("COMPOSE_PROFILES") == "offline", "offline.env: turns the offline profile on")
    for variable, prefix in emulator_prefixes().items():
        expected = f"http://upstream:{port.group(1) if port else '?'}{prefix}"
        report.check(offline.get(variable) == expected, f"offline.env: {variable} = {expected}")
    report.check(offline.get("MARQUEE_IMAGE_HOSTS") == "upstream" and offline.get("MARQUEE_ALLOW_PRIVATE_ADDRESSES") == "1",
                 "offline.env: image hosts limited to the emulator, private addresses allowed")
    check_variables(report, "offline.env", list(offline), known)

    # Every variable the compose file interpolates is documented in .env.example, and the other way round.
    text = read("docker-compose.yml")
    interpolated = set(re.findall(r"\$\{([A-Z0-9_]+)", text))
    example_text = read(".env.example")
    listed = set(re.findall(r"^#?\s*([A-Z][A-Z0-9_]+)=", example_text, re.M))
    missing = sorted(interpolated - listed)
    report.check(not missing, ".env.example lists every variable docker-compose.yml interpolates" + (f" — missing: {', '.join(missing)}" if missing else ""))
    unused = sorted(listed - interpolated)
    report.check(not unused, ".env.example lists nothing docker-compose.yml ignores" + (f" — unused: {', '.join(unused)}" if unused else ""))

    compose_cli = None
    if tool("docker") and run(["docker", "compose", "version"]).returncode == 0:
        compose_cli = ["docker", "compose"]
    elif tool("docker-compose"):
        compose_cli = [tool("docker-compose")]
    if not compose_cli:
        report.skip("docker compose config (neither the compose plugin nor docker-compose found)")
        return
    variants = [
        ([], "docker-compose.yml"),
        (["--env-file", "deploy/compose/offline.env"], "with offline.env"),
        (["--env-file", ".env.example"], "with .env.example"),
    ]
    for options, label in variants:
        result = run([*compose_cli, *options, "-f", "docker-compose.yml", "config", "-q"])
        report.check(result.returncode == 0, f"{' '.join(Path(compose_cli[0]).name.split())} config ({label})" + (f": {result.stderr.strip()}" if result.returncode else ""))
    result = run([*compose_cli, "-f", "docker-compose.yml", "-f", "deploy/compose/secrets.yml", "config", "-q"])
    report.check(result.returncode == 0, "compose config with deploy/compose/secrets.yml" + (f": {result.stderr.strip()}" if result.returncode else ""))


def check_compose_dashboard(report: Report, name: str, service: dict) -> None:
    """`marquee dashboard` in compose: on every interface of its container, published on the host's loopback only."""
    address = dashboard_address(service.get("command"))
    where = f"compose {name}"
    if not report.check(address is not None and address[0] == "0.0.0.0", f"{where}: marquee dashboard --address 0.0.0.0:port"):
        return
    port = address[1]
    published = [str(p) for p in service.get("ports", [])]
    report.check(bool(published) and all(p.startswith("127.0.0.1:") and p.endswith(f":{port}") for p in published),
                 f"{where}: port {port} published on 127.0.0.1 only ({', '.join(published) or 'none'})")
    test = " ".join(map(str, service.get("healthcheck", {}).get("test", [])))
    report.check(f"127.0.0.1:{port}/healthz" in test, f"{where}: health check asks /healthz on {port}")
    report.check(service.get("restart") in ("unless-stopped", "always", "on-failure"), f"{where}: restart policy")
    depends = service.get("depends_on", {})
    report.check(isinstance(depends, dict) and depends.get("topics", {}).get("condition") == "service_completed_successfully",
                 f"{where}: starts after the topics exist")


def pod_ip_variables(container: dict) -> set[str]:
    """The container's variables that Kubernetes sets to the pod's IP address (downward API)."""
    return {e["name"] for e in container.get("env", [])
            if e.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "status.podIP"}


def check_advertised_address(report: Report, where: str, container: dict, port: int) -> None:
    """A worker announces its pod IP and metrics port, the IP from a variable defined before it (`$(VAR)`)."""
    names = [e["name"] for e in container.get("env", [])]
    env = {e["name"]: e.get("value") for e in container.get("env", [])}
    value = str(env.get("MARQUEE_METRICS_ADVERTISED_ADDRESS") or "")
    references = re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", value)
    position = names.index("MARQUEE_METRICS_ADVERTISED_ADDRESS") if value else -1
    from_pod_ip = bool(references) and all(r in pod_ip_variables(container) and names.index(r) < position for r in references)
    report.check(value.endswith(f":{port}") and from_pod_ip,
                 f"{where}: MARQUEE_METRICS_ADVERTISED_ADDRESS {value!r} is the pod IP (status.podIP, defined before it) and port {port}")


def check_dashboard_deployment(report: Report, where: str, deployment: dict, services: list[dict]) -> None:
    """`marquee dashboard`: listens on 0.0.0.0 at the port its container, probes and Service name; runs as the
    image's user with limits; reads marquee-config."""
    pod = deployment["spec"]["template"]
    spec = pod["spec"]
    container = spec["containers"][0]
    address = dashboard_address(container.get("args") or container.get("command"))
    if not report.check(address is not None and address[0] == "0.0.0.0", f"{where}: marquee dashboard --address 0.0.0.0:port"):
        return
    port = address[1]
    named = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    report.check(port in named.values(), f"{where}: a container port {port}")
    for probe in ("readinessProbe", "livenessProbe"):
        get = container.get(probe, {}).get("httpGet", {})
        probe_port = named.get(get.get("port"), get.get("port"))
        report.check(get.get("path") == "/healthz" and probe_port == port, f"{where}: {probe} on /healthz:{port}")
    check_pod_basics(report, where, spec, container)
    report.check(deployment["spec"].get("replicas", 1) == 1, f"{where}: one replica (its history is in memory)")
    labels = pod["metadata"]["labels"]
    matching = [s for s in services if s["spec"].get("selector") and all(labels.get(k) == v for k, v in s["spec"]["selector"].items())]
    report.check(any(named.get(p.get("targetPort"), p.get("targetPort")) == port for s in matching for p in s["spec"]["ports"]),
                 f"{where}: a Service reaches its port {port}")


def check_pod_basics(report: Report, where: str, spec: dict, container: dict) -> None:
    """What every Marquee pod has: cpu and memory requests and limits, the image's non-root user, marquee-config."""
    resources_ = container.get("resources", {})
    report.check(all(k in resources_.get(s, {}) for s in ("requests", "limits") for k in ("cpu", "memory")),
                 f"{where}: cpu and memory requests and limits")
    security = {**spec.get("securityContext", {}), **container.get("securityContext", {})}
    report.check(security.get("runAsNonRoot") is True and security.get("runAsUser") == 10001,
                 f"{where}: runs as non-root uid 10001 (the image's user)")
    report.check(any(ref.get("configMapRef", {}).get("name", "").startswith("marquee-config") for ref in container.get("envFrom", [])),
                 f"{where}: reads marquee-config")


def check_lag_exporter_deployment(report: Report, where: str, deployment: dict, services: list[dict]) -> None:
    """`marquee lag --serve`: /metrics, /readyz and /healthz on 0.0.0.0 at its container's metrics port, scraped
    through a Service labelled marquee.io/metrics; one replica; runs as the image's user; reads marquee-config."""
    pod = deployment["spec"]["template"]
    spec = pod["spec"]
    container = spec["containers"][0]
    address = dashboard_address(container.get("args") or container.get("command"), "--serve")
    if not report.check(address is not None and address[0] == "0.0.0.0", f"{where}: marquee lag --serve 0.0.0.0:port"):
        return
    port = address[1]
    named = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
    report.check(named.get("metrics") == port, f"{where}: container port metrics = {port}")
    for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
        get = container.get(probe, {}).get("httpGet", {})
        probe_port = named.get(get.get("port"), get.get("port"))
        report.check(get.get("path") == path and probe_port == port, f"{where}: {probe} on {path}:{port}")
    check_pod_basics(report, where, spec, container)
    report.check(deployment["spec"].get("replicas", 1) == 1, f"{where}: one replica (each would report the same groups)")
    labels = pod["metadata"]["labels"]
    matching = [s for s in services if s["spec"].get("selector") and all(labels.get(k) == v for k, v in s["spec"]["selector"].items())]
    report.check(any(p.get("name") == "metrics" and named.get(p.get("targetPort"), p.get("targetPort")) == port
                     and s["metadata"].get("labels", {}).get("marquee.io/metrics") == "true"
                     for s in matching for p in s["spec"]["ports"]),
                 f"{where}: a Service labelled marquee.io/metrics exposes its metrics port {port} (the ServiceMonitor scrapes it)")


def kustomize(report: Report, folder: str) -> list[dict] | None:
    kubectl = tool("kubectl")
    if kubectl:
        result = run([kubectl, "kustomize", folder])
        if not report.check(result.returncode == 0, f"kubectl kustomize {folder}" + (f": {result.stderr.strip()}" if result.returncode else "")):
            return None
        return [d for d in yaml.safe_load_all(result.stdout) if d]
    report.skip(f"kubectl kustomize {folder} (kubectl not found; checking the base's files as written)")
    if folder != "deploy/base":
        return None
    resources: list[dict] = []
    kustomization = yaml.safe_load(read("deploy/base/kustomization.yaml"))
    for name in kustomization.get("resources", []):
        resources.extend(d for d in yaml.safe_load_all(read(f"deploy/base/{name}")) if d)
    for entry in kustomization.get("labels", []):
        for resource in resources:
            resource.setdefault("metadata", {}).setdefault("labels", {}).update(entry.get("pairs", {}))
    config = env_file("deploy/base/config.env")
    resources.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "marquee-config"}, "data": config})
    return resources


def check_kubernetes(report: Report, folder: str, resources: list[dict], known: set[str], ports: dict[str, int]) -> None:
    def of(kind: str) -> list[dict]:
        return [r for r in resources if r.get("kind") == kind]

    configs = [c for c in of("ConfigMap") if c["metadata"]["name"].startswith("marquee-config")]
    if not report.check(len(configs) == 1, f"{folder}: one marquee-config ConfigMap"):
        return
    config = configs[0].get("data", {})
    check_variables(report, f"{folder}: marquee-config", list(config), known)
    prefix = config.get("MARQUEE_TOPIC_PREFIX", "marquee.")
    partitions = int(config.get("MARQUEE_TOPIC_PARTITIONS", "8"))

    deployments = {d["metadata"]["name"]: d for d in of("Deployment")}
    services = of("Service")
    scaled = {s["spec"]["scaleTargetRef"]["name"]: s for s in of("ScaledObject")}
    budgets = of("PodDisruptionBudget")
    monitors = of("ServiceMonitor")

    for name, deployment in deployments.items():
        pod = deployment["spec"]["template"]
        spec = pod["spec"]
        container = spec["containers"][0]
        executable = executable_of(container.get("args") or container.get("command"))
        where = f"{folder}: Deployment {name}"
        env_names = [e["name"] for e in container.get("env", [])]
        check_variables(report, where, env_names, known)
        env = {e["name"]: e.get("value") for e in container.get("env", [])}
        if is_dashboard(container.get("args") or container.get("command")):
            check_dashboard_deployment(report, where, deployment, services)
            continue
        if is_lag_exporter(container.get("args") or container.get("command")):
            check_lag_exporter_deployment(report, where, deployment, services)
            continue
        port = ports.get(executable or "")
        report.check(port is not None, f"{where}: runs {executable}, a long-running executable with a known port")
        if port is None:
            continue
        report.check(env.get("MARQUEE_METRICS_ADDRESS") == f"0.0.0.0:{port}", f"{where}: MARQUEE_METRICS_ADDRESS 0.0.0.0:{port}")
        check_advertised_address(report, where, container, port)
        named = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
        report.check(named.get("metrics") == port, f"{where}: container port metrics = {port}")
        for probe, path in (("readinessProbe", "/readyz"), ("livenessProbe", "/healthz")):
            get = container.get(probe, {}).get("httpGet", {})
            probe_port = named.get(get.get("port"), get.get("port"))
            report.check(get.get("path") == path and probe_port == port, f"{where}: {probe} on {path}:{port}")
        resources_ = container.get("resources", {})
        report.check(all(k in resources_.get(s, {}) for s in ("requests", "limits") for k in ("cpu", "memory")),
                     f"{where}: cpu and memory requests and limits")
        security = {**spec.get("securityContext", {}), **container.get("securityContext", {})}
        report.check(security.get("runAsNonRoot") is True and security.get("runAsUser") == 10001,
                     f"{where}: runs as non-root uid 10001 (the image's user)")
        grace = spec.get("terminationGracePeriodSeconds", 30)
        report.check(executable == "marquee-producer" or grace > 30, f"{where}: terminationGracePeriodSeconds {grace} outlasts the 30 s shutdown timeout")
        report.check(any(ref.get("configMapRef", {}).get("name", "").startswith("marquee-config") for ref in container.get("envFrom", [])),
                     f"{where}: reads marquee-config")
        labels = pod["metadata"]["labels"]
        matching = [s for s in services if s["spec"].get("selector") and all(labels.get(k) == v for k, v in s["spec"]["selector"].items())]
        report.check(any(p.get("name") == "metrics" and p.get("port") == port for s in matching for p in s["spec"]["ports"]),
                     f"{where}: a Service exposes its metrics port {port}")
        report.check(any(all(labels.get(k) == v for k, v in b["spec"]["selector"]["matchLabels"].items()) for b in budgets),
                     f"{where}: a PodDisruptionBudget covers it")
        selected = [s for m in monitors for s in matching
                    if all(s["metadata"].get("labels", {}).get(k) == v for k, v in m["spec"]["selector"]["matchLabels"].items())
                    and any(e.get("port") == "metrics" for e in m["spec"]["endpoints"])]
        report.check(bool(selected), f"{where}: the ServiceMonitor scrapes it")

        if executable in WORKERS:
            stage = WORKERS[executable]
            group = f"{prefix}{stage}"
            report.check("replicas" not in deployment["spec"], f"{where}: no replicas field (KEDA owns them)")
            scaled_object = scaled.get(name)
            if not report.check(scaled_object is not None, f"{where}: a ScaledObject targets it"):
                continue
            trigger = scaled_object["spec"]["triggers"][0]
            metadata = trigger.get("metadata", {})
            report.check(trigger.get("type") == "kafka", f"{where}: ScaledObject trigger is kafka")
            report.check(metadata.get("consumerGroup") == group, f"{where}: ScaledObject consumerGroup {group}")
            report.check(metadata.get("topic") == f"{prefix}{stage}", f"{where}: ScaledObject topic {prefix}{stage} (the main topic)")
            report.check(metadata.get("bootstrapServers") == config.get("MARQUEE_BROKERS"),
                         f"{where}: ScaledObject bootstrapServers = MARQUEE_BROKERS ({config.get('MARQUEE_BROKERS')})")
            report.check(str(metadata.get("lagThreshold", "")).isdigit(), f"{where}: ScaledObject lagThreshold is a number")
            low, high = scaled_object["spec"].get("minReplicaCount", 0), scaled_object["spec"].get("maxReplicaCount", 100)
            report.check(1 <= low <= high <= partitions,
                         f"{where}: 1 ≤ minReplicaCount {low} ≤ maxReplicaCount {high} ≤ partitions {partitions}")

    for target in scaled:
        report.check(target in deployments, f"{folder}: ScaledObject {target} targets an existing Deployment")
    for worker in [*WORKERS, "marquee-producer"]:
        report.check(worker in deployments, f"{folder}: a Deployment runs {worker}")
    report.check(any(is_dashboard(d["spec"]["template"]["spec"]["containers"][0].get("args")) for d in deployments.values()),
                 f"{folder}: a Deployment runs marquee dashboard")
    report.check(any(is_lag_exporter(d["spec"]["template"]["spec"]["containers"][0].get("args")) for d in deployments.values()),
                 f"{folder}: a Deployment runs the lag exporter (marquee lag --serve)")

    jobs = of("Job")
    report.check(any(executable_of(j["spec"]["template"]["spec"]["containers"][0].get("args")) == "marquee"
                     and j["spec"]["template"]["spec"]["containers"][0]["args"][1:3] == ["topics", "create"] for j in jobs),
                 f"{folder}: a Job runs marquee topics create")

    tool_path = tool("kubernetes-validate")
    if not tool_path:
        report.skip(f"kubernetes-validate {folder} (not found)")
        return
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as handle:
        yaml.safe_dump_all([r for r in resources if "." not in r["apiVersion"].split("/")[0] or r["apiVersion"].startswith(("apps/", "batch/", "policy/"))], handle)
    result = run([tool_path, "--strict", "--quiet", "-k", "1.30.0", handle.name])
    os.unlink(handle.name)
    report.check(result.returncode == 0, f"kubernetes-validate --strict (1.30) of {folder}'s built-in kinds" + (f": {result.stdout.strip()} {result.stderr.strip()}" if result.returncode else ""))


def promql_metric_names(expression: str) -> set[str]:
    # Strip strings (label values, regexes) before looking for identifiers.
    without_strings = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expression)
    return set(re.findall(r"\b(marquee_[a-z0-9_]+)\b", without_strings)) | (
        set(re.findall(r"\b([a-z_]+)\{", without_strings)) & PROMETHEUS_BUILTINS)


def base_metric(name: str) -> str:
    return re.sub(r"_(bucket|sum|count)$", "", name)


def check_metrics(report: Report, documents: dict[str, list], metrics: set[str]) -> None:
    report.check(len(metrics) >= 10, f"Sources define {len(metrics)} metric names (marquee_stage_* at least)")
    histograms = {m for m in metrics if m.endswith("_seconds")}

    def known(name: str) -> bool:
        return name in metrics or name in PROMETHEUS_BUILTINS or (base_metric(name) in histograms and base_metric(name) != name)

    rules = [r for group in documents["deploy/base/prometheusrule.yaml"][0]["spec"]["groups"] for r in group["rules"]]
    recorded = {r["record"] for r in rules if "record" in r}
    for rule in rules:
        name = rule.get("alert") or rule.get("record")
        used = promql_metric_names(rule["expr"])
        unknown = sorted(n for n in used if not known(n))
        report.check(not unknown, f"rule {name}: metrics exist in Sources" + (f" — unknown: {', '.join(unknown)}" if unknown else ""))
        for reference in re.findall(r"\b(marquee:[a-z0-9_:]+)", rule["expr"]):
            report.check(reference in recorded, f"rule {name}: recording rule {reference} is defined")
    alerts = {r["alert"]: r["expr"] for r in rules if "alert" in r}
    report.check(any("marquee_stage_consumer_lag" in e and "deriv" in e for e in alerts.values()), "alerts: lag growing")
    report.check(any("marquee_stage_dlq_total" in e and "increase" in e for e in alerts.values()), "alerts: dead letters arriving")
    report.check(any("marquee_stage_ready" in e and "== 0" in e for e in alerts.values()), "alerts: worker not ready")
    report.check(any("marquee_stage_credentials_refused" in e for e in alerts.values()), "alerts: credentials refused")

    try:
        dashboard = json.loads(read("deploy/base/grafana-dashboard.json"))
        report.ok("Grafana dashboard is valid JSON")
    except json.JSONDecodeError as error:
        report.fail(f"Grafana dashboard is valid JSON: {error}")
        return
    panels = dashboard.get("panels", [])
    ids = [p.get("id") for p in panels]
    report.check(len(ids) == len(set(ids)), "dashboard: panel ids are unique")
    expressions = [(p["title"], t["expr"]) for p in panels for t in p.get("targets", []) if t.get("expr")]
    report.check(len(expressions) >= 10, f"dashboard: {len(expressions)} queries")
    for title, expression in expressions:
        unknown = sorted(n for n in promql_metric_names(expression) if not known(n))
        report.check(not unknown, f"dashboard {title!r}: metrics exist in Sources" + (f" — unknown: {', '.join(unknown)}" if unknown else ""))
    titles = " ".join(p["title"].lower() for p in panels)
    for topic in ["lag", "jobs per second", "retries", "dead letters", "per source"]:
        report.check(topic in titles, f"dashboard: a panel about {topic}")

    promtool = tool("promtool")
    if not promtool:
        report.skip("promtool check rules (promtool not found)")
        return
    with tempfile.TemporaryDirectory() as folder:
        rules_file = Path(folder) / "rules.yaml"
        rules_file.write_text(yaml.safe_dump({"groups": documents["deploy/base/prometheusrule.yaml"][0]["spec"]["groups"]}))
        result = run([promtool, "check", "rules", str(rules_file)])
        report.check(result.returncode == 0, "promtool check rules (PrometheusRule)" + (f": {result.stdout.strip()} {result.stderr.strip()}" if result.returncode else ""))
        substituted = [{"record": f"dashboard:query_{i}", "expr": e.replace("$__rate_interval", "5m").replace("$namespace", ".*")}
                       for i, (_, e) in enumerate(expressions)]
        rules_file.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": substituted}]}))
        result = run([promtool, "check", "rules", str(rules_file)])
        report.check(result.returncode == 0, "promtool parses every dashboard query" + (f": {result.stdout.strip()} {result.stderr.strip()}" if result.returncode else ""))


def check_dockerfile(report: Report) -> None:
    dockerfile = read("Dockerfile")
    products = re.findall(r'\.executable\(name: "(marquee[a-z-]*)"', read("Package.swift"))
    # The Dockerfile's own sed expression, run on Package.swift, must find the same products.
    match = re.search(r"sed -n '([^']+)' Package\.swift", dockerfile)
    if report.check(match is not None, "Dockerfile: lists the products from Package.swift"):
        result = run(["sed", "-n", match.group(1), "Package.swift"])
        found = result.stdout.split()
        report.check(found == products, f"Dockerfile: its product list is {', '.join(found)} (Package.swift: {', '.join(products)})")
    report.check("--static-swift-stdlib" in dockerfile and "-c release" in dockerfile, "Dockerfile: release build, Swift runtime linked statically")
    report.check('ENTRYPOINT ["tini", "--"]' in dockerfile, "Dockerfile: tini is PID 1")
    report.check(re.search(r"^USER 10001:10001$", dockerfile, re.M) is not None, "Dockerfile: runs as uid 10001")
    report.check('CMD ["marquee", "--help"]' in dockerfile, "Dockerfile: default command marquee --help")
    runtime = dockerfile.split("AS runtime", 1)[-1]
    for package in ["libcurl4", "libvips42", "libsqlite3-0", "libjemalloc2", "libssl3", "libsasl2-2", "libzstd1", "liblz4-1", "zlib1g", "ca-certificates", "tini", "curl"]:
        report.check(re.search(rf"\s{re.escape(package)}\s", runtime) is not None, f"Dockerfile runtime: installs {package}")
    report.check("librdkafka" not in runtime.split("COPY --from")[0].split("apt-get install", 1)[-1].split("&&")[0],
                 "Dockerfile runtime: no librdkafka package (linked statically)")
    setup_version = re.search(r"^rdkafka_version=(\S+)", read("scripts/setup.sh"), re.M)
    script_version = re.search(r"^version=(\S+)", read("deploy/docker/build-librdkafka.sh"), re.M)
    report.check(bool(setup_version and script_version and setup_version.group(1) == script_version.group(1)),
                 f"deploy/docker/build-librdkafka.sh builds librdkafka {script_version.group(1) if script_version else '?'} like scripts/setup.sh")
    report.check('link "rdkafka-static"' in read("Sources/Crdkafka/module.modulemap"), "Sources/Crdkafka links rdkafka-static (no runtime librdkafka)")
    ignored = set(read(".dockerignore").split())
    for entry in [".build", ".deps", "var", ".git"]:
        report.check(entry in ignored, f".dockerignore: {entry}")
    hadolint = tool("hadolint")
    if hadolint:
        result = run([hadolint, "--config", "deploy/docker/hadolint.yaml", "Dockerfile"])
        report.check(result.returncode == 0, "hadolint Dockerfile" + (f": {result.stdout.strip()}" if result.returncode else ""))
    else:
        report.skip("hadolint (not found)")


# Packages debian:bookworm-slim has without installing anything (Essential or required by apt).
SLIM_BASE_PACKAGES = {"libc6", "libgcc-s1", "libstdc++6", "zlib1g"}


def check_binaries(report: Report, folder: Path) -> None:
    """Each marquee* binary of a release build loads only libraries the runtime stage installs.

    For a build made on this machine (Debian bookworm, like the image's builder), e.g.
    `swift build -c release --static-swift-stdlib`: every NEEDED library is mapped to its Debian package with
    dpkg, and that package must be in the Dockerfile's runtime install list or in debian:bookworm-slim itself.
    """
    runtime = read("Dockerfile").split("AS runtime", 1)[-1]
    installed = set(re.findall(r"\b(lib[a-z0-9.+-]+|zlib1g)\b", runtime.split("COPY --from", 1)[0]))
    libraries = {}
    for line in run(["ldconfig", "-p"]).stdout.splitlines()[1:]:
        name, _, path = line.strip().partition(" => ")
        libraries.setdefault(name.split(" (")[0], path)
    # What those packages pull in (libvips42 brings GLib, which the binaries call directly too).
    closure = run(["apt-cache", "depends", "--recurse", "--no-recommends", "--no-suggests", "--no-conflicts",
                   "--no-breaks", "--no-replaces", "--no-enhances", *sorted(installed)]).stdout
    installed |= {line.strip() for line in closure.splitlines() if line and not line.startswith(" ")}

    def owner_of(path: str) -> str:
        for candidate in (path, re.sub(r"^/usr/lib/", "/lib/", path)):
            found = run(["dpkg", "-S", candidate])
            if found.returncode == 0:
                return found.stdout.split(":")[0]
        return ""

    binaries = sorted(p for p in folder.glob("marquee*") if p.is_file() and os.access(p, os.X_OK))
    if not report.check(bool(binaries), f"binaries in {folder}"):
        return
    for binary in binaries:
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", run(["readelf", "-d", str(binary)]).stdout)
        missing = []
        for library in needed:
            if library.startswith("ld-linux") or library == "linux-vdso.so.1":
                continue
            path = libraries.get(library)
            if not path:
                missing.append(f"{library} (not found here)")
                continue
            owner = owner_of(os.path.realpath(path))
            if owner and (owner in installed or owner in SLIM_BASE_PACKAGES):
                continue
            missing.append(f"{library} ({owner or 'no package'})")
        report.check(not missing, f"{binary.name}: every shared library is in the runtime image" + (f" — missing: {', '.join(missing)}" if missing else f" ({len(needed)} NEEDED)"))


def run_worker(executable: Path, environment: dict[str, str], seconds: float = 5) -> tuple[bool, int, list[str]]:
    """Starts a worker with `environment` (brokers unreachable, metrics on a free loopback port), then SIGTERM."""
    import signal
    import time
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tempfile.gettempdir(), **environment,
                   "MARQUEE_BROKERS": "127.0.0.1:1", "MARQUEE_METRICS_ADDRESS": "127.0.0.1:0"}
    process = subprocess.Popen([str(executable)], env=environment, cwd=tempfile.gettempdir(),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(seconds)
    alive = process.poll() is None
    if alive:
        process.send_signal(signal.SIGTERM)
    _, errors = process.communicate(timeout=90)
    complaints = [line for line in errors.splitlines() if '"librdkafka"' not in line and ('"level":"error"' in line or "Error:" in line)]
    return alive, process.returncode, complaints


def check_smoke(report: Report, folder: Path) -> None:
    """The workers start with the environments the compose file and the manifests give them, and stop on SIGTERM.

    Brokers and the store are unreachable on purpose: what is checked is that every setting parses (a bad one
    exits 64 at once) and the process runs until told to stop, then exits 0.
    """
    compose_cli = [tool("docker-compose")] if tool("docker-compose") else (
        ["docker", "compose"] if tool("docker") and run(["docker", "compose", "version"]).returncode == 0 else None)
    if compose_cli:
        for env_file_ in ([], ["--env-file", "deploy/compose/offline.env"]):
            resolved = yaml.safe_load(run([*compose_cli, *env_file_, "-f", "docker-compose.yml", "config"]).stdout)
            for name, service in resolved["services"].items():
                executable = executable_of(service.get("command"))
                if executable not in WORKERS or not (folder / executable).exists():
                    continue
                environment = {k: "" if v is None else str(v) for k, v in service.get("environment", {}).items()}
                alive, status, complaints = run_worker(folder / executable, environment)
                label = "offline" if env_file_ else "default"
                report.check(alive and status == 0 and not complaints,
                             f"compose {name} ({label}) runs with its environment and stops on SIGTERM (exit {status})"
                             + (f": {complaints[:2]}" if complaints else ""))
    else:
        report.skip("smoke of the compose environments (no docker compose / docker-compose)")
    kubectl = tool("kubectl")
    if not kubectl:
        report.skip("smoke of the manifests' environments (kubectl not found)")
        return
    with tempfile.TemporaryDirectory() as secrets:
        for overlay in sorted((ROOT / "deploy" / "overlays").glob("*/kustomization.yaml")):
            documents = [d for d in yaml.safe_load_all(run([kubectl, "kustomize", str(overlay.parent)]).stdout) if d]
            config = next(d for d in documents if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith("marquee-config"))["data"]
            for deployment in (d for d in documents if d["kind"] == "Deployment"):
                container = deployment["spec"]["template"]["spec"]["containers"][0]
                executable = executable_of(container.get("args"))
                if executable not in WORKERS or not (folder / executable).exists():
                    continue
                environment = dict(config)
                for entry in container.get("env", []):
                    if entry.get("valueFrom", {}).get("fieldRef", {}).get("fieldPath") == "status.podIP":
                        environment[entry["name"]] = "127.0.0.1"  # a stand-in for the pod's address
                    if "value" in entry:
                        # Kubernetes expands $(VAR) from the variables defined before.
                        value = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                                       lambda m: environment.get(m.group(1), m.group(0)), str(entry["value"]))
                        if entry["name"].endswith("_FILE"):  # a mounted Secret's file: a stand-in with a dummy key
                            value = os.path.join(secrets, os.path.basename(value))
                            Path(value).write_text("dummy-key\n")
                        environment[entry["name"]] = value
                    elif entry["name"] == "MARQUEE_STORE":
                        environment[entry["name"]] = "postgres://marquee:password@127.0.0.1:1/marquee?sslmode=require"
                alive, status, complaints = run_worker(folder / executable, environment)
                report.check(alive and status == 0 and not complaints,
                             f"{overlay.parent.relative_to(ROOT)} {deployment['metadata']['name']} runs with its environment and stops on SIGTERM (exit {status})"
                             + (f": {complaints[:2]}" if complaints else ""))


def check_lint(report: Report) -> None:
    yamllint = tool("yamllint")
    if yamllint:
        config = "{extends: default, rules: {line-length: {max: 120}, document-start: disable, truthy: {check-keys: false}, comments: {min-spaces-from-content: 1}}}"
        result = run([yamllint, "-s", "-d", config, "docker-compose.yml", "deploy"])
        report.check(result.returncode == 0, "yamllint docker-compose.yml deploy/" + (f":\n{result.stdout.strip()}" if result.returncode else ""))
    else:
        report.skip("yamllint (not found)")
    shellcheck = tool("shellcheck")
    if shellcheck:
        result = run([shellcheck, "scripts/check-deploy.sh", "deploy/docker/build-librdkafka.sh"])
        report.check(result.returncode == 0, "shellcheck of the deploy scripts" + (f":\n{result.stdout.strip()}" if result.returncode else ""))
    else:
        report.skip("shellcheck (not found)")


def check_docs(report: Report, resources: list[dict] | None) -> None:
    doc = read("docs/deploy.md") if (ROOT / "docs" / "deploy.md").exists() else ""
    report.check(bool(doc), "docs/deploy.md exists")
    referenced: set[str] = set()
    generated = {r["metadata"]["name"] for r in resources or [] if r.get("kind") in ("ConfigMap", "Secret")}

    def walk(node) -> None:
        if isinstance(node, dict):
            if "secretName" in node:
                referenced.add(node["secretName"])
            for key in ("secretKeyRef", "configMap", "configMapRef", "secretRef"):
                if isinstance(node.get(key), dict) and "name" in node[key]:
                    referenced.add(node[key]["name"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(resources or [])
    referenced -= generated
    for name in sorted(referenced):
        report.check(name in doc, f"docs/deploy.md tells how to create {name}")
    report.check("deploy/schedule.example.yaml" in doc, "docs/deploy.md names deploy/schedule.example.yaml")
    if (ROOT / "deploy" / "schedule.example.yaml").exists():
        report.ok("deploy/schedule.example.yaml (mounted by the compose file) exists")
    else:
        report.warn("deploy/schedule.example.yaml is not here yet (it arrives with marquee-producer)")


def main() -> int:
    report = Report()
    if len(sys.argv) == 3 and sys.argv[1] in ("--binaries", "--smoke"):
        (check_binaries if sys.argv[1] == "--binaries" else check_smoke)(report, Path(sys.argv[2]).resolve())
        print(f"check-deploy: {report.passed} passed, {report.failed} failed, {len(report.skipped)} skipped")
        return 1 if report.failed else 0
    known = known_variables()
    ports = default_ports()
    for executable in LONG_RUNNING:
        if executable not in ports:
            if executable == "marquee-producer":
                ports[executable] = 9104
                report.warn("marquee-producer is not in Sources yet: assuming its documented port 9104")
            else:
                report.fail(f"default port of {executable} found in Sources")
    print(f"--- ports from Sources: {', '.join(f'{k} {v}' for k, v in sorted(ports.items()))}")

    documents = check_yaml(report)
    print("--- docker-compose.yml")
    check_compose(report, documents, known, ports)
    print("--- Kubernetes")
    base = kustomize(report, "deploy/base")
    if base:
        check_kubernetes(report, "deploy/base", base, known, ports)
    overlay_resources = None
    for overlay in sorted((ROOT / "deploy" / "overlays").iterdir()):
        if (overlay / "kustomization.yaml").exists():
            resources = kustomize(report, str(overlay.relative_to(ROOT)))
            if resources:
                check_kubernetes(report, str(overlay.relative_to(ROOT)), resources, known, ports)
                overlay_resources = overlay_resources or resources
    print("--- metrics")
    check_metrics(report, documents, defined_metrics())
    print("--- Dockerfile")
    check_dockerfile(report)
    print("--- lint and docs")
    check_lint(report)
    check_docs(report, overlay_resources or base)

    print(f"check-deploy: {report.passed} passed, {report.failed} failed, {len(report.skipped)} skipped")
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
