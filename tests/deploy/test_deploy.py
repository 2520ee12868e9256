"""The deployment files agree with each other and with what CI runs.

The image cannot be built here (no container engine), so its definition is read with BuildKit's
own parser (PyPI's ``dockerfile``) and checked: its build steps are the scripts CI runs. The
manifests' schema is checked by ``scripts/validate-deploy``; this checks what a schema cannot:
ports, probes, selectors and the shutdown budget fit together.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import dockerfile
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"


def instructions(path: Path) -> list[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """``(INSTRUCTION, flags, values)`` as BuildKit's own parser reads the file."""
    return [(c.cmd.upper(), c.flags, c.value) for c in dockerfile.parse_file(str(path))]


def scripts_ci_runs() -> set[str]:
    """The scripts .ci/run calls, and the scripts those call, by file name."""
    found: set[str] = set()
    todo = [ROOT / ".ci" / "run"]
    while todo:
        text = todo.pop().read_text()
        for name in re.findall(r"(?:scripts/|\$\(dirname \"\$0\"\)/)([\w.-]+)", text):
            if name not in found and (ROOT / "scripts" / name).is_file():
                found.add(name)
                todo.append(ROOT / "scripts" / name)
    return found


def manifests() -> dict[str, dict[str, Any]]:
    """The Kubernetes manifests by kind."""
    out = {}
    for path in sorted((DEPLOY / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            out[doc["kind"]] = doc
    return out


def test_the_image_builds_only_with_scripts_ci_runs() -> None:
    steps = instructions(DEPLOY / "Dockerfile")
    ci = scripts_ci_runs()
    assert {"build-wheels", "install-wheel", "smoke-wheels", "find-python"} <= ci
    called = []
    for kind, _, values in steps:
        if kind != "RUN":
            continue
        words = shlex.split(" ".join(values))
        if words[:2] == ["install", "-d"]:  # the cache folder, owned by the server's user
            continue
        called.append(Path(words[0]).name)
    assert called == ["build-wheels", "install-wheel"]
    assert set(called) <= ci
    for kind, flags, values in steps:
        if kind == "COPY" and not flags:
            for source in values[:-1]:
                assert source == "." or (ROOT / source).exists(), source


def test_the_image_serves_tokstream_as_a_user() -> None:
    steps = instructions(DEPLOY / "Dockerfile")
    last = {kind: values for kind, _, values in steps}
    assert last["ENTRYPOINT"] == ("tokstream", "serve", "--host", "0.0.0.0", "--port", "8000")
    assert last["USER"][0].split(":")[0] not in ("0", "root")
    assert last["EXPOSE"] == ("8000",)
    froms = [values for kind, _, values in steps if kind == "FROM"]
    assert [f[-1] for f in froms] == ["rust", "build", "runtime"]
    assert "slim" in froms[-1][0]


def test_ports_probes_and_selectors_fit() -> None:
    found = manifests()
    assert set(found) == {
        "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
    }  # fmt: skip
    deployment, service = found["Deployment"], found["Service"]
    template = deployment["spec"]["template"]
    labels = template["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"] == labels
    assert service["spec"]["selector"] == labels
    assert found["PodDisruptionBudget"]["spec"]["selector"]["matchLabels"] == labels
    (container,) = template["spec"]["containers"]
    (port,) = container["ports"]
    assert (port["name"], port["containerPort"]) == ("http", 8000)
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    assert service["spec"]["sessionAffinity"] == "None"
    annotations = template["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(port["containerPort"])
    assert annotations["prometheus.io/path"] == "/metrics"
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/health", "port": "http"}, probe
    args = container["args"]
    assert args[args.index("--workers") + 1] == "1"  # /metrics is per process
    assert template["spec"]["securityContext"]["runAsNonRoot"] is True


def _cpu(value: str) -> float:
    return float(value[:-1]) / 1000 if value.endswith("m") else float(value)


def _mib(value: str) -> float:
    units = {"Mi": 1.0, "Gi": 1024.0}
    return float(value[:-2]) * units[value[-2:]]


def test_the_shutdown_budget_and_scaling_fit() -> None:
    found = manifests()
    spec = found["Deployment"]["spec"]["template"]["spec"]
    (container,) = spec["containers"]
    args = container["args"]
    drain = float(args[args.index("--shutdown-grace") + 1]) + 1  # then 503s, exit within 1 s
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    (pause,) = (float(m) for m in re.findall(r"sleep\((\d+(?:\.\d+)?)\)", " ".join(pre_stop)))
    assert spec["terminationGracePeriodSeconds"] >= pause + drain + 2
    resources = container["resources"]
    assert _cpu(resources["requests"]["cpu"]) <= _cpu(resources["limits"]["cpu"])
    assert _mib(resources["requests"]["memory"]) <= _mib(resources["limits"]["memory"])
    hpa = found["HorizontalPodAutoscaler"]["spec"]
    name = found["Deployment"]["metadata"]["name"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": name}
    assert [m["resource"]["name"] for m in hpa["metrics"]] == ["cpu"]
    # A drain of one pod never leaves the tier empty.
    assert hpa["minReplicas"] > found["PodDisruptionBudget"]["spec"]["maxUnavailable"]


@pytest.mark.parametrize("script", ["build-wheels", "smoke-wheels", "validate-deploy"])
def test_ci_runs_the_deployment_scripts(script: str) -> None:
    assert script in scripts_ci_runs()
