"""The SDK's contract names cannot drift from the operator's: read them from
contract/trainer_contract.h, and what uses them from the C++ sources."""

import os
import re
import unittest

from budgetsweep import contract

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def source(path: str) -> str:
    with open(os.path.join(REPO, path)) as f:
        return f.read()


HEADER = source("contract/trainer_contract.h")


def sdk_name(kind: str, name: str) -> str:
    """The SDK's name of the header's k<kind><name>: kEnvMaxResource is ENV_MAX_RESOURCE."""
    return kind.upper() + "_" + re.sub(r"(?<!^)([A-Z])", r"_\1", name).upper()


def header_constants(kind: str) -> dict:
    """{"MaxResource": "BUDGETSWEEP_MAX_RESOURCE", ...}: the header's k<kind>* constants."""
    return dict(re.findall(r'constexpr char k%s(\w+)\[\] =\s*"(\w*)";' % kind, HEADER))


def header_names(kind: str) -> dict:
    return {sdk_name(kind, name): value for name, value in header_constants(kind).items()}


def names_in(path: str, kind: str) -> set:
    """The names among the header's k<kind>* that the C++ source at `path` (a file, or each .cc
    of a directory) spells, by constant or as a literal."""
    if os.path.isdir(os.path.join(REPO, path)):
        files = sorted(f for f in os.listdir(os.path.join(REPO, path)) if f.endswith(".cc"))
        text = "".join(source(os.path.join(path, f)) for f in files)
    else:
        text = source(path)
    return {
        value
        for name, value in header_constants(kind).items()
        if re.search(r"\bk%s%s\b" % (kind, name), text) or '"%s"' % value in text
    }


def constants_with_prefix(prefix: str) -> dict:
    return {
        name: value
        for name, value in vars(contract).items()
        if name.startswith(prefix) and isinstance(value, (str, int))
    }


class ContractDriftTest(unittest.TestCase):
    def test_environment_names_are_the_headers(self):
        self.assertEqual(constants_with_prefix("ENV_"), header_names("Env"))

    def test_environment_names_match_what_backends_give_a_trial(self):
        given = names_in("operator/ports/trial_contract.cc", "Env")
        host = contract.ENV_METRICS_HOST
        for backend in ("operator/adapters/local/local_backend.cc", "operator/adapters/kube"):
            self.assertIn(host, names_in(backend, "Env"), backend + " sets METRICS_HOST")
        given.add(host)
        self.assertGreaterEqual(len(given), 13)
        self.assertEqual(set(contract.CONTRACT_ENV), given)

    def test_exit_codes_match_the_shared_header(self):
        header = source("contract/trainer_exit_codes.h")
        codes = {
            sdk_name("Exit", name): int(value)
            for name, value in re.findall(r"constexpr int kExit(\w+) = (\d+);", header)
        }
        self.assertEqual(
            codes, {"EXIT_OK": 0, "EXIT_INTERNAL": 1, "EXIT_BAD_INPUT": 2, "EXIT_DIVERGED": 3}
        )
        self.assertEqual(constants_with_prefix("EXIT_"), codes)

    def test_metric_and_label_names_are_the_headers(self):
        self.assertEqual(constants_with_prefix("METRIC_"), header_names("Metric"))
        self.assertEqual(constants_with_prefix("LABEL_"), header_names("Label"))

    def test_metric_names_are_those_the_operator_reads(self):
        read = names_in("operator/adapters/prometheus/scrape_source.cc", "Metric")
        read |= names_in("operator/adapters/prometheus/api_source.cc", "Metric")
        for_dashboards = {contract.METRIC_DIVERGED, contract.METRIC_LEARNING_RATE}
        self.assertEqual(read, set(header_names("Metric").values()) - for_dashboards)

    def test_metric_names_are_those_the_reference_trainers_serve(self):
        served = names_in("tests/fixtures/curve-trainer/main.cc", "Metric")
        served |= names_in("trainer-image/metrics.cc", "Metric")
        sdk = set(constants_with_prefix("METRIC_").values()) - {contract.METRIC_PREFIX}
        self.assertLessEqual(sdk, served, "the SDK serves a series no reference trainer does")

    def test_labels_are_those_the_operator_matches(self):
        labels = names_in("operator/adapters/prometheus/scrape_source.cc", "Label")
        self.assertEqual(set(constants_with_prefix("LABEL_").values()), labels)

    def test_probe_flags_are_those_the_operator_adds(self):
        probe = source("operator/core/probe.cc")
        flags = set(re.findall(r'"--([a-z-]+)="', probe))
        flags |= set(re.findall(r'emplace_back\("([a-z-]+)"', probe))
        self.assertEqual(set(constants_with_prefix("FLAG_").values()), flags)


if __name__ == "__main__":
    unittest.main()
