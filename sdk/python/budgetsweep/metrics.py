"""The trainer's Prometheus series, served in the text exposition format by the standard library."""

import http.server
import math
import threading
from typing import Dict, List, Optional, Tuple

from . import contract

_HELP = {
    contract.METRIC_OBJECTIVE: "Objective at each evaluated resource.",
    contract.METRIC_RESOURCE_COMPLETED: "Resource completed, including that before a resume.",
    contract.METRIC_LOSS: "Training loss of the latest step.",
    contract.METRIC_LEARNING_RATE: "Learning rate of the latest optimizer step.",
    contract.METRIC_SAMPLES_PER_SECOND: "Training samples per second of step time.",
    contract.METRIC_DATA_WAIT_RATIO: "Fraction of step time spent waiting for data.",
    contract.METRIC_ACCELERATOR_UTILIZATION_RATIO: "Accelerator busy fraction.",
    contract.METRIC_DIVERGED: "1 once the loss became NaN or infinite, else 0.",
    contract.METRIC_PROBE_MEASURED_STEPS: "Probe mode: the steps the throughput figures cover.",
}

# The probe's series comes first, so that a scrape that shows it also shows its final figures
# (the exposition is rendered from one consistent copy, so order only matters to readers).
_ORDER = (
    contract.METRIC_PROBE_MEASURED_STEPS,
    contract.METRIC_OBJECTIVE,
    contract.METRIC_RESOURCE_COMPLETED,
    contract.METRIC_LOSS,
    contract.METRIC_LEARNING_RATE,
    contract.METRIC_SAMPLES_PER_SECOND,
    contract.METRIC_DATA_WAIT_RATIO,
    contract.METRIC_ACCELERATOR_UTILIZATION_RATIO,
    contract.METRIC_DIVERGED,
)


def format_resource(resource: float) -> str:
    """The `resource` label's text: "3" for an integral resource, as the C++ trainers write it."""
    if float(resource).is_integer():
        return str(int(resource))
    return repr(float(resource))


def _format_value(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


class MetricRegistry:
    """Gauges keyed by name and extra labels; every series also carries `sweep` and `trial`.

    Thread-safe: the training loop sets values while the server renders them.
    """

    def __init__(self, sweep: str, trial: str) -> None:
        self._labels = ((contract.LABEL_SWEEP, sweep), (contract.LABEL_TRIAL, trial))
        self._lock = threading.Lock()
        self._values: Dict[str, Dict[Tuple[Tuple[str, str], ...], float]] = {}

    def set(self, name: str, value: float, **labels: str) -> None:
        """Sets the gauge `name` with the given extra labels to `value`."""
        key = tuple(sorted(labels.items()))
        with self._lock:
            self._values.setdefault(name, {})[key] = float(value)

    def get(self, name: str, **labels: str) -> Optional[float]:
        """The gauge's value, or None when it was never set."""
        with self._lock:
            return self._values.get(name, {}).get(tuple(sorted(labels.items())))

    def render(self) -> str:
        """The text exposition format (version 0.0.4) of every series set so far."""
        with self._lock:
            values = {name: dict(series) for name, series in self._values.items()}
        names = [n for n in _ORDER if n in values] + sorted(n for n in values if n not in _ORDER)
        lines: List[str] = []
        for name in names:
            lines.append("# HELP %s %s" % (name, _HELP.get(name, name)))
            lines.append("# TYPE %s gauge" % name)
            for extra, value in sorted(values[name].items()):
                labels = ",".join(
                    '%s="%s"' % (k, _escape(v)) for k, v in self._labels + extra
                )
                lines.append("%s{%s} %s" % (name, labels, _format_value(value)))
        return "\n".join(lines) + "\n"


class MetricServer:
    """Serves a registry's exposition on http://host:port/metrics from a daemon thread."""

    def __init__(self, registry: MetricRegistry, host: str, port: int) -> None:
        """Binds host:port (port 0: a free port). Raises OSError when it cannot be bound."""
        render = registry.render

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
                body = render().encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass  # a scrape every poll interval would flood the trial's log

        self._server = http.server.ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="budgetsweep-metrics", daemon=True
        )
        self._thread.start()

    @property
    def port(self) -> int:
        """The port actually bound."""
        return int(self._server.server_address[1])

    def close(self) -> None:
        """Stops serving and releases the port."""
        self._server.shutdown()
        self._server.server_close()
