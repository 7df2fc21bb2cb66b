"""Throughput figures and probe mode."""

import unittest

from budgetsweep import MetricRegistry, ThroughputMeter, Trial, contract, probe_warmup_steps

from .helpers import contract_env


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class SlowLoader:
    """Yields `n` batches, each taking `wait` seconds of the fake clock to arrive."""

    def __init__(self, clock, n, wait):
        self.clock, self.n, self.wait = clock, n, wait

    def __iter__(self):
        for i in range(self.n):
            self.clock.now += self.wait
            yield i


class ThroughputTest(unittest.TestCase):
    def test_Meter_MeasuresSamplesPerSecondAndDataWaitOverStepTime(self):
        clock, registry = FakeClock(), MetricRegistry("s", "t")
        meter = ThroughputMeter(registry, clock=clock)
        for _ in meter.batches(SlowLoader(clock, 4, wait=0.25)):
            clock.now += 0.75  # compute
            meter.step(100)
        self.assertAlmostEqual(meter.samples_per_second, 100.0)
        self.assertAlmostEqual(meter.data_wait_ratio, 0.25)
        self.assertAlmostEqual(registry.get(contract.METRIC_SAMPLES_PER_SECOND), 100.0)
        self.assertAlmostEqual(registry.get(contract.METRIC_DATA_WAIT_RATIO), 0.25)
        clock.now += 60  # evaluation between epochs is not step time
        for _ in meter.batches(SlowLoader(clock, 2, wait=0.0)):
            clock.now += 0.5
            meter.step(100)
        self.assertAlmostEqual(meter.samples_per_second, 6 * 100 / 5.0)

    def test_ProbeWarmup_FollowsTheCppTrainer(self):
        self.assertEqual(probe_warmup_steps(4, 1), 6)
        self.assertEqual(probe_warmup_steps(4, 4), 2)
        self.assertEqual(probe_warmup_steps(8, 3), 4)

    def test_Probe_MeasuresOnlyTheProbeStepsAfterTheWarmup(self):
        clock, registry = FakeClock(), MetricRegistry("s", "t")
        meter = ThroughputMeter(registry, probe_steps=3, warmup_steps=2, clock=clock)
        waits = [5.0, 5.0, 0.5, 0.5, 0.5, 0.5]  # a slow start-up the probe must not count

        def loader():
            for micro_batch in range(12):
                clock.now += waits[micro_batch // 2] if micro_batch % 2 == 0 else 0.0
                yield micro_batch

        steps = 0
        for micro_batch in meter.batches(loader()):
            clock.now += 0.5
            meter.step(32, optimizer_step=micro_batch % 2 == 1)
            steps += micro_batch % 2
            if meter.probe_done:
                break
        self.assertEqual(steps, 5)
        self.assertTrue(meter.probe_done)
        self.assertEqual(registry.get(contract.METRIC_PROBE_MEASURED_STEPS), 3)
        # 3 steps of 2 micro-batches: 192 samples in 3 x (0.5 wait + 1.0 compute) seconds.
        self.assertAlmostEqual(registry.get(contract.METRIC_SAMPLES_PER_SECOND), 192 / 4.5)
        self.assertAlmostEqual(registry.get(contract.METRIC_DATA_WAIT_RATIO), 1.5 / 4.5)

    def test_ProbeRun_SkipsCheckpointsAndObjectives(self):
        trial = Trial(
            environ=contract_env(BUDGETSWEEP_CHECKPOINT_DIR="/nonexistent/never-written"),
            argv=["--workers=2", "--prefetch=8", "--accumulation-steps=2", "--probe-steps=30",
                  "--linger-seconds=30"],
        )
        self.assertTrue(trial.probing)
        self.assertEqual(trial.probe_steps, 30)
        self.assertEqual(trial.linger_seconds, 30)
        self.assertEqual(trial.meter._warmup_steps, 5)
        self.assertIsNone(trial.load_checkpoint())
        self.assertIsNone(trial.save_checkpoint({}, 1))
        trial.report(1, train_loss=0.4, validation_accuracy=0.9)
        self.assertIsNone(trial.registry.get(contract.METRIC_OBJECTIVE,
                                             metric="validation_accuracy", resource="1"))
        self.assertEqual(trial.registry.get(contract.METRIC_LOSS), 0.4)


if __name__ == "__main__":
    unittest.main()
