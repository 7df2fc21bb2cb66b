"""The SDK's contract names cannot drift from the operator's: read them from the C++ sources."""

import os
import re
import unittest

from budgetsweep import contract

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def source(path: str) -> str:
    with open(os.path.join(REPO, path)) as f:
        return f.read()


def constants_with_prefix(prefix: str) -> dict:
    return {
        name: value
        for name, value in vars(contract).items()
        if name.startswith(prefix) and isinstance(value, (str, int))
    }


class ContractDriftTest(unittest.TestCase):
    def test_environment_names_match_what_backends_give_a_trial(self):
        cc = source("operator/ports/trial_contract.cc")
        h = source("operator/ports/trial_contract.h")
        local = source("operator/adapters/local/local_backend.cc")
        pod = source("operator/adapters/kube/pod_backend.cc")
        given = set(re.findall(r'"(BUDGETSWEEP_[A-Z_]+)"', cc))
        given |= set(re.findall(r'kEnv\w+\[\] = "(BUDGETSWEEP_[A-Z_]+)"', h))
        host = set(re.findall(r'"(BUDGETSWEEP_METRICS_HOST)"', local)) & set(
            re.findall(r'"(BUDGETSWEEP_METRICS_HOST)"', pod)
        )
        self.assertEqual(host, {"BUDGETSWEEP_METRICS_HOST"}, "both backends set METRICS_HOST")
        given |= host
        self.assertGreaterEqual(len(given), 13)
        self.assertEqual(set(contract.CONTRACT_ENV), given)
        self.assertEqual(set(constants_with_prefix("ENV_").values()), given)

    def test_exit_codes_match_the_shared_header(self):
        header = source("contract/trainer_exit_codes.h")
        codes = {
            "EXIT_" + re.sub(r"(?<!^)([A-Z])", r"_\1", name).upper(): int(value)
            for name, value in re.findall(r"constexpr int kExit(\w+) = (\d+);", header)
        }
        self.assertEqual(
            codes, {"EXIT_OK": 0, "EXIT_INTERNAL": 1, "EXIT_BAD_INPUT": 2, "EXIT_DIVERGED": 3}
        )
        self.assertEqual(constants_with_prefix("EXIT_"), codes)

    def test_metric_names_are_those_the_operator_reads(self):
        scrape = source("operator/adapters/prometheus/scrape_source.cc")
        prefix = re.search(r'kPrefix\[\] = "(\w+)"', scrape).group(1)
        self.assertEqual(contract.METRIC_PREFIX, prefix)
        read = {prefix + n for n in re.findall(r'name == "(\w+)"', scrape)}
        api = source("operator/adapters/prometheus/api_source.cc")
        read |= set(re.findall(r'"(budgetsweep_trainer_\w+)"', api))
        self.assertIn(contract.METRIC_OBJECTIVE, read)
        sdk = set(constants_with_prefix("METRIC_").values()) - {prefix}
        self.assertLessEqual(read, sdk, "a series the operator reads is missing from the SDK")

    def test_metric_names_are_those_the_reference_trainers_serve(self):
        fixture = source("tests/fixtures/curve-trainer/main.cc")
        served = set(re.findall(r'"(budgetsweep_trainer_\w+)"', fixture))
        trainer = source("trainer-image/metrics.cc")
        served |= set(re.findall(r'"(budgetsweep_trainer_\w+)"', trainer))
        sdk = set(constants_with_prefix("METRIC_").values()) - {contract.METRIC_PREFIX}
        self.assertLessEqual(sdk, served, "the SDK serves a series no reference trainer does")

    def test_labels_are_those_the_operator_matches(self):
        scrape = source("operator/adapters/prometheus/scrape_source.cc")
        labels = set(re.findall(r'labels\.find\("(\w+)"\)', scrape))
        labels |= set(re.findall(r'NamesOther\(sample, "(\w+)"', scrape))
        self.assertEqual(set(constants_with_prefix("LABEL_").values()), labels)

    def test_probe_flags_are_those_the_operator_adds(self):
        probe = source("operator/core/probe.cc")
        flags = set(re.findall(r'"--([a-z-]+)="', probe))
        flags |= set(re.findall(r'emplace_back\("([a-z-]+)"', probe))
        self.assertEqual(set(constants_with_prefix("FLAG_").values()), flags)


if __name__ == "__main__":
    unittest.main()
