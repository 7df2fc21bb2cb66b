"""Trial: the contract's input, metrics, linger, stop requests and divergence."""

import math
import os
import signal
import time
import unittest

from budgetsweep import BadInput, Diverged, Trial, contract, flags_from_argv

from .helpers import contract_env, scrape


class ContractInputTest(unittest.TestCase):
    def test_NoEnvironment_RunsByHandWithDefaults(self):
        trial = Trial(max_resource=5, environ={}, argv=[])
        self.assertEqual(trial.until, 5)
        self.assertEqual(trial.max_resource, 5)
        self.assertEqual(trial.params, {})
        self.assertIsNone(trial.checkpoint_dir)
        self.assertIsNone(trial.metrics_port)
        self.assertFalse(trial.probing)
        with trial:
            self.assertIsNone(trial.served_port)
            trial.report(1, train_loss=0.5, validation_accuracy=0.5)
            self.assertIsNone(trial.save_checkpoint({"w": 1}, 1))
            self.assertIsNone(trial.load_checkpoint())

    def test_Params_AreTypedFromTheJsonAndTheFlags(self):
        trial = Trial(
            environ=contract_env(),
            argv=["--lr=0.003", "--batch-size=64", "--optimizer=adamw", "--workers=2",
                  "--precision=bf16", "positional", "--verbose"],
        )
        self.assertEqual(trial.params["lr"], 0.003)
        self.assertIs(type(trial.params["batch-size"]), int)
        self.assertEqual(trial.params["optimizer"], "adamw")
        self.assertEqual(trial.params["workers"], 2)
        self.assertEqual(trial.params["precision"], "bf16")
        self.assertEqual(trial.param("missing", 7), 7)
        self.assertEqual(trial.param("batch-size", type=float), 64.0)
        self.assertEqual(trial.contract_params,
                         {"lr": 0.003, "batch-size": 64, "optimizer": "adamw"})

    def test_Env_UntilMaxMilestonesAndPbtVariables(self):
        trial = Trial(
            environ=contract_env(BUDGETSWEEP_SNAPSHOTS="1", BUDGETSWEEP_MUTABLE="lr, weight-decay",
                                 BUDGETSWEEP_EXPLOIT_DIR="/tmp/donor", BUDGETSWEEP_EXPLOIT_AT="3",
                                 BUDGETSWEEP_CHECKPOINT_DIR="/tmp/ckpt"),
            argv=[],
        )
        self.assertEqual((trial.until, trial.max_resource), (3, 9))
        self.assertIs(type(trial.until), int)
        self.assertEqual(trial.milestones, [1, 3, 9])
        self.assertTrue(trial.snapshots)
        self.assertEqual(trial.mutable, frozenset({"lr", "weight-decay"}))
        self.assertEqual((trial.exploit_dir, trial.exploit_at), ("/tmp/donor", 3))
        self.assertEqual(trial.checkpoint_dir, "/tmp/ckpt")
        self.assertEqual((trial.sweep, trial.name), ("fmnist", "fmnist-t0003"))

    def test_Until_IsCappedAtMaxResource_AndEmptyVariablesAreUnset(self):
        trial = Trial(environ=contract_env(BUDGETSWEEP_UNTIL="27", BUDGETSWEEP_CHECKPOINT_DIR=""),
                      argv=[])
        self.assertEqual(trial.until, 9)
        self.assertIsNone(trial.checkpoint_dir)

    def test_ShouldTrain_UpToUntil_OrUntilAProbeHasMeasured(self):
        trial = Trial(environ=contract_env(), argv=[])
        self.assertEqual([trial.should_train(r) for r in (0, 2, 3)], [True, True, False])
        probe = Trial(environ=contract_env(), argv=["--probe-steps=5"])
        self.assertTrue(probe.should_train(3))
        probe.request_stop()
        self.assertFalse(probe.should_train(0))

    def test_MalformedInput_ExitsTwo(self):
        for env in (
            {"BUDGETSWEEP_PARAMS": "{not json"},
            {"BUDGETSWEEP_PARAMS": "[1, 2]"},
            {"BUDGETSWEEP_UNTIL": "soon"},
            {"BUDGETSWEEP_MAX_RESOURCE": "nan"},
            {"BUDGETSWEEP_METRICS_PORT": "http"},
        ):
            with self.subTest(env=env), self.assertRaises(BadInput) as raised:
                Trial(environ=contract_env(**env), argv=[])
            self.assertEqual(raised.exception.code, contract.EXIT_BAD_INPUT)

    def test_FlagsFromArgv_LastOneWins(self):
        self.assertEqual(flags_from_argv(["--lr=1", "--lr=0.5", "--x=a=b", "--=3"]),
                         {"lr": 0.5, "x": "a=b"})


