"""A script on the SDK as the runner starts it: a child process with the contract's environment."""

import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from budgetsweep import checkpoint, contract

from .helpers import contract_env, scrape

SDK = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SCRIPT = os.path.join(os.path.dirname(__file__), "toy_trainer.py")


class ProcessTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.ckpt = os.path.join(self.dir.name, "ckpt")

    def tearDown(self):
        self.dir.cleanup()

    def start(self, args=(), **env):
        environ = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": SDK}
        environ.update(env)
        return subprocess.Popen([sys.executable, SCRIPT, *args], env=environ,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def test_ByHand_TrainsToItsOwnDefaultAndExitsZero(self):
        process = self.start()
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, contract.EXIT_OK, err)
        self.assertIn("epoch 3", out)

    def test_AtUntil_CheckpointsAndExitsZero_AndTheNextSegmentResumes(self):
        env = contract_env(BUDGETSWEEP_CHECKPOINT_DIR=self.ckpt, BUDGETSWEEP_UNTIL="1")
        process = self.start(**env)
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0, err)
        self.assertEqual(checkpoint.load(os.path.join(self.ckpt, "checkpoint.pkl")).resource, 1)
        env["BUDGETSWEEP_UNTIL"] = "3"
        process = self.start(**env)
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, 0, err)
        self.assertIn("starting at 1 until 3", out)
        self.assertNotIn("epoch 1\n", out)
        self.assertIn("epoch 3", out)

    def test_Sigterm_CheckpointsAndExitsZero(self):
        process = self.start(["--seconds-per-step=0.05"], BUDGETSWEEP_CHECKPOINT_DIR=self.ckpt,
                             **contract_env(BUDGETSWEEP_UNTIL="9"))
        self.wait_for_epoch(self.served_port(process), 1)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, contract.EXIT_OK, err)
        self.assertIn("stopped at", out)
        saved = checkpoint.load(os.path.join(self.ckpt, "checkpoint.pkl"))
        self.assertGreaterEqual(saved.resource, 1)

    def test_DivergedLoss_ExitsThree_AfterServingIt(self):
        process = self.start(["--diverge-at=2"], **contract_env())
        port = self.served_port(process)
        diverged = None
        deadline = time.monotonic() + 20
        while diverged != 1.0 and time.monotonic() < deadline and process.poll() is None:
            try:
                diverged = {n: v for n, _, v in scrape(port)}.get(contract.METRIC_DIVERGED)
            except OSError:
                time.sleep(0.02)
        out, err = process.communicate(timeout=30)
        self.assertEqual(diverged, 1.0)
        self.assertEqual(process.returncode, contract.EXIT_DIVERGED)
        self.assertIn("diverged", err.strip().splitlines()[-1])

    def test_ProbeRun_PublishesItsFiguresAndLingersUntilStopped(self):
        process = self.start(["--probe-steps=12", "--prefetch=2", "--linger-seconds=30"],
                             BUDGETSWEEP_CHECKPOINT_DIR=self.ckpt, **contract_env())
        port = self.served_port(process)
        deadline = time.monotonic() + 20
        figures = {}
        while contract.METRIC_PROBE_MEASURED_STEPS not in figures:
            self.assertLess(time.monotonic(), deadline, "no probe figures within 20 s")
            try:
                figures = {n: v for n, _, v in scrape(port)}
            except OSError:
                time.sleep(0.02)
        # 4 warm-up and 12 measured steps of 5 a epoch: the probe crosses UNTIL (epoch 3).
        self.assertEqual(figures[contract.METRIC_PROBE_MEASURED_STEPS], 12)
        self.assertGreater(figures[contract.METRIC_SAMPLES_PER_SECOND], 0)
        self.assertIn(contract.METRIC_DATA_WAIT_RATIO, figures)
        self.assertNotIn(contract.METRIC_OBJECTIVE, figures)
        self.assertIsNone(process.poll(), "a probe lingers until the sweep stops it")
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=10)
        self.assertEqual(process.returncode, 0, err)
        self.assertIn("probed", out)
        self.assertFalse(os.path.exists(self.ckpt), "a probe writes no checkpoint")

    def test_BadParams_ExitTwo(self):
        process = self.start(**contract_env(BUDGETSWEEP_PARAMS="nope"))
        _, err = process.communicate(timeout=30)
        self.assertEqual(process.returncode, contract.EXIT_BAD_INPUT)
        self.assertIn("BUDGETSWEEP_PARAMS", err)

    @staticmethod
    def served_port(process: subprocess.Popen) -> int:
        """The port a child given BUDGETSWEEP_METRICS_PORT=0 says it bound."""
        line = process.stdout.readline()
        prefix = "budgetsweep: serving metrics on 127.0.0.1:"
        assert line.startswith(prefix), line
        return int(line[len(prefix):])

    @staticmethod
    def wait_for_epoch(port: int, epoch: int) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                done = {n: v for n, _, v in scrape(port)}.get(contract.METRIC_RESOURCE_COMPLETED)
                if done is not None and done >= epoch:
                    return
            except OSError:
                pass
            time.sleep(0.02)
        raise AssertionError("no epoch %d within 20 s" % epoch)


if __name__ == "__main__":
    unittest.main()
