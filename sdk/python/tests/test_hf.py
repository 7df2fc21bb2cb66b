"""budgetsweep.hf: a transformers Trainer under the contract, on a tiny BERT built from a config
and synthetic data (no downloads). sdk_callbacks_test runs it in the pinned environment of
scripts/sdk-callbacks-venv.sh; elsewhere it skips."""

import os
import signal
import unittest

from budgetsweep import contract

from .callback_case import CallbackCase
from .helpers import scrape

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
try:
    import torch
    import transformers

    from budgetsweep import hf as bsw_hf

    transformers.utils.logging.disable_progress_bar()  # "Writing model shards" at each save
except ImportError as e:  # pragma: no cover - depends on the environment
    transformers = None
    REASON = "transformers is not importable (%s): run scripts/sdk-callbacks-venv.sh" % e

STEPS_PER_EPOCH = 4  # 64 samples in batches of 16


def dataset(seed):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, 32, (64, 8), generator=generator)
    labels = (ids[:, 0] >= 17).long()  # learnable from the first token
    return [{"input_ids": i, "attention_mask": torch.ones(8, dtype=torch.long), "labels": l}
            for i, l in zip(ids, labels)]


def eval_losses(trainer):
    return [log["eval_loss"] for log in trainer.state.log_history if "eval_loss" in log]


class SigtermAtStep(transformers.TrainerCallback if transformers else object):
    """Sends this process SIGTERM at the end of optimizer step `step`, as the sweep would."""

    def __init__(self, step):
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            os.kill(os.getpid(), signal.SIGTERM)


@unittest.skipIf(transformers is None, REASON if transformers is None else "")
class HfCallbackTest(CallbackCase):
    checkpoint_name = "checkpoint.tar"

    def setUp(self):
        super().setUp()
        self.train_set, self.eval_set = dataset(1), dataset(2)

    def train(self, trial, *extra_callbacks):
        """Trains the tiny model as a user's script would; returns (trainer, scraped samples)."""
        transformers.set_seed(0)
        config = transformers.BertConfig(vocab_size=32, hidden_size=16, num_hidden_layers=1,
                                         num_attention_heads=2, intermediate_size=32,
                                         max_position_embeddings=8, num_labels=2)
        model = transformers.BertForSequenceClassification(config)
        args = transformers.TrainingArguments(
            output_dir=os.path.join(self.dir.name, "out"), num_train_epochs=trial.max_resource,
            per_device_train_batch_size=16, learning_rate=3e-3, eval_strategy="epoch",
            save_strategy="no", logging_strategy="epoch", report_to="none", use_cpu=True,
            disable_tqdm=True, seed=0)
        callback = bsw_hf.BudgetsweepCallback(trial)
        trainer = transformers.Trainer(model=model, args=args, train_dataset=self.train_set,
                                       eval_dataset=self.eval_set,
                                       callbacks=[*extra_callbacks, callback])
        trainer.remove_callback(transformers.PrinterCallback)  # its log lines
        with trial:
            trainer.train(resume_from_checkpoint=callback.resume_from_checkpoint())
            samples = scrape(trial.served_port)
        return trainer, samples

    def saved(self):
        return self.trial(3).load_checkpoint(load=bsw_hf._read_record)

    def test_ReportsEachEpoch_AndAtUntilSavesAndStops(self):
        trainer, samples = self.train(self.trial(2))
        objectives = self.validation_losses(samples)
        losses = eval_losses(trainer)
        self.assertEqual(objectives, {"1": losses[0], "2": losses[1]})
        series = {n: v for n, _, v in samples}
        self.assertEqual(series[contract.METRIC_RESOURCE_COMPLETED], 2)
        self.assertIn(contract.METRIC_LOSS, series)
        self.assertGreater(series[contract.METRIC_SAMPLES_PER_SECOND], 0)
        self.assertEqual(trainer.state.global_step, 2 * STEPS_PER_EPOCH)
        self.assertEqual(self.saved().resource, 2)
        self.assertEqual(os.listdir(self.ckpt), ["checkpoint.tar"])
        self.assertFalse(os.path.exists(os.path.join(self.dir.name, "out", "checkpoint-8")),
                         "with save_strategy=no the Trainer's own folder is removed once packed")

    def test_Sigterm_SavesAfterTheStepAndStops(self):
        trial = self.trial(3)
        trainer, _ = self.train(trial, SigtermAtStep(5))
        self.assertTrue(trial.should_stop)
        self.assertEqual(trainer.state.global_step, 5)
        self.assertEqual(self.saved().resource, 5 / STEPS_PER_EPOCH)

    def test_PausedAtUntil_ResumesToTheSameResultAsAnUninterruptedRun(self):
        self.train(self.trial(1))
        resumed, samples = self.train(self.trial(3))
        self.assertEqual(sorted(self.validation_losses(samples)), ["2", "3"])
        self.ckpt = os.path.join(self.dir.name, "uninterrupted")
        whole, _ = self.train(self.trial(3))
        self.assertEqual(resumed.state.global_step, whole.state.global_step)
        self.assertAlmostEqual(eval_losses(resumed)[-1], eval_losses(whole)[-1], places=5)
        for (name, a), (_, b) in zip(resumed.model.state_dict().items(),
                                     whole.model.state_dict().items()):
            self.assertTrue(torch.allclose(a, b, atol=1e-5), name)


if __name__ == "__main__":
    unittest.main()