class MetricsTest(unittest.TestCase):
    def test_Report_ServesTheSeriesTheOperatorReads(self):
        with Trial(environ=contract_env(), argv=[], linger_seconds=0) as trial:
            trial.report(1, train_loss=0.61, learning_rate=0.001,
                         validation_accuracy=0.81, validation_loss=0.52)
            trial.report(2, train_loss=0.5, validation_accuracy=0.84)
            samples = scrape(trial.served_port)
        labels = {"sweep": "fmnist", "trial": "fmnist-t0003"}
        series = {(n, tuple(sorted(l.items()))): v for n, l, v in samples}

        def value(name, **extra):
            return series[(name, tuple(sorted({**labels, **extra}.items())))]

        self.assertEqual(value(contract.METRIC_OBJECTIVE, metric="validation_accuracy",
                               resource="1"), 0.81)
        self.assertEqual(value(contract.METRIC_OBJECTIVE, metric="validation_accuracy",
                               resource="2"), 0.84)
        self.assertEqual(value(contract.METRIC_OBJECTIVE, metric="validation_loss",
                               resource="1"), 0.52)
        self.assertEqual(value(contract.METRIC_RESOURCE_COMPLETED), 2)
        self.assertEqual(value(contract.METRIC_LOSS), 0.5)
        self.assertEqual(value(contract.METRIC_LEARNING_RATE), 0.001)
        self.assertEqual(value(contract.METRIC_DIVERGED), 0)
        for name, sample_labels, _ in samples:
            self.assertTrue(name.startswith(contract.METRIC_PREFIX))
            self.assertEqual({k: sample_labels[k] for k in labels}, labels)

    def test_Finish_KeepsServingTheLastValuesForTheLinger(self):
        trial = Trial(environ=contract_env(), argv=[], linger_seconds=0.6).start()
        port = trial.served_port
        trial.report(3, validation_accuracy=0.9)
        started = time.monotonic()
        import threading
        scraped = []
        reader = threading.Thread(target=lambda: (time.sleep(0.3), scraped.extend(scrape(port))))
        reader.start()
        trial.finish()
        reader.join()
        self.assertGreaterEqual(time.monotonic() - started, 0.6)
        self.assertIn(3.0, [v for n, _, v in scraped if n == contract.METRIC_RESOURCE_COMPLETED])
        with self.assertRaises(OSError):
            scrape(port)

    def test_Finish_AfterAStopRequest_DoesNotLinger(self):
        trial = Trial(environ=contract_env(), argv=[], linger_seconds=30).start()
        trial.request_stop()
        started = time.monotonic()
        trial.finish()
        self.assertLess(time.monotonic() - started, 1)

    def test_PortInUse_ExitsTwoNamingTheAddress(self):
        with Trial(environ=contract_env(), argv=[], linger_seconds=0) as first:
            second = Trial(environ=contract_env(BUDGETSWEEP_METRICS_PORT=str(first.served_port)),
                           argv=[])
            with self.assertRaises(BadInput) as raised:
                second.start()
            self.assertIn("127.0.0.1:%d" % first.served_port, raised.exception.message)

    def test_NonFiniteTrainingLoss_DivergesWithExitThree(self):
        trial = Trial(environ=contract_env(), argv=[], linger_seconds=0)
        with self.assertRaises(Diverged) as raised:
            with trial:
                port = trial.served_port
                try:
                    trial.report(1, train_loss=math.nan, validation_accuracy=math.nan)
                finally:
                    samples = scrape(port)
        self.assertEqual(raised.exception.code, contract.EXIT_DIVERGED)
        diverged = [v for n, _, v in samples if n == contract.METRIC_DIVERGED]
        self.assertEqual(diverged, [1.0])


class StopTest(unittest.TestCase):
    def test_Sigterm_AsksTheLoopToStop_AndTheHandlerIsRestored(self):
        before = signal.getsignal(signal.SIGTERM)
        with Trial(environ={}, argv=[]) as trial:
            self.assertFalse(trial.should_stop)
            os.kill(os.getpid(), signal.SIGTERM)
            deadline = time.monotonic() + 5
            while not trial.should_stop and time.monotonic() < deadline:
                time.sleep(0.01)
            self.assertTrue(trial.should_stop)
        self.assertIs(signal.getsignal(signal.SIGTERM), before)


if __name__ == "__main__":
    unittest.main()
