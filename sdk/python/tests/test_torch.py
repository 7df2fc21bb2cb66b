"""budgetsweep.torch against Debian's python3-torch (skipped, saying why, where torch is absent)."""

import math
import unittest

from budgetsweep import BadInput, Trial

try:
    import torch

    from budgetsweep import torch as bsw_torch
except ImportError as e:  # pragma: no cover - depends on the machine
    torch = None
    REASON = "torch is not importable (%s): apt-get install python3-torch" % e


def trial(*argv):
    return Trial(environ={}, argv=list(argv))


@unittest.skipIf(torch is None, REASON if torch is None else "")
class TorchTest(unittest.TestCase):
    def test_LoaderSettings_FollowTheProbesChoice(self):
        cpu = torch.device("cpu")
        self.assertEqual(bsw_torch.loader_settings(trial("--workers=2", "--prefetch=8"),
                                                   device=cpu),
                         {"num_workers": 2, "pin_memory": False, "persistent_workers": True,
                          "prefetch_factor": 4})
        self.assertEqual(bsw_torch.loader_settings(trial(), device=cpu),
                         {"num_workers": 0, "pin_memory": False})
        self.assertTrue(bsw_torch.loader_settings(trial(), device=torch.device("cuda"))
                        ["pin_memory"])
        with self.assertRaises(BadInput):
            bsw_torch.loader_settings(trial("--workers=-1"), device=cpu)
        dataset = torch.utils.data.TensorDataset(torch.arange(10.0))
        loader = torch.utils.data.DataLoader(
            dataset, batch_size=4,
            **bsw_torch.loader_settings(trial("--workers=1", "--prefetch=2"), device=cpu))
        self.assertEqual(sum(len(b[0]) for b in loader), 10)

    def test_LinearScaling_UsesTheEffectiveBatch(self):
        self.assertEqual(bsw_torch.scaled_lr(trial("--batch-size=64"), 0.1), 0.1)
        t = trial("--batch-size=64", "--accumulation-steps=4", "--lr-scaling=linear",
                  "--reference-batch=128")
        self.assertAlmostEqual(bsw_torch.scaled_lr(t, 0.1), 0.2)
        self.assertEqual(bsw_torch.batch_settings(t), {"batch_size": 64, "accumulation_steps": 4})
        with self.assertRaises(BadInput):
            bsw_torch.scaled_lr(trial("--lr-scaling=sqrt"), 0.1)

    def test_WarmupCosine_MatchesTheCppSchedule(self):
        schedule = bsw_torch.WarmupCosine(peak=1.0, total_steps=100, warmup_fraction=0.05,
                                          floor_ratio=0.01)
        self.assertEqual(schedule.warmup_steps, 5)
        self.assertAlmostEqual(schedule.lr_at(0), 0.2)
        self.assertAlmostEqual(schedule.lr_at(4), 1.0)
        self.assertAlmostEqual(schedule.lr_at(5), 1.0)
        self.assertAlmostEqual(schedule.lr_at(99), 0.01)
        mid = 5 + (100 - 5 - 1) / 2
        self.assertAlmostEqual(schedule.lr_at(int(mid)), 0.01 + 0.99 * 0.5)
        self.assertEqual(bsw_torch.WarmupCosine(1.0, 30, 0.05).warmup_steps, 2)  # 1.5 rounds up
        self.assertEqual(bsw_torch.WarmupCosine(2.0, 1, 0.0).lr_at(0), 2.0)
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=9)
        self.assertAlmostEqual(schedule.apply(optimizer, 0), 0.2)
        self.assertAlmostEqual(optimizer.param_groups[0]["lr"], 0.2)

    def test_Accumulation_GroupsMicroBatchesWithAShortLastGroup(self):
        acc = bsw_torch.GradientAccumulation(3, 7)
        self.assertEqual(acc.steps_per_epoch, 3)
        self.assertEqual([acc.group_size(i) for i in range(7)], [3, 3, 3, 3, 3, 3, 1])
        self.assertEqual([i for i in range(7) if acc.ends_step(i)], [2, 5, 6])
        self.assertAlmostEqual(acc.scale(torch.tensor(3.0), 0).item(), 1.0)

    def test_Accumulation_GivesTheFullBatchsGradient(self):
        torch.manual_seed(0)
        x, y = torch.randn(8, 3), torch.randn(8, 1)
        full = torch.nn.Linear(3, 1)
        split = torch.nn.Linear(3, 1)
        split.load_state_dict(full.state_dict())
        torch.nn.functional.mse_loss(full(x), y).backward()
        acc = bsw_torch.GradientAccumulation(4, 4)
        for i in range(4):
            part = slice(2 * i, 2 * i + 2)
            acc.scale(torch.nn.functional.mse_loss(split(x[part]), y[part]), i).backward()
        self.assertTrue(torch.allclose(full.weight.grad, split.weight.grad, atol=1e-6))

    def test_Precision_Bf16AutocastsAndFp32DoesNot(self):
        cpu = torch.device("cpu")
        model = torch.nn.Linear(4, 2)
        bf16 = bsw_torch.Precision.from_trial(trial("--precision=bf16"), cpu)
        with bf16.autocast():
            self.assertEqual(model(torch.randn(3, 4)).dtype, torch.bfloat16)
        fp32 = bsw_torch.Precision.from_trial(trial("--precision=fp32"), cpu)
        with fp32.autocast():
            self.assertEqual(model(torch.randn(3, 4)).dtype, torch.float32)
        self.assertIn(bsw_torch.Precision.from_trial(trial(), cpu).name, ("bf16", "fp32"))
        with self.assertRaises(BadInput):
            bsw_torch.Precision.from_trial(trial("--precision=fp16"), cpu)
        with self.assertRaises(BadInput):
            bsw_torch.Precision.from_trial(trial("--precision=fp8"), cpu)

    def test_Precision_StepAppliesAndZeroesTheGradient(self):
        model = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        precision = bsw_torch.Precision("bf16", torch.device("cpu"))
        before = model.weight.detach().clone()
        with precision.autocast():
            loss = model(torch.ones(4, 2)).float().pow(2).mean()
        precision.backward(loss)
        self.assertTrue(precision.step(optimizer))
        self.assertFalse(torch.equal(before, model.weight.detach()))
        self.assertIsNone(model.weight.grad)
        self.assertEqual(precision.state_dict(), {})

    @unittest.skipUnless(torch is not None and torch.cuda.is_available(), "fp16 needs CUDA")
    def test_Fp16_SkipsAStepWithNonFiniteGradients(self):
        cuda = torch.device("cuda")
        model = torch.nn.Linear(2, 1).to(cuda)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        precision = bsw_torch.Precision("fp16", cuda)
        with precision.autocast():
            loss = model(torch.full((4, 2), math.inf, device=cuda)).float().sum()
        precision.backward(loss)
        self.assertFalse(precision.step(optimizer))


if __name__ == "__main__":
    unittest.main()
