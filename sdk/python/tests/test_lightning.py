"""budgetsweep.lightning: a Lightning Trainer under the contract, on a tiny regression model and
synthetic data. sdk_callbacks_test runs it in the pinned environment of
scripts/sdk-callbacks-venv.sh; elsewhere it skips."""

import logging
import os
import signal
import unittest

from budgetsweep import contract

from .callback_case import CallbackCase
from .helpers import scrape

try:
    import lightning.pytorch as pl
    import torch

    from budgetsweep import lightning as bsw_lightning

    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)  # its banners and tips
except ImportError as e:  # pragma: no cover - depends on the environment
    pl = None
    REASON = "lightning is not importable (%s): run scripts/sdk-callbacks-venv.sh" % e

STEPS_PER_EPOCH = 4  # 64 samples in batches of 16


class TinyRegression(pl.LightningModule if pl else object):
    def __init__(self, max_epochs):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(),
                                       torch.nn.Linear(8, 1))
        self.max_epochs = max_epochs

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.net(x), y))

    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
        schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, self.max_epochs)
        return [optimizer], [schedule]


def loader(seed, shuffle):
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(64, 4, generator=generator)
    data = torch.utils.data.TensorDataset(x, x.sum(dim=1, keepdim=True).sin())
    # The order is a function of the epoch (Lightning calls set_epoch), so a resumed run sees
    # the batches an uninterrupted one does.
    sampler = torch.utils.data.DistributedSampler(data, num_replicas=1, rank=0, shuffle=shuffle,
                                                  seed=seed)
    return torch.utils.data.DataLoader(data, batch_size=16, sampler=sampler)


class SigtermAtStep(pl.Callback if pl else object):
    """Sends this process SIGTERM after optimizer step `step`, as the sweep would."""

    def __init__(self, step):
        self.step = step

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        if trainer.global_step == self.step:
            os.kill(os.getpid(), signal.SIGTERM)


@unittest.skipIf(pl is None, REASON if pl is None else "")
class LightningCallbackTest(CallbackCase):
    checkpoint_name = "checkpoint.ckpt"

    def fit(self, trial, *extra_callbacks):
        """Trains the tiny model as a user's script would; returns (model, trainer, samples)."""
        pl.seed_everything(0, verbose=False)
        model = TinyRegression(trial.max_resource)
        callback = bsw_lightning.BudgetsweepCallback(trial)
        trainer = pl.Trainer(max_epochs=trial.max_resource, accelerator="cpu", devices=1,
                             callbacks=[*extra_callbacks, callback], logger=False,
                             enable_checkpointing=False, enable_progress_bar=False,
                             enable_model_summary=False, deterministic=True)
        with trial:
            trainer.fit(model, loader(1, True), loader(2, False), ckpt_path=callback.ckpt_path())
            samples = scrape(trial.served_port)
        return model, trainer, samples

    def saved(self):
        return self.trial(3).load_checkpoint(load=bsw_lightning._read_record)

    def test_ReportsEachEpoch_AndAtUntilSavesAndStops(self):
        _, trainer, samples = self.fit(self.trial(2))
        objectives = self.validation_losses(samples)
        self.assertEqual(sorted(objectives), ["1", "2"])
        self.assertAlmostEqual(objectives["2"], float(trainer.callback_metrics["val_loss"]))
        series = {n: v for n, _, v in samples}
        self.assertEqual(series[contract.METRIC_RESOURCE_COMPLETED], 2)
        self.assertIn(contract.METRIC_LOSS, series)
        self.assertGreater(series[contract.METRIC_SAMPLES_PER_SECOND], 0)
        self.assertEqual(trainer.global_step, 2 * STEPS_PER_EPOCH)
        self.assertEqual(self.saved().resource, 2)
        self.assertEqual(os.listdir(self.ckpt), ["checkpoint.ckpt"])

    def test_Sigterm_SavesAfterTheBatch_AndLightningExitsZero(self):
        trial = self.trial(3)
        with self.assertRaises(SystemExit) as raised:
            self.fit(trial, SigtermAtStep(5))
        self.assertIn(raised.exception.code, (None, 0))
        self.assertTrue(trial.should_stop)
        self.assertEqual(self.saved().resource, 5 / STEPS_PER_EPOCH)

    def test_PausedAtUntil_ResumesToTheSameResultAsAnUninterruptedRun(self):
        self.fit(self.trial(1))
        resumed, resumed_trainer, samples = self.fit(self.trial(3))
        self.assertEqual(sorted(self.validation_losses(samples)), ["2", "3"])
        self.ckpt = os.path.join(self.dir.name, "uninterrupted")
        whole, whole_trainer, _ = self.fit(self.trial(3))
        self.assertEqual(resumed_trainer.global_step, whole_trainer.global_step)
        self.assertAlmostEqual(float(resumed_trainer.callback_metrics["val_loss"]),
                               float(whole_trainer.callback_metrics["val_loss"]), places=5)
        for (name, a), (_, b) in zip(resumed.state_dict().items(), whole.state_dict().items()):
            self.assertTrue(torch.allclose(a, b, atol=1e-6), name)


if __name__ == "__main__":
    unittest.main()
